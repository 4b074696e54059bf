"""Family command-line verbs.

    python -m mi_viz train-family --msa PF00595.align.80.fasta --structure 2H3L_A.pdb --map 2H3L_A.indices \\
        --out checkpoints/family_PF00595
    python -m mi_viz contacts --backbone checkpoints/family_PF00595 --msa FILE --structure FILE.pdb \\
        --out DIR/contacts.json   (DIR then holds results/family/NAME's reading: contact_classes.json ...)
    python -m mi_viz bench family --backbone checkpoints/family_PF00595 --msa FILE --sampler mi --out OUT.csv
    python -m mi_viz sweep family --backbone ... --msa FILE --grid "sequential; topk:k=4,8" --out-dir DIR
    python -m mi_viz mi-report family --backbone ... --msa FILE --states 64 --out report.json

The alignment is the user's file (never shipped): the held-out rows are recomputed from it
with the split the checkpoint records (train.data_for), and the Potts model that scores
contacts and energies is fitted on its training rows once and cached under --cache.
As every verb, the last stdout line is a one-line JSON summary; bad input is an
`error: ...` line and exit status 2 (mi_viz.cli).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch

from ...core import driver, progress, strict_json
from ...core.checkpoints import checkpoint_paths
from ...core.cli_contract import DomainCLI, Verb
from ...core.cli_types import finite_float
from ...core.errors import InputError
from ...core.models import load_models
from ...core.npz import save_npz
from ...core.paths import portable
from ...core.reading import read_state
from ..cli_runs import report_run, run_of
from ..protein.report import head_vs_baselines, within_state_pearson
from . import family_domain
from .alignment import read_alignment
from .backbone import FamilyMDMConfig, masked_rows
from .pairstats import FamilyReference
from .pipelines import ContactsSettings, contacts_report, potts_for, read_family_inputs, train_from_inputs
from .predictors import ANCHORS
from .reading import JacobianBudget, contact_reading, jacobian_cost
from .structure import contact_map
from .train import MAX_ROWS, TrainFamilyConfig, data_for, profile_of

CACHE = Path("runs/cache")
log = logging.getLogger(__name__)


def add_arguments(command: str, p):
    p.add_argument("--backbone", default=None, help="family checkpoint (a shipped family's name, or a path)")
    p.add_argument("--msa", required=True, help="the family's alignment (FASTA), the one the backbone was trained on")
    p.add_argument("--cache", default=str(CACHE), help="where the fitted Potts model is kept between runs")
    if command == "mi-report":
        p.add_argument("--head", default=None, help="MI head checkpoint (default: the family's shipped head)")
        p.add_argument("--pairs", default=None, help="optional .npz with every masked pair (for plots)")
        return
    p.add_argument("--n", type=int, default=1000, help="family members to generate per setting")
    p.add_argument("--head", default=None, help="MI head checkpoint (mi sampler; default: the family's shipped head)")
    p.add_argument("--potts-iter", type=int, default=100, help="L-BFGS iterations of the Potts fit (energies)")
    p.add_argument("--bootstrap", type=int, default=100, help="bootstrap draws of the pair-correlation interval")
    p.add_argument(
        "--reference",
        choices=["heldout", "train"],
        default="heldout",
        help="the natural rows the generated ones are scored against: the held-out rows (results), or the "
        "training rows (choosing defaults without touching the held-out rows)",
    )


def load(a, dev: str):
    """(backbone, model, FamilyData) of --backbone and --msa: the backbone resolved once, its model
    built once in this process (Backbone.load; a sweep's workers build their own)."""
    b = family_domain(a.backbone).backbone()
    model = b.load(dev)
    data = data_for(b.dom.meta, read_alignment(a.msa))
    return b, model, data


def reference(a, data) -> FamilyReference:
    potts = potts_for(data, a.cache, a.potts_iter, progress.callback("Potts fit"))
    natural = data.heldout_rows if a.reference == "heldout" else data.train_rows
    return FamilyReference(natural, data.train_rows, potts)


def run(command: str, a, cfg_or_grid, dev: str):
    b, model, data = load(a, dev)
    dom = b.dom
    if command == "mi-report":
        _, head = load_models(dom, dom.checkpoint, a.head, dev, need_head=True)
        rel = dom.relations()

        def more(rep) -> dict:
            with torch.inference_mode():
                H = read_state(model, rep.tokens).entropy.double().numpy()  # (N, L)
            return {
                "within_state_pearson": round(within_state_pearson(rep.pairs.est, rep.pairs.gt, rep.pairs.state), 4),
                "baselines": head_vs_baselines(rep.pairs, H, a.seed),
                "family": dom.family,
                "head": portable(a.head or dom.default_head()),
            }

        states = masked_rows(data.heldout_rows, a.states, a.seed)
        report = driver.ReportTask(model, head, states=states, relations=rel[0] if rel else None, more=more)
        return driver.report(report, report_run(a))
    ref = reference(a, data)
    scorer = dom.judge(model, ref, bootstrap=a.bootstrap)
    if command == "sweep":
        Path(a.out_dir).mkdir(parents=True, exist_ok=True)
        floor = {**ref.floor(), "reference": a.reference, "reference_rows": len(ref.heldout), "family": dom.family}
        (Path(a.out_dir) / "floor.json").write_text(strict_json.dumps(floor, indent=1))
    task = driver.Task(
        dom,
        ["_" * dom.width] * a.n,
        {"inputs": f"n{a.n}_width{dom.width}", "family": dom.family, "reference": a.reference},
        b,
        weights=checkpoint_paths(dom.checkpoint)[0],
        head=a.head,
        score=lambda r: scorer(r.rows),
        columns={"family": dom.family, "floor": ref.floor()} if command == "bench" else {},
        title=f"{dom.family}: pair correlations vs passes",
        plot={"metric": "pair_corr_pearson", "scale": 1.0, "ylabel": "Pearson of C_ij(a,b) vs held-out rows"},
        temperature=a.temperature if command == "sweep" else None,
        sample_seed=getattr(a, "sample_seed", 0),
    )
    return driver.bench_or_sweep(task, cfg_or_grid, run_of(command, a), dev)


# --------------------------------------------------------------------------- top-level verbs


def add_alignment_arguments(p, msa: str, structure: str):
    """The inputs train and contacts share: the alignment, a structure, its column map and chain."""
    p.add_argument("--msa", required=True, help=msa)
    p.add_argument("--structure", default=None, help=structure)
    p.add_argument("--map", default=None, help="column -> residue map (indices file); without it, aligned here")
    p.add_argument("--chain", default=None, help="the structure's chain (default: its first)")


def add_train_arguments(p):
    add_alignment_arguments(
        p,
        msa="the family's alignment: aligned FASTA, one width, '-' = gap",
        structure="a member's structure (PDB): its contact map ships beside",
    )
    p.add_argument("--out", required=True, help="checkpoint path, e.g. checkpoints/family_PF00595")
    p.add_argument("--family", default=None, help="the family's name (default: from --out)")
    p.add_argument("--minutes", type=finite_float, default=None, help="wall-time budget across resumes (default 28)")
    p.add_argument(
        "--steps",
        type=int,
        default=None,
        help="step budget (default: about 80 passes over the training rows, 1,500-4,000)",
    )
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--n-heads", type=int, default=4)
    p.add_argument("--n-layers", type=int, default=4)
    p.add_argument("--max-rows", type=int, default=None, help="subsample larger alignments to this many rows")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None)


