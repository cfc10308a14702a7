"""lloydbook.paper_scale.wall: curves read on the wall clock, and Figure 17 decided on (here: made-up)
paper-scale GPU runs."""

from types import SimpleNamespace

import numpy as np
import pytest
from _made_up_runs import STEPS, drop_one, falls, run, verdicts

from lloydbook import claims, paper_scale
from lloydbook.paper_scale import wall


def line(start, end, seconds, seed=0, status="done"):
    """A run whose relative validation loss falls linearly from ``start`` to ``end`` over ``seconds``."""
    history = {"step": STEPS, "wall_time": np.linspace(0.0, seconds, 11), "val_rel_loss": np.linspace(start, end, 11)}
    return SimpleNamespace(history=history, status=status, config=SimpleNamespace(seed=seed))


# ----------------------------------------------------------------------------------------- wall_mean(s)
def test_wall_mean_reads_the_curve_on_the_clock():
    r = run(np.linspace(2.0, 1.0, 11), 0, ms=1.0)  # 1 ms a step: 0.1 s in all
    r.history["val_rel_loss"] = np.linspace(2.0, 1.0, 11)
    assert paper_scale.wall_mean(r, 0.1) == pytest.approx(1.495)  # mean of 2 - t/0.1 at t = 0.001 ... 0.1
    assert paper_scale.wall_mean(run(falls(20), 0, status="diverged"), 0.1) == np.inf
    oh, bn = paper_scale.wall_means([r], [run(np.linspace(2.0, 1.0, 11), 0, ms=0.5)])
    assert bn[0] < oh[0]  # BN's curve, twice as fast on the clock, is lower over BN's 0.05 s


def test_wall_mean_by_hand():
    r = line(2.0, 1.0, 1.0)  # v(t) = 2 - t on [0, 1] s
    t = np.arange(1, wall.POINTS + 1) / wall.POINTS * 0.5
    assert paper_scale.wall_mean(r, 0.5) == pytest.approx(np.mean(2.0 - t))  # 1.7475 at 100 points
    late = np.arange(1, wall.POINTS + 1) / wall.POINTS * 2.0  # past the last evaluation: its value, 1
    assert paper_scale.wall_mean(r, 2.0) == pytest.approx(np.mean(np.where(late <= 1.0, 2.0 - late, 1.0)))
    assert paper_scale.wall_mean(r, 2.0) == pytest.approx(1.245)  # (50 * 1.49 + 50 * 1) / 100
    assert paper_scale.wall_mean(r, 0.0) == 2.0  # no time: the first evaluation


def test_wall_means_share_the_shorter_time_paired_by_seed():
    oh = [line(2.0, 1.0, 1.0, seed=0), line(2.0, 1.0, 1.0, seed=1)]
    bn = [line(2.0, 0.0, 0.5, seed=0), line(2.0, 1.0, 2.0, seed=1)]
    a, b = paper_scale.wall_means(oh, bn)
    assert a.shape == b.shape == (2,)
    # seed 0: both over BN's 0.5 s; seed 1: both over OH's 1 s
    np.testing.assert_allclose(a, [paper_scale.wall_mean(oh[0], 0.5), paper_scale.wall_mean(oh[1], 1.0)])
    np.testing.assert_allclose(b, [paper_scale.wall_mean(bn[0], 0.5), paper_scale.wall_mean(bn[1], 1.0)])
    a, b = paper_scale.wall_means(oh, bn, 0.25)  # the first quarter
    np.testing.assert_allclose(a, [paper_scale.wall_mean(oh[0], 0.125), paper_scale.wall_mean(oh[1], 0.25)])
    # a diverged run: +inf, over the time of the finished one
    a, b = paper_scale.wall_means(oh[:1], [line(2.0, 0.0, 0.1, seed=0, status="diverged")])
    assert b[0] == np.inf and a[0] == pytest.approx(paper_scale.wall_mean(oh[0], 1.0))
    with pytest.raises(ValueError, match="same seeds"):
        paper_scale.wall_means(oh, bn[::-1])


def test_the_papers_constants():
    assert wall.SLOWER_CASE == (16, 16) and wall.FASTER_CASE == (32, 25)
    assert wall.CLEAR == 0.01 and wall.INITIAL == 0.25 and wall.POINTS == 100


# ----------------------------------------------------------------------------------------- Fig. 17
WALL_CASES, WALL_NS = ((16, 16), (32, 25)), (256, 512, 1024)


def fig17_grid(bn_fast_at_16=False):
    def one(d, k, e, s):
        if (d, k) == (16, 16):  # BN's step a little cheaper, but it needs many more steps
            slow = e == "BN" and not bn_fast_at_16
            return run(falls(60 if slow else 20), s, ms=0.9 if e == "BN" else 1.0)
        return run(falls(20), s, ms=0.5 if e == "BN" else 1.0)  # same curve per step, BN's steps half the time

    return {
        (d, k, n, e): [one(d, k, e, s) for s in range(10)] for d, k in WALL_CASES for n in WALL_NS for e in ("OH", "BN")
    }


