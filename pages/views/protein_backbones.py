"""The protein pages' backbones: the small ESM-C always, ESM-C 300M when its weights are here,
AntiBERTy when installed, every shipped family and each family trained in the app."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from mi_viz.core.checkpoints import checkpoint_paths
from mi_viz.domains.antibody import DOMAIN as ANTIBODY
from mi_viz.domains.family import checkpoint_of, shipped_families
from mi_viz.domains.protein import DOMAIN as PROTEIN
from mi_viz.domains.protein.backbone import BackboneUnavailable, esmc_300m_weights

from ..kit.models import Backbone
from ..kit.runtime import ROOT

APP_FAMILIES = ROOT / "runs" / "app_families"  # where the app's own family trainings go (not tracked)
FAMILY_NAMES = {
    "PF00072": "response regulator receiver",
    "PF00076": "RNA recognition motif",
    "PF00595": "PDZ",
    "PF00085": "thioredoxin",
    "PF00018": "SH3",
}
SMALL = "small ESM-C"
ANTIBERTY_LABEL = "AntiBERTy · antibodies (pretrained, 26 M)"
SAPIENS_LABELS = {
    "sapiens-vh": "Sapiens VH · human heavy chains (pretrained, 0.57 M)",
    "sapiens-vl": "Sapiens VL · human light chains (pretrained, 0.57 M)",
}
HELP_SMALL = "The small ESM-C trained here (README, Models): `python training/train_protein_mdm.py` retrains it."


def protein_backbones() -> dict[str, Backbone]:
    """The backbones a user can pick, by a short label: the shipped small ESM-C always, ESM-C 300M
    when its weights are on this machine (MI_VIZ_ESMC_300M, a .pth path, or the local Hugging
    Face cache; never downloaded by the app), every shipped family and those trained in the app."""
    protein_head = PROTEIN.default_head()  # the domains declare their checkpoints; the view reads them
    heads = (("shipped", str(protein_head)),) if protein_head is not None else ()
    small = str(PROTEIN.default_model)
    opts = {SMALL: Backbone(SMALL, "protein", spec=small, heads=heads, help=HELP_SMALL)}
    env = os.environ.get("MI_VIZ_ESMC_300M")
    big = env if env and Path(env).exists() else None
    if big is None:
        try:
            esmc_300m_weights()
            big = "esmc_300m"
        except BackboneUnavailable:
            pass
    if big is not None:
        opts["ESM-C 300M"] = Backbone(
            "ESM-C 300M", "protein", spec=big, help="`python -m mi_viz fetch-esmc` gets its weights."
        )
    if importlib.util.find_spec("antiberty") is not None:  # installed by make setup (its wheel carries the weights)
        ab = ANTIBODY.backbone()  # the domain's default backbone, resolved once: the page carries it whole
        ab_head = ab.head("mi")
        ab_heads = (("shipped", str(ab_head)),) if ab_head is not None else ()
        opts[ANTIBERTY_LABEL] = Backbone(
            ANTIBERTY_LABEL,
            "antibody",
            args=ab.args,
            spec=ab.spec,
            heads=ab_heads,
            core=ab,
            help="AntiBERTy (Ruffolo et al. 2021): a BERT masked LM of 558 M natural antibody sequences, from "
            "the antiberty==0.1.3 wheel (`pip install antiberty==0.1.3`).",
        )
    if importlib.util.find_spec("sapiens") is not None:  # a second antibody LM, its weights in its wheel too
        for spec, chain in (("sapiens-vh", "heavy"), ("sapiens-vl", "light")):
            core = ANTIBODY.backbone(spec)
            head = core.head("mi")
            opts[SAPIENS_LABELS[spec]] = Backbone(
                SAPIENS_LABELS[spec],
                "antibody",
                args=core.args,  # its domain: the chains decoded with its own validated defaults (VH)
                spec=core.spec,
                heads=(("shipped", str(head)),) if head is not None else (),
                core=core,
                help=f"Sapiens (Prihoda et al. 2022, BioPhi): a 0.57 M-parameter RoBERTa of human {chain} chains "
                "(OAS), from the sapiens==1.0.4 wheel (`pip install --no-deps sapiens==1.0.4`).",
            )
    paths = [(f, checkpoint_of(f)) for f in shipped_families()]
    paths += [
        (p.stem.removeprefix("family_"), p.with_suffix(""))
        for p in sorted(APP_FAMILIES.glob("family_*.json"))
        # a checkpoint is a JSON with its weights beside it (not the .contacts.json map kept with one)
        if not p.name.endswith(("_last.json", "_mi_head.json")) and checkpoint_paths(p.with_suffix(""))[0].exists()
    ]
    for name, path in paths:
        label = f"family {name}" + (f" · {FAMILY_NAMES[name]}" if name in FAMILY_NAMES else "")
        if path.parent == APP_FAMILIES:
            label += " · trained here"
        head = path.with_name(path.name + "_mi_head")
        heads = (("shipped", str(head)),) if Path(str(head) + ".json").exists() else ()
        opts[label] = Backbone(label, "family", args=(str(path),), heads=heads, help=f"checkpoint {path.name}")
    return opts
