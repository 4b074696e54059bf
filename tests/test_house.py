"""The house rules of the tree (issue 40): files that travel between machines, and the layers."""

import re
import subprocess

from conftest import ROOT


def _tracked(*paths: str) -> list[str]:
    """The files git tracks (under paths, if given), as repository-relative names."""
    out = subprocess.run(["git", "ls-files", "-z", *paths], cwd=ROOT, capture_output=True, text=True).stdout
    return [name for name in out.split("\0") if name]


def test_results_and_checkpoints_record_no_machine_paths():
    """A committed result or checkpoint names files relative to the repository (core.paths.portable),
    never by an absolute path of the machine that wrote it."""
    tracked = _tracked("results", "checkpoints")
    absolute = re.compile(r'"(/(?:work|home|root|tmp|Users|mnt|opt|var)/[^"]*)"')
    found = []
    for name in tracked:
        if not name.endswith((".json", ".csv", ".txt")):
            continue
        text = (ROOT / name).read_text(errors="replace")
        found += [f"{name}: {m}" for m in absolute.findall(text)]
    assert not found, "\n".join(found[:20])


def test_portable_paths():
    from mi_viz.core.paths import REPO, portable

    assert portable(REPO / "checkpoints" / "family_PF00595") == "checkpoints/family_PF00595"
    assert portable("checkpoints/x") == "checkpoints/x" and portable(None) is None
    assert portable(REPO.parent / "shared" / "data") == "../shared/data"


def test_portable_paths_through_a_symlinked_shared_folder(tmp_path):
    """../shared as a link (its data elsewhere on the disk) is still recorded as ../shared/..."""
    from mi_viz.core.paths import portable

    repo, target = tmp_path / "main", tmp_path / "disk" / "shared"
    (repo / "checkpoints").mkdir(parents=True)
    (target / "data").mkdir(parents=True)
    (tmp_path / "shared").symlink_to(target, target_is_directory=True)
    assert portable(tmp_path / "shared" / "data", repo=repo) == "../shared/data"
    assert portable(repo / "checkpoints" / "x", repo=repo) == "checkpoints/x"
    (tmp_path / "link_to_main").symlink_to(repo, target_is_directory=True)  # into the checkout by a link
    assert portable(tmp_path / "link_to_main" / "checkpoints" / "x", repo=repo) == "checkpoints/x"


def test_the_tracked_tree_stays_under_35_mb():
    """A GPU lease carries the tree and its data in 64 MiB, and a clone stays quick: the files git
    tracks, as they stand in the checkout, total at most 35 MB (decimal; with the protein GPU run's
    packed split, 20.2 MiB, and wheels, 8.5 MiB, the carry keeps room for a run's own inputs). What
    left the tree to make room, and why, is in the commits that removed it (git log -- results/gpu_run,
    docs/screenshots, checkpoints/family_PF00018.safetensors.xz: SH3's weights, built by `make
    family-PF00018`): what is left is shipped weights (float16, which neither xz nor a byte split
    compresses further) and results the pages, tables and docs read."""
    paths = [ROOT / name for name in _tracked()]
    total = sum(p.stat().st_size for p in paths if p.is_file())
    assert total <= 35_000_000, f"the tracked tree is {total / 1e6:.2f} MB (line: 35 MB)"


def uncovered(pyproject: str, domains) -> list[str]:
    """The domains a pyproject's import contracts leave out: each must be in the 'no page names a
    domain' list and the acyclic list, by name or by the wildcard mi_viz.domains.* (import-linter's
    own, which covers a domain added tomorrow without an edit here)."""
    import fnmatch
    import tomllib

    contracts = tomllib.loads(pyproject)["tool"]["importlinter"]["contracts"]
    no_page = next(c for c in contracts if c["name"].startswith("no page names a domain"))
    acyclic = next(c for c in contracts if c["type"] == "acyclic_siblings")

    def named(module: str, patterns: list[str]) -> bool:
        return any(fnmatch.fnmatchcase(module, p) for p in patterns)

    return [
        f"mi_viz.domains.{name}"
        for name in domains
        if not named(f"mi_viz.domains.{name}", no_page["forbidden_modules"])
        or not named(f"mi_viz.domains.{name}", acyclic["ancestors"])
    ]


