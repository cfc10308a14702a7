"""lloydbook.findings: a finding's part decided as a chapter's row, and verdicts at two settings side by side."""

from types import SimpleNamespace

import numpy as np
import pytest
from _made_up_runs import run

from lloydbook import book, claims, fig13, findings, sweeps
from lloydbook.claims.evidence import Evidence
from lloydbook.findings import Part, decide, setting_pairs
from lloydlib import training
from lloydlib.training import TrainConfig

CFGS = [TrainConfig(d=4, k=6, n=32, steps=6000, tau=0.1, embedding=e, seed=s) for e in ("OH", "BN") for s in (0, 1)]
PAPER_AT = dict(n=512, steps=10000)


def part(outcome):
    return Part("OH and BN beat one Lloyd step", "OH, BN < 1", CFGS, [Evidence("OH and BN below 1", outcome, "x")])


def test_a_decided_part_is_a_claim_whose_statement_says_where_it_was_decided():
    ch = book.Chapter("learning")
    decide(ch, "tau01-beats-lloyd", part("holds"), source="Leaner paper, Fig. 10", paper_setting=PAPER_AT, decides="-")
    [row] = ch.rows.rows()
    assert row.kind == "claim" and row.verdict == "reproduced"
    assert row.statement == "At n=32, 6,000 steps (the paper: n=512, 10,000 steps): OH and BN beat one Lloyd step"
    assert row.setting.startswith("n=32, d=4, k=6, tau=0.1, embedding in {OH, BN}") and "2 seeds" in row.setting


def test_an_undetermined_part_is_an_open_row_naming_what_would_decide_it():
    ch = book.Chapter("learning")
    decide(
        ch, "tau01-beats-lloyd", part("undetermined"), source="s", paper_setting=dict(n=32), decides="train", lead="L: "
    )
    [row] = ch.rows.rows()
    assert row.kind == "open" and row.decides == "train" and row.statement == "L: OH and BN beat one Lloyd step"
    assert row.ours.startswith("undetermined at n=32, d=4, k=6") and row.ours.endswith(
        ": OH and BN below 1: undetermined (x)"
    )


def test_a_decided_part_that_contradicts_its_expectation_stops_the_chapter():
    ch = book.Chapter("learning")
    with pytest.raises(AssertionError):
        decide(ch, "tau01-beats-lloyd", part("fails"), source="s", paper_setting=PAPER_AT, decides="-")


def test_bad_arguments_name_the_argument():
    ch = book.Chapter("learning")
    with pytest.raises(TypeError, match="part must be a findings.Part"):
        decide(ch, "tau01-beats-lloyd", "a part", source="s", paper_setting=PAPER_AT, decides="-")
    with pytest.raises(ValueError, match="paper_setting must map config fields"):
        decide(ch, "tau01-beats-lloyd", part("holds"), source="s", paper_setting={}, decides="-")
    with pytest.raises(ValueError, match=r"None only for a finding beyond the paper\), got None"):
        decide(ch, "tau01-beats-lloyd", part("holds"), source="Leaner paper", paper_setting=None, decides="-")


def test_setting_pairs_names_the_verdicts_that_differ():
    rows = claims.Rows("learning")
    common = dict(source="Leaner paper", paper="p", check=True)
    rows.record("learning-a", statement="a", ours="x", verdict="reproduced", **common)
    rows.record("learning-a-n512", statement="a512", ours="OH < 1", verdict="not reproduced", **common)
    rows.record("learning-b", statement="b", ours="x", verdict="reproduced", **common)
    rows.open_row("learning-b-n512", statement="b512", source="Leaner paper", paper="p", decides="train")
    table, differ = setting_pairs(rows, ["a", "b"])
    assert differ == "a (reproduced -> not reproduced)"
    assert len(table.rows) == 2 and "OH &lt; 1" in table.rows[0][3]
    assert setting_pairs(rows, ["b"])[1] == "none"
    with pytest.raises(ValueError, match="missing \\['learning-c', 'learning-c-n512'\\]"):
        setting_pairs(rows, ["c"])


def test_evidence_code_shows_the_source_that_states_the_findings():
    from lloydbook import fig10
    from lloydbook.findings import evidence_code

    md = evidence_code(fig10.parts).data
    assert md.startswith("```python\ndef parts(") and md.endswith("\n```") and "tau01-beats-lloyd" in md
    with pytest.raises(TypeError, match="fn must be the function"):
        evidence_code("fig10.parts")


