"""Every JSON document the project writes is strict JSON: no NaN, no Infinity (RFC 8259).

Python's json writes NaN / Infinity by default, which no other JSON reader accepts. `dumps`
writes an undefined figure (a Pearson of a constant column, a mean of nothing) as null and
refuses nothing else; non-finite *inputs* (a sampler parameter of nan) are refused where they
are read, not here. tests/test_strict_json.py checks that nothing in the tree calls json.dump(s)
directly.
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite(obj: Any) -> Any:
    """obj with every non-finite float (nan, inf, -inf) replaced by None, containers rebuilt."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    if hasattr(obj, "item") and getattr(obj, "ndim", None) == 0:  # a numpy or torch scalar
        return finite(obj.item())
    return obj


def dumps(obj: Any, **kw: Any) -> str:
    """json.dumps of `finite(obj)`, strict (allow_nan=False): bytes identical to json.dumps
    wherever obj holds only finite numbers (that common case pays no rebuild: a decode's trace
    holds a million numbers)."""
    try:
        return json.dumps(obj, allow_nan=False, **kw)
    except ValueError:  # a non-finite float somewhere: write it as null
        return json.dumps(finite(obj), allow_nan=False, **kw)
