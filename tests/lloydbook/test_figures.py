"""Unit tests of lloydbook.figures: the learning chapters' panels draw what they say, on synthetic runs."""

from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest

from lloydbook import figures


def fake_run(val, train, wall=None):
    val = np.asarray(val, dtype=float)
    steps = np.arange(len(val)) * 10
    history = {
        "step": steps,
        "val_rel_loss": val,
        "train_loss": np.asarray(train, dtype=float),
        "wall_time": np.asarray(wall if wall is not None else steps / 5, dtype=float),
    }
    return SimpleNamespace(history=history, status="done")


@pytest.fixture(autouse=True)
def close_figures():
    plt.close("all")
    yield
    plt.close("all")


def test_band_draws_the_median_and_skips_step_zero_of_the_training_loss():
    runs = [fake_run([2, 1.5, 1.0], [99, 8, 6]), fake_run([2, 1.7, 1.2], [99, 10, 8])]
    fig, ax = plt.subplots()
    figures.band(ax, runs, "train_loss", divide=2)
    x, y = ax.lines[0].get_data()
    np.testing.assert_array_equal(x, [10, 20])
    np.testing.assert_allclose(y, [4.5, 3.5])
    figures.band(ax, runs, "val_rel_loss", x="time")
    x, y = ax.lines[1].get_data()
    np.testing.assert_array_equal(x, [0, 2, 4])  # the median training time
    np.testing.assert_allclose(y, [2, 1.6, 1.1])
    assert len(ax.collections) == 2  # one IQR band each


def test_figure_lays_out_training_over_validation():
    runs = [fake_run([2, 1.5, 1.0], [99, 8, 6])]
    columns = [{("OH", "L2"): runs, ("BN", "NE"): runs}, {("NA", "L2"): runs}]
    figures.figure(columns, ["a", "b"], "title", ylim=(0.5, 3))
    axes = plt.gcf().axes
    assert len(axes) == 4
    top, bottom = axes[0], axes[2]
    assert top.get_yscale() == "log" and top.get_title() == "a"
    assert len(top.lines) == 2 and len(bottom.lines) == 3  # the dotted line at 1 as well
    assert bottom.get_ylim() == (0.5, 3)
    assert top.get_legend() is None and axes[1].get_legend() is not None


def test_points_figure_divides_the_training_loss_by_n():
    groups = {(n, e, "L2"): [fake_run([2, 1.5], [0, 4.0 * n])] for n in (8, 16) for e in ("OH", "BN")}
    figures.points_figure(groups, [8, 16], ["OH", "BN"], ["L2"], "Figure 13", title=", d=4")
    axes = plt.gcf().axes
    assert len(axes) == 4 and axes[0].get_title() == "OH, d=4"
    for line in axes[0].lines:
        np.testing.assert_allclose(line.get_ydata(), [4.0])


def test_gap_pictures():
    taus = np.array([0.01, 0.1, 1.0])
    figures.smoothing_gap(taus, {"NE": np.array([1e-3, 1e-2, 1e-1]), "L2": np.array([0.0, 1e-3, 1e-2])}, 0.5, "t")
    ax = plt.gcf().axes[0]
    assert ax.get_xscale() == "log" and ax.get_title() == "t"
    assert ax.lines[1].get_ydata()[0] == 1e-17  # exact zeros drawn at the floor
    plt.close("all")
    figures.gap_by_dimension([4, 16], [0.1, 0.4], {"NE": [1e-2, 1e-3], "L2": [1e-3, 1e-4]}, 0.1)
    a1, a2 = plt.gcf().axes
    assert a2.get_title() == "the bound tightens (tau=0.1)" and len(a2.lines) == 2