def test_a_part_whose_premise_fails_is_an_open_row_saying_why():
    ch = book.Chapter("learning")
    unmet = Part(
        "OH and BN beat one Lloyd step", "OH, BN < 1", CFGS, [Evidence("x", "holds", "x")], "still on the plateau"
    )
    decide(ch, "tau01-beats-lloyd", unmet, source="s", paper_setting=PAPER_AT, decides="train longer")
    [row] = ch.rows.rows()
    assert row.kind == "open" and row.decides == "train longer"
    assert row.ours.startswith("not decided at n=32, d=4") and row.ours.endswith(": still on the plateau")


def test_recorded_groups_refuse_cells_that_name_no_value():
    from lloydbook.findings import recorded_groups

    with pytest.raises(ValueError, match="cells must map each value of the axis"):
        recorded_groups([], ("d", "tau"), {})


def test_missing_text_groups_by_the_axis_named():
    from lloydbook.findings import missing_text

    base = TrainConfig(d=4, k=6, n=512, steps=10000, loss="L2")
    cfgs = [base.replace(k=25, embedding="BN", seed=s) for s in range(5)] + [base.replace(k=10, embedding="NA", seed=2)]
    cfgs += [base.replace(k=10, tau=1.0, embedding="OH", loss="NE", seed=s) for s in (1, 4)]
    assert missing_text(cfgs, "k") == "k=25 BN:L2 seeds 0-4; k=10 NA:L2 seed 2; k=10 OH:NE seeds 1, 4"
    assert missing_text(cfgs[-2:], "tau") == "tau=1 OH:NE seeds 1, 4" and missing_text([], "tau") == "none"


def test_seeds_text_names_a_run_of_seeds_by_its_ends():
    from lloydbook.findings import seeds_text

    assert (seeds_text([4, 0, 1, 2, 3]), seeds_text([3]), seeds_text([1, 4])) == ("seeds 0-4", "seed 3", "seeds 1, 4")


def test_undecided_names_why_a_part_decides_nothing():
    from lloydbook.findings import undecided

    holds, unsure = Evidence("a", "holds", "1"), Evidence("b", "undetermined", "[-1, 1]")
    assert undecided(Part("S", "p", [], [holds])) is None
    assert undecided(Part("S", "p", [], [Evidence("a", "fails", "1")])) is None  # a failure decides: "not reproduced"
    assert undecided(Part("S", "p", [], [holds, unsure])) == ("undetermined", "a: holds (1); b: undetermined ([-1, 1])")
    assert undecided(Part("S", "p", [], [holds, unsure], unmet="no premise")) == ("not decided", "no premise")


def test_runs_at_another_figures_paper_setting_are_not_at_this_findings():
    """Chapter 06 reads Fig. 10a's paper-setting models (d=4, k=6, n=512) for Fig. 7, whose models have d=32, k=10:
    its expectation there is the one for another setting (a post-hoc pilot, here), not the paper's statement."""
    cfgs = [c for c in sweeps.configs("fig10a-paper", tau=0.1, loss="L2") if c.embedding in ("OH", "BN")]
    assert sweeps.at_paper(cfgs)
    evidence = [Evidence("worse at first", "holds", "x"), Evidence("better later", "fails", "y")]
    found = Part("With the scale doubled, worse at first and better later", "p", cfgs, evidence)
    ch = book.Chapter("many-steps")
    decide(ch, "scale-doubled-n512", found, source="Leaner paper, Fig. 7", paper_setting=dict(d=32, k=10), decides="-")
    [row] = ch.rows.rows()
    assert row.verdict == "partly" and row.post_hoc and row.statement.startswith("At d=4, k=6 (the paper: d=32, k=10)")
    ch = book.Chapter("many-steps")  # at its own paper values the same runs expect the paper's statement
    with pytest.raises(AssertionError, match="verdict stated: 'reproduced'"):
        decide(ch, "scale-doubled-n512", found, source="Leaner paper, Fig. 7", paper_setting=dict(d=4), decides="-")


# ----------------------------------------------------------------------------------------- a paper-scale sweep
def recorded(monkeypatch, share=1.0, val=0.95):
    """Made-up runs of the configs a paper-scale sweep asks for, flat at ``val``, the first ``share`` of them
    recorded (by a machine named NVIDIA H200)."""

    def found(cfgs):
        runs = [run(np.full(11, val), c.seed, config=c) for c in cfgs[: round(share * len(cfgs))]]
        for r in runs:
            r.info["hardware"] = "NVIDIA H200"
        return runs, cfgs[len(runs) :]

    monkeypatch.setattr(findings, "recorded_configs", found)


def fig13_paper(G):
    """Fig. 13's parts at the paper's setting, judged as chapter "shapes" (whose rows they become here) judges them."""
    p, judge = book.params("learning", "paper"), book.Chapter("shapes").judge
    return fig13.parts(G, p["ns"], p["base"]["n"], p["n_embeddings"], p["sub_losses"], k=p["base"]["k"], judge=judge)


