"""Loading a domain's models by name: the backbone and, when asked, the MI head that fits it."""

from __future__ import annotations

from .mi_head import check_head_fits, load_head


def load_models(domain, checkpoint=None, head=None, device="cpu", need_head=False):
    """(model, head or None) for a domain: its shipped checkpoints unless paths are given.
    A head that does not fit the backbone is refused by name (check_head_fits)."""
    model = domain.load_model(checkpoint, device=device)
    h = None
    if need_head:
        path = head or domain.default_head()
        if path is None:
            raise ValueError(f"no MI head is shipped for this {domain.name} backbone: name a head checkpoint")
        h, _ = load_head(path, device=device)
        check_head_fits(h, model)
    return model, h
