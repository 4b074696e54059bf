"""mi-viz: see, and exploit, the dependency structure inside masked diffusion models.

import mi_viz
mi_viz.show("decode_trace.json")   # a decode's in-browser viewer inside a notebook
"""

from .core.viewer import show

__all__ = ["show"]
