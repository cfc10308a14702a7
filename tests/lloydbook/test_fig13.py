"""lloydbook.fig13: Figure 13's findings as parts in the evidence vocabulary: the n compared are those with enough
points per cluster, and below that, beyond the paper, training ends worse."""

from types import SimpleNamespace

import numpy as np
import pytest
from _made_up_runs import falls, run

from lloydbook import fig13, findings
from lloydbook.claims.evidence import verdict_of

EMBS, LOSSES = ("OH", "BN"), ("L2",)
NS = (128, 256, 512, 1024)  # the paper's


def grid(ns, worse=()):
    """Made-up runs of every (n, embedding, loss): the same final loss, but 0.2 higher at the n of ``worse``."""
    return {
        (n, e, l): [run(falls(20, 1.1 if n in worse else 0.9), s) for s in range(10)]
        for n in ns
        for e in EMBS
        for l in LOSSES
    }


def test_little_difference_and_too_few_points_at_this_builds_scale(judge):
    parts = fig13.parts(grid((16, 32, 64), worse=(16,)), [64, 16, 32], 32, EMBS, LOSSES, k=6, judge=judge)
    little, few = parts["n-little-difference"], parts["n-too-few-points"]
    assert list(parts) == list(fig13.SOURCES)
    assert "at n=64" in little.statement and "n=32's, for OH, BN with L2" in little.statement
    assert [e.outcome for e in little.evidence] == ["holds", "holds"] and len(little.runs) == 2 * 2 * 10
    assert [e.part for e in little.evidence] == ["OH:L2 within 0.05", "BN:L2 within 0.05"]
    assert "n=16 points per task (fewer than 3 per cluster at k=6)" in few.statement
    assert [e.outcome for e in few.evidence] == ["holds", "holds"] and "unpaired" in few.evidence[0].cells[0].text


def test_at_the_papers_n_every_n_is_compared_and_too_few_points_is_undetermined(judge):
    parts = fig13.parts(grid(NS, worse=(128,)), NS, 512, EMBS, LOSSES, k=6, judge=judge)
    little, few = parts["n-little-difference"], parts["n-too-few-points"]
    assert "at n=128, 256, 1024" in little.statement
    assert [e.outcome for e in little.evidence] == ["fails", "fails"]  # n=128 ends 0.2 higher
    assert [e.outcome for e in few.evidence] == ["undetermined"] and "n < 18" in few.statement
    assert "no n of 128, 256, 512, 1024 has fewer than 3" in few.evidence[0].text and len(few.runs) == 20


def test_at_the_papers_n_little_difference_reads_every_n_against_n0(judge):
    little = fig13.parts(grid(NS), NS, 512, EMBS, LOSSES, k=6, judge=judge)["n-little-difference"]
    assert verdict_of(little.evidence) == "reproduced"
    assert all(e.text.startswith("3 cells: 3 holds") for e in little.evidence)  # n=128, 256, 1024 against 512


def test_only_the_n_with_enough_points_per_cluster_are_compared(judge):
    # 128 / 64 < 3 points per cluster
    parts = fig13.parts(grid(NS, worse=(128,)), NS, 512, EMBS, LOSSES, k=64, judge=judge)
    little, few = parts["n-little-difference"], parts["n-too-few-points"]
    assert "at n=256, 1024" in little.statement and verdict_of(little.evidence) == "reproduced"
    assert "n=128 points per task" in few.statement and verdict_of(few.evidence) == "reproduced"


def test_bad_reference_or_nothing_to_compare_names_the_argument(judge):
    G = grid((16, 32))
    with pytest.raises(ValueError, match="n0 must be one of ns"):
        fig13.parts(G, (16, 32), 64, EMBS, LOSSES, k=6, judge=judge)
    with pytest.raises(ValueError, match="n0 must be one of ns"):
        fig13.parts(G, (16, 32), 16, EMBS, LOSSES, k=6, judge=judge)  # 16 / 6 < 3 points per cluster
    with pytest.raises(ValueError, match="ns must hold an n besides n0=32"):
        fig13.parts(G, (16, 32), 32, EMBS, LOSSES, k=6, judge=judge)
    assert np.isclose(fig13.N_TOL, 0.05) and fig13.MIN_PPC == 3