def train_family_cli(a) -> dict:

    family = a.family or Path(a.out).name.removeprefix("family_")
    inputs = read_family_inputs(a.msa, a.structure, a.map, a.chain, seed=a.seed, max_rows=a.max_rows or MAX_ROWS)
    tc = TrainFamilyConfig(seed=a.seed)
    for k, v in (("max_minutes", a.minutes), ("max_steps", a.steps), ("batch_size", a.batch_size)):
        if v is not None:
            setattr(tc, k, v)
    mc = FamilyMDMConfig(d_model=a.d_model, n_heads=a.n_heads, n_layers=a.n_layers)
    res = train_from_inputs(inputs, a.out, family, tc, mc, progress=progress.callback(f"training {family}"))
    print(strict_json.dumps(res))
    return res


def add_contacts_arguments(p):
    p.add_argument("--backbone", required=True, help="family checkpoint (name or path)")
    add_alignment_arguments(
        p,
        msa="the alignment the backbone was trained on",
        structure="PDB file (default: the contact map shipped beside the backbone)",
    )
    p.add_argument("--rows", type=int, default=200, help="held-out rows averaged over")
    p.add_argument("--masks-per-row", type=int, default=4)
    p.add_argument("--frac", type=finite_float, default=0.1, help="share of a row's columns masked per state")
    p.add_argument("--eps", type=finite_float, default=1e-3, help="pruning tolerance of the ground truth")
    p.add_argument("--head", default=None, help="MI head checkpoint (default: the family's shipped head, if any)")
    p.add_argument("--potts-iter", type=int, default=100, help="L-BFGS iterations of the Potts fit")
    p.add_argument("--cache", default=str(CACHE))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="summary JSON (the maps go to OUT with .npz)")
    p.add_argument(
        "--jacobian-rows",
        type=int,
        default=50,
        help="held-out rows the categorical Jacobian reads (two half-masks each; its cost is printed first)",
    )
    p.add_argument("--consensus-masks", type=int, default=40, help="masks of the consensus row for its Jacobian")
    p.add_argument(
        "--anchors",
        nargs="*",
        default=["ardca", "plmdca"],
        choices=ANCHORS,
        help="the field's models fitted beside (`make anchors` installs them; one not installed is named as absent)",
    )
    p.add_argument("--no-reading", action="store_true", help="the conditional MI report only: no Jacobian, no classes")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=None)


