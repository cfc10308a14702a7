"""lloydbook.claims.evidence: stated parts decided on intervals, the verdict they support, and decide()."""

import importlib
import inspect

import numpy as np
import pytest
from _support import assert_raises_naming

from lloydbook import claims
from lloydbook.claims import evidence as E

LOW = np.linspace(1.0, 1.1, 10)
#: the chapter whose judge (at seed value 0) decides the parts here: the ``judge`` fixture of tests/lloydbook/conftest.py
JUDGE_CHAPTER = "learning"


@pytest.fixture
def rows():
    """Fresh rows of the chapter "learning", which decide() records into."""
    return claims.Rows("learning")


@pytest.mark.parametrize(
    ("a", "b", "outcome"),
    [(LOW, LOW + 1, "holds"), (LOW + 1, LOW, "fails"), (LOW, LOW[::-1] + 0.001, "undetermined")],
)
def test_lower_decides_on_the_interval_of_the_median_difference(judge, a, b, outcome):
    e = judge.lower("A below B", a, b, "A", "B", paired=False)
    assert (e.part, e.outcome) == ("A below B", outcome)
    assert e.text.startswith(f"A {E.q3(a)} vs B {E.q3(b)}; B - A ") and "90% interval" in e.text


def test_below_above_and_within(judge):
    assert judge.below("beats 1", LOW - 0.5, 1.0, "x").outcome == "holds"
    assert judge.below("beats 1", LOW + 0.5, 1.0, "x").outcome == "fails"
    assert judge.below("beats 1", np.linspace(0.9, 1.1, 10), 1.0, "x").outcome == "undetermined"
    assert judge.above("above 1", LOW + 0.5, 1.0, "x").outcome == "holds"
    assert judge.within("same", LOW, LOW + 0.01, "A", "B", 0.05, paired=True).outcome == "holds"
    assert judge.within("same", LOW, LOW + 0.5, "A", "B", 0.05, paired=True).outcome == "fails"
    assert (
        judge.within("same", LOW, LOW + np.linspace(0.0, 0.1, 10), "A", "B", 0.05, paired=True).outcome
        == "undetermined"
    )


def test_verdict_of_parts():
    holds, fails, undet = (E.Evidence("p", o, "") for o in E.OUTCOMES)
    assert E.verdict_of([holds, holds]) == "reproduced"
    assert E.verdict_of([fails, fails]) == "not reproduced"
    assert E.verdict_of([holds, fails]) == "partly"
    assert E.verdict_of([holds, undet]) == "undetermined"
    assert E.verdict_of([]) == "undetermined"


def test_decide_asserts_the_verdict_stated_beforehand(judge, rows):
    ok = judge.lower("A below B", LOW, LOW + 1, "A", "B", paired=True)
    bad = judge.lower("B below A", LOW + 1, LOW, "B", "A", paired=True)
    args = dict(statement="A is lower", source="Leaner paper, Fig. 1", paper="lower")
    E.decide("learning-x", expected="reproduced", evidence=[ok], into=rows, **args)
    row = rows.claims()[-1]
    assert (row.id, row.verdict) == ("learning-x", "reproduced") and row.ours.startswith("A below B: holds (")
    E.decide("learning-y", expected="partly", evidence=[ok, bad], into=rows, **args)
    E.decide("learning-z", expected="beyond the paper", evidence=[ok], into=rows, **args)
    with pytest.raises(AssertionError, match="learning-w"):  # the evidence says reproduced, not partly
        E.decide("learning-w", expected="partly", evidence=[ok], into=rows, **args)
    undet = judge.lower("A below B", LOW, LOW[::-1], "A", "B", paired=False)
    with pytest.raises(AssertionError, match="learning-v"):  # undetermined never passes
        E.decide("learning-v", expected="reproduced", evidence=[undet], into=rows, **args)
    with pytest.raises(ValueError, match="expected must be one of"):
        E.decide("learning-u", expected="background", evidence=[ok], into=rows, **args)
    with pytest.raises(TypeError, match="evidence must be a non-empty list of Evidence"):
        E.decide("learning-u", expected="reproduced", evidence=[], into=rows, **args)
    assert [r.id for r in rows.claims()] == ["learning-x", "learning-y", "learning-z"]


