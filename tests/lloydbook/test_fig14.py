"""lloydbook.fig14: Figure 14's two gaps, per seed, and its findings at one tau as parts in the evidence vocabulary."""

from types import SimpleNamespace

import numpy as np
import pytest
from _made_up_runs import STEPS, falls, run

from lloydbook import fig14
from lloydbook.claims.evidence import Evidence, verdict_of


def exact(val, seed, *, train=None, status="done"):
    """A made-up run whose curves are exactly ``val`` and ``train`` (no per-seed wiggle)."""
    val = np.asarray(val, dtype=float)
    train = val if train is None else np.asarray(train, dtype=float)
    history = {"step": STEPS[: len(val)], "val_rel_loss": val, "train_loss": train}
    return SimpleNamespace(history=history, status=status, config=SimpleNamespace(seed=seed, clip=None))


def grid(shrinks=True, ds=(4, 32), taus=(0.25, 0.1)):
    """Made-up runs of every (d, tau, embedding, loss): OH and BN, NE and L2 far apart at d=4 only (if ``shrinks``)."""

    def one(d, e, l, s):
        gap = (d == 4) == shrinks
        val = falls(20 if e == "OH" else (60 if gap else 22))
        return run(val, s, train=10 * val * (1.2 if gap else 1.05) if l == "NE" else 10 * val)

    return {
        (d, t, e, l): [one(d, e, l, s) for s in range(10)]
        for d in ds
        for t in taus
        for e in ("OH", "BN")
        for l in ("NE", "L2")
    }


# ----------------------------------------------------------------------------------------- the gaps
def test_oh_bn_gap_is_the_per_seed_difference_of_areas():
    G = {
        (4, 0.1, "OH", "L2"): [exact([9.0, 1.0, 2.0, 3.0], 0), exact([9.0, 1.0, 1.0, 1.0], 1)],  # areas 2 and 1
        (4, 0.1, "BN", "L2"): [exact([0.0, 3.0, 3.0, 3.0], 0), exact([5.0, 0.5, 0.5, 0.5], 1)],  # areas 3, 0.5
    }
    gap = fig14.oh_bn_gap(G, 4, 0.1)
    assert gap.shape == (2,)
    np.testing.assert_allclose(gap, [1.0, 0.5])  # |3 - 2|, |0.5 - 1|: step 0 is left out
    G[(4, 0.1, "BN", "L2")][1] = exact([5.0, np.inf, np.inf, np.inf], 1, status="diverged")
    np.testing.assert_array_equal(fig14.oh_bn_gap(G, 4, 0.1), [1.0, np.inf])
    G[(4, 0.1, "OH", "L2")][1] = exact([5.0, np.inf, np.inf, np.inf], 1, status="diverged")
    with np.errstate(invalid="ignore"):  # inf - inf (ne_l2_gap silences its own; oh_bn_gap does not)
        np.testing.assert_array_equal(fig14.oh_bn_gap(G, 4, 0.1), [1.0, np.inf])  # read as inf
    G[(4, 0.1, "BN", "L2")] = G[(4, 0.1, "BN", "L2")][::-1]
    with pytest.raises(ValueError, match="same seeds"):
        fig14.oh_bn_gap(G, 4, 0.1)
    with pytest.raises(KeyError):
        fig14.oh_bn_gap(G, 8, 0.1)  # no such setting


def test_ne_l2_gap_is_relative_to_l2_oh_then_bn():
    def two(ne, l2):  # one seed each of NE and L2 with final training losses ne and l2
        return [exact([1.0, 1.0], 0, train=[5.0, ne])], [exact([1.0, 1.0], 0, train=[5.0, l2])]

    G = {}
    G[(4, 0.1, "OH", "NE")], G[(4, 0.1, "OH", "L2")] = two(3.0, 2.0)  # (3 - 2) / 2
    G[(4, 0.1, "BN", "NE")], G[(4, 0.1, "BN", "L2")] = two(1.0, 4.0)  # (1 - 4) / 4
    gap = fig14.ne_l2_gap(G, 4, 0.1)
    assert gap.shape == (2,)
    np.testing.assert_allclose(gap, [0.5, -0.75])
    G[(4, 0.1, "OH", "L2")] = [exact([1.0, np.inf], 0, train=[5.0, np.inf], status="diverged")]
    G[(4, 0.1, "BN", "NE")] = [exact([1.0, np.inf], 0, train=[5.0, np.inf], status="diverged")]
    np.testing.assert_array_equal(fig14.ne_l2_gap(G, 4, 0.1), [np.inf, np.inf])  # nan and inf read as inf