EL = (("OH", "BN", "NA"), ("NE", "L2"))  # the paper's embeddings and regularisers of Fig. 13
FIG13 = ("fig13", ("n", "embedding", "loss"), fig13_paper, fig13.SOURCES, fig13.statements([128, 256, 1024], 512, *EL))


def test_a_paper_sweep_not_all_recorded_leaves_the_papers_findings_open(monkeypatch):
    for share, said in ((0.0, "0 of 240"), (0.5, "120 of 240")):
        ch = book.Chapter("shapes")
        recorded(monkeypatch, share=share)
        assert findings.on_paper_sweep(ch, *FIG13) == f"{said} runs recorded: rows shapes-n-little-difference-paper"
        [row] = ch.rows.rows()  # n-too-few-points, beyond the paper, is left out
        assert row.kind == "open" and row.id == "shapes-n-little-difference-paper"
        stated, paper = FIG13[4]["n-little-difference"]  # the finding's words at the paper's setting
        assert row.statement == f"At the paper's setting (the sweep fig13): {stated}" and row.paper == paper
        assert f"{said} runs recorded under results/recorded/" in row.ours and "10 seeds" in row.ours
        assert (
            row.decides.startswith("the paper's setting (n in {128, 256, 512, 1024}")
            and "lloydlib train" in row.decides
        )


def test_a_complete_paper_sweep_decides_the_papers_findings_at_its_setting(monkeypatch):
    ch = book.Chapter("shapes")
    recorded(monkeypatch)
    said = findings.on_paper_sweep(ch, *FIG13)
    assert said == "complete (240 runs, trained on NVIDIA H200): rows shapes-n-little-difference-paper"
    [row] = ch.rows.rows()
    assert row.id == "shapes-n-little-difference-paper" and row.kind == "claim" and row.verdict == "reproduced"
    runs, _ = findings.recorded_configs(
        sweeps.sweep_configs(dict((n, s) for n, s, _ in sweeps.paper_sweeps())["fig13"])
    )
    stated = fig13_paper(training.group(runs, *FIG13[1]))["n-little-difference"].statement
    assert row.statement == f"At the paper's setting (the sweep fig13): {stated}"  # no "At ... (the paper: ...)"
    assert row.setting.startswith("n in {128, 256, 512, 1024}") and "10 seeds" in row.setting


def test_a_paper_sweep_whose_runs_contradict_the_paper_fails_its_check(monkeypatch):
    recorded(monkeypatch)

    def worse_at_128(G):  # n=128 ends far above n0's
        for key, runs in G.items():
            for r in runs if key[0] == 128 else ():
                r.history["val_rel_loss"] = r.history["val_rel_loss"] + 0.5
        return fig13_paper(G)

    with pytest.raises(AssertionError):
        findings.on_paper_sweep(book.Chapter("shapes"), "fig13", FIG13[1], worse_at_128, *FIG13[3:])


def test_on_paper_sweep_names_its_bad_arguments(monkeypatch):
    ch, fields = book.Chapter("shapes"), FIG13[1]
    with pytest.raises(ValueError, match=r"sweep must be one of the paper-scale sweeps \['fig10', .*got 'fig99'"):
        findings.on_paper_sweep(ch, "fig99", fields, fig13_paper, *FIG13[3:])
    with pytest.raises(TypeError, match="parts_of must be a function of the grouped runs .* got dict and"):
        findings.on_paper_sweep(ch, "fig13", fields, {}, *FIG13[3:])
    with pytest.raises(TypeError, match="sources a dict of row names, got function and {}"):
        findings.on_paper_sweep(ch, "fig13", fields, fig13_paper, {}, FIG13[4])
    with pytest.raises(ValueError, match=r"statements must word the rows \['n-little-difference'\], got {}"):
        findings.on_paper_sweep(ch, "fig13", fields, fig13_paper, fig13.SOURCES, {})
    with pytest.raises(TypeError, match=r"statements must be a dict \(row name -> .*got \['words'\]"):
        findings.on_paper_sweep(ch, "fig13", fields, fig13_paper, fig13.SOURCES, ["words"])
    recorded(monkeypatch)
    with pytest.raises(ValueError, match=r"parts_of must give the rows \['n-little-difference'\] of sources"):
        findings.on_paper_sweep(ch, "fig13", fields, lambda G: {}, *FIG13[3:])
    renamed = {f"{n}-d8": src for n, src in fig13.SOURCES.items()}
    said = {f"{n}-d8": words for n, words in FIG13[4].items()}
    with pytest.raises(ValueError, match="no expectation is stated for claim 'shapes-n-little-difference-d8-paper'"):
        findings.on_paper_sweep(
            ch, "fig13", fields, lambda G: {f"{n}-d8": v for n, v in fig13_paper(G).items()}, renamed, said
        )


