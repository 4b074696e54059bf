"""Masked LMs on disk as backbones (tiny random BERT and ESM saved to a folder, and the AntiBERTy
the wheel ships) and the antibody domain: numbering, masks, judges, the CLI, bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from mi_viz.core.attention import recording
from mi_viz.core.checkpoints import CheckpointError
from mi_viz.domains.protein.alphabet import AMINO_ACIDS, MASK, PAD, encode
from mi_viz.domains.protein.masked_lm import MaskedLMError, load_masked_lm

ROOT = Path(__file__).resolve().parents[1]
VH = (
    "EVQLVESGGGLVQPGGSLRLSCAASGFTFSSYAMSWVRQAPGKGLEWVSAISGSGGSTYYADSVKGRFTISRDNSKNTLYLQMNSLRAEDTAVYYC"
    "AKDRLSITIRPRYYGLDVWGQGTTVTVSS"
)
AMINOS = "ACDEFGHIKLMNPQRSTVWY"


def _bert_dir(tmp: Path) -> Path:
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    d = tmp / "tiny_bert"
    d.mkdir()
    (d / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *AMINOS]) + "\n")
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=25, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
    BertForMaskedLM(cfg).save_pretrained(d)
    BertTokenizer(str(d / "vocab.txt"), do_lower_case=False).save_pretrained(d)
    return d


def _esm_dir(tmp: Path) -> Path:
    from transformers import EsmConfig, EsmForMaskedLM, EsmTokenizer

    d = tmp / "tiny_esm"
    d.mkdir()
    vocab = [
        "<cls>",
        "<pad>",
        "<eos>",
        "<unk>",
        *"LAGVSERTIDQKNPFYMHWC",
        "X",
        "B",
        "U",
        "Z",
        "O",
        ".",
        "-",
        "<null_1>",
        "<mask>",
    ]
    (d / "vocab.txt").write_text("\n".join(vocab) + "\n")
    torch.manual_seed(0)
    cfg = EsmConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        pad_token_id=1,
        mask_token_id=len(vocab) - 1,
        position_embedding_type="rotary",
        max_position_embeddings=128,
        token_dropout=False,
    )
    EsmForMaskedLM(cfg).save_pretrained(d)
    EsmTokenizer(str(d / "vocab.txt")).save_pretrained(d)
    return d


@pytest.mark.parametrize("make", [_bert_dir, _esm_dir])
def test_a_masked_lm_directory_is_a_backbone(tmp_path, make):
    """Logits at the 20 amino acids in alphabet order equal the LM's own at those tokens; padding
    changes nothing; the hidden states and the attention (rows over the residues) come out."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    d = make(tmp_path)
    m = load_masked_lm(d)
    seq = "MKVLAAGIWC"
    x = encode(seq)[None]
    x[0, 3] = MASK
    with torch.no_grad():
        out = m.forward_tokens(x, (0, 1))
        lm = AutoModelForMaskedLM.from_pretrained(d, local_files_only=True, attn_implementation="eager").eval()
        tok = AutoTokenizer.from_pretrained(d, local_files_only=True)
        text = seq[:3] + tok.mask_token + seq[4:]
        ids = tok(text if "bert" in d.name else text, return_tensors="pt")["input_ids"]
        if "bert" in d.name:
            ids = tok(" ".join(seq[:3]) + f" {tok.mask_token} " + " ".join(seq[4:]), return_tensors="pt")["input_ids"]
        ref = lm(input_ids=ids).logits[0, 1:-1]
        vocab = tok.get_vocab()
        want = ref[:, [vocab[a] for a in AMINO_ACIDS]]
    assert out.logits.shape == (1, 10, 20) and out.hidden.shape == (1, 10, 32)
    assert set(out.layers) == {0, 1}
    assert torch.allclose(out.logits[0], want, atol=1e-5)
    padded = torch.cat([x, torch.full((1, 3), PAD)], 1)
    both = torch.cat([padded, padded], 0)
    with torch.no_grad():
        assert torch.allclose(m.forward_tokens(both).logits[:, :10], out.logits.expand(2, -1, -1), atol=1e-5)
        with recording(m) as box:
            m.forward_tokens(x)
    A = box[-1]
    assert A.shape == (1, 10, 10) and torch.all(A >= 0) and torch.all(A.sum(-1) <= 1 + 1e-5)