def test_every_registered_domain_is_under_the_import_contracts():
    """Issue 58: a domain added to the registry is covered by the layer contracts (pyproject's
    import-linter) without anyone remembering to: the 'no page names a domain' list and the acyclic
    list cover every registered domain, one not yet written included (by wildcard); a contract that
    names domains one by one would leave the next out."""
    from mi_viz.domains import DOMAINS

    assert uncovered((ROOT / "pyproject.toml").read_text(), [*DOMAINS, "twins"]) == []
    by_name = (ROOT / "pyproject.toml").read_text().replace('"mi_viz.domains.*"', '"mi_viz.domains.sudoku"')
    assert uncovered(by_name, ["sudoku", "twins"]) == ["mi_viz.domains.twins"]


def _core_functions():
    """(module under mi_viz/core, its FunctionDef) for every function and method of the core."""
    import ast

    for f in sorted((ROOT / "mi_viz" / "core").rglob("*.py")):
        mod = f.relative_to(ROOT / "mi_viz" / "core").with_suffix("").as_posix().replace("/", ".")
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.FunctionDef):
                yield mod, node


# the core functions that still take more than 8 parameters (the backbone issue's debt: each is to take a
# dataclass for its options, as run_sweep takes bench.Weights and sweep.SweepOptions); none may join them
def test_no_core_function_takes_over_eight_parameters():
    """A core function's options travel in dataclasses past 8 parameters (self not counted): how a
    decode is batched (samplers.Batching), how exact maps are chunked (mi.MIRun), which states a
    report reads (mi_report.ReportStates), where a training run resumes (training.Resumed), what a
    decode is drawn on and with which maps (viewer.Layout, viewer.ViewerMaps)."""
    over = set()
    for mod, node in _core_functions():
        a = node.args
        k = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
        k -= bool(a.args and a.args[0].arg in ("self", "cls"))
        if k > 8:
            over.add(f"{mod}.{node.name}")
    assert not over, f"core functions over 8 parameters: {sorted(over)}"


def test_the_core_takes_no_argparse_namespace():
    """The command line's flags are read into typed objects (driver.BenchRun / SweepRun / ReportRun,
    mi_data.ShardRun, a dict for config_from) by mi_viz/cli.py and the domains' CLIs: no function of the
    core takes an argparse Namespace."""
    import ast

    takers = [
        f"{mod}:{node.name}({arg.arg})"
        for mod, node in _core_functions()
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        if arg.annotation is not None and "Namespace" in ast.unparse(arg.annotation)
    ]
    assert takers == []


def test_the_suite_timing_reads_pytests_own_summary():
    """benchmarks.test_time parses what pytest -q --durations prints: the counts of the last line,
    the slowest phases in order (the README's test-time figure comes from its file)."""
    from benchmarks.test_time import parse

    log = """........s..F [100%]
============================= slowest 3 durations =============================
59.53s call     tests/test_browser.py::test_family_backbone_shows_its_contacts
4.77s setup    tests/test_family.py::test_toy_family_learns_its_couplings
0.10s teardown tests/test_app.py::test_x
=========================== short test summary info ============================
FAILED tests/test_cli.py::test_y - AssertionError
1 failed, 431 passed, 4 skipped in 990.99s (0:16:30)
"""
    got = parse(log)
    assert got["counts"] == {"failed": 1, "passed": 431, "skipped": 4}
    assert [(s["seconds"], s["phase"]) for s in got["slowest"]] == [(59.53, "call"), (4.77, "setup"), (0.1, "teardown")]
    assert got["slowest"][0]["test"] == "tests/test_browser.py::test_family_backbone_shows_its_contacts"
    assert parse("no summary") == {"counts": {}, "slowest": []}
