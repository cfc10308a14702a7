"""lloydbook.paper_scale.shapes: Figures 14, 11 and 13 decided on (here: made-up) paper-scale GPU runs, and
Fig. 14's two gaps.

For each figure: a complete sweep that looks like the paper's figure is judged "reproduced" under the
expected ids, a partial one judges nothing, and one that contradicts the paper fails its check.
"""

from types import SimpleNamespace

import numpy as np
import pytest
from _made_up_runs import EMBS, LOSSES, STEPS, drop_one, falls, run, verdicts

from lloydbook import claims, paper_scale
from lloydbook.paper_scale import shapes


@pytest.fixture
def chapter():
    """The claims of chapter ``shapes`` (Figs. 11, 13, 14 and 15 are chapter 05's), emptied before and after."""
    claims.start("shapes")
    yield
    claims.start("shapes")


def exact(val, seed, *, train=None, status="done"):
    """A made-up run whose curves are exactly ``val`` and ``train`` (no per-seed wiggle)."""
    val = np.asarray(val, dtype=float)
    train = val if train is None else np.asarray(train, dtype=float)
    history = {"step": STEPS[: len(val)], "val_rel_loss": val, "train_loss": train}
    return SimpleNamespace(history=history, status=status, config=SimpleNamespace(seed=seed, clip=None))


# ----------------------------------------------------------------------------------------- the gaps
def test_oh_bn_gap_is_the_per_seed_difference_of_areas():
    G = {
        (4, 0.1, "OH", "L2"): [exact([9.0, 1.0, 2.0, 3.0], 0), exact([9.0, 1.0, 1.0, 1.0], 1)],  # areas 2 and 1
        (4, 0.1, "BN", "L2"): [exact([0.0, 3.0, 3.0, 3.0], 0), exact([5.0, 0.5, 0.5, 0.5], 1)],  # areas 3, 0.5
    }
    gap = paper_scale.oh_bn_gap(G, 4, 0.1)
    assert gap.shape == (2,)
    np.testing.assert_allclose(gap, [1.0, 0.5])  # |3 - 2|, |0.5 - 1|: step 0 is left out
    G[(4, 0.1, "BN", "L2")][1] = exact([5.0, np.inf, np.inf, np.inf], 1, status="diverged")
    np.testing.assert_array_equal(paper_scale.oh_bn_gap(G, 4, 0.1), [1.0, np.inf])
    G[(4, 0.1, "OH", "L2")][1] = exact([5.0, np.inf, np.inf, np.inf], 1, status="diverged")
    with np.errstate(invalid="ignore"):  # inf - inf (ne_l2_gap silences its own; oh_bn_gap does not)
        np.testing.assert_array_equal(paper_scale.oh_bn_gap(G, 4, 0.1), [1.0, np.inf])  # read as inf
    G[(4, 0.1, "BN", "L2")] = G[(4, 0.1, "BN", "L2")][::-1]
    with pytest.raises(ValueError, match="same seeds"):
        paper_scale.oh_bn_gap(G, 4, 0.1)
    with pytest.raises(KeyError):
        paper_scale.oh_bn_gap(G, 8, 0.1)  # no such setting


def test_ne_l2_gap_is_relative_to_l2_oh_then_bn():
    def two(ne, l2):  # one seed each of NE and L2 with final training losses ne and l2
        return [exact([1.0, 1.0], 0, train=[5.0, ne])], [exact([1.0, 1.0], 0, train=[5.0, l2])]

    G = {}
    G[(4, 0.1, "OH", "NE")], G[(4, 0.1, "OH", "L2")] = two(3.0, 2.0)  # (3 - 2) / 2
    G[(4, 0.1, "BN", "NE")], G[(4, 0.1, "BN", "L2")] = two(1.0, 4.0)  # (1 - 4) / 4
    gap = paper_scale.ne_l2_gap(G, 4, 0.1)
    assert gap.shape == (2,)
    np.testing.assert_allclose(gap, [0.5, -0.75])
    G[(4, 0.1, "OH", "L2")] = [exact([1.0, np.inf], 0, train=[5.0, np.inf], status="diverged")]
    G[(4, 0.1, "BN", "NE")] = [exact([1.0, np.inf], 0, train=[5.0, np.inf], status="diverged")]
    np.testing.assert_array_equal(paper_scale.ne_l2_gap(G, 4, 0.1), [np.inf, np.inf])  # nan and inf read as inf


