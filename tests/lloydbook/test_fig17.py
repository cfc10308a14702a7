"""lloydbook.fig17: curves read on the wall clock, and Figure 17's findings (OH against BN) as parts in the evidence
vocabulary."""

from types import SimpleNamespace

import numpy as np
import pytest
from _made_up_runs import STEPS, falls, run

from lloydbook import fig17
from lloydbook.claims.evidence import verdict_of
from lloydbook.findings import undecided


def line(start, end, seconds, seed=0, status="done"):
    """A run whose relative validation loss falls linearly from ``start`` to ``end`` over ``seconds``."""
    history = {"step": STEPS, "wall_time": np.linspace(0.0, seconds, 11), "val_rel_loss": np.linspace(start, end, 11)}
    return SimpleNamespace(history=history, status=status, config=SimpleNamespace(seed=seed))


# ----------------------------------------------------------------------------------------- wall_mean(s)
def test_wall_mean_reads_the_curve_on_the_clock():
    r = run(np.linspace(2.0, 1.0, 11), 0, ms=1.0)  # 1 ms a step: 0.1 s in all
    r.history["val_rel_loss"] = np.linspace(2.0, 1.0, 11)
    assert fig17.wall_mean(r, 0.1) == pytest.approx(1.495)  # mean of 2 - t/0.1 at t = 0.001 ... 0.1
    assert fig17.wall_mean(run(falls(20), 0, status="diverged"), 0.1) == np.inf
    oh, bn = fig17.wall_means([r], [run(np.linspace(2.0, 1.0, 11), 0, ms=0.5)])
    assert bn[0] < oh[0]  # BN's curve, twice as fast on the clock, is lower over BN's 0.05 s


def test_wall_mean_by_hand():
    r = line(2.0, 1.0, 1.0)  # v(t) = 2 - t on [0, 1] s
    t = np.arange(1, fig17.POINTS + 1) / fig17.POINTS * 0.5
    assert fig17.wall_mean(r, 0.5) == pytest.approx(np.mean(2.0 - t))  # 1.7475 at 100 points
    late = np.arange(1, fig17.POINTS + 1) / fig17.POINTS * 2.0  # past the last evaluation: its value, 1
    assert fig17.wall_mean(r, 2.0) == pytest.approx(np.mean(np.where(late <= 1.0, 2.0 - late, 1.0)))
    assert fig17.wall_mean(r, 2.0) == pytest.approx(1.245)  # (50 * 1.49 + 50 * 1) / 100
    assert fig17.wall_mean(r, 0.0) == 2.0  # no time: the first evaluation


def test_wall_means_share_the_shorter_time_paired_by_seed():
    oh = [line(2.0, 1.0, 1.0, seed=0), line(2.0, 1.0, 1.0, seed=1)]
    bn = [line(2.0, 0.0, 0.5, seed=0), line(2.0, 1.0, 2.0, seed=1)]
    a, b = fig17.wall_means(oh, bn)
    assert a.shape == b.shape == (2,)
    # seed 0: both over BN's 0.5 s; seed 1: both over OH's 1 s
    np.testing.assert_allclose(a, [fig17.wall_mean(oh[0], 0.5), fig17.wall_mean(oh[1], 1.0)])
    np.testing.assert_allclose(b, [fig17.wall_mean(bn[0], 0.5), fig17.wall_mean(bn[1], 1.0)])
    a, b = fig17.wall_means(oh, bn, 0.25)  # the first quarter
    np.testing.assert_allclose(a, [fig17.wall_mean(oh[0], 0.125), fig17.wall_mean(oh[1], 0.25)])
    # a diverged run: +inf, over the time of the finished one
    a, b = fig17.wall_means(oh[:1], [line(2.0, 0.0, 0.1, seed=0, status="diverged")])
    assert b[0] == np.inf and a[0] == pytest.approx(fig17.wall_mean(oh[0], 1.0))
    with pytest.raises(ValueError, match="same seeds"):
        fig17.wall_means(oh, bn[::-1])


def test_the_papers_constants():
    assert fig17.SLOWER_CASE == (16, 16) and fig17.FASTER_CASE == (32, 25)
    assert fig17.CLEAR == 0.01 and fig17.INITIAL == 0.25 and fig17.POINTS == 100


# ----------------------------------------------------------------------------------------- the findings
CASES, NS = ((16, 16), (32, 25)), (256, 512, 1024)


