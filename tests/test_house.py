"""The house rules of the tree (issue 40): files that travel between machines, and the layers."""

import re
import subprocess

from conftest import ROOT


def test_results_and_checkpoints_record_no_machine_paths():
    """A committed result or checkpoint names files relative to the repository (core.paths.portable),
    never by an absolute path of the machine that wrote it."""
    tracked = subprocess.run(
        ["git", "ls-files", "results", "checkpoints"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
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