def test_gap_shapes_follow_the_seeds():
    G = fig14_grid()
    assert paper_scale.oh_bn_gap(G, 4, 0.1).shape == (10,)
    assert paper_scale.ne_l2_gap(G, 32, 0.25).shape == (20,)
    assert (paper_scale.oh_bn_gap(G, 4, 0.1) > paper_scale.oh_bn_gap(G, 32, 0.1)).all()  # the grid's design


def test_the_papers_constants():
    assert shapes.DEFAULT_LR == 0.01 and shapes.LARGE_LR == {4: 1.0, 32: 0.1}
    assert shapes.MONOTONE < shapes.NON_MONOTONE and shapes.N_TOL == 0.05


# ----------------------------------------------------------------------------------------- Fig. 14
DS, D_TAUS = (4, 32), (0.25, 0.1)


def fig14_grid(shrinks=True):
    def one(d, e, l, s):
        gap = (d == 4) == shrinks  # the large gaps at d=4 when the paper holds
        val = falls(20 if e == "OH" else (60 if gap else 22)) if e != "NA" else np.full(11, 1.1)
        return run(val, s, train=10 * val * (1.2 if gap else 1.05) if l == "NE" else 10 * val)

    return {
        (d, t, e, l): [one(d, e, l, s) for s in range(10)] for d in DS for t in D_TAUS for e in EMBS for l in LOSSES
    }


def fig14(G, **kw):
    args = dict(ds=DS, taus=D_TAUS, embeddings=EMBS, losses=LOSSES, seeds=10, machine="h200")
    return paper_scale.fig14_claims(G, **{**args, **kw})


def test_fig14_gaps_shrink_with_d(chapter):
    ids = fig14(fig14_grid())
    assert ids == ["shapes-d-oh-bn-gap-shrinks-gpu-h200", "shapes-d-ne-l2-gap-shrinks-gpu-h200"]
    assert verdicts(ids) == ["reproduced"] * 2
    assert "tau=0.25" in claims.claims()[0].ours and "tau=0.1" in claims.claims()[0].ours  # every panel


def test_fig14_partial_and_contradicting(chapter):
    assert fig14(drop_one(fig14_grid())) == [] and claims.claims() == []
    with pytest.raises(AssertionError, match="shapes-d-oh-bn-gap-shrinks-gpu-h200"):
        fig14(fig14_grid(shrinks=False))


def test_fig14_bad_arguments(chapter):
    with pytest.raises(ValueError, match="ds must hold at least 2 values"):
        fig14(fig14_grid(), ds=[4])
    with pytest.raises(ValueError, match=r"losses must include \['NE', 'L2'\]"):
        fig14(fig14_grid(), losses=["L2"])
    with pytest.raises(ValueError, match="embeddings must include"):
        fig14(fig14_grid(), embeddings=["BN"])


# ----------------------------------------------------------------------------------------- Fig. 11
LRS = (0.001, 0.01, 0.1, 1.0)


def fig11_grid(d32_large=True):
    zigzag = np.r_[1.5, np.tile([1.2, 1.5], 5)]  # rises by 0.3, ends at 1.5

    def curve(d, lr):
        if lr == 0.001:
            return np.linspace(1.5, 1.0, 11)  # monotone, ends above 0.9
        large = lr == 1.0 or (d == 32 and lr == 0.1 and d32_large)
        return zigzag if large else falls(20)

    return {
        (d, lr, e, l): [run(curve(d, lr), s) for s in range(10)] for d in DS for lr in LRS for e in EMBS for l in LOSSES
    }


def fig11(G, **kw):
    args = dict(ds=DS, lrs=LRS, embeddings=EMBS, losses=LOSSES, seeds=10, machine="h200")
    return paper_scale.fig11_claims(G, **{**args, **kw})


