"""lloydbook.fig11: Figure 11's findings at one d as parts in the evidence vocabulary, and one decided as a chapter's
row with its own setting fields."""

import numpy as np
import pytest
from _made_up_runs import falls, run

from lloydbook import book, fig11, findings
from lloydbook.claims.evidence import verdict_of
from lloydlib.training import TrainConfig

LRS, EMBS, LOSSES = (0.001, 0.01, 0.1, 1.0), ("OH", "BN"), ("L2",)
ZIGZAG = np.r_[1.5, np.tile([1.2, 1.5], 5)]  # rises by 0.3, ends at 1.5


def grid(zigzag=(1.0,), d=4, config=False):
    """Made-up runs at d of every rate: 0.001 monotone and slow, the rates ``zigzag`` non-monotone and worse."""

    def curve(lr):
        return np.linspace(1.5, 1.0, 11) if lr == 0.001 else ZIGZAG if lr in zigzag else falls(20)

    def cfg(lr, e, s):
        return TrainConfig(d=d, k=6, n=32, steps=100, lr=lr, embedding=e, seed=s) if config else None

    return {
        (d, lr, e, l): [run(curve(lr), s, config=cfg(lr, e, s)) for s in range(10)]
        for lr in LRS
        for e in EMBS
        for l in LOSSES
    }


def test_the_papers_findings_at_d4_and_the_one_beyond_it(judge):
    parts = fig11.parts(grid(zigzag=(0.1, 1.0)), 4, LRS, EMBS, LOSSES, judge=judge)
    assert list(parts) == ["lr-small-monotone-slow", "lr-large-nonmonotone-worse", "lr-01-large"] == list(fig11.SOURCES)
    assert all(e.outcome == "holds" for p in parts.values() for e in p.evidence)
    small, large, beyond = parts.values()
    assert len(small.runs) == len(beyond.runs) == 2 * 2 * 10  # two rates, both embeddings pooled, every seed
    assert [e.part for e in small.evidence] == ["monotone at eta=0.001", "slower than eta=0.01"]
    assert "(eta=1 at d=4)" in large.statement and large.evidence[0].text.startswith("1 cells")
    assert "paired by seed, 20 pairs" in large.evidence[1].cells[0].text  # (embedding, seed) pairs
    assert "names only eta=1" in beyond.statement and "margin 0.05" in beyond.evidence[1].text


def test_at_d32_every_rate_from_0_1_is_large_and_a_good_one_fails(judge):
    parts = fig11.parts(grid(zigzag=(1.0,), d=32), 32, LRS, EMBS, LOSSES, judge=judge)
    assert "lr-01-large" not in parts  # 0.1 is one of the paper's large rates there
    large = parts["lr-large-nonmonotone-worse"]
    assert "(eta in {0.1, 1} at d=32)" in large.statement
    assert large.evidence[0].outcome == "fails"  # eta=0.1 falls like 0.01: monotone
    assert large.evidence[0].text.startswith("2 cells: 1 holds, 1 fails")
    assert large.evidence[1].outcome == "undetermined"  # and ends where 0.01 does: not worse
    assert findings.undecided(large)[0] == "undetermined"  # an open row, not a failed check


def test_at_d32_where_both_large_rates_zigzag_the_papers_findings_hold(judge):
    parts = fig11.parts(grid(zigzag=(0.1, 1.0), d=32), 32, LRS, EMBS, LOSSES, judge=judge)
    assert [verdict_of(p.evidence) for p in parts.values()] == ["reproduced"] * 2
    assert parts["lr-large-nonmonotone-worse"].evidence[0].text.startswith("2 cells: 2 holds")


def test_large_rates_given_at_d(judge):
    large = fig11.parts(grid(zigzag=(0.1, 1.0), d=32), 32, LRS, EMBS, LOSSES, large=1.0, judge=judge)[
        "lr-large-nonmonotone-worse"
    ]
    assert "(eta=1 at d=32)" in large.statement and large.evidence[0].text.startswith("1 cells: 1 holds")
    with pytest.raises(ValueError, match="lrs must hold a rate below 0.01"):  # a "large" rate that is the default
        fig11.parts(grid(), 4, LRS, EMBS, LOSSES, large=0.01, judge=judge)


