"""lloydbook.paper_scale.clusters: Figure 15, as lloydbook.fig15 states it, decided on (here: made-up) paper-scale
GPU runs."""

from types import SimpleNamespace

import numpy as np
import pytest
from _made_up_runs import EMBS, LOSSES, drop_one, falls, run, verdicts

from lloydbook import claims, paper_scale
from lloydbook import fig15 as figure15  # fig15 below is the judge of a sweep


@pytest.fixture
def chapter():
    """The claims of chapter ``shapes`` (Figs. 11, 13, 14 and 15 are chapter 05's), emptied before and after."""
    claims.start("shapes")
    yield
    claims.start("shapes")


# ----------------------------------------------------------------------------------------- Fig. 15
CASES, KS = ((4, 1.0), (4, 0.1), (32, 1.0), (32, 0.1)), (6, 10, 16, 25)


def fig15_grid(oh_unstable=(0, 1, 2)):
    """BN worse with k at d=4 (below NA at k=25), OH flat; OH seeds ``oh_unstable`` unstable at d=32, k=25,
    tau=0.1, L2 (diverged, or a finite blow-up for seed 1)."""

    def one(d, t, k, e, l, s):
        if e == "NA":
            return run(np.full(11, 1.1), s)
        if e == "BN":
            return run(falls(20, 0.9 + (0.03 * (k - 6) if d == 4 else 0)), s)
        if (d, t, k, l) == (32, 0.1, 25, "L2") and s in oh_unstable:
            if s == 1:
                return run(np.r_[falls(20)[:5], 3.0, falls(20)[6:]], s)  # jumps by about 2, then recovers
            return run(np.r_[falls(20)[:6], np.full(5, np.inf)], s, status="diverged")
        return run(falls(20), s)

    return {
        (d, t, k, e, l): [one(d, t, k, e, l, s) for s in range(10)]
        for d, t in CASES
        for k in KS
        for e in EMBS
        for l in LOSSES
    }


def fig15(G, **kw):
    args = dict(cases=CASES, ks=KS, embeddings=EMBS, losses=LOSSES, seeds=10, machine="h200", n=512)
    return paper_scale.fig15_claims(G, **{**args, **kw})


def test_fig15_bn_degrades_oh_flat_and_three_oh_runs_unstable(chapter):
    ids = fig15(fig15_grid())
    assert ids == [
        "shapes-k-bn-degrades-gpu-h200",
        "shapes-k-oh-insensitive-gpu-h200",
        "shapes-k-bn-below-na-gpu-h200",
        "shapes-k-oh-unstable-gpu-h200",
    ]
    assert verdicts(ids) == ["reproduced"] * 4
    rows = claims.claims()
    assert "d=4, tau=1" in rows[0].ours and "d=4, tau=0.1" in rows[0].ours and "d=32" not in rows[0].ours
    assert "OH unstable in 3 of 40 runs" in rows[3].ours and "BN unstable in 0 of 40" in rows[3].ours
    assert rows[3].statement == figure15.OH_UNSTABLE[0] + " (h200, paper scale)"  # the finding's own words
    assert (
        "(d, tau) in {(4, 1), (4, 0.1), (32, 1), (32, 0.1)}" in rows[1].statement
        and "20.48 points" in rows[1].statement
    )
    assert [r.source for r in rows] == [figure15.SOURCES[i[7:-9]] for i in ids]


@pytest.mark.parametrize("oh_unstable", [(), tuple(range(6))], ids=["none", "most"])
def test_fig15_instability_that_no_rerun_would_call_the_papers_fails(chapter, oh_unstable):
    with pytest.raises(AssertionError, match="shapes-k-oh-unstable-gpu-h200"):
        fig15(fig15_grid(oh_unstable))


def test_fig15_partial_and_bn_not_degrading(chapter):
    assert fig15(drop_one(fig15_grid())) == [] and claims.claims() == []
    G = fig15_grid()
    for key in G:
        if key[3] == "BN":  # flat in k: no degradation
            G[key] = [run(falls(20), s) for s in range(10)]
    with pytest.raises(AssertionError, match="shapes-k-bn-below-na-gpu-h200"):  # flat BN stays below NA: fails
        fig15(G)
    # BN's medians the same at every k: "BN degrades" undecided, an open row, not a failure
    assert [r.id for r in claims.open_rows()] == ["shapes-k-bn-degrades-gpu-h200"]


def test_fig15_refuses_clipped_runs_for_the_instability(chapter):
    G = fig15_grid()
    G[(32, 1.0, 25, "BN", "NE")] = [run(falls(20), s, config=SimpleNamespace(seed=s, clip=1.0)) for s in range(10)]
    with pytest.raises(ValueError, match="without gradient clipping"):
        fig15(G)


def test_fig15_records_only_the_statements_of_the_panels_given(chapter):
    G = fig15_grid()
    assert fig15(G, cases=[(32, 1.0)], ks=(6, 10)) == ["shapes-k-oh-insensitive-gpu-h200"]  # no k=25, no d=4
    claims.start("shapes")  # the same id with another statement is a new claim
    assert fig15(G, cases=[[4, 1.0]], embeddings=("OH", "BN")) == [  # a case given as a list; no NA
        "shapes-k-bn-degrades-gpu-h200",
        "shapes-k-oh-insensitive-gpu-h200",
    ]


def test_fig15_oh_with_too_few_stable_runs_is_not_insensitive(chapter):
    G = fig15_grid(oh_unstable=())
    G[(4, 1.0, 10, "OH", "L2")] = [run(falls(20), s, status="diverged") for s in range(10)]
    with pytest.raises(AssertionError, match="shapes-k-oh-insensitive-gpu-h200"):
        fig15(G, cases=[(4, 1.0)])
    with pytest.raises(ValueError, match="ks must hold at least 2 values"):
        fig15(G, ks=(6,))
    with pytest.raises(ValueError, match=r"losses must include \['L2'\]"):
        fig15(G, losses=("NE",))


def test_fig15_oh_beyond_the_tolerance_at_a_large_k_is_not_insensitive(chapter):
    G = fig15_grid()
    for key in G:
        if key[2] == 25 and key[3] == "OH" and key[:2] != (32, 0.1):  # OH's median 0.1 higher at k=25
            G[key] = [run(falls(20, 0.9 + 2 * figure15.K_TOL), s) for s in range(10)]
    with pytest.raises(AssertionError, match="shapes-k-oh-insensitive-gpu-h200"):
        fig15(G, cases=[(4, 1.0)])
    claims.start("shapes")
    G = fig15_grid()
    for key in G:
        if key[2] == 25 and key[3] == "OH" and key[:2] == (4, 1.0):  # 0.02 higher: within the tolerance
            G[key] = [run(falls(20, 0.9 + 0.4 * figure15.K_TOL), s) for s in range(10)]
    assert fig15(G, cases=[(4, 1.0)])[1] == "shapes-k-oh-insensitive-gpu-h200"
    assert verdicts(["shapes-k-oh-insensitive-gpu-h200"]) == ["reproduced"]


def test_bad_seeds_and_machine_fail_before_the_sweep_is_read(chapter):
    with pytest.raises(ValueError, match="seeds must be >= 1, got 0"):
        fig15({}, seeds=0)
    with pytest.raises(TypeError, match="seeds must be an integer"):
        fig15({}, seeds=2.5)
    with pytest.raises(ValueError, match="machine must name the GPU machine"):
        fig15({}, machine="(-)")
    assert fig15({}) == [] and claims.claims() == []  # an empty sweep is partial
