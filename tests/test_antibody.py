"""Masked LMs on disk as backbones (tiny random BERT and ESM saved to a folder, and the AntiBERTy
the wheel ships) and the antibody domain: numbering, masks, judges, the CLI, bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from mi_viz.core.attention import recording
from mi_viz.core.checkpoints import CheckpointError
from mi_viz.domains.protein.alphabet import AMINO_ACIDS, MASK, PAD, PROTEIN_ALPHABET, encode
from mi_viz.lm.masked_lm import MaskedLMError, load_masked_lm

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


def _esm_dir(tmp: Path, layers: int = 2) -> Path:
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
        num_hidden_layers=layers,
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
    m = load_masked_lm(d, PROTEIN_ALPHABET)
    seq = "MKVLAAGIWC"
    x = encode(seq)[None]
    x[0, 3] = MASK
    with torch.no_grad():
        out = m.forward_tokens(x, (0, 1))
        lm = AutoModelForMaskedLM.from_pretrained(d, local_files_only=True, attn_implementation="eager").eval()
        tok = AutoTokenizer.from_pretrained(d, local_files_only=True)
        if "bert" in d.name:  # BERT's WordPiece reads residues apart; ESM's tokenizer splits a run of letters
            text = " ".join(seq[:3]) + f" {tok.mask_token} " + " ".join(seq[4:])
        else:
            text = seq[:3] + tok.mask_token + seq[4:]
        ids = tok(text, return_tensors="pt")["input_ids"]
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
        load_masked_lm(tmp_path / "absent", PROTEIN_ALPHABET)
    for n in ("tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (d / n).rename(tmp_path / n)
    with pytest.raises(MaskedLMError, match="no tokenizer"):
        load_masked_lm(d, PROTEIN_ALPHABET)
    for n in ("tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (tmp_path / n).rename(d / n)
    from safetensors.torch import load_file, save_file

    w = load_file(str(d / "model.safetensors"))
    save_file({**w, "cls.extra.weight": torch.zeros(2)}, str(d / "model.safetensors"))
    with pytest.raises(CheckpointError, match=r"unexpected keys \['cls.extra.weight'\]"):
        load_masked_lm(d, PROTEIN_ALPHABET)
    (d / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(CheckpointError, match="not a readable weights file"):
        load_masked_lm(d, PROTEIN_ALPHABET)
    g = tmp_path / "gpt"
    g.mkdir()
    (g / "config.json").write_text('{"model_type": "gpt2", "vocab_size": 25, "n_layer": 1, "n_embd": 8, "n_head": 2}')
    (g / "pytorch_model.bin").write_bytes(b"x")
    (g / "vocab.txt").write_text("a\n")
    with pytest.raises(MaskedLMError, match="not a masked LM"):
        load_masked_lm(g, PROTEIN_ALPHABET)


def test_antiberty_from_its_wheel_matches_its_own_runner():
    """The shipped default, loaded from the installed package's folder (weights_only), gives the
    logits AntiBERTy's own runner gives, at the 20 amino acids."""
    from antiberty import AntiBERTyRunner

    m = load_masked_lm("antiberty", PROTEIN_ALPHABET)
    assert m.n_params() == 25_759_769  # the masked LM's part (the species / chain / graft classifiers dropped)
    x = encode(VH)[None]
    x[0, 98:110] = MASK
    with torch.no_grad():
        ours = m.forward_tokens(x).logits[0]
        r = AntiBERTyRunner()
        s = " ".join("[MASK]" if 98 <= i < 110 else a for i, a in enumerate(VH))
        t = r.tokenizer([s], return_tensors="pt")
        theirs = r.model(input_ids=t["input_ids"], attention_mask=t["attention_mask"]).prediction_logits[0, 1:-1]
    vocab = r.tokenizer.get_vocab()
    assert torch.allclose(ours, theirs[:, [vocab[a] for a in AMINO_ACIDS]], atol=1e-5)  # measured 4.8e-6


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
    for bad, msg in (("cdr9", "unknown region"), ("0-5", "outside"), ("3-500", "outside"), ("", "nothing to mask"),
                     ("50-40", "reversed: write the first residue first \\(40-50\\)")):  # fmt: skip
        with pytest.raises(NumberingError, match=msg):
            infill("vh", VH, bad)


