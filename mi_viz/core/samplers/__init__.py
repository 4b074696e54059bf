"""Samplers: which masked positions to unmask together, one registry, one step API.

Every rule is a registry.Sampler declared in a file of this folder named *_rule.py or
*_rules.py (imported here: the shipped ones in a fixed order, then any other by name): its
parameters with their defaults (params.PARAMS defines each parameter once), what it reads,
and its select function. The CLI's flags, the grid syntax, labels, sweep columns and
identity, the app's widgets and help texts are generated from those declarations, so adding a
rule is one file plus its hand-worked test (docs/samplers.md; tests/test_sampler_template.py
registers a toy rule and finds it everywhere).

    from mi_viz.core.samplers import SamplerConfig, decode
    res = decode(model, tokens, SamplerConfig("mi", gamma=0.04, lam=10), head=head, record=True)
"""

from __future__ import annotations

import importlib
import pkgutil

from .decoding import Batching, DecodeResult, StepRecord, Trace, decode
from .params import COLUMNS, PARAMS, Param, columns, declare, undeclare
from .registry import (
    READS,
    SAMPLERS,
    Candidates,
    Revision,
    Sampler,
    SamplerConfig,
    Written,
    config_for,
    defaults_for,
    register,
    row_label,
    unregister,
)

# the shipped rules first, in the order pickers list them; any other rule file after them
_SHIPPED = ("entropy_rules", "mi_rules", "confidence_rules", "dilated_rule")
for _name in _SHIPPED + tuple(
    sorted(
        m.name
        for m in pkgutil.iter_modules(__path__)
        if m.name.endswith(("_rule", "_rules")) and m.name not in _SHIPPED
    )
):
    importlib.import_module(f"{__name__}.{_name}")

from .confidence_rules import select_klass, select_margin, select_threshold  # noqa: E402
from .dilated_rule import select_dilated  # noqa: E402
from .entropy_rules import select_eb, select_topk  # noqa: E402
from .mi_rules import PAIRS_RULE_VERSION, RULE_VERSION, mi_rule_reach, select_mi, select_mi_pairs  # noqa: E402

__all__ = [
    "COLUMNS",
    "Batching",
    "PAIRS_RULE_VERSION",
    "PARAMS",
    "READS",
    "RULE_VERSION",
    "SAMPLERS",
    "Candidates",
    "DecodeResult",
    "Param",
    "Revision",
    "Sampler",
    "SamplerConfig",
    "StepRecord",
    "Trace",
    "Written",
    "columns",
    "config_for",
    "declare",
    "decode",
    "defaults_for",
    "mi_rule_reach",
    "register",
    "row_label",
    "select_dilated",
    "select_eb",
    "select_klass",
    "select_margin",
    "select_mi",
    "select_mi_pairs",
    "select_threshold",
    "select_topk",
    "undeclare",
    "unregister",
]