def _recorded(ns, seeds, worse=()):
    """Made-up recorded runs of :func:`grid` at the paper's setting, with TrainConfigs (d=4, k=6, 10,000 steps)."""
    from lloydlib.training import TrainConfig

    base = TrainConfig(d=4, k=6, n=512, steps=10000, tau=0.1, loss="L2")
    return [
        SimpleNamespace(**{**vars(r), "config": base.replace(n=n, embedding=e, seed=s)})
        for (n, e, l), rs in grid(ns, worse).items()
        for s, r in enumerate(rs)
        if s in seeds
    ]


def test_statements_are_the_words_of_the_parts(judge):
    part = fig13.parts(grid(NS), NS, 512, EMBS, LOSSES, k=6, judge=judge)["n-little-difference"]
    say = fig13.statements([128, 256, 1024], 512, EMBS, LOSSES)
    assert list(say) == ["n-little-difference"] and (part.statement, part.paper) == say["n-little-difference"]


def test_recorded_parts_decide_once_every_n_holds_a_seed_set_and_name_what_is_missing(judge):
    ns = (128, 256, 512)
    every = _recorded(ns, range(10), worse=(128,))
    tiers = [[r.config for r in every if r.config.seed in ss] for ss in (range(5), range(5, 10))]
    lacking = [r.config for r in every if r.config.n == 256]
    sweep = findings.RecordedSweep("fig13", [r for r in every if r.config.n != 256], lacking, tiers)
    part = fig13.recorded_parts(sweep, 512, judge=judge)["n-little-difference"]
    assert [e.outcome for e in part.evidence] == ["undetermined"] and part.evidence[0].text.startswith(
        "40 of 60 recorded; missing: n=256 OH:L2 seeds 0-9"
    )
    first = [r for r in every if r.config.seed < 5]
    done = fig13.recorded_parts(findings.RecordedSweep("fig13", first, [], tiers), 512, judge=judge)
    done = done["n-little-difference"]
    assert [e.outcome for e in done.evidence] == ["fails", "fails"] and len(done.runs) == 3 * 2 * 5  # n=128 worse
    whole = findings.RecordedSweep("fig13", every, [], tiers)
    assert "at n=128, 256" in done.statement and list(fig13.recorded_parts(whole, 512, judge=judge)) == [
        "n-little-difference"
    ]
    with pytest.raises(ValueError, match="n0 must be an n of the sweep 'fig13'.*got n0=1024"):
        fig13.recorded_parts(whole, 1024, judge=judge)


def test_compared_are_the_other_n_with_enough_points_per_cluster():
    assert fig13.compared((1024, 16, 512, 128), 512, k=6) == [128, 1024]  # 16 / 6 < MIN_PPC
    assert fig13.compared((16, 32, 64), 32, k=6, min_ppc=2) == [16, 64]


def test_levels_split_the_final_losses_at_their_widest_gap():
    low, high = falls(20, end=1.1), np.full(11, 1.4)
    G = {(n, "NA", "L2"): [run(high if s in (4, 9) else low, s, config=SimpleNamespace(seed=s)) for s in range(10)]
         for n in (128, 512)}  # fmt: skip
    table, said = fig13.levels(G, (128, 512), "NA", ("L2",))
    assert said["split"] == "1.25" and said["runs"] == 20 and said["above-runs"] == 4 and said["diverged"] == 0
    assert said["below"] == "1.10-1.10" and said["above"] == "1.40-1.40" and said["settled"] == "0.1%"
    assert said["everywhere"] == "4, 9"
    assert table.rows[0][2:] == ["8 (1.10-1.10)", "2 (1.40-1.40)", "4, 9"]
    with pytest.raises(ValueError, match=r"missing \[\(256, 'NA', 'L2'\)\]"):
        fig13.levels(G, (128, 256), "NA", ("L2",))