def test_bad_rates_name_the_argument(judge):
    with pytest.raises(ValueError, match="lrs must hold a rate below 0.01"):
        fig11.parts(grid(), 4, (0.01, 0.1, 1.0), EMBS, LOSSES, judge=judge)
    with pytest.raises(ValueError, match="lrs must hold a rate below 0.01"):
        fig11.large_rates(4, (0.001, 0.1, 1.0))  # no default rate
    with pytest.raises(ValueError, match="large must be given at d=8"):
        fig11.large_rates(8, LRS)
    assert fig11.large_rates(8, LRS, 0.1) == [0.1, 1.0] and fig11.large_rates(4, LRS) == [1.0]


def test_a_part_is_decided_with_the_learning_rate_in_its_setting(judge):
    ch = book.Chapter("shapes")
    part = fig11.parts(grid(config=True), 4, LRS, EMBS, LOSSES, judge=judge)["lr-small-monotone-slow"]
    fields = ("n", "d", "k", "lr", "embedding", "loss")
    findings.decide(
        ch, "lr-small-monotone-slow", part, source="s", paper_setting=dict(n=512), decides="-", fields=fields
    )
    [row] = ch.rows.rows()
    assert row.kind == "claim" and row.verdict == "reproduced"
    assert row.statement.startswith("At n=32 (the paper: n=512): The smallest learning rate (eta=0.001, d=4)")
    assert row.setting == "n=32, d=4, k=6, lr in {0.001, 0.01}, embedding in {OH, BN}, loss=L2; 100 steps; 10 seeds"


def test_statements_are_the_words_of_the_parts(judge):
    for d, zigzag in ((4, (0.1, 1.0)), (32, (0.1, 1.0))):
        parts = fig11.parts(grid(zigzag=zigzag, d=d), d, LRS, EMBS, LOSSES, judge=judge)
        say = fig11.statements(d, LRS)
        assert list(say) == list(parts) and all((p.statement, p.paper) == say[n] for n, p in parts.items())
    assert "lr-01-large" not in fig11.statements(32, LRS)  # 0.1 is a large rate at d=32


def test_recorded_parts_decide_each_finding_once_its_rates_hold_a_seed_set(judge):
    every = [r for rs in grid(zigzag=(0.1, 1.0), config=True).values() for r in rs]
    tiers = [[r.config for r in every if r.config.seed in ss] for ss in (range(5), range(5, 10))]
    have = [r for r in every if r.config.seed < 5 and r.config.lr != 0.1]
    lacking = [c for c in tiers[0] if c.lr == 0.1] + tiers[1]
    parts = fig11.recorded_parts(findings.RecordedSweep("fig11", have, lacking, tiers), judge=judge)
    assert list(parts) == list(fig11.SOURCES)
    small, large, beyond = parts.values()
    assert verdict_of(small.evidence) == verdict_of(large.evidence) == "reproduced" and len(small.runs) == 2 * 2 * 5
    assert [e.outcome for e in beyond.evidence] == ["undetermined"]  # 0.1 not recorded: an open row naming it
    assert beyond.evidence[0].text == "10 of 20 recorded; missing: lr=0.1 OH:L2 seeds 0-4; lr=0.1 BN:L2 seeds 0-4"
    done = fig11.recorded_parts(findings.RecordedSweep("fig11", every, [], tiers), judge=judge)
    assert [verdict_of(p.evidence) for p in done.values()] == ["reproduced"] * 3
    assert len(done["lr-01-large"].runs) == 2 * 2 * 10  # every seed once all are recorded
    nothing = fig11.recorded_parts(
        findings.RecordedSweep("fig11", [], [c for t in tiers for c in t], tiers), judge=judge
    )
    assert all(findings.undecided(p)[0] == "undetermined" for p in nothing.values())
