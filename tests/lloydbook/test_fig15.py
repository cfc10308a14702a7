"""lloydbook.fig15: what an unstable run is, and Figure 15's findings at the panels given as parts in the evidence
vocabulary."""

from types import SimpleNamespace

import numpy as np
import pytest
from _made_up_runs import falls, run

from lloydbook import fig15, findings
from lloydbook.claims.evidence import verdict_of
from lloydbook.findings import undecided

EMBS, LOSSES = ("OH", "BN", "NA"), ("NE", "L2")


# ----------------------------------------------------------------------------------------- unstable
def test_unstable_reads_status_and_history():
    assert fig15.unstable(run(falls(20), 0, status="diverged"))
    assert fig15.unstable(run(np.r_[falls(20)[:5], 3.0, falls(20)[6:]], 0))  # a finite blow-up
    assert fig15.unstable(run(np.r_[falls(20)[:10], np.nan], 0))
    assert not fig15.unstable(run(np.r_[1.5, np.tile([1.2, 1.5], 5)], 0))  # noisy (Fig. 11), not unstable


def test_unstable_reads_the_training_loss_and_the_rise_threshold():
    train = 10 * falls(20)
    train[7] = np.inf
    assert fig15.unstable(run(falls(20), 0, train=train))  # only the training loss blew up
    early = 10 * falls(20)
    early[0] = np.nan  # step 0 (one untrained batch) does not count
    assert not fig15.unstable(run(falls(20), 0, train=early))
    jump = np.r_[falls(20)[:5], falls(20)[4] + 0.5, falls(20)[6:]]  # a rise of 0.5
    assert not fig15.unstable(run(jump, 0)) and fig15.UNSTABLE_RISE == 1.0
    assert fig15.unstable(run(jump, 0), rise=0.4)
    assert not fig15.unstable(run(jump, 0), rise=0.6)


def test_the_papers_constants():
    assert fig15.SMALL_D == 4 and fig15.BN_NA_CASE == (4, 0.1) and fig15.UNSTABLE_AT == (32, 25)
    assert fig15.K_TOL == 0.05 and "d=32, k=25" in fig15.OH_UNSTABLE[0]


# ----------------------------------------------------------------------------------------- the findings
def grid(cases, ks, oh_diverged=()):
    """BN worse with k at d=4 (below NA at the largest k), OH flat; OH's seeds ``oh_diverged`` diverged at the
    largest k."""

    def one(d, t, k, e, s):
        if e == "NA":
            return run(np.full(11, 1.1), s)
        if e == "BN":
            return run(falls(20, 0.9 + (0.1 * (k - 6) if d == 4 else 0)), s)
        return run(falls(20), s, status="diverged" if k == max(ks) and s in oh_diverged else "done")

    return {
        (d, t, k, e, l): [one(d, t, k, e, s) for s in range(10)]
        for d, t in cases
        for k in ks
        for e in EMBS
        for l in LOSSES
    }


def test_this_builds_panel_reads_three_findings(judge):
    G = grid([(4, 0.1)], (6, 10, 16))
    # the k read: at least 3 points per cluster
    parts = fig15.parts(G, [[4, 0.1]], (6, 10), EMBS, ("L2",), n=32, judge=judge)
    assert list(parts) == ["k-bn-degrades", "k-oh-insensitive", "k-bn-below-na"]
    assert all(e.outcome == "holds" for p in parts.values() for e in p.evidence)
    degrades, insensitive, below = parts.values()
    assert degrades.evidence[0].part == "BN lower at k=6 than at k=10" and len(degrades.runs) == 20
    assert "d=4, tau=0.1, L2; 3.2 points per cluster at k=10" in degrades.statement
    assert insensitive.evidence[0].cells[0].part == "k=10" and "of its stable runs" in insensitive.statement
    assert below.evidence[0].part == "NA lower than BN at k=10" and "paired by seed" in below.evidence[0].text


def test_every_panel_reads_four_findings_and_oh_on_its_stable_runs(judge):
    cases = [(4, 1.0), (4, 0.1), (32, 1.0), (32, 0.1)]
    G = grid(cases, (6, 10, 16, 25), oh_diverged=(0, 1))
    parts = fig15.parts(G, cases, (6, 10, 16, 25), EMBS, LOSSES, n=512, judge=judge)
    assert list(parts) == list(fig15.SOURCES)
    assert [e.part for e in parts["k-bn-degrades"].evidence] == [
        "BN lower at k=6 than at k=25, d=4, tau=1",
        "BN lower at k=6 than at k=25, d=4, tau=0.1",
    ]
    insensitive = parts["k-oh-insensitive"]
    assert [e.outcome for e in insensitive.evidence] == ["holds"] * 4
    assert insensitive.evidence[0].cells[-1].part == "k=25 (10 and 8 stable runs)"  # two diverged runs left out
    unstable = parts["k-oh-unstable"]
    assert unstable.statement == fig15.OH_UNSTABLE[0] and [e.outcome for e in unstable.evidence] == ["holds"] * 2
    assert "OH unstable in 8 of 40 runs" in unstable.evidence[0].text  # seeds 0 and 1 in each (tau, loss)


