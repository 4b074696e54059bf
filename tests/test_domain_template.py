"""The core driven by a domain that is not Sudoku: the template for the next domain.

A toy "twins" domain: sequences of 6 positions over 3 values whose joint is uniform over the
sequences with x0 == x1 and x2 == x3 (x4, x5 free). Its masked model is exact (conditionals
by enumeration of the 81 allowed sequences), so every MI is known in closed form: two masked
twins share ln 3 nats, everything else 0. It needs nothing but the protocols in
mi_viz.core.protocol: a model (mask_id, value_tokens, d_model, n_layers, forward_tokens) and a
domain object (encode / decode / position_name / relations / score / summarize).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from mi_viz.core.attention import NoAttention
from mi_viz.core.bench import run_bench
from mi_viz.core.mi import ground_truth_mi
from mi_viz.core.mi_data import truth_shard
from mi_viz.core.mi_head import HeadConfig, MIHead, check_head_fits
from mi_viz.core.mi_report import ReportStates, mi_report
from mi_viz.core.protocol import ModelOutput
from mi_viz.core.reading import read_state
from mi_viz.core.samplers import SAMPLERS, SamplerConfig, decode

L, V, MASK = 6, 3, 3


class TwinsModel(torch.nn.Module):
    """Exact conditionals of the uniform joint over {x : x0 = x1, x2 = x3}; hidden states are a
    fixed random embedding of the tokens, so an MI head has something to read. An nn.Module, as
    every backbone is (the app puts it in eval mode, caches fingerprint it)."""

    mask_id = MASK
    d_model = 8
    n_layers = 1

    def __init__(self):
        super().__init__()
        allowed = [s for s in itertools.product(range(V), repeat=L) if s[0] == s[1] and s[2] == s[3]]
        self.seqs = torch.tensor(allowed)  # (81, L)
        self.value_tokens = torch.arange(V)
        g = torch.Generator().manual_seed(0)
        self.emb = torch.randn(V + 1, L, self.d_model, generator=g)  # (token, position, D)

    def forward_tokens(self, tokens, hidden_layers=()):
        given = tokens != MASK  # (B, L)
        ok = ((self.seqs[None] == tokens[:, None]) | ~given[:, None]).all(-1).double()  # (B, 81)
        onehot = torch.nn.functional.one_hot(self.seqs, V).double()  # (81, L, V)
        p = torch.einsum("bs,slv->blv", ok, onehot)
        p = p / p.sum(-1, keepdim=True).clamp_min(1)
        hidden = self.emb[tokens, torch.arange(L)]  # (B, L, D)
        return ModelOutput(
            logits=torch.log(p).clamp_min(-1e4).float(), hidden=hidden, layers={i: hidden for i in hidden_layers}
        )


class TwinsDomain:
    name = "twins"
    value_names = ("a", "b", "c")
    mask_id = MASK
    sampler_defaults = {"eb": {"gamma": 0.5}}
    unsaved_columns = ()
    default_temperature = 1.0  # outputs are sampled: argmax would write one twin pair every time
    default_model = None  # nothing on disk: the model is built from the joint

    def load_model(self, spec=None, device="cpu"):
        return TwinsModel()

    def default_head(self):
        return None

    def encode(self, prompts):  # "a_b__c" -> tokens, '_' masked
        return torch.tensor([[MASK if ch == "_" else "abc".index(ch) for ch in p] for p in prompts])

    def decode(self, tokens):
        return ["".join("_" if t == MASK else "abc"[t] for t in row) for row in tokens.tolist()]

    def position_name(self, i, length=L):
        return f"x{i}"

    def relations(self, length=L):
        rel = np.zeros((L, L), dtype=np.int64)
        rel[0, 1] = rel[1, 0] = rel[2, 3] = rel[3, 2] = 1
        return rel, ("none", "twins")

    def score(self, prompts, final):
        out = self.decode(final)
        return [
            {
                "prompt": p,
                "output": o,
                "valid": int(o[0] == o[1] and o[2] == o[3]),
                "keeps_prompt": int(all(a in ("_", b) for a, b in zip(p, o))),
            }
            for p, o in zip(prompts, out)
        ]

    def groups(self, prompts):  # every prompt has L positions: one batch
        return [list(range(len(prompts)))]

    def summarize(self, rows):
        return {"valid_frac": sum(r["valid"] for r in rows) / max(1, len(rows))}

    def judge(self, model, reference=None):
        return lambda rows: {}  # no set-level measure needs the model here


DOMAIN = TwinsDomain()


def test_ground_truth_mi_is_exact_on_the_toy_joint():
    model = DOMAIN.load_model()
    x = DOMAIN.encode(["______", "a_____", "__b___"])
    gt = ground_truth_mi(model, x, eps=0.0)
    want = torch.zeros(3, L, L)
    want[0, 0, 1] = want[0, 1, 0] = want[0, 2, 3] = want[0, 3, 2] = math.log(3)  # both twins masked
    want[1, 2, 3] = want[1, 3, 2] = math.log(3)  # x0 is given, so x1 is determined; x2 and x3 share ln 3
    want[2, 0, 1] = want[2, 1, 0] = math.log(3)  # x2 is given, so x3 is determined
    assert torch.allclose(gt.mi, want, atol=1e-6)
    assert gt.asymmetry.max() < 1e-6  # an exact joint is self-consistent
    assert torch.allclose(gt.entropy[0], torch.full((L,), math.log(3)).double().float(), atol=1e-6)


def test_a_truth_shard_pads_and_matches_the_exact_map():
    """core.mi_data.truth_shard (the protein and antibody MI datasets' shards): each state's map at
    its place, the padding zero, the tokens kept."""
    model = DOMAIN.load_model()
    x = DOMAIN.encode(["______", "a_____"])
    shard = truth_shard(model, [x[0], x[1]], max_length=L + 2, pad=7, eps=0.0, chunk=64, device="cpu")
    want = ground_truth_mi(model, x, eps=0.0)
    assert shard["mi"].shape == (2, L + 2, L + 2) and shard["mi"].dtype == torch.float16
    assert torch.allclose(shard["mi"][:, :L, :L].float(), want.mi, atol=1e-3)
    assert shard["mi"][:, L:].abs().sum() == 0 and (shard["tokens"][:, L:] == 7).all()
    assert torch.equal(shard["passes"], want.passes)


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_every_sampler_decodes_the_toy_domain(name):
    model = DOMAIN.load_model()
    torch.manual_seed(0)
    target = SAMPLERS[name].head_kind  # the map the rule reads: a head trained on it
    head = MIHead(HeadConfig(d_in=model.d_model, n_values=V, d_hidden=8, rank=4, d_pair=4, target=target)).eval()
    check_head_fits(head, model)
    prompts = ["______", "a___c_", "__b___"]
    cfg = SamplerConfig(name, gamma=0.05 if name in ("mi-gt", "mi", "mi-zero", "eb") else None, temperature=1.0, seed=1)
    if "attention" in SAMPLERS[name].reads and not hasattr(model, "attention_probe"):
        # a rule that reads attention, on a model that exposes none: refused by name, nothing decoded
        with pytest.raises(NoAttention, match="TwinsModel does not expose its attention"):
            run_bench(DOMAIN, model, prompts, cfg)
        return
    res = run_bench(DOMAIN, model, prompts, cfg, head=head if cfg.needs_head else None)
    assert all(r["keeps_prompt"] for r in res.rows) and all("_" not in r["output"] for r in res.rows)
    assert res.summary["n"] == 3 and res.summary["avg_passes"] >= 1
    if name in ("sequential", "mi-gt"):  # one twin at a time, or the exact MI keeps twins apart: always valid
        assert res.summary["valid_frac"] == 1.0


def test_mi_gt_never_unmasks_two_twins_together():
    """With the exact MI, a twin's charge (lam ln 3) over the budget never admits both twins in one
    pass, while independent positions (each charged its entropy, ln 3) still go together."""
    model = DOMAIN.load_model()
    cfg = SamplerConfig("mi-gt", gamma=3.5, lam=10.0, scan="skip")
    res = decode(model, DOMAIN.encode(["______"] * 4), cfg, record=True)
    for tr in res.traces:
        for st in tr.steps:
            assert not {0, 1} <= set(st.selected) and not {2, 3} <= set(st.selected)
        assert sum(len(st.selected) for st in tr.steps) == L and len(tr.steps) < L  # and still parallel
    assert all(r["valid"] for r in DOMAIN.score(["______"] * 4, res.tokens))


def test_head_invariants_and_report_on_the_toy_domain():
    model = DOMAIN.load_model()
    torch.manual_seed(0)
    head = MIHead(HeadConfig(d_in=model.d_model, n_values=V, d_hidden=8, rank=4, d_pair=4, hidden_layers=[0])).eval()
    x = DOMAIN.encode(["______", "a_____", "ab_cab"])
    with torch.inference_mode():
        mi = read_state(model, x, head).mi  # (3, L, L)
    masked = x == MASK
    assert torch.equal(mi, mi.transpose(1, 2)) and (mi >= 0).all()
    assert (mi.diagonal(dim1=1, dim2=2) == 0).all() and (mi[~(masked[:, :, None] & masked[:, None, :])] == 0).all()
    rel, _ = DOMAIN.relations()
    states = DOMAIN.encode(["______", "a_____", "__b___"])  # twins masked together in every state
    rep = mi_report(model, head, ReportStates(given=states), relations=rel)
    summary, pt = rep.summary, rep.pairs
    assert summary["n_states"] == 3 and (pt.relation > 0).any() and (pt.relation == 0).any()
    assert summary["auroc_structure_gt"] == 1.0  # the exact map separates twins from the rest
    nostruct = mi_report(model, head, ReportStates(DOMAIN.encode(["______"] * 3), n=3)).summary
    assert nostruct["auroc_structure_gt"] is None  # a domain without known relations: the keys are null


def test_decode_order_is_the_step_that_wrote_each_position():
    """DecodeResult.revealed against the recorded trace (0 for the given), run_bench keeps it per
    item in the items' order, and order_map averages it by hand-worked shares."""
    from mi_viz.core.order import order_map

    model = DOMAIN.load_model()
    prompts = ["______", "a___c_", "__b___"]
    cfg = SamplerConfig("topk", k=2)
    res = decode(model, DOMAIN.encode(prompts), cfg, record=True)
    for b, tr in enumerate(res.traces):
        want = np.zeros(L, dtype=np.int64)
        for st in tr.steps:
            want[st.selected] = st.step + 1
        assert np.array_equal(res.revealed[b], want)
    bench = run_bench(DOMAIN, model, prompts, cfg)
    assert [list(r) for r in bench.revealed] == [list(r) for r in res.revealed]
    # shares: 1/3, 2/3, 1 for a three-step decode; a given position is left out of its mean
    got = order_map([np.array([1, 1, 2, 2, 3, 3]), np.array([0, 1, 0, 1, 2, 2])])
    np.testing.assert_allclose(got, [1 / 3, (1 / 3 + 1 / 2) / 2, 2 / 3, (2 / 3 + 1 / 2) / 2, 1, 1])
    with pytest.raises(ValueError, match="lengths"):
        order_map([np.array([1, 2]), np.array([1, 2, 3])])


# --- the page half: the toy domain in the app, by the files a new domain touches ----------------

TOY_VIEW = '''"""The twins' view: one decode page, no page file (app.py calls the decode page for it)."""

from __future__ import annotations

import plotly.graph_objects as go

from ..kit.models import Backbone
from .base import Item, PagePlan, View


class TwinsView(View):
    def __init__(self):
        super().__init__(
            name="Twins", keys={"decode": "tdec", "compare": "tcmp", "sweep": "tsw", "estimator": "tmie"},
            pages=(PagePlan("", "Twins decode", ":material/link:", kind="decode", url="twins_decode"),),
        )

    def backbones(self):
        return [Backbone("Twins joint", "twins")]

    def backbone_picker(self, key):
        return self.backbones()[0]

    def decode_input(self, key, dom):
        return Item("a_____", "a_____", "x0 = a, the rest masked"), None

    def state_figure(self, dom, item, trace, t, focus=None, title="", small=False):
        return go.Figure(go.Bar(y=list(trace.tokens_at(t))), layout={"title": title})


VIEW = TwinsView()
'''

# what the toy domain writes outside its own folder: (path, how) -- the list a new domain follows
TOY_OUTSIDE = (
    ("mi_viz/domains/__init__.py", "its registry line"),
    ("pages/views/twins.py", "its view (pages declared without files)"),
)  # the import contracts cover it by wildcard (mi_viz.domains.*): pyproject.toml is not edited


def _tree_with_domain(root, name: str, source: str, view: str) -> list[str]:
    """A copy of the library and the app with a domain added as docs/adding-a-domain.md says (its folder
    with `source` as __init__.py, its registry line, `view` as pages/views/NAME.py); -> the paths
    written outside mi_viz/domains/NAME/, measured (every file of the copy that differs from the tree's)."""
    import shutil

    from conftest import ROOT

    for part in ("mi_viz", "pages", "training", "benchmarks"):  # the packages the import contracts read
        shutil.copytree(ROOT / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("app.py", "pyproject.toml"):
        shutil.copy(ROOT / part, root / part)
    folder = root / "mi_viz" / "domains" / name
    folder.mkdir()
    (folder / "__init__.py").write_text(source)
    reg = root / "mi_viz/domains/__init__.py"
    line = '    "antibody": "mi_viz.domains.antibody",\n'
    reg.write_text(reg.read_text().replace(line, line + f'    "{name}": "mi_viz.domains.{name}",\n'))
    (root / f"pages/views/{name}.py").write_text(view)
    changed = []
    for f in sorted(root.rglob("*")):
        rel = f.relative_to(root).as_posix()
        if f.is_file() and "__pycache__" not in rel and not rel.startswith(f"mi_viz/domains/{name}/"):
            if not (ROOT / rel).is_file() or (ROOT / rel).read_bytes() != f.read_bytes():
                changed.append(rel)
    return changed


def _toy_tree(root) -> list[str]:
    """The twins domain added to a copy of the tree; -> the paths written outside its folder."""
    import inspect

    head = "from __future__ import annotations\n\nimport itertools\n\nimport numpy as np\nimport torch\n\n"
    head += "from mi_viz.core.protocol import ModelOutput\n\nL, V, MASK = 6, 3, 3\n\n\n"
    body = inspect.getsource(TwinsModel) + "\n\n" + inspect.getsource(TwinsDomain) + "\n\nDOMAIN = TwinsDomain()\n"
    return _tree_with_domain(root, "twins", head + body, TOY_VIEW)


def test_a_toy_domain_in_the_app_touches_at_most_two_files_outside_its_folder(tmp_path):
    """Issue 58: the twins domain added to a copy of the tree (its folder, its registry line, one
    view file): the navigation lists its page, the decode page decodes it with no exception, every
    import contract holds and covers it (by wildcard); <= 2 files outside its folder."""
    import subprocess
    import sys

    from conftest import ROOT

    written = _toy_tree(tmp_path)
    assert written == sorted(p for p, _ in TOY_OUTSIDE) and len(written) <= 2, written
    script = """
import sys
from streamlit.testing.v1 import AppTest
from pages.views import VIEWS
assert "twins" in VIEWS and [p.url for p in VIEWS["twins"].pages] == ["twins_decode"], VIEWS

page = "from pages.decode import render; from pages.views import VIEWS; render(VIEWS['twins'], 'Twins decode')"
at = AppTest.from_string(page, default_timeout=120).run()
assert not at.exception, [e.value for e in at.exception]
assert [t.value for t in at.title] == ["Twins decode"]
line = [c.value for c in at.caption if "Twins joint" in c.value]  # the decode's own line: input, backbone, passes
assert line and "x0 = a, the rest masked" in line[0] and "eb gamma=0.5" in line[0] and " passes" in line[0], line
assert any("No MI head for this backbone" in i.value for i in at.info)
"""
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    lint = subprocess.run([str(ROOT / ".venv/bin/lint-imports")] if (ROOT / ".venv/bin/lint-imports").exists()
                          else ["lint-imports"], cwd=tmp_path, env=env, capture_output=True, text=True)  # fmt: skip
    assert lint.returncode == 0, lint.stdout[-3000:]
    from test_house import uncovered

    from mi_viz.domains import DOMAINS

    assert uncovered((tmp_path / "pyproject.toml").read_text(), [*DOMAINS, "twins"]) == []


# --- a toy domain with its own alphabet, on a masked LM on disk ---------------------------------------
DNA_DOMAIN = '''"""A toy DNA domain: short sequences over A, C, G, T decoded by a masked LM on disk (a BERT whose
vocabulary holds the 4 bases), loaded by the same loader as the protein and antibody LMs over this
domain's own alphabet. No cli.py: the generic bench and sweep read a file of inputs."""

from __future__ import annotations

import os

import numpy as np
import torch

from mi_viz.lm.alphabet import Alphabet
from mi_viz.lm.masked_lm import lm_weights, load_masked_lm

BASES = "ACGT"
MASK, PAD = 4, 5
DNA = Alphabet(BASES, (0, 1, 2, 3), MASK, PAD)


class DNADomain:
    name = "dna"
    value_names = tuple(BASES)
    mask_id = MASK
    sampler_defaults: dict = {}
    unsaved_columns = ()
    default_temperature = 1.0

    @property
    def default_model(self):
        return os.environ["MI_VIZ_DNA_LM"]  # the LM folder (a toy ships none)

    def load_model(self, spec=None, device="cpu"):
        return load_masked_lm(spec or self.default_model, DNA, device)

    def weights(self, spec=None):
        return lm_weights(spec or self.default_model)

    def default_head(self):
        return None

    def encode(self, items):
        rows = [[MASK if c == "_" else BASES.index(c) for c in s.strip().upper()] for s in items]
        if len({len(r) for r in rows}) > 1:
            raise ValueError("sequences of different lengths: decode them in groups")
        return torch.tensor(rows)

    def decode(self, tokens):
        return ["".join("_" if t == MASK else BASES[t] for t in row) for row in tokens.tolist()]

    def groups(self, items):
        by: dict = {}
        for i, s in enumerate(items):
            by.setdefault(len(s.strip()), []).append(i)
        return [by[k] for k in sorted(by)]

    def position_name(self, i, length=0):
        return str(i + 1)

    def relations(self, length=0):
        return None

    def score(self, items, final):
        return [{"input": p, "output": o, "gc": round(sum(c in "GC" for c in o) / len(o), 4)}
                for p, o in zip(items, self.decode(final))]

    def summarize(self, rows):
        return {"gc": round(float(np.mean([r["gc"] for r in rows])), 4) if rows else 0.0}

    def judge(self, model, reference=None):
        return lambda rows: {}


DOMAIN = DNADomain()
'''

DNA_VIEW = TOY_VIEW.replace("Twins", "Dna").replace("twins", "dna").replace('"tdec"', '"ddec"').replace(
    '"tcmp"', '"dcmp"').replace('"tsw"', '"dsw"').replace('"tmie"', '"dmie"').replace(
    'Item("a_____", "a_____", "x0 = a, the rest masked")', 'Item("AC____GT", "AC____GT", "AC, 4 masked, GT")'
)  # fmt: skip


def _dna_lm(folder) -> None:
    """A tiny BERT whose vocabulary is the 4 bases (and its specials), saved as transformers saves one."""
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"ACGT"]) + "\n")
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=9, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32)
    BertForMaskedLM(cfg).save_pretrained(folder)
    BertTokenizer(str(folder / "vocab.txt"), do_lower_case=False).save_pretrained(folder)


