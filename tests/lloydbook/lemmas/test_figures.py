"""Unit tests of lloydbook.lemmas.figures (chapter 09's figures, Agg backend): what each draws."""

import math
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest

from lloydbook import lemmas
from lloydbook.lemmas import figures
from lloydlib import theory as T
from lloydlib.theory.sandwich import SandwichResult

SW = dict(restarts=1, steps=2, random_pairs=2)  # the least search effort: shapes and bookkeeping only


def violated(*args, **kwargs):
    """A stand-in for a sandwich that found a counterexample."""
    return SandwichResult("made up", bound=1.0, random=2.0, ascent=0.0, pair={"X": "the pair"})


def sharp(delta, m):
    """The exact l1 constant of softmax on {D(v) <= delta} (lloydlib.theory.softmax's docstring)."""
    s = min(math.exp(delta) / (math.exp(delta) + m - 1), 0.5)
    return 2 * s * (1 - s)


def test_int_ticks_label_a_log_axis_with_the_integers():
    fig, ax = plt.subplots()
    ax.set_xscale("log")
    ax.plot([1, 64], [1, 2])
    figures._int_ticks(ax, (2, 8, 32))
    fig.canvas.draw()
    np.testing.assert_array_equal(ax.get_xticks(), [2, 8, 32])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "8", "32"]
    assert isinstance(ax.xaxis.get_minor_locator(), plt.NullLocator)
    plt.close(fig)


def test_plot_softmax_draws_one_panel_per_delta(shown):
    ms, deltas = [2, 4, 8], [0.5, 2.0]
    sm = {(dl, m): {"stated": SimpleNamespace(ratio=0.1 * m)} for dl in deltas for m in ms}
    lemmas.plot_softmax(sm, ms, deltas)
    (fig,) = shown
    axes = fig.axes
    assert len(axes) == 2 and axes[1].get_title() == r"$\delta = 2$"
    stated, exact, seen = axes[0].get_lines()
    np.testing.assert_allclose(stated.get_ydata(), [math.exp(0.5) / m for m in ms])
    np.testing.assert_allclose(exact.get_ydata(), [sharp(0.5, m) for m in ms])
    np.testing.assert_allclose(seen.get_ydata(), [0.2, 0.4, 0.8])


def test_plot_slack_draws_four_panels(shown):
    P = SimpleNamespace(gammas=[0.1, 1.0], demb_s=[2, 3], m_s=[1, 2], mp_s=[1, 2], sweep_demb=2)
    sweep = {lem: lemmas.gamma_sweep(lem, P.gammas, P.sweep_demb, SW, seed=20 + c) for c, lem in enumerate(T.LEMMAS)}
    lemmas.plot_slack(sweep, P, SW)
    (fig,) = shown
    assert len(fig.axes) == 4
    gamma_panel = fig.axes[0]
    assert len(gamma_panel.get_lines()) == 4 + 2 + 1  # the lemmas, I.6's and I.7's sharpened, the line at 1
    r5 = sweep["I.5"]
    np.testing.assert_allclose(gamma_panel.get_lines()[0].get_ydata(), [r.ratio / r.bound for r in r5])
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()] == ["2", "3"]


def test_plot_slack_raises_on_a_counterexample(shown, monkeypatch):
    P = SimpleNamespace(gammas=[1.0], demb_s=[2], m_s=[1], mp_s=[1], sweep_demb=2)
    sweep = {lem: [SandwichResult("x", 1.0, 0.5, 0.5)] for lem in T.LEMMAS}
    monkeypatch.setattr(T, "attention_sandwich", violated)
    with pytest.raises(AssertionError, match="counterexample to Lemma I.5 at d_emb=2"):
        lemmas.plot_slack(sweep, P, SW)


def test_plot_phi_draws_both_embeddings(shown):
    thm1, ce = lemmas.theorem1_searches(2, 3, 4, [1.0], SW, seed=61)
    lemmas.plot_phi(thm1, ce, 2, 3, 4, [1.0])
    (fig,) = shown
    assert [ax.get_title() for ax in fig.axes] == ["OH: d=2, k=3, n=4", "BN: d=2, k=3, n=4"]
    points = fig.axes[0].get_lines()[-1]  # the ascent's ratio at each gamma
    np.testing.assert_allclose(points.get_ydata(), [thm1[("OH", 1.0, 1.0)][0].ratio])


def test_plot_lipschitz_and_plot_training(shown):
    ds = [2, 4]
    lip = {(d, e): np.array([1.0, 2.0, 3.0]) * (2 if e == "BN" else 1) for d in ds for e in ("OH", "BN")}
    lemmas.plot_lipschitz(lip, [2.0, 2.0], [0.3, 0.2], [12.4, 10.6], ds)
    assert len(shown[0].axes) == 2 and "10^{11}" in shown[0].axes[1].get_title()  # min(bound_gap), rounded
    np.testing.assert_allclose(shown[0].axes[0].get_lines()[1].get_ydata(), [4.0, 4.0])  # BN's median
    steps = np.arange(5) * 10
    curves = {(e, s): (steps, np.linspace(1.5, 0.9, 5) + s) for e in ("OH", "BN") for s in (0, 1)}
    lemmas.plot_training(curves, [0, 1], {"OH": 0.5, "BN": 0.625}, 2, 3)
    ax = shown[1].axes[0]
    assert ax.get_title() == "d=2, k=3: mean over the curve OH 0.500, BN 0.625"
    assert len(ax.get_lines()) == 4 and list(ax.get_lines()[0].get_xdata()) == [10, 20, 30, 40]  # step 0 left out
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["OH", "BN"]
