"""Unit tests of lloydbook.landscapes: per-seed surfaces and statistics, and the figures, on tiny models."""

from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from lloydbook import landscapes as LB
from lloydlib.model import LearnableTransformer
from lloydlib.training import TrainConfig


@pytest.fixture(autouse=True)
def close_figures():
    plt.close("all")
    yield
    plt.close("all")


def fake_run(seed, status="done"):
    torch.manual_seed(seed)
    cfg = TrainConfig(d=2, k=3, n=8, tau=0.1, loss="L2", embedding="BN", seed=seed)
    return SimpleNamespace(model=LearnableTransformer(2, 3, "BN"), config=cfg, status=status)


def bowl(g=5, scale=1.0, shift=(0, 0)):
    x = np.linspace(-1, 1, g)
    A, B = np.meshgrid(x, x, indexing="ij")
    return 1.0 + scale * ((A - shift[0]) ** 2 + (B - shift[1]) ** 2)


def test_eval_tasks_are_seeded_float64():
    X, C0 = LB.eval_tasks(3, 10, 2, 4, seed=7)
    assert X.shape == (3, 10, 2) and C0.shape == (3, 4, 2) and X.dtype == torch.float64
    X2, _ = LB.eval_tasks(3, 10, 2, 4, seed=7)
    assert torch.equal(X, X2)
    assert LB.PILOT_DIRECTION_SEED != LB.LOOK_DIRECTION_SEED and LB.PILOT_EVAL_SEED != LB.LOOK_EVAL_SEED


def test_surfaces_stack_one_per_run_and_centre_is_the_model_loss():
    runs = [fake_run(0), fake_run(1)]
    X, C0 = LB.eval_tasks(2, 8, 2, 3, seed=1)
    S = LB.surfaces(runs, X, C0, direction_seed=7, kinds=("smoothed", "gap"), radius=0.5, grid=3)
    assert set(S) == {"smoothed", "gap"} and S["smoothed"].shape == (2, 3, 3)
    kw = dict(direction_seed=7, kinds=("smoothed",), radius=0.5, grid=3)
    single = LB.surfaces(runs, X, C0, **kw, precision="float32")["smoothed"]
    assert single.shape == (2, 3, 3) and np.allclose(single, S["smoothed"], rtol=1e-5)
    with pytest.raises(ValueError, match="precision must be one of.*float32.*got 'half'"):
        LB.surfaces(runs, X, C0, **kw, precision="half")
    from lloydlib import losses

    m = runs[1].model.double()
    with torch.no_grad():
        want = float(losses.smoothed_loss(X, m(X, C0), 0.1, "L2").mean())
    assert LB.centre(S["smoothed"])[1] == pytest.approx(want, rel=1e-9)
    with pytest.raises(ValueError, match="diverged"):
        LB.surfaces([fake_run(2, "diverged")], X, C0, direction_seed=7, kinds=("gap",), radius=0.5, grid=3)


def test_statistics_per_seed():
    S = np.stack([bowl(), bowl(scale=2.0), bowl(shift=(1, 1))])
    np.testing.assert_array_equal(LB.minima_counts(S), [1, 1, 1])
    np.testing.assert_array_equal(LB.offsets(S), [0, 0, 2])
    two = bowl()
    two[0, 0] = 2.5  # a dip in the corner, below its three neighbours: a second minimum at 2.5x
    two[0, 1] = two[1, 0] = two[1, 1] = 3.0
    np.testing.assert_allclose(LB.second_minimum_ratios(np.stack([bowl(), two])), [np.inf, 2.5])
    nums = LB.shape_numbers({"a": S, "b": np.stack([bowl(), two])})  # every seed of every key pooled
    assert nums == {"n-surfaces": 5, "n-unimodal": 4, "second-min": 2.5}
    np.testing.assert_allclose(LB.plane_max(S), [3, 5, 9])
    np.testing.assert_allclose(LB.centre(S), [1, 1, 3])
    r = LB.rises(S)
    assert r.shape == (3,) and r[1] > r[0] > 0  # a bowl rises from its centre, a steeper one more
    with pytest.raises(ValueError, match="seeds, g, g"):
        LB.minima_counts(bowl())