def test_masks_are_offered_once():
    from mi_viz.domains.antibody import MASKS

    assert len(MASKS) == len(set(MASKS)) and MASKS[:2] == ("cdr3", "cdrs")


# a SAbDab heavy chain as deposited (PDB 5i1e): the V domain, then CH1 (IGHG1)
DEPOSITED = (
    "EVQLVETGGGLIQPGGSLRLSCAASGFTVSSNYMSWVRQAPGKGLEWVSVIYSGGSTYYADSVKGRFTISRDNSKNTLYLQMNSLRAEDTAVYYCARYDGIYGELDFWGQ"
    "GTLVTVSSASTKGPSVFPLAPSSKSTSGGTAALGCLVKDYFPEPVTVSWNSGALTSGVHTFPAVLQSSGLYSLSSVVTVPSSSLGTQTYICNVNHKPSNTKVDKKVEPK"
)


def test_a_constant_region_is_trimmed_and_said():
    from mi_viz.domains.antibody import NumberingError, infill

    it = infill("5i1e", DEPOSITED, "cdr3")
    v = DEPOSITED[: DEPOSITED.index("ASTKGPS")]  # the V domain ends at FWR4's ...VTVSS
    assert it.sequence == v and it.numbered.trimmed == (0, len(DEPOSITED) - len(v))
    assert "residues after IMGT 128 trimmed: the constant region (IGHG1" in it.note
    assert it.sequence[slice(*it.spans[0])] == "ARYDGIYGELDF"
    assert infill("5i1e", DEPOSITED, "96-107").spans == it.spans  # a span counts the chain as given
    with pytest.raises(NumberingError, match="leaves the V domain"):
        infill("5i1e", DEPOSITED, "110-130")
    leader = infill("led", "MGWSCIILFLVATATGVHS" + v, "cdr3")
    assert leader.sequence == v and leader.numbered.trimmed == (19, 0) and "before IMGT 1" in leader.note
    assert infill("v", v, "cdr3").note == ""  # a V domain alone: nothing to say


CHICKEN_VH = ("AVTLDESGGGLQTPGGALSLVCKASGFTFSSYNMGWVRQAPGKGLEWVAGIDNTGRYTGYGSAVKGRATISRDNGQSTVRLQLNNLRAEDTGTYYCAK"
              "AAGSAYYYTAVTPAFAGSIDAWGHGTEVIVSS")  # fmt: skip
TCR_ALPHA = ("KEVEQNSGPLSVPEGAIASLNCTYSDRGSQSFFWYRQYSGKSPELIMSIYSNGDKEDGRFTAQLNKASQYVSLLIRDSQPSDSATYLCAVTTDSWGKLQFGAGT"
             "QVVVTP")  # fmt: skip
LYSOZYME = "KVFGRCELAAAMKRHGLDNYRGYSLGNWVCAAKFESNFNTQATNRNTDGSTDYGILQINSRWWCNDGRTPGSRNLCNIPCSALLSSDITASVNCAKKIVSDGN"


def test_a_species_the_numbering_only_guesses_is_said():
    from mi_viz.domains.antibody import infill

    it = infill("chicken", CHICKEN_VH)
    assert it.numbered.species_uncertain and "species not modelled by the numbering" in it.note
    assert it.numbered.describe().startswith("heavy chain, human?, IGHV3-23")


def test_a_refused_chain_is_named_for_what_it_is(monkeypatch):
    from mi_viz.domains.antibody import NumberingError, infill, numbering

    if numbering.shutil.which("hmmscan") is None and not os.environ.get("CI"):  # CI installs it: there it must run
        pytest.skip("HMMER's hmmscan is not installed (make test installs Debian's hmmer)")
    with pytest.raises(NumberingError, match="a T-cell receptor alpha chain"):
        infill("tcr", TCR_ALPHA)
    with pytest.raises(NumberingError, match="not an antibody or T-cell receptor V domain"):
        infill("lys", LYSOZYME)
    monkeypatch.setattr(numbering.shutil, "which", lambda _: None)  # without ANARCI: the generic reason
    with pytest.raises(NumberingError, match="riot-na cannot number this chain"):
        infill("tcr", TCR_ALPHA)


