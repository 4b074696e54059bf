import numpy as np


def test_sweep_curves_group_settings_by_what_moves_along_them():
    """A curve is a sampler at one lambda (gamma moves along it); mi-cap's is its cap k (lambda
    moves along it), so its settings at different lambdas draw one front, not single points."""
    from mi_viz.core.plots import sweep_family

    assert sweep_family({"sampler": "mi", "gamma": "4.0", "lam": "10.0", "k": ""}) == "mi lam=10"
    assert sweep_family({"sampler": "mi", "gamma": "4.0", "lam": "10.0", "scan": "skip"}) == "mi lam=10 (skip)"
    assert sweep_family({"sampler": "topk", "k": "8", "lam": ""}) == "topk"
    rows = [{"sampler": "mi-cap", "k": "8", "gamma": "32.0", "lam": lam} for lam in ("100.0", "300.0")]
    assert {sweep_family(r) for r in rows} == {"mi-cap k=8"}
    assert sweep_family({"sampler": "mi-cap", "k": "4", "gamma": "32.0", "lam": "100.0"}) == "mi-cap k=4"
    assert sweep_family({"sampler": "mi-cap", "k": "8", "gamma": "6.0", "lam": "0.0"}) == "mi-cap k=8 lam=0"


def test_a_figure_saves_as_a_vector_by_its_suffix(tmp_path):
    """save_figure: .svg and .pdf as vectors (for papers), anything else a palette PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from mi_viz.core.plots import save_figure

    fig, ax = plt.subplots()
    ax.imshow(np.arange(16.0).reshape(4, 4))
    for name in ("f.svg", "f.pdf", "f.png"):
        save_figure(fig, tmp_path / name, dpi=50)
    plt.close(fig)
    assert b"<svg" in (tmp_path / "f.svg").read_bytes()[:2000]
    assert (tmp_path / "f.pdf").read_bytes()[:5] == b"%PDF-"
    assert Image.open(tmp_path / "f.png").mode == "P"


def test_every_registered_sampler_has_a_colour_of_its_own():
    """Issue 59: the fronts' legend tells samplers apart by colour: no registered sampler falls back
    on the shared palette, and no two share a colour."""
    from mi_viz.core.plots import SAMPLER_COLORS
    from mi_viz.core.samplers import SAMPLERS

    assert set(SAMPLERS) <= set(SAMPLER_COLORS), sorted(set(SAMPLERS) - set(SAMPLER_COLORS))
    assert len(set(SAMPLER_COLORS.values())) == len(SAMPLER_COLORS)


def test_sweep_points_carry_their_90_percent_interval():
    """Each point of a sweep chart shows its 90 % interval: from the row's standard error (pll_se), or
    the binomial one of a solve rate over n puzzles; a curve with a row that says neither has none."""
    import pytest

    from mi_viz.core.plots import point_interval, sweep_figure

    pll = [{"sampler": "topk", "k": "2", "avg_passes": 5, "pll": -1.5, "pll_se": 0.03},
           {"sampler": "topk", "k": "4", "avg_passes": 3, "pll": -1.7, "pll_se": 0.02}]  # fmt: skip
    from mi_viz.core.plots import SweepStyle

    style = SweepStyle(metric="pll", scale=1.0, ylabel="PLL")
    fig = sweep_figure({"this sweep": pll}, style, "t")
    assert list(fig.data[0].error_y.array) == pytest.approx([1.645 * 0.02, 1.645 * 0.03])  # by passes
    assert point_interval({"solved_frac": 0.5, "n": 100}, "solved_frac") == pytest.approx(1.645 * 0.05)
    bare = sweep_figure({"": [{"sampler": "sequential", "avg_passes": 9, "pll": -1.4}]}, style, "t")
    assert bare.data[0].error_y.array is None