def test_surface_panels_share_one_colour_scale():
    panels = {(r, c): bowl(scale=s) for r, s0 in (("d=4", 1), ("d=32", 2)) for c, s in (("OH", s0), ("BN", s0 + 1))}
    LB.surface_panels(panels, ["d=4", "d=32"], ["OH", "BN"], radius=1.0, title="t", label="loss", log=True)
    fig = plt.gcf()
    axes = [a for a in fig.axes if a.get_label() != "<colorbar>"]
    assert len(fig.axes) == 5  # 4 panels and one colour bar
    norms = {(c.norm.vmin, c.norm.vmax) for a in axes[:4] for c in a.collections[:1]}
    assert norms == {(1.0, 7.0)}  # the smallest and largest value of all four panels
    with pytest.raises(ValueError, match="missing"):
        LB.surface_panels({}, ["a"], ["b"], radius=1.0, title="t", label="x")


def test_seed_strip_draws_every_seed_and_the_lines():
    LB.seed_strip({"a": [1, 2, 3], "b": [4, 5, 6]}, lines={"paper": 0.5}, ylabel="gap", title="t")
    ax = plt.gcf().axes[0]
    assert ax.get_yscale() == "log"
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    assert len(dots) == 2 and len(dots[0].get_xdata()) == 3
    with pytest.raises(ValueError, match="at least one"):
        LB.seed_strip({}, ylabel="y", title="t")


def test_plane_rises_average_the_planes():
    runs = [fake_run(0), fake_run(1)]
    X, C0 = LB.eval_tasks(2, 8, 2, 3, seed=1)
    kw = dict(radius=0.5, grid=3)
    one = [LB.rises(LB.surfaces(runs, X, C0, direction_seed=s, kinds=("smoothed",), **kw)["smoothed"]) for s in (5, 9)]
    both = LB.plane_rises(runs, X, C0, direction_seeds=[5, 9], **kw)
    np.testing.assert_allclose(both, (one[0] + one[1]) / 2)
    with pytest.raises(ValueError, match="at least one"):
        LB.plane_rises(runs, X, C0, direction_seeds=[], **kw)


def test_gap_numbers():
    embs = ["OH", "BN"]
    by_family = {
        (f, e): np.stack([bowl(scale=s + (e == "BN")) for s in (1.0, 2.0, 3.0)])
        for f in ("normal", "cauchy")
        for e in embs
    }
    by_family = {key: S * (4.0 if key[0] == "cauchy" else 1.0) for key, S in by_family.items()}
    by_d = {
        (d, e): S / (1.0 if d == 4 else 8.0) for d in (4, 32) for e, S in ((e, by_family[("normal", e)]) for e in embs)
    }
    nums = LB.gap_numbers(by_family, by_d, embs, dmin=4, dmax=32, n=512)
    # a bowl of scale s has its largest value 1 + 2 s (a corner) and 1 at its centre
    assert nums["normal-max"] == pytest.approx(np.median([3, 5, 7, 5, 7, 9]))
    assert nums["normal-per-point"] == pytest.approx(nums["normal-max"] / 512)
    assert nums["normal-max-hi"] == pytest.approx(nums["normal-max"] / 8)
    assert nums["normal-centre-hi"] == pytest.approx(1 / 8)
    assert nums["cauchy-max"] == pytest.approx(4 * nums["normal-max"]) and nums["ratio"] == pytest.approx(4.0)
    assert nums["cauchy-centre"] == pytest.approx(4.0) and nums["normal-centre"] == pytest.approx(1.0)


def test_tables_have_one_row_per_setting():
    two = bowl()
    two[0, 0] = 2.5
    two[0, 1] = two[1, 0] = two[1, 1] = 3.0
    S = np.stack([bowl(), two, bowl(shift=(1, 1))])
    shape = LB.shape_table({"d=4 OH": S, "d=4 BN": S[:2]})
    assert len(shape.rows) == 2 and len(shape.header) == 4
    assert shape.rows[0][:3] == ["d=4 OH", "[1, 2, 1]", "[0, 0, 2]"]
    gap = LB.gap_table({"normal OH": S, "cauchy OH": S[:1]})
    assert gap.rows[1] == ["cauchy OH", "1", "3.000 [3.000, 3.000]", "1.000 [1.000, 1.000]"]
    assert gap.rows[0][1] == "3"