def test_a_file_skips_what_cannot_be_numbered(tmp_path):
    from mi_viz.domains.antibody import NumberingError, read_infills

    fa = tmp_path / "mixed.fasta"
    fa.write_text(f">vh\n{VH}\n>lys\n{LYSOZYME}\n>ab\n{DEPOSITED}\n")
    got = read_infills(fa, "cdr3")
    assert [it.id for it in got.items] == ["vh", "ab"] and [rid for rid, _ in got.skipped] == ["lys"]
    assert got.skipped[0][1] and not got.skipped[0][1].startswith("lys")
    fa.write_text(f">lys\n{LYSOZYME}\n")
    with pytest.raises(NumberingError, match="no chain of mixed.fasta can be infilled \\(1 skipped: lys: "):
        read_infills(fa, "cdr3")


def test_bad_chains_are_named():
    from mi_viz.domains.antibody import NumberingError, SequenceError, infill

    with pytest.raises(SequenceError, match="J"):
        infill("x", VH[:50] + "J" + VH[51:])
    with pytest.raises(NumberingError, match="nucleotides"):
        infill("x", "ATGCATGCATGCAAATTTGGGCCCATG" * 4)
    with pytest.raises(NumberingError, match="cannot number|not an antibody"):  # the latter where ANARCI runs
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

    from transformers import BertTokenizer

    from mi_viz.domains.antibody.judge import region_pll

    with tempfile.TemporaryDirectory() as t:
        d = _bert_dir(Path(t))
        m = load_masked_lm(d, PROTEIN_ALPHABET)
        tok = BertTokenizer(str(d / "vocab.txt"), do_lower_case=False)
    seq, mask = "MKVLAAGIWC", np.array([0, 1, 0, 0, 1, 0, 0, 0, 0, 0], bool)
    want = []
    with torch.no_grad():  # the reference through the raw BERT and its tokenizer, not forward_tokens
        for i in np.flatnonzero(mask):
            text = " ".join("[MASK]" if k == i else a for k, a in enumerate(seq))
            logits = m.lm(**tok(text, return_tensors="pt")).logits[0, 1 + i]  # [CLS] first
            ids = [tok.convert_tokens_to_ids(a) for a in AMINO_ACIDS]  # over the 20 amino acids only
            want.append(float(logits[ids].log_softmax(-1)[AMINO_ACIDS.index(seq[i])]))
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
    assert s["reference"] == "ref.tsv" and s["skipped"] == 0
    for bad, msg in (("--mask cdr9", "unknown region"), ("--fasta NOPE.fa", "not found")):
        k, v = bad.split()
        args = ["bench", "antibody", "--fasta", fa, "--mask", "cdr3", "--out", tmp_path / "y.csv", "--no-judge"]
        args[args.index(k) + 1] = v
        r = _cli(*args)
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr
    nt = tmp_path / "nt.fasta"
    nt.write_text(">n\nATGCATGCATGCAAATTTGGGCCCATGATGCATGCATGC\n")
    r = _cli("bench", "antibody", "--fasta", nt, "--out", tmp_path / "z.csv", "--no-judge")
    assert r.returncode == 2 and "nucleotides" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "z.csv").exists() and not (tmp_path / "y.csv").exists()
    # a FASTA of natural chains with some the numbering refuses: they are skipped by name, the rest infilled
    mixed = tmp_path / "mixed.fasta"
    mixed.write_text(f">n\nATGCATGCATGCAAATTTGGGCCCATG\n>vh\n{VH}\n>x\n{VH[:20]}XX{VH[22:]}\n>ch1\n{DEPOSITED}\n")
    r = _cli("bench", "antibody", "--fasta", mixed, "--out", tmp_path / "m.csv", "--no-judge", "--no-other-lms")
    assert r.returncode == 0, r.stderr
    assert "skipped n: " in r.stderr and "nucleotides" in r.stderr and "skipped x: " in r.stderr and "X" in r.stderr
    assert "1 of 2 chains trimmed to their V domain" in r.stderr
    s = json.loads(r.stdout.strip().splitlines()[-1])
    assert s["n"] == 2 and s["skipped"] == 2 and s["trimmed"] == 1 and s["reference"] == "none"