def test_decide_records_only_into_the_rows_it_is_given(judge, rows):
    ok = judge.lower("A below B", LOW, LOW + 1, "A", "B", paired=True)
    args = dict(statement="A is lower", source="Leaner paper, Fig. 1", paper="lower", expected="reproduced")
    assert_raises_naming(lambda: E.decide("learning-x", evidence=[ok], **args), TypeError, ["into"])
    for bad in (None, "learning", rows.rows()):
        words = ["into", "Rows", type(bad).__name__]
        assert_raises_naming(lambda bad=bad: E.decide("learning-x", evidence=[ok], into=bad, **args), TypeError, words)
    assert rows.rows() == []
    other = claims.Rows("learning")
    assert E.decide("learning-x", evidence=[ok], into=other, **args) == [ok]  # returns the evidence
    assert rows.rows() == [] and [r.id for r in other.claims()] == ["learning-x"]


def test_all_of_fails_on_any_failing_cell():
    holds, fails, undet = (E.Evidence(f"cell {o}", o, "t") for o in E.OUTCOMES)
    assert E.all_of("every cell", [holds, holds]).outcome == "holds"
    merged = E.all_of("every cell", [holds, undet, fails])
    assert merged.outcome == "fails" and merged.text.startswith("3 cells: 1 holds, 1 fails, 1 undetermined")
    assert E.all_of("every cell", [holds, undet]).outcome == "undetermined"
    with pytest.raises(ValueError, match="at least one Evidence"):
        E.all_of("every cell", [])


def test_cheaper_decides_on_the_sign_test_interval_of_the_paired_ratios():
    rng = np.random.default_rng(0)
    a = rng.uniform(9, 11, 40)
    assert E.cheaper("p", a, 1.2 * a, "BN", "OH").outcome == "holds"
    assert E.cheaper("p", 1.2 * a, a, "BN", "OH").outcome == "fails"
    noisy = E.cheaper("p", a, a * rng.uniform(0.8, 1.2, 40), "BN", "OH")
    assert noisy.outcome == "undetermined" and "40 interleaved repetitions" in noisy.text
    with pytest.raises(ValueError, match="at least"):
        E.cheaper("p", a[:3], a[:3], "BN", "OH")


def test_pooled_median_pools_the_settings_seeds():
    assert E.pooled_median([np.array([1.0, 5.0]), np.array([2.0]), [3.0, 4.0]]) == 3.0
    assert E.pooled_median(np.array([s, s + 1.0]) for s in (0.0, 10.0)) == 5.5  # any iterable, e.g. a generator
    with pytest.raises(ValueError, match="at least one array"):
        E.pooled_median([])


def test_q3_formats_median_and_quartiles():
    assert E.q3([1.0, 2.0, 3.0, 4.0, 5.0]) == "3.000 [2.000, 4.000]"


def test_decide_keeps_the_setting(judge, rows):
    ok = judge.lower("A below B", LOW, LOW + 1, "A", "B", paired=True)
    E.decide(
        "learning-s",
        statement="s",
        source="x",
        paper="p",
        expected="reproduced",
        evidence=[ok],
        into=rows,
        setting="n=32",
    )
    assert rows.claims()[-1].setting == "n=32"


def test_lower_prints_the_margin_it_is_read_against(judge):
    a, b = np.zeros(8), np.full(8, 0.5) + np.linspace(0, 0.01, 8)
    ev = judge.lower("gap", a, b, "A", "B", paired=True, margin=0.1)
    assert ev.outcome == "holds" and ", margin 0.1 (paired by seed, 8 pairs)" in ev.text
    assert "margin" not in judge.lower("gap", a, b, "A", "B", paired=True).text


STATERS = {
    "fig10": ("parts", "collapse", "recorded_parts"),
    "fig11": ("parts",),
    "fig13": ("parts",),
    "fig14": ("parts",),
    "fig15": ("parts", "recorded_parts"),
    "fig17": ("parts",),
    "fig6": ("fig6", "na", "inits", "fig7", "fig12", "rewrite", "on_models"),
    "fig8": ("squeeze_parts", "same_parts", "transfer_parts", "bound_parts"),
    "landscape_findings": ("gap_normal", "gap_parts", "rise_parts", "on_models"),
}


@pytest.mark.parametrize("module, name", [(m, n) for m, names in STATERS.items() for n in names])
def test_every_function_that_states_bootstrap_parts_is_given_its_judge(module, name):
    """No default judge: the caller (a chapter: ``judge=ch.judge``) says whose seed the bootstrap draws from."""
    param = inspect.signature(getattr(importlib.import_module(f"lloydbook.{module}"), name)).parameters["judge"]
    assert param.kind is inspect.Parameter.KEYWORD_ONLY and param.default is inspect.Parameter.empty