def test_too_few_stable_runs_fail_and_clipped_runs_are_refused(judge):
    G = grid([(32, 0.1)], (6, 25), oh_diverged=range(9))
    parts = fig15.parts(G, [(32, 0.1)], (6, 25), EMBS, LOSSES, n=512, judge=judge)
    assert parts["k-oh-insensitive"].evidence[0].cells[0].outcome == "fails"  # 1 stable run at k=25
    assert parts["k-oh-unstable"].evidence[0].outcome == "fails"  # most OH runs unstable: not the paper's 3 of 10
    G[(32, 0.1, 25, "NA", "NE")] = [run(falls(20), s, config=SimpleNamespace(seed=s, clip=1.0)) for s in range(10)]
    with pytest.raises(ValueError, match="without gradient clipping"):
        fig15.parts(G, [(32, 0.1)], (6, 25), EMBS, LOSSES, n=512, judge=judge)
    with pytest.raises(ValueError, match="need two k, OH and BN and L2"):
        fig15.parts(G, [(32, 0.1)], (6, 25), EMBS, ("NE",), n=512, judge=judge)


# ----------------------------------------------------------------------------------------- recorded at n=512
def _recorded(ks, seeds):
    """Made-up recorded runs at the panel (4, 0.1), L2, with TrainConfigs: BN worse with k, NA flat, OH flat."""
    from lloydlib.training import TrainConfig

    base = TrainConfig(d=4, k=6, n=512, steps=10000, tau=0.1, loss="L2")
    one = grid([(4, 0.1)], ks)
    return [
        SimpleNamespace(**{**vars(r), "config": base.replace(k=k, embedding=e, seed=s)})
        for (d, t, k, e, l), rs in one.items()
        if l == "L2"
        for s, r in enumerate(rs)
        if s in seeds
    ]


def test_statements_are_the_words_of_the_parts(judge):
    say = fig15.statements([(4, 0.1)], [6, 25], EMBS, n=512)
    parts = fig15.parts(grid([(4, 0.1)], [6, 25]), [(4, 0.1)], [6, 25], EMBS, LOSSES, n=512, judge=judge)
    assert list(say) == ["k-bn-degrades", "k-oh-insensitive", "k-bn-below-na"]
    assert all((parts[name].statement, parts[name].paper) == say[name] for name in say)
    assert "20.48 points per cluster at k=25" in say["k-oh-insensitive"][0]
    assert "k-bn-below-na" not in fig15.statements([(4, 0.1)], [6, 25], ("OH", "BN"), n=512)


def test_recorded_parts_decide_the_extremes_first_and_name_what_is_missing(judge):
    ks = [6, 10, 16, 25]
    every = _recorded(ks, range(10))
    tiers = [[r.config for r in every if r.config.k in kk and r.config.seed in ss] for kk in ((6, 25), (10, 16))
             for ss in (range(5), range(5, 10))]  # fmt: skip
    have = [r for r in every if r.config.k in (6, 25) and r.config.seed < 5]  # the first tier only
    missing = [c for tier in tiers for c in tier if c not in [r.config for r in have]]
    parts = fig15.recorded_parts(findings.RecordedSweep("fig15", have, missing, tiers), judge=judge)
    assert parts["k-bn-degrades"].evidence[0].outcome == "holds" and len(parts["k-bn-degrades"].runs) == 10
    assert parts["k-bn-below-na"].evidence[0].outcome == "holds"
    oh = parts["k-oh-insensitive"]  # reads every k: open, naming the runs it lacks
    assert [e.outcome for e in oh.evidence] == ["undetermined"] and "k=10 OH:L2 seeds 0-9" in oh.evidence[0].text
    assert oh.evidence[0].text.startswith("10 of 40 recorded; missing: ") and "BN" not in oh.evidence[0].text
    done = fig15.recorded_parts(findings.RecordedSweep("fig15", every, [], tiers), judge=judge)
    assert done["k-oh-insensitive"].evidence[0].outcome == "holds" and len(done["k-oh-insensitive"].runs) == 40
    nothing = fig15.recorded_parts(findings.RecordedSweep("fig15", [], [r.config for r in every], tiers), judge=judge)
    assert all(p.evidence[0].outcome == "undetermined" and p.runs for p in nothing.values())
    below = nothing["k-bn-below-na"]  # an open row names only the runs its finding reads
    assert {(c.k, c.embedding) for c in below.runs} == {(25, "NA"), (25, "BN")} and len(below.runs) == 10