def _chosen(folder: str) -> dict:
    """sampler -> its parameters as a committed antibody validation choice names them."""
    import json

    from mi_viz.core.samplers import PARAMS

    choice = json.loads((ROOT / "results" / "antibody" / folder / "choice.json").read_text())
    return {s: {k: v for k, v in row.items() if k in PARAMS} for s, row in choice["chosen"].items() if row}


def test_sapiens_vh_decodes_by_its_own_validation_choice():
    """Sapiens VH's domain (get_domain("antibody", "sapiens-vh"): the app's Sapiens backbone, the CLI's
    --backbone sapiens-vh) starts every rule at its own validation choice, not AntiBERTy's."""
    from mi_viz.cli import _sampler_or_grid, build_parser, domain_cli
    from mi_viz.domains import get_domain
    from mi_viz.domains.antibody import DOMAIN

    own = _chosen("sapiens/val_sweep")
    dom = get_domain("antibody", "sapiens-vh")
    assert {s: p for s, p in dom.sampler_defaults.items() if s != "mi-gt"} == own
    assert dom.sampler_defaults["mi-gt"] == own["mi"] and own["mi"] != DOMAIN.sampler_defaults["mi"]
    assert get_domain("antibody", "antiberty") is DOMAIN and get_domain("antibody") is DOMAIN
    argv = ["bench", "antibody", "--fasta", "x.fasta", "--out", "x.csv", "--sampler", "mi"]
    for extra, want in (([], DOMAIN.sampler_defaults["mi"]), (["--backbone", "sapiens-vh"], own["mi"])):
        cfg = _sampler_or_grid(build_parser().parse_args(argv + extra), domain_cli("antibody"))
        assert (cfg.gamma, cfg.lam) == (want["gamma"], want["lam"]), extra


def test_antibody_sampler_defaults_are_the_validation_choice():
    """The defaults the CLI and the app use are the rows benchmarks/defaults.py (antibody) chose on
    the natural validation chains (mi-gt, the oracle, takes mi's); mi-cap and mi-tc, outside that
    grid, the germline validation's."""

    from mi_viz.domains.antibody import DOMAIN

    natural, germline, revise = _chosen("val_sweep"), _chosen("olga/val_sweep"), _chosen("revise/val_sweep")
    assert natural and "mi" in natural and "mi-revise" in revise
    own = {s: p for s, p in DOMAIN.sampler_defaults.items() if s not in ("mi-gt", "mi-revise-gt")}
    # the natural validation's choice; a rule outside its grid keeps the germline validation's; the revisers
    # their own validation's (its MI rule is the natural validation's, the same setting)
    assert revise["mi"] == natural["mi"]
    assert own == {**{s: p for s, p in germline.items() if s not in natural}, **natural, **revise}
    assert DOMAIN.sampler_defaults["mi-gt"] == natural["mi"]
    assert DOMAIN.sampler_defaults["mi-revise-gt"] == revise["mi-revise"]


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