def test_fig11_small_rate_slow_large_rates_worse(chapter):
    ids = fig11(fig11_grid())
    assert ids == ["shapes-lr-small-monotone-slow-gpu-h200", "shapes-lr-large-nonmonotone-worse-gpu-h200"]
    assert verdicts(ids) == ["reproduced"] * 2
    large = claims.claims()[1]
    assert "eta >= 0.1 at d=32" in large.statement and "3 cells: 3 holds" in large.ours  # d=4: 1; d=32: 0.1, 1


def test_fig11_partial_contradicting_and_bad_rates(chapter):
    assert fig11(drop_one(fig11_grid())) == [] and claims.claims() == []
    with pytest.raises(AssertionError, match="shapes-lr-large-nonmonotone-worse-gpu-h200"):
        fig11(fig11_grid(d32_large=False))  # eta=0.1 at d=32 as good as 0.01
    with pytest.raises(ValueError, match="lrs must include"):
        fig11(fig11_grid(), lrs=(0.001, 0.1, 1.0))
    with pytest.raises(ValueError, match="large must map every d"):
        fig11(fig11_grid(), ds=(4, 8))


def test_fig11_large_rates_given_per_d(chapter):
    ids = fig11(fig11_grid(), large={4: 1.0, 32: 1.0})  # only eta=1 is large at both d: 2 cells
    assert len(ids) == 2 and "2 cells: 2 holds" in claims.claims()[1].ours
    with pytest.raises(ValueError, match="lrs must hold a rate below 0.01"):
        fig11(fig11_grid(), lrs=(0.01, 0.1, 1.0))  # no small rate
    with pytest.raises(ValueError, match="lrs must hold a rate below 0.01"):
        fig11(fig11_grid(), large={4: 0.01, 32: 0.1})  # a "large" rate that is the default
    with pytest.raises(ValueError, match="large must map every d"):
        fig11(fig11_grid(), large=[1.0, 0.1])


# ----------------------------------------------------------------------------------------- Fig. 13
NS = (128, 256, 512, 1024)


def fig13_grid(small_worse=False):
    def curve(n, e):
        return np.full(11, 1.1) if e == "NA" else falls(20, 1.05 if small_worse and n == 128 else 0.9)

    return {(n, e, l): [run(curve(n, e), s) for s in range(10)] for n in NS for e in EMBS for l in LOSSES}


def fig13(G, **kw):
    args = dict(ns=NS, n0=512, embeddings=EMBS, losses=LOSSES, seeds=10, machine="h200")
    return paper_scale.fig13_claims(G, **{**args, **kw})


def test_fig13_n_makes_little_difference(chapter):
    assert verdicts(fig13(fig13_grid())) == ["reproduced"]
    assert claims.claims()[0].id == "shapes-n-little-difference-gpu-h200"


def test_fig13_partial_contradicting_and_bad_reference(chapter):
    assert fig13(drop_one(fig13_grid())) == [] and claims.claims() == []
    with pytest.raises(AssertionError, match="shapes-n-little-difference-gpu-h200"):
        fig13(fig13_grid(small_worse=True))
    with pytest.raises(ValueError, match=r"ns must include \[64\]"):
        fig13(fig13_grid(), n0=64)


# ----------------------------------------------------------------------------------------- arguments
@pytest.mark.parametrize(
    "call",
    [lambda **kw: fig14({}, **kw), lambda **kw: fig11({}, **kw), lambda **kw: fig13({}, **kw)],
    ids=["14", "11", "13"],
)
def test_bad_seeds_and_machine_fail_before_the_sweep_is_read(chapter, call):
    with pytest.raises(ValueError, match="seeds must be >= 1, got 0"):
        call(seeds=0)
    with pytest.raises(TypeError, match="seeds must be an integer"):
        call(seeds=2.5)
    with pytest.raises(ValueError, match="machine must name the GPU machine"):
        call(machine="(-)")
    assert call() == [] and claims.claims() == []  # an empty sweep is partial