def contacts_cli(a) -> dict:
    """The conditional MI against the contacts (OUT, OUT.npz), then the whole contact reading in OUT's
    folder (reading.contact_reading: separation classes, the Jacobian, attention, anchors, the
    structure-free choice -> contact_classes.json), as the shipped families' results are made."""

    b, model, data = load(a, a.device)
    dom = b.dom
    if a.structure:
        prof = profile_of(data.train_rows, data.weights[~data.heldout])
        cmap = contact_map(a.structure, dom.width, fi=prof, indices=a.map, chain=a.chain)
    elif dom.contact_map is not None:
        cmap = dom.contact_map
    else:
        raise InputError("no structure: pass --structure FILE.pdb (the backbone ships no contact map)")
    budget = JacobianBudget(a.jacobian_rows, a.consensus_masks, a.seed)
    if not a.no_reading:
        budget.check(data)  # a budget that cannot run is refused before the minutes of conditional MI
    s = ContactsSettings(a.rows, a.masks_per_row, a.frac, a.eps, a.potts_iter, a.seed)
    res, maps = contacts_report(
        dom, model, data, cmap, a.head or dom.default_head(), a.cache, s, progress.callback("conditional MI")
    )
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(strict_json.dumps(res, indent=1))
    arrays: dict = {k: v.astype(np.float32) for k, v in maps.items()}
    save_npz(out.with_suffix(".npz"), **arrays)
    if not a.no_reading:
        folder = out.parent
        if out.with_suffix(".npz").name != "contacts.npz":  # the reading reads its maps as contacts.npz
            save_npz(folder / "contacts.npz", **arrays)
        cost = jacobian_cost(model, data, budget)
        log.info(
            "categorical Jacobian: %s passes (%d held-out rows x 2 masks + %d consensus masks), about %.0f s",
            f"{cost['passes']:,}", cost["rows"], budget.consensus_masks, cost["seconds"],
        )  # fmt: skip
        bar = progress.callback("Jacobian")
        reading = contact_reading(
            folder, dom.family, model, data, cmap, budget, a.anchors, progress=lambda _what, d, n: bar(d, n)
        )
        res["contact_classes"] = portable(folder / "contact_classes.json")
        res["extraction_chosen"] = reading["extraction"]["chosen"]
        res["anchors_absent"] = sorted(reading.get("anchors_absent", {}))
    print(strict_json.dumps(res))
    return res


CLI = DomainCLI(
    add_arguments=add_arguments,
    run=run,
    default_grid="sequential; topk:k=2,4,8; eb:gamma=0.5,1,2; mi:gamma=0.5,1,2:lam=1; mi-zero:gamma=0.5,1,2",
    verbs={
        "train-family": Verb("train a family backbone on an alignment", add_train_arguments, train_family_cli),
        "contacts": Verb(
            "conditional MI of a family backbone against a structure's contacts", add_contacts_arguments, contacts_cli
        ),
    },
)