def _fairseq_forward(state: dict, args, tokens: torch.Tensor) -> torch.Tensor:
    """fairseq's RoBERTa, written here in plain torch from fairseq's source (not through transformers):
    TransformerSentenceEncoder (learned positions from make_positions, emb_layer_norm, post-LN layers:
    x = LN(x + attn(x)); x = LN(x + fc2(gelu(fc1(x))))) and RobertaLMHead (dense, gelu, LN, the tied
    output projection). (B, T) fairseq token ids -> (B, T, vocabulary) logits."""
    import torch.nn.functional as F

    e, pad, eps = "decoder.sentence_encoder.", 1, 1e-5
    keep = tokens.ne(pad).long()
    pos = torch.cumsum(keep, 1) * keep + pad
    x = F.embedding(tokens, state[e + "embed_tokens.weight"]) + F.embedding(pos, state[e + "embed_positions.weight"])
    D, H = x.shape[-1], int(args.encoder_attention_heads)
    x = F.layer_norm(x, (D,), state[e + "emb_layer_norm.weight"], state[e + "emb_layer_norm.bias"], eps)
    B, T, _ = x.shape
    for i in range(int(args.encoder_layers)):
        p = f"{e}layers.{i}."

        def lin(name, h, p=p):
            return F.linear(h, state[p + name + ".weight"], state[p + name + ".bias"])

        q = lin("self_attn.q_proj", x) * (D // H) ** -0.5  # fairseq scales q after the projection
        k, v = lin("self_attn.k_proj", x), lin("self_attn.v_proj", x)
        q, k, v = (t.view(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
        a = (torch.softmax(q @ k.transpose(-1, -2), -1) @ v).transpose(1, 2).reshape(B, T, D)
        ln = (state[p + "self_attn_layer_norm.weight"], state[p + "self_attn_layer_norm.bias"])
        x = F.layer_norm(x + lin("self_attn.out_proj", a), (D,), *ln, eps)
        ln = (state[p + "final_layer_norm.weight"], state[p + "final_layer_norm.bias"])
        x = F.layer_norm(x + lin("fc2", F.gelu(lin("fc1", x))), (D,), *ln, eps)
    h = F.gelu(F.linear(x, state["decoder.lm_head.dense.weight"], state["decoder.lm_head.dense.bias"]))
    h = F.layer_norm(h, (D,), state["decoder.lm_head.layer_norm.weight"], state["decoder.lm_head.layer_norm.bias"], eps)
    return F.linear(h, state["decoder.lm_head.weight"]) + state["decoder.lm_head.bias"]


needs_sapiens = pytest.mark.skipif(  # CI installs it (make setup): there the tests must run
    __import__("importlib").util.find_spec("sapiens") is None and not os.environ.get("CI"),
    reason="sapiens==1.0.4 not installed (make setup)",
)


@needs_sapiens
@pytest.mark.parametrize("name", ["sapiens-vh", "sapiens-vl"])
def test_sapiens_through_transformers_matches_fairseqs_forward(name):
    """Sapiens' fairseq checkpoint mapped onto RobertaForMaskedLM gives the logits fairseq's own
    architecture gives (a plain-torch forward above), at the 20 amino acids, to 1e-5 (measured 0)."""
    from mi_viz.lm.sapiens import read_checkpoint, sapiens_weights

    state, args = read_checkpoint(sapiens_weights(name))
    m = load_masked_lm(name, PROTEIN_ALPHABET)
    assert m.n_params() == 568_985 - (0 if name == "sapiens-vh" else 16 * 128)  # the light model: 128 positions
    assert m.max_length == int(args.max_positions) - 2
    x = encode(VH, allow_mask=True)[None].clone()
    x[0, 97:112] = MASK
    ids, _ = m.lm_tokens(x)
    with torch.no_grad():
        want = _fairseq_forward(state, args, ids)[:, 1:-1][..., m.lm_values]
        got = m.forward_tokens(x).logits
    assert torch.allclose(got, want, atol=1e-5)
    assert ids[0, 0] == 0 and ids[0, -1] == 2 and int(ids[0, 1]) == 4 + "ACDEFGHIKLMNPQRSTVWY".index(VH[0])


@needs_sapiens
def test_sapiens_keys_are_mapped_strictly(monkeypatch):
    from mi_viz.lm import masked_lm, sapiens

    real = sapiens.read_checkpoint

    def drop(path):
        state, args = real(path)
        state = dict(state)
        state.pop("decoder.sentence_encoder.layers.2.fc1.bias")
        state["decoder.extra.weight"] = torch.zeros(1)
        return state, args

    monkeypatch.setattr(sapiens, "read_checkpoint", drop)
    monkeypatch.setattr(masked_lm, "_LOADED", {})  # built afresh, not the process's model
    with pytest.raises(CheckpointError, match=r"without a place \['decoder.extra.weight'\], missing \['decoder"):
        load_masked_lm("sapiens-vh", PROTEIN_ALPHABET)


def test_sapiens_absent_is_named(monkeypatch):
    from mi_viz.lm import sapiens

    monkeypatch.setattr(sapiens.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(sapiens.SapiensError, match="pip install --no-deps sapiens==1.0.4"):
        load_masked_lm("sapiens-vl", PROTEIN_ALPHABET)


@needs_sapiens
def test_the_judge_scores_by_lms_that_did_not_generate_and_writes_each_chain(tmp_path):
    """Sapiens as the backbone: its PLL is `pll`, AntiBERTy's the judge beside it (`pll_antiberty`),
    each with the natural chains' row; every row gains its chain's figures; OLGA's Pgen only for the
    human heavy chain (the mouse chain's is None)."""
    from mi_viz.domains.antibody import DOMAIN, infill
    from mi_viz.domains.antibody.judge import chain_pll

    mouse = ("EFQLQQSGPELVKPGASVKISCKASGYSFTDYNINWMKQSNGKSLEWIGVVIPKYGTTNYNQKFQGKATLTVDQSSSTAYIQLNSLTSEDSAVYYCTRFRDVF"
             "FDVWGTGTTVTVSS")  # fmt: skip
    items = [infill("vh", VH), infill("ms", mouse)]
    model = DOMAIN.load_model("sapiens-vh")
    judge = DOMAIN.judge(model, items=items, backbone=DOMAIN.backbone("sapiens-vh"))
    # the domain made for Sapiens judges by its own backbone: AntiBERTy is the other judge, Sapiens is not
    from mi_viz.domains import get_domain

    own = get_domain("antibody", "sapiens-vh").judge(model, items=items)
    assert set(own.judges) == set(judge.judges) and "pll_antiberty" in own.judges and "pll_sapiens" not in own.judges
    rows = DOMAIN.score(items, DOMAIN.encode([items[0]]))[:1] + DOMAIN.score(items[1:], DOMAIN.encode([items[1]]))
    assert [r["species"] for r in rows] == ["human", "mouse"] and rows[0]["infill"] == "_" * 18
    for r, it in zip(rows, items):  # the masked infill scored as a chain: put the natural residues back
        r["sequence"], r["junction"] = it.sequence, it.sequence[slice(*it.junction)]
    res = judge(rows)
    want = [chain_pll(model, it.sequence, it.masked) for it in items]
    assert [r["pll"] for r in rows] == pytest.approx(want, abs=1e-4) and res["pll"] == pytest.approx(
        np.mean(want), abs=1e-4
    )
    assert res["pll_natural"] == res["pll"]  # the natural chains, decoded back to themselves
    assert res["pll_antiberty"] == res["pll_antiberty_natural"] and res["pll_antiberty"] < 0
    assert "pll_sapiens" not in res  # the backbone is not judged twice
    if "judges_skipped" not in res:  # OLGA installed: the human heavy chain only
        assert rows[0]["log10_pgen"] < 0 and rows[1]["log10_pgen"] is None


def test_a_backbone_is_built_once_a_process(tmp_path, capsys):
    """A bench and a sweep build their masked LM once (the CLI's judge, the driver and the sweep's
    grid share it), not once a layer."""
    import json

    from mi_viz import cli
    from mi_viz.core.models import BUILDS

    d = _bert_dir(tmp_path)
    fa = tmp_path / "vh.fasta"
    fa.write_text(f">vh\n{VH}\n>ch1\n{DEPOSITED}\n")
    common = ["--fasta", str(fa), "--backbone", str(d), "--no-judge", "--no-other-lms"]
    assert cli.main(["bench", "antibody", *common, "--sampler", "topk", "--out", str(tmp_path / "b.csv")]) == 0
    assert BUILDS[("antibody", str(d))] == 1
    out = ["--out-dir", str(tmp_path / "sw"), "--jobs", "1"]
    assert cli.main(["sweep", "antibody", *common, "--grid", "sequential; topk:k=2,3", *out]) == 0
    assert BUILDS[("antibody", str(d))] == 1  # the same process: the same model
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["points"] == 3


def test_the_backbone_is_one_object_resolved_once(tmp_path):
    """A backbone is resolved where the user names it and carried whole: its domain (the sampler
    defaults validated for it), its shipped heads, the weights its rows fingerprint, its alphabet and
    scope; its model built once a process; a name no domain knows refused with the ones that exist."""
    from mi_viz.core.errors import InputError
    from mi_viz.core.models import BUILDS
    from mi_viz.domains import get_backbone, get_domain
    from mi_viz.domains.antibody import SHIPPED_HEADS

    sap = get_backbone("antibody", "sapiens-vh")
    assert sap.label == "Sapiens VH" and "human" in sap.scope and sap.dom is get_domain("antibody", "sapiens-vh")
    assert sap.head("mi").name == SHIPPED_HEADS["sapiens-vh"] and set(sap.heads()) == {"mi", "tv"}
    assert sap.sampler_defaults["mi"] == {"gamma": 8.0, "lam": 10.0, "scan": "stop"}  # its own validation choice
    assert sap.weights.name == "checkpoint_vh.pt" and len(sap.value_names) == 20 and sap.mask_id == MASK
    ab = get_backbone("antibody")
    assert (
        ab.name == "antiberty"
        and ab.sampler_defaults["mi"]["gamma"] == 6.0
        and ab.head("mi").name == SHIPPED_HEADS["antiberty"]
    )
    d = _bert_dir(tmp_path)
    own = get_backbone("antibody", str(d))  # a masked-LM folder: no shipped head, no scope
    assert own.heads() == {} and own.scope == "" and own.weights.parent == d
    assert own.load() is own.load() and BUILDS[("antibody", str(own.spec))] == 1
    for name in ("nope", str(tmp_path / "missing")):
        with pytest.raises(InputError, match="antiberty, sapiens-vh, sapiens-vl"):
            get_backbone("antibody", name)
        with pytest.raises(InputError, match="antiberty, sapiens-vh"):
            get_domain("antibody", name)
    sudoku = get_backbone("sudoku")
    assert sudoku.head("mi") is not None and sudoku.value_names[0] == "1"
    with pytest.raises(InputError, match="one backbone"):
        get_backbone("sudoku", "nope")


@pytest.mark.parametrize("spec", ["antiberty", "sapiens-vh"])
def test_each_shipped_head_loads_on_its_backbone_only(spec):
    """Every backbone with a shipped MI head gets it by default, fingerprint-checked; the other
    backbone's head is refused by name (a head read on a backbone it was not trained on)."""
    from mi_viz.core.errors import UserError
    from mi_viz.core.models import load_models
    from mi_viz.core.reading import read_state
    from mi_viz.domains.antibody import DOMAIN, SHIPPED_HEADS, infill

    model, head = load_models(DOMAIN, spec, None, need_head=True)
    x = DOMAIN.encode([infill("h", VH, "cdr3")])
    with torch.inference_mode():
        r = read_state(model, x, head)
    m = r.mi[0][r.masked[0]][:, r.masked[0]]
    assert torch.isfinite(m).all() and (m >= 0).all() and m.abs().sum() > 0
    other = next(s for s in SHIPPED_HEADS if s != spec)
    with pytest.raises(UserError):
        load_models(DOMAIN, spec, str(ROOT / "checkpoints" / SHIPPED_HEADS[other]), need_head=True)


def test_a_heavy_set_keeps_heavy_chains_and_each_samples_as_in_the_whole_file():
    """SAbDab's test fold holds VH-linker-VL fusions that number as kappa (6kr0 among them): --chains heavy
    leaves them out, and each kept chain draws from its place in the file, so its committed decode stands
    (the SAbDab sweep's rows were made on the whole file: chain 8 of the file, the 7th heavy one, re-decoded
    alone from its place equals its row)."""
    import csv
    import gzip

    from mi_viz.core.samplers import Batching, config_for, decode
    from mi_viz.domains.antibody import DOMAIN, LOCI_OF, NumberingError, read_infills

    path = ROOT / "data" / "antibody" / "natural" / "sabdab_test.tsv.gz"
    got = read_infills(path, "cdr3", limit=9, loci=LOCI_OF["heavy"])
    assert len(got.items) == 9 and {it.locus for it in got.items} == {"igh"}
    assert [rid for rid, _ in got.other_loci] == ["sabdab_3auv", "sabdab_6kr0"]
    assert got.streams == [0, 1, 2, 3, 4, 5, 6, 8, 10]
    it, place = got.items[7], got.streams[7]
    model = DOMAIN.load_model()
    cfg = config_for("sequential", DOMAIN.sampler_defaults, temperature=1.0, seed=0)
    res = decode(model, DOMAIN.encode([it]), cfg, run=Batching(streams=[place]))
    row = DOMAIN.score([it], res.tokens)[0]
    with gzip.open(ROOT / "results" / "antibody" / "sabdab_test" / "rows" / "sequential.csv.gz", "rt") as f:
        committed = next(r for r in csv.DictReader(f) if r["i"] == "7")
    assert row["infill"] == committed["infill"] and res.passes.item() == int(committed["passes"])
    with pytest.raises(NumberingError, match="no heavy chain in light_test.tsv.gz"):
        read_infills(ROOT / "data" / "antibody" / "natural" / "light_test.tsv.gz", "cdr3", loci=("igh",))