def grid(bn_fast_at_16=False):
    """Made-up runs of every (d, k, n, embedding): at d=k=16 BN's steps a little cheaper but many more of them
    (unless ``bn_fast_at_16``); at d=32, k=25 the same curve per step, BN's steps half the time."""

    def one(d, k, e, s):
        if (d, k) == (16, 16):
            slow = e == "BN" and not bn_fast_at_16
            return run(falls(60 if slow else 20), s, ms=0.9 if e == "BN" else 1.0)
        return run(falls(20), s, ms=0.5 if e == "BN" else 1.0)

    return {(d, k, n, e): [one(d, k, e, s) for s in range(10)] for d, k in CASES for n in NS for e in ("OH", "BN")}


def test_bn_slower_at_16_and_initially_faster_at_32(judge):
    parts = fig17.parts(grid(), CASES, NS, judge=judge)
    assert list(parts) == ["wallclock-bn-slower", "wallclock-bn-initially-faster"] == list(fig17.CASES)
    assert [verdict_of(p.evidence) for p in parts.values()] == ["reproduced"] * 2
    assert not any(p.unmet for p in parts.values())
    slower = parts["wallclock-bn-slower"]
    assert [e.part.startswith(f"n={n}, whole common time") for e, n in zip(slower.evidence, NS)] == [True] * 3
    assert "ms per step OH 1.00" in slower.evidence[0].part and "margin 0.01" in slower.evidence[0].text


def test_runs_that_contradict_the_paper_fail(judge):
    parts = fig17.parts(grid(bn_fast_at_16=True), CASES, NS, judge=judge)
    assert verdict_of(parts["wallclock-bn-slower"].evidence) == "not reproduced"
    assert verdict_of(parts["wallclock-bn-initially-faster"].evidence) == "reproduced"


def test_only_the_findings_of_the_cases_given(judge):
    faster = fig17.parts(grid(), [[32, 25]], NS, judge=judge)  # a case given as a list
    assert list(faster) == ["wallclock-bn-initially-faster"]
    assert "ms per step OH 1.00, BN 0.50" in faster["wallclock-bn-initially-faster"].evidence[0].part
    slower = fig17.parts(grid(), [(16, 16)], [512], judge=judge)
    assert list(slower) == ["wallclock-bn-slower"] and len(slower["wallclock-bn-slower"].evidence) == 1
    assert fig17.parts(grid(), [(8, 8)], NS, judge=judge) == {}  # neither of the paper's cases


def test_bn_slower_only_when_clearly_so(judge):
    def shifted(by):  # at d=k=16, BN's curve is OH's raised by ``by`` on the same clock
        G = grid()
        for n in NS:
            G[(16, 16, n, "BN")] = [run(falls(20) + by, s) for s in range(10)]
            G[(16, 16, n, "OH")] = [run(falls(20), s) for s in range(10)]
        return fig17.parts(G, [(16, 16)], NS, judge=judge)["wallclock-bn-slower"]

    assert verdict_of(shifted(fig17.CLEAR / 2).evidence) == "not reproduced"  # above OH's, by less than CLEAR
    assert verdict_of(shifted(2 * fig17.CLEAR).evidence) == "reproduced"


def test_initially_is_the_first_quarter_of_the_time(judge):
    G = grid()
    early = np.r_[1.5, 1.0, 0.95, 0.95, np.full(7, 1.3)]  # BN below OH's falls(20) until step 30, above after
    for n in NS:
        G[(32, 25, n, "BN")] = [run(early, s) for s in range(10)]
        G[(32, 25, n, "OH")] = [run(falls(20), s) for s in range(10)]
    oh, bn = fig17.wall_means(G[(32, 25, 256, "OH")], G[(32, 25, 256, "BN")])
    assert (bn > oh).all()  # over the whole time BN is worse ...
    oh, bn = fig17.wall_means(G[(32, 25, 256, "OH")], G[(32, 25, 256, "BN")], fig17.INITIAL)
    assert (bn < oh).all()  # ... but not over its first quarter
    part = fig17.parts(G, [(32, 25)], NS, judge=judge)["wallclock-bn-initially-faster"]
    assert verdict_of(part.evidence) == "reproduced" and "first 25% of the common time" in part.evidence[0].part


def test_on_the_plateau_a_finding_is_not_decided_and_says_why(judge):
    """No embedding's runs left the plateau above one Lloyd step: the premise of a comparison of convergence fails."""
    G = {key: [run(np.full(11, 1.8), s) for s in range(10)] for key in grid()}
    parts = fig17.parts(G, CASES, NS, judge=judge)
    assert [undecided(p)[0] for p in parts.values()] == ["not decided"] * 2
    unmet = parts["wallclock-bn-slower"].unmet
    assert "still on the plateau" in unmet and "OH 1.80, BN 1.80" in unmet


def test_statements_are_the_words_of_the_parts(judge):
    parts, say = fig17.parts(grid(), CASES, NS, judge=judge), fig17.statements()
    assert list(say) == list(fig17.CASES) and all((p.statement, p.paper) == say[n] for n, p in parts.items())