@pytest.mark.slow
def test_a_dna_domain_with_its_own_alphabet_runs_through_the_cli_and_the_app(tmp_path):
    """A 4-letter domain added to a copy of the tree (its folder, the registry line, its view: 2 files
    outside the folder) on a masked LM folder read by the protein LMs' loader over the domain's own
    alphabet; no cli.py: bench and sweep --jobs 2 run from a file of inputs, bad input exits 2 with a
    message, and the decode page decodes it."""
    import json
    import subprocess
    import sys

    changed = _tree_with_domain(tmp_path, "dna", DNA_DOMAIN, DNA_VIEW)
    assert changed == ["mi_viz/domains/__init__.py", "pages/views/dna.py"], changed
    _dna_lm(tmp_path / "dna_lm")
    (tmp_path / "in.txt").write_text("AC____GT\nA______T\nACGT__GT\n")
    (tmp_path / "bad.txt").write_text("ACGX__GT\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path), "MI_VIZ_DNA_LM": str(tmp_path / "dna_lm")}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "mi_viz", *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600)  # fmt: skip

    run = cli("bench", "dna", "--inputs", "in.txt", "--sampler", "topk", "--k", "2", "--out", "b.csv")
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert (
        summary["n"] == 3 and 0 <= summary["gc"] <= 1 and summary["avg_passes"] == pytest.approx(2.0)
    )  # 4, 6 and 2 masked: 2, 3 and 1 passes
    rows = (tmp_path / "b.csv").read_text().splitlines()
    assert len(rows) == 4 and all(set(r.split(",")[1]) <= set("ACGT") for r in rows[1:])  # every base written
    run = cli(
        "sweep", "dna", "--inputs", "in.txt", "--grid", "sequential; topk:k=2,3", "--jobs", "2", "--out-dir", "sw"
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert len((tmp_path / "sw/sweep.csv").read_text().splitlines()) == 4
    run = cli("bench", "dna", "--inputs", "bad.txt", "--out", "x.csv")
    assert run.returncode == 2 and "not one the dna domain reads" in run.stderr and not (tmp_path / "x.csv").exists()
    script = """
from streamlit.testing.v1 import AppTest
page = "from pages.decode import render; from pages.views import VIEWS; render(VIEWS['dna'], 'Dna decode')"
at = AppTest.from_string(page, default_timeout=120).run()
assert not at.exception, [e.value for e in at.exception]
line = [c.value for c in at.caption if "AC, 4 masked, GT" in c.value]
assert line and " passes" in line[0], [c.value for c in at.caption]
"""
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