def test_bad_masked_lm_directories_are_named(tmp_path):
    d = _bert_dir(tmp_path)
    with pytest.raises(MaskedLMError, match="not a directory"):
        load_masked_lm(tmp_path / "absent")
    for n in ("tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (d / n).rename(tmp_path / n)
    with pytest.raises(MaskedLMError, match="no tokenizer"):
        load_masked_lm(d)
    for n in ("tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (tmp_path / n).rename(d / n)
    from safetensors.torch import load_file, save_file

    w = load_file(str(d / "model.safetensors"))
    save_file({**w, "cls.extra.weight": torch.zeros(2)}, str(d / "model.safetensors"))
    with pytest.raises(CheckpointError, match=r"unexpected keys \['cls.extra.weight'\]"):
        load_masked_lm(d)
    (d / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(CheckpointError, match="not a readable weights file"):
        load_masked_lm(d)
    g = tmp_path / "gpt"
    g.mkdir()
    (g / "config.json").write_text('{"model_type": "gpt2", "vocab_size": 25, "n_layer": 1, "n_embd": 8, "n_head": 2}')
    (g / "pytorch_model.bin").write_bytes(b"x")
    (g / "vocab.txt").write_text("a\n")
    with pytest.raises(MaskedLMError, match="not a masked LM"):
        load_masked_lm(g)


def test_antiberty_from_its_wheel_matches_its_own_runner():
    """The shipped default, loaded from the installed package's folder (weights_only), gives the
    logits AntiBERTy's own runner gives, at the 20 amino acids."""
    from antiberty import AntiBERTyRunner

    m = load_masked_lm("antiberty")
    assert m.n_params() == 25_759_769 - 0 or m.n_params() > 25_000_000
    x = encode(VH)[None]
    x[0, 98:110] = MASK
    with torch.no_grad():
        ours = m.forward_tokens(x).logits[0]
        r = AntiBERTyRunner()
        s = " ".join("[MASK]" if 98 <= i < 110 else a for i, a in enumerate(VH))
        t = r.tokenizer([s], return_tensors="pt")
        theirs = r.model(input_ids=t["input_ids"], attention_mask=t["attention_mask"]).prediction_logits[0, 1:-1]
    vocab = r.tokenizer.get_vocab()
    assert torch.allclose(ours, theirs[:, [vocab[a] for a in AMINO_ACIDS]], atol=1e-4)


def test_infill_masks_the_named_regions():
    from mi_viz.domains.antibody import NumberingError, infill

    it = infill("vh", VH, "cdr3")
    assert it.locus == "igh" and it.prompt.count("_") == len("AKDRLSITIRPRYYGLDV")
    s, e = it.spans[0]
    assert VH[s:e] == "AKDRLSITIRPRYYGLDV" and VH[s - 1] == "C" and VH[e] == "W"
    j = it.junction
    assert VH[j[0] : j[1]] == "CAKDRLSITIRPRYYGLDVW"
    cdrs = infill("vh", VH, "cdrs")
    got = ["".join(VH[a:b]) for a, b in cdrs.spans]
    assert got == ["GFTFSSYA", "ISGSGGST", "AKDRLSITIRPRYYGLDV"]
    assert infill("vh", VH, "3-5").spans == ((2, 5),)
    assert infill("vh", VH, "cdr1+cdr2").prompt.count("_") == 16
    for bad, msg in (("cdr9", "unknown region"), ("0-5", "outside"), ("3-500", "outside"), ("", "nothing to mask")):
        with pytest.raises(NumberingError, match=msg):
            infill("vh", VH, bad)


def test_bad_chains_are_named():
    from mi_viz.domains.antibody import NumberingError, SequenceError, infill

    with pytest.raises(SequenceError, match="J"):
        infill("x", VH[:50] + "J" + VH[51:])
    with pytest.raises(NumberingError, match="nucleotides"):
        infill("x", "ATGCATGCATGCAAATTTGGGCCCATG" * 4)
    with pytest.raises(NumberingError, match="cannot number"):
        infill("x", "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVVHSLAKWKRQTLGQHDF")


def test_shipped_chains_number_to_their_recorded_junction():
    """Every shipped chain: riot-na's CDR3 is OLGA's junction without its Cys and Trp / Phe."""
    from mi_viz.domains.antibody import DATA, chains_of
    from mi_viz.domains.antibody.chains import read_chains

    items = chains_of(DATA / "val.tsv", "cdr3")
    recs = dict(read_chains(DATA / "val.tsv"))
    assert len(items) == 64 and {i.locus for i in items} == {"igh", "igk", "igl"}
    for it in items:
        j = it.junction
        assert it.sequence[j[0] : j[1]] == recs[it.id].junction


def test_region_pll_is_the_mean_masked_log_probability():
    """region_pll against a hand computation on a tiny BERT: each masked residue scored alone."""
    import tempfile

    from mi_viz.domains.antibody.judge import region_pll

    with tempfile.TemporaryDirectory() as t:
        m = load_masked_lm(_bert_dir(Path(t)))
    seq, mask = "MKVLAAGIWC", np.array([0, 1, 0, 0, 1, 0, 0, 0, 0, 0], bool)
    want = []
    with torch.no_grad():
        for i in np.flatnonzero(mask):
            x = encode(seq)[None]
            x[0, i] = MASK
            want.append(float(m.forward_tokens(x).logits[0, i].log_softmax(-1)[AMINO_ACIDS.index(seq[i])]))
    assert region_pll(m, [seq], [mask], batch=1) == pytest.approx([np.mean(want)], abs=1e-5)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "mi_viz", *map(str, args)], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.slow
def test_bench_antibody_cli_and_its_bad_input(tmp_path):
    ref = tmp_path / "ref.fasta"
    ref.write_text(">r1\n" + VH + "\n>r2\n" + VH.replace("AKDRL", "ARDGS") + "\n")
    fa = tmp_path / "vh.fasta"
    fa.write_text(">vh\n" + VH + "\n")
    from mi_viz.domains.antibody.chains import write_chains
    from mi_viz.domains.antibody.recombination import Chain

    write_chains(
        tmp_path / "ref.tsv", [(f"r{k}", Chain(VH, "CAKDRLSITIRPRYYGLDVW", "heavy", "v", "j")) for k in range(4)]
    )
    r = _cli(
        "bench",
        "antibody",
        "--fasta",
        fa,
        "--mask",
        "cdr3",
        "--sampler",
        "topk",
        "--k",
        "4",
        "--reference",
        tmp_path / "ref.tsv",
        "--clusters",
        "2",
        "--no-judge",
        "--out",
        tmp_path / "x.csv",
    )
    assert r.returncode == 0, r.stderr
    import json

    s = json.loads(r.stdout.strip().splitlines()[-1])
    assert s["avg_passes"] == 5 and {"pll", "pll_natural", "recovery", "jsd"} <= set(s)
    for bad, msg in (("--mask cdr9", "unknown region"), ("--fasta NOPE.fa", "not found")):
        k, v = bad.split()
        args = ["bench", "antibody", "--fasta", fa, "--mask", "cdr3", "--out", tmp_path / "y.csv", "--no-judge"]
        args[args.index(k) + 1] = v
        r = _cli(*args)
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr
    nt = tmp_path / "nt.fasta"
    nt.write_text(">n\nATGCATGCATGCAAATTTGGGCCCATGATGCATGCATGC\n")
    r = _cli("bench", "antibody", "--fasta", nt, "--out", tmp_path / "z.csv", "--no-judge")
    assert r.returncode == 2 and "nucleotides" in r.stderr
    assert not (tmp_path / "z.csv").exists() and not (tmp_path / "y.csv").exists()


def test_antibody_sampler_defaults_are_the_validation_choice():
    """The defaults the CLI and the app use are the rows benchmarks/defaults.py (antibody) chose on
    the validation chains (mi-gt, the oracle, takes mi's)."""
    import json

    from mi_viz.core.samplers import PARAMS
    from mi_viz.domains.antibody import DOMAIN

    choice = json.loads((ROOT / "results" / "antibody" / "val_sweep" / "choice.json").read_text())
    chosen = {s: {k: v for k, v in row.items() if k in PARAMS} for s, row in choice["chosen"].items() if row}
    assert chosen and "mi" in chosen
    assert {s: p for s, p in DOMAIN.sampler_defaults.items() if s != "mi-gt"} == chosen
    assert DOMAIN.sampler_defaults["mi-gt"] == chosen["mi"]


def test_cdr3_pair_statistics_anchor_both_ends_and_see_a_coupling():
    """benchmarks/antibody_cdr3_pairs: CDR3s of any length on columns anchored at both ends (as
    IMGT numbers a CDR3), and a set that keeps a coupling of the reference scores above one that
    draws the same letters independently."""
    import numpy as np

    from benchmarks.antibody_cdr3_pairs import anchored, judged

    assert anchored(["AB", "ABCDE", "ABCD"]) == ["A---B", "ABCDE", "AB-CD"]
    g = np.random.default_rng(0)
    pairs = ["ACDE", "WCDY", "ACKE", "WCKY"]  # column 1 decides column 4 (A..E, W..Y)
    ref = [pairs[i] for i in g.integers(0, 4, 400)]
    coupled = [pairs[i] for i in g.integers(0, 4, 200)]
    loose = ["".join(p[k] for p, k in zip((pairs[i] for i in g.integers(0, 4, 4)), range(4))) for _ in range(200)]
    got = judged({"coupled": coupled, "independent": loose}, ref, bootstrap=10)
    assert got["coupled"]["pair_corr_pearson"] > 0.9 > got["independent"]["pair_corr_pearson"]
    assert got["independent"]["single_freq_pearson"] > 0.9  # the same letters, column by column