def fig17(G, **kw):
    args = dict(cases=WALL_CASES, ns=WALL_NS, seeds=10, machine="h200")
    return paper_scale.fig17_claims(G, **{**args, **kw})


def test_fig17_bn_slower_at_16_initially_faster_at_32(chapter):
    ids = fig17(fig17_grid())
    assert ids == ["learning-wallclock-bn-slower-gpu-h200", "learning-wallclock-bn-initially-faster-gpu-h200"]
    assert verdicts(ids) == ["reproduced"] * 2
    assert (
        all(f"n={n}" in claims.claims()[0].ours for n in WALL_NS) and "ms per step OH 1.00" in claims.claims()[0].ours
    )


def test_fig17_partial_contradicting_and_bad_cases(chapter):
    assert fig17(drop_one(fig17_grid())) == [] and claims.claims() == []
    with pytest.raises(AssertionError, match="learning-wallclock-bn-slower-gpu-h200"):
        fig17(fig17_grid(bn_fast_at_16=True))
    with pytest.raises(ValueError, match="cases must include"):
        fig17(fig17_grid(), cases=[(8, 8)])


def test_fig17_one_case_records_its_own_statement(chapter):
    assert fig17(fig17_grid(), cases=[[32, 25]]) == ["learning-wallclock-bn-initially-faster-gpu-h200"]
    assert "ms per step OH 1.00, BN 0.50" in claims.claims()[0].ours
    claims.start("learning")
    assert fig17(fig17_grid(), cases=[(16, 16)], ns=[512]) == ["learning-wallclock-bn-slower-gpu-h200"]


def test_fig17_bn_slower_only_when_clearly_so(chapter):
    def shifted(by):  # at d=k=16, BN's curve is OH's raised by ``by`` on the same clock
        G = fig17_grid()
        for n in WALL_NS:
            G[(16, 16, n, "BN")] = [run(falls(20) + by, s) for s in range(10)]
            G[(16, 16, n, "OH")] = [run(falls(20), s) for s in range(10)]
        return G

    with pytest.raises(AssertionError, match="learning-wallclock-bn-slower-gpu-h200"):
        fig17(shifted(wall.CLEAR / 2), cases=[(16, 16)])  # above OH's, but by less than CLEAR
    assert fig17(shifted(2 * wall.CLEAR), cases=[(16, 16)]) == ["learning-wallclock-bn-slower-gpu-h200"]


def test_fig17_initially_is_the_first_quarter_of_the_time(chapter):
    G = fig17_grid()
    early = np.r_[1.5, 1.0, 0.95, 0.95, np.full(7, 1.3)]  # BN below OH's falls(20) until step 30, above after
    for n in WALL_NS:
        G[(32, 25, n, "BN")] = [run(early, s) for s in range(10)]
        G[(32, 25, n, "OH")] = [run(falls(20), s) for s in range(10)]
    oh, bn = paper_scale.wall_means(G[(32, 25, 256, "OH")], G[(32, 25, 256, "BN")])
    assert (bn > oh).all()  # over the whole time BN is worse ...
    oh, bn = paper_scale.wall_means(G[(32, 25, 256, "OH")], G[(32, 25, 256, "BN")], wall.INITIAL)
    assert (bn < oh).all()  # ... but not over its first quarter
    assert fig17(G, cases=[(32, 25)]) == ["learning-wallclock-bn-initially-faster-gpu-h200"]
    assert verdicts(["learning-wallclock-bn-initially-faster-gpu-h200"]) == ["reproduced"]
    assert "first 25% of the common time" in claims.claims()[0].ours


def test_fig17_bad_ns(chapter):
    with pytest.raises(TypeError, match="ns must be a list of settings"):
        fig17(fig17_grid(), ns=512)
    with pytest.raises(ValueError, match="ns must hold at least 1 values"):
        fig17(fig17_grid(), ns=[])


def test_bad_seeds_and_machine_fail_before_the_sweep_is_read(chapter):
    with pytest.raises(ValueError, match="seeds must be >= 1, got 0"):
        fig17({}, seeds=0)
    with pytest.raises(TypeError, match="seeds must be an integer"):
        fig17({}, seeds=2.5)
    with pytest.raises(ValueError, match="machine must name the GPU machine"):
        fig17({}, machine="(-)")
    assert fig17({}) == [] and claims.claims() == []  # an empty sweep is partial


def test_fig17_on_the_plateau_is_an_open_row_saying_why(chapter):
    """No embedding's runs left the plateau above one Lloyd step: the premise of a comparison of convergence fails."""
    G = {key: [run(np.full(11, 1.8), s) for s in range(10)] for key in fig17_grid()}
    ids = fig17(G)
    assert ids == ["learning-wallclock-bn-slower-gpu-h200", "learning-wallclock-bn-initially-faster-gpu-h200"]
    rows = claims.rows()
    assert [r.kind for r in rows] == ["open", "open"] and claims.claims() == []
    assert "still on the plateau" in rows[0].ours and "OH 1.80, BN 1.80" in rows[0].ours
