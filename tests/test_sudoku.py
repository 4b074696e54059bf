import random

import pytest

from mi_viz.domains.sudoku import board as S
from mi_viz.domains.sudoku import rating, solver

GOOD = "..8...5......3.....1.....96...49..21.7...8.....41..8.5.....73...9......83...869.."
SOL = "268719543459632187713854296836495721175268439924173865681927354592341678347586912"


def test_parse_accepts_dots_zeros_and_whitespace():
    b = S.parse_board(GOOD)
    assert len(b) == 81 and b[2] == 8 and b[0] == 0
    assert S.parse_board(GOOD.replace(".", "0")) == b
    assert S.parse_board("\n".join(GOOD[i : i + 9] for i in range(0, 81, 9))) == b


@pytest.mark.parametrize(
    "text,needle",
    [
        (GOOD[:80], "needs 81 cells, got 80"),
        (GOOD + "1", "got 82"),
        ("x" + GOOD[1:], "bad character 'x' at position 1 (r1c1)"),
    ],
)
def test_parse_errors_are_specific(text, needle):
    with pytest.raises(S.BoardError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        S.parse_board(text)


def test_rule_conflicts_name_row_column_and_box():
    row = "11" + "." * 79
    with pytest.raises(S.BoardError, match=r"digit 1 twice in row 1 \(r1c1 and r1c2\)"):
        S.parse_board(row)
    col = "1" + "." * 8 + "1" + "." * 71
    with pytest.raises(S.BoardError, match=r"column 1 \(r1c1 and r2c1\)"):
        S.parse_board(col)
    box = "1" + "." * 9 + "1" + "." * 70  # r1c1 and r2c2: same box only
    msg = S.rule_conflicts(S.parse_board(box, check_rules=False))
    assert msg == ["digit 1 twice in box 1 (r1c1 and r2c2)"]


def test_solver_counts_and_solves():
    r = solver.solve(S.parse_board(GOOD))
    assert r.count == 1 and S.board_to_string(r.solution) == SOL
    assert solver.count_solutions([0] * 81, limit=2) == 2
    assert solver.count_solutions(S.parse_board("12" + "." * 79, check_rules=False), 2) == 2
    # no rule broken by the givens, but r1c9 can hold nothing: zero solutions
    dead = S.parse_board("12345678." + "........9" + "." * 63)
    assert solver.count_solutions(dead, 2) == 0


def test_all_4x4_grids():
    grids = solver.all_solutions(2)
    assert len(grids) == 288 and len(set(grids)) == 288
    assert all(S.is_solution(g, box=2) for g in grids)


def test_generator_gives_valid_grids_and_unique_puzzles():
    rng = random.Random(3)
    for _ in range(3):
        sol = solver.random_grid(rng)
        assert S.is_solution(sol)
        puz = solver.make_puzzle(sol, rng)
        assert solver.count_solutions(puz, 2) == 1
        assert solver.solve(puz).solution == sol
        assert all(p in (0, s) for p, s in zip(puz, sol))


def test_rating_separates_singles_from_hard():
    easy = list(S.parse_board(SOL))
    for c in (0, 10, 20, 30, 40):
        easy[c] = 0
    r = rating.rate(easy)
    assert r.singles_solvable and r.singles_rounds == 1 and r.singles_filled == 5 and r.level == "medium"
    hard = S.parse_board(GOOD)  # from the generated hard set: singles get stuck
    rh = rating.rate(hard)
    assert not rh.singles_solvable and rh.level == "hard" and rh.search_nodes > 1


def test_is_solution_checks_givens():
    sol = S.parse_board(SOL)
    assert S.is_solution(sol, S.parse_board(GOOD))
    other = S.parse_board(GOOD[:2] + "9" + GOOD[3:], check_rules=False)
    assert not S.is_solution(sol, other)


def test_puzzle_file_reports_bad_lines(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text(f"# comment\n{GOOD} extra fields\n\nnot-a-puzzle\n{'1' * 81}\npuzzle,solution\n{GOOD},{SOL}\n")
    r = S.read_puzzle_file(f)
    assert len(r.puzzles) == 2 and r.line_numbers == [2, 7]
    assert len(r.errors) == 2
    assert r.errors[0].startswith("line 4:") and r.errors[1].startswith("line 5:")


def test_tensor_symmetries_keep_rules_masks_and_pairs():
    """The batched symmetries (training augmentation of the MDM and of the MI head): a solution
    stays a solution, MASK stays MASK where the cell went, and a pair map moves with its cells:
    'same row / column / box' is invariant, and a map built from the board is the map of the
    transformed board."""
    import torch

    from mi_viz.domains.sudoku import related_matrix
    from mi_viz.domains.sudoku.mdm import MASK_TOKEN, boards_to_tokens
    from mi_viz.domains.sudoku.symmetries import apply_symmetry, permute_pairs, random_symmetries

    B = 16
    sol = boards_to_tokens([S.parse_board(SOL)] * B)  # (B, 81)
    g = torch.Generator().manual_seed(0)
    masked = torch.rand(B, 81, generator=g) < 0.5
    x = torch.where(masked, torch.full_like(sol, MASK_TOKEN), sol)
    cells, digits = random_symmetries(B, g)
    assert sorted(set(cells[0].tolist())) == list(range(81)) and len({tuple(c) for c in cells.tolist()}) > 1
    full = apply_symmetry(sol, cells, digits)
    for b in range(B):
        assert S.is_solution([v + 1 for v in full[b].tolist()], [0] * 81)
    xt = apply_symmetry(x, cells, digits)
    assert torch.equal(xt == MASK_TOKEN, masked.gather(1, cells))
    assert torch.equal(torch.where(xt == MASK_TOKEN, full, xt), full)  # unmasked cells: the solution's digits
    rel = (torch.as_tensor(related_matrix()) > 0).expand(B, 81, 81).float()  # the kind (row / column) may swap
    assert torch.equal(permute_pairs(rel, cells), rel)
    both = (x == MASK_TOKEN)[:, :, None] & (x == MASK_TOKEN)[:, None, :]  # (B, 81, 81)
    both_t = (xt == MASK_TOKEN)[:, :, None] & (xt == MASK_TOKEN)[:, None, :]
    assert torch.equal(permute_pairs(both.float(), cells), both_t.float())
    # a map that tells pairs apart (not only invariant ones): index i*81 + j moves with both cells
    idx = torch.arange(81 * 81, dtype=torch.float).view(1, 81, 81).expand(B, 81, 81)
    moved = permute_pairs(idx, cells)
    assert torch.equal(moved, (cells[:, :, None] * 81 + cells[:, None, :]).float())


def test_sudoku_sampler_defaults_are_the_validation_choice():
    """The defaults the CLI and the app use are the ones the committed validation sweeps chose (DEMASK
    on its own, criterion sudoku-demask; mi-pairs excepted: it keeps release 0.3's budget, under which
    its Table 1 rows were made)."""
    import json
    from pathlib import Path

    from mi_viz.core.samplers import PARAMS, config_for
    from mi_viz.domains import get_domain

    results = Path(__file__).parents[1] / "results/sudoku"
    choice = json.loads((results / "val_sweep/choice.json").read_text())["chosen"]
    choice |= json.loads((results / "demask/val_sweep/choice.json").read_text())["chosen"]  # DEMASK's own sweep
    assert "demask" in choice
    d = get_domain("sudoku").sampler_defaults
    for name, row in choice.items():
        if name == "mi-pairs":
            continue
        chosen = {k: v for k, v in row.items() if k in PARAMS}  # every declared parameter, scan included
        assert config_for(name, d) == config_for(name, {name: chosen}), name
    assert d["mi-gt"] == d["mi"]


def test_typical_states_are_halfway_through_decodes_of_the_hard_puzzles():
    """benchmarks/latency.py times the states the domain declares (issue 58: the domain's latency
    state lives in its folder): each hard puzzle halfway through its sequential decode keeps its
    givens, fills about half of its blanks and breaks no rule."""
    import torch

    from mi_viz.domains.sudoku import DOMAIN, HARD

    model = DOMAIN.load_model()
    states = DOMAIN.typical_states(model, 2)  # (2, 81)
    puzzles = torch.tensor(S.read_puzzle_file(HARD).puzzles[:2])  # (2, 81), 0 = blank
    assert states.shape == (2, 81)
    for s, p, board in zip(states, puzzles, DOMAIN.decode(states)):
        blank = p == 0
        masked = s == DOMAIN.mask_id
        assert not masked[~blank].any()  # the givens stay
        assert abs(int(masked.sum()) - int(blank.sum()) / 2) <= 1  # half the blanks still masked
        assert not S.rule_conflicts(board)