# ----------------------------------------------------------------------------------------- pairing and NaN
def seeded(*seeds):
    return [SimpleNamespace(config=SimpleNamespace(seed=s)) for s in seeds]


def test_by_seed_pairs_only_the_same_seeds_in_order():
    a, b = seeded(0, 1, 2), seeded(0, 1, 2)
    assert findings.by_seed(a, b) == (a, b)
    with pytest.raises(ValueError, match=r"same seeds on both sides, got \[0, 1, 2\] and \[0, 2, 1\]"):
        findings.by_seed(a, seeded(0, 2, 1))
    with pytest.raises(ValueError, match="same seeds"):
        findings.by_seed(a, seeded(0, 1))
    plain = [SimpleNamespace(), SimpleNamespace()]  # no config: taken in the order given
    assert findings.by_seed(plain, plain[::-1]) == (plain, plain[::-1])
    assert findings.by_seed(seeded(0, 1), plain)  # seeds 0, 1 against positions 0, 1


def test_nan_as_inf():
    out = findings.nan_as_inf([1.0, np.nan, np.inf, -2.0])
    np.testing.assert_array_equal(out, [1.0, np.inf, np.inf, -2.0])
    assert out.dtype == float
    np.testing.assert_array_equal(findings.nan_as_inf(np.full(2, np.nan)), [np.inf, np.inf])  # e.g. inf - inf


def test_a_recorded_sweep_names_the_machines_by_their_model():
    runs = [SimpleNamespace(info={"hardware": h}) for h in ("AMD EPYC, 2 cores", "NVIDIA H200", "AMD EPYC, 2 cores")]
    assert findings.RecordedSweep("x", runs, [], []).on == "AMD EPYC, NVIDIA H200"
    unnamed = findings.RecordedSweep("x", [SimpleNamespace(info={})], [], [])
    assert unnamed.on == "a machine that did not record its hardware"
    assert findings.RecordedSweep("x", [], [], []).on == "no machine yet"


def test_a_recorded_sweep_is_decided_by_the_rest_of_it_then_more_seeds():
    tiers = sweeps.tiers("fig10a-paper")
    rest = findings.RecordedSweep("fig10a-paper", [], tiers[-1], tiers).decides
    assert rest == "python -m lloydbook.record fig10a-paper --budget SECONDS --workers 1, then commit results/recorded/"
    done = findings.RecordedSweep("fig10a-paper", [], [], tiers).decides
    assert done.startswith("more seeds than the 10 of fig10a-paper (seeds 0-9), every run of which is recorded")


def test_a_recorded_sweep_reads_its_values_counts_and_what_would_decide_it():
    sweep = findings.RecordedSweep.read("fig11a-paper")
    assert sweep.values("lr") == [0.001, 0.01, 0.1, 1.0] and sweep.values("embedding") == ["OH", "BN", "NA"]
    assert sweep.fixed("d") == 4 and sweep.fixed("steps") == 5000
    with pytest.raises(ValueError, match="field must be one that the sweep 'fig11a-paper' holds fixed, got 'lr'"):
        sweep.fixed("lr")
    with pytest.raises(ValueError, match="field must be a config field of the sweep 'fig11a-paper', got 'rate'"):
        sweep.values("rate")
    counts = sweep.counts("lr11")
    assert counts == {"lr11-recorded": len(sweep.runs), "lr11-runs": 240}
    assert sweep.decides.startswith("python -m lloydbook.record fig11a-paper" if sweep.missing else "more seeds")
    one = findings.RecordedSweep.read("fig11a-paper", lr=0.001, seed=0)
    assert [len(t) for t in one.tiers] == [6] and len(one.runs) + len(one.missing) == 6


def test_a_recorded_sweep_draws_the_values_whose_every_cell_holds_a_run():
    cfgs = [TrainConfig(lr=lr, embedding=e, loss=l) for lr in (0.01, 0.1) for e in ("OH", "BN") for l in ("NE", "L2")]
    runs = [SimpleNamespace(config=c) for c in cfgs if not (c.lr == 0.1 and c.embedding == "BN")]
    G, lrs = findings.RecordedSweep("x", runs, [], [cfgs]).drawn("lr")
    assert lrs == [0.01] and len(G[(0.1, "OH", "L2")]) == 1
    assert findings.RecordedSweep("x", [], cfgs, [cfgs]).drawn("lr") == ({}, [])