def test_gap_shapes_follow_the_seeds():
    G = grid()
    assert fig14.oh_bn_gap(G, 4, 0.1).shape == (10,) and fig14.ne_l2_gap(G, 32, 0.25).shape == (20,)
    assert (fig14.oh_bn_gap(G, 4, 0.1) > fig14.oh_bn_gap(G, 32, 0.1)).all()  # the grid's design


# ----------------------------------------------------------------------------------------- the findings
def test_both_gaps_shrink_with_d_read_at_the_smallest_and_largest_d(judge):
    G = grid(ds=(4, 16, 32))
    parts = fig14.parts(G, [32, 4, 16], 0.1, judge=judge)
    assert list(parts) == ["d-oh-bn-gap-shrinks", "d-ne-l2-gap-shrinks"] == list(fig14.SOURCES)
    oh_bn, ne_l2 = parts.values()
    assert len(oh_bn.runs) == 2 * 2 * 10 and len(ne_l2.runs) == 2 * 4 * 10  # d=4 and 32; its cells; seeds
    assert [e.outcome for e in oh_bn.evidence + ne_l2.evidence] == ["holds", "holds"]
    assert oh_bn.evidence[0].part == "smaller at d=32 than at d=4" and "unpaired" in oh_bn.evidence[0].text
    assert "tau=0.1" in oh_bn.statement and "|BN - OH|" in oh_bn.statement and "(NE - L2) / L2" in ne_l2.statement


@pytest.mark.parametrize("tau", [0.25, 0.1])
def test_both_gaps_shrink_at_every_tau(tau, judge):
    parts = fig14.parts(grid(), (4, 32), tau, judge=judge)
    assert [verdict_of(p.evidence) for p in parts.values()] == ["reproduced"] * 2
    assert all(f"tau={tau:g})" in p.statement for p in parts.values())
    assert "Thm. 3.1" in fig14.SOURCES["d-oh-bn-gap-shrinks"]


def test_a_gap_that_grows_with_d_fails_and_one_d_is_refused(judge):
    parts = fig14.parts(grid(shrinks=False), (4, 32), 0.25, judge=judge)
    assert all(isinstance(e, Evidence) and e.outcome == "fails" for p in parts.values() for e in p.evidence)
    with pytest.raises(ValueError, match="ds must hold at least 2 dimensions"):
        fig14.parts(grid(), [4], 0.1, judge=judge)


def test_named_marks_every_tau_but_the_smallest():
    assert fig14.named("d-oh-bn-gap-shrinks", 0.1, [0.25, 0.1]) == "d-oh-bn-gap-shrinks"
    assert fig14.named("d-oh-bn-gap-shrinks", 0.25, [0.25, 0.1]) == "d-oh-bn-gap-shrinks-tau025"
    assert fig14.named("d-ne-l2-gap-shrinks", 1.0, (0.1, 1.0)) == "d-ne-l2-gap-shrinks-tau1"


def test_statements_are_the_words_of_the_parts(judge):
    for tau in (0.25, 0.1):
        parts, say = fig14.parts(grid(), (4, 32), tau, judge=judge), fig14.statements(tau)
        assert list(say) == list(fig14.SOURCES) and all((p.statement, p.paper) == say[n] for n, p in parts.items())
        assert f"tau={tau:g})" in say["d-oh-bn-gap-shrinks"][0]