# ----------------------------------------------------------------------------------------- at the paper's panels
CASES, KS = [(4, 1.0), (4, 0.1), (32, 1.0), (32, 0.1)], (6, 10, 16, 25)


def paper_grid(oh_unstable=(0, 1, 2)):
    """:func:`grid` at every panel of the paper, OH's seeds ``oh_unstable`` unstable only at d=32, k=25, tau=0.1,
    L2 (diverged, or for seed 1 a finite blow-up)."""

    def oh(s):
        if s == 1 and s in oh_unstable:
            return run(np.r_[falls(20)[:5], 3.0, falls(20)[6:]], s)  # jumps by about 2, then recovers
        return run(falls(20), s, status="diverged" if s in oh_unstable else "done")

    return {**grid(CASES, KS), (32, 0.1, 25, "OH", "L2"): [oh(s) for s in range(10)]}


def paper_parts(G, cases=CASES, ks=KS, embeddings=EMBS, *, judge):
    return fig15.parts(G, cases, ks, embeddings, LOSSES, n=512, judge=judge)


def test_three_oh_runs_unstable_at_d32_k25_reproduce_every_finding(judge):
    parts = paper_parts(paper_grid(), judge=judge)
    assert [verdict_of(p.evidence) for p in parts.values()] == ["reproduced"] * 4
    degrades, insensitive, _, unstable = parts.values()
    assert [e.part for e in degrades.evidence] == [f"BN lower at k=6 than at k=25, d=4, tau={t}" for t in (1, 0.1)]
    assert "OH unstable in 3 of 40 runs" in unstable.evidence[0].text  # the finite blow-up counts
    assert "BN unstable in 0 of 40" in unstable.evidence[1].text
    assert "(d, tau) in {(4, 1), (4, 0.1), (32, 1), (32, 0.1)}" in insensitive.statement
    assert "20.48 points" in insensitive.statement


@pytest.mark.parametrize("oh_unstable, verdict", [((), "not reproduced"), (range(6), "partly")], ids=["none", "most"])
def test_instability_that_no_rerun_would_call_the_papers_fails(oh_unstable, verdict, judge):
    """No unstable OH run (nor fewer BN ones), or most of a setting's (6 of 10): not the paper's 3 of 10."""
    unstable = paper_parts(paper_grid(oh_unstable), judge=judge)["k-oh-unstable"]
    assert unstable.evidence[0].outcome == "fails" and verdict_of(unstable.evidence) == verdict


def test_bn_flat_in_k_is_undecided_and_not_below_na(judge):
    G = paper_grid()
    for key in G:
        if key[3] == "BN":
            G[key] = [run(falls(20), s) for s in range(10)]
    parts = paper_parts(G, judge=judge)
    assert undecided(parts["k-bn-degrades"])[0] == "undetermined"  # the same medians at every k: an open row
    assert verdict_of(parts["k-bn-below-na"].evidence) == "not reproduced"  # BN stays below NA


def test_a_panel_without_d4_or_k25_reads_only_ohs_insensitivity(judge):
    assert list(paper_parts(paper_grid(), cases=[(32, 1.0)], ks=(6, 10), judge=judge)) == ["k-oh-insensitive"]
    assert list(paper_parts(paper_grid(), cases=[[4, 1.0]], embeddings=("OH", "BN"), judge=judge)) == [
        "k-bn-degrades",
        "k-oh-insensitive",
    ]
    with pytest.raises(ValueError, match="need two k"):
        paper_parts(paper_grid(), ks=(6,), judge=judge)


def test_oh_with_no_stable_run_at_a_middle_k_is_not_insensitive(judge):
    G = paper_grid(oh_unstable=())
    G[(4, 1.0, 10, "OH", "L2")] = [run(falls(20), s, status="diverged") for s in range(10)]
    insensitive = paper_parts(G, cases=[(4, 1.0)], judge=judge)["k-oh-insensitive"]
    assert verdict_of(insensitive.evidence) == "not reproduced"
    assert insensitive.evidence[0].cells[0].part == "k=10 (10 and 0 stable runs)"


@pytest.mark.parametrize("by, verdict", [(2 * fig15.K_TOL, "not reproduced"), (0.4 * fig15.K_TOL, "reproduced")])
def test_oh_at_a_large_k_is_insensitive_only_within_the_tolerance(by, verdict, judge):
    G = paper_grid()
    G[(4, 1.0, 25, "OH", "L2")] = [run(falls(20, 0.9 + by), s) for s in range(10)]  # OH's median higher at k=25
    assert verdict_of(paper_parts(G, cases=[(4, 1.0)], judge=judge)["k-oh-insensitive"].evidence) == verdict
