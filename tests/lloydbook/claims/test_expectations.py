"""lloydbook.expectations: at the paper's setting no claim of chapters 04-08 expects anything but the paper's
statement, and every claim of those chapters states its expectation there before it is decided."""

import json
import re
from pathlib import Path

import pytest

from lloydbook import book, claims, expectations, sweeps
from lloydbook.claims.expectations import PAPER_VERDICT, Expectation

BOOK = Path(__file__).resolve().parents[3] / "book"
NOTEBOOKS = {
    "learning": "04_learning",
    "shapes": "05_shapes",
    "many-steps": "06_many_steps",
    "families": "07_families",
    "landscapes": "08_landscapes",
}
#: a claim named in a chapter's code: by the Chapter, by findings.decide, or by a chapter's own helper around it
CALL = re.compile(
    r"(?:ch\.(?:decide|record)\(|(?:fig10a|finding|decide_finding|decide5)\(|(?:findings\.decide|dropout_claim)\(\s*ch,)"
    r'\s*"([^"]+)"'
)


def code(key: str) -> str:
    nb = json.loads((BOOK / f"{NOTEBOOKS[key]}.ipynb").read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def claimed(key: str) -> set:
    """The names of the claims a chapter decides (its "background" records aside)."""
    text = code(key)
    calls = list(CALL.finditer(text))
    ends = [m.start() for m in calls[1:]] + [len(text)]
    return {m.group(1) for m, end in zip(calls, ends) if 'verdict="background"' not in text[m.end() : end]}


def test_at_the_paper_setting_every_claim_expects_the_papers_statement():
    assert set(expectations.CHAPTERS) == set(NOTEBOOKS)
    assert expectations.EXPECTATIONS
    for cid, e in expectations.EXPECTATIONS.items():
        if e.found_at_paper is not None:  # a disagreement read at the paper's setting: stated, post hoc
            assert expectations.expected(cid, True) == e.found_at_paper != e.paper and e.basis.strip(), cid
            assert expectations.post_hoc(cid, True), cid
            continue
        assert expectations.expected(cid, True) == PAPER_VERDICT[e.of_paper], cid
        assert expectations.expected(cid, True) in ("reproduced", "beyond the paper"), cid
        if e.pilot is None:
            assert expectations.expected(cid, False) == e.paper, cid
        else:
            assert expectations.expected(cid, False) == e.pilot and e.basis.strip(), cid


@pytest.mark.parametrize("key", sorted(NOTEBOOKS))
def test_the_registry_holds_every_claim_a_chapter_names(key):
    """Every claim a chapter names in its code has its expectation; the claims it decides in a loop (chapter 04's
    Fig. 10b and paper-setting rows) are not named, and ``Chapter.table`` checks at run time that every stated claim
    has a row (tests/lloydbook/test_book.py)."""
    assert claimed(key) <= set(expectations.CHAPTERS[key]), key


@pytest.mark.parametrize("key", sorted(NOTEBOOKS))
def test_no_chapter_types_an_expected_verdict(key):
    text = code(key)
    assert not re.search(r'expected="', text), key
    assert not re.search(r'verdict="(?!background)', text), key
    assert not re.search(r"^EXPECT\w* = ", text, re.M), key


def test_expectation_checks_its_fields():
    with pytest.raises(TypeError, match="of_paper"):
        Expectation(of_paper="yes")
    with pytest.raises(ValueError, match="pilot"):
        Expectation(of_paper=True, pilot="maybe", basis="x")
    with pytest.raises(ValueError, match="basis"):
        Expectation(of_paper=True, pilot="partly")
    with pytest.raises(ValueError, match="beyond the paper"):
        Expectation(of_paper=False, pilot="reproduced", basis="a pilot")
    with pytest.raises(ValueError, match="no expectation"):
        expectations.expected("learning-no-such-claim", True)


def test_at_paper_reads_the_configs():
    paper = sweeps.configs("fig10", "paper")[:3]
    assert sweeps.at_paper(paper) and sweeps.at_paper({"a": [paper[0]], "b": paper[1:]})
    assert not sweeps.at_paper(sweeps.configs("fig10", "default")[:1])
    assert not sweeps.at_paper([paper[0], sweeps.configs("fig10", "default")[0]])
    assert sweeps.at_paper([paper[0].replace(device="cpu")])  # where a run trained is not its setting
    with pytest.raises(ValueError, match="at least one"):
        sweeps.at_paper([])
    with pytest.raises(TypeError, match="TrainConfig"):
        sweeps.at_paper(["fig10"])


@pytest.fixture
def shapes():
    return book.setup("shapes")


def ev():
    return [claims.evidence.Evidence("part", "holds", "a number")]


def test_chapter_expect_gives_the_paper_at_its_setting_and_the_pilot_elsewhere(shapes):
    paper, here = sweeps.configs("fig15", "paper")[:2], sweeps.configs("fig15", "default")[:2]
    assert shapes.expect("k-oh-insensitive", paper) == "reproduced"
    assert shapes.expect("k-oh-insensitive", here) == "not reproduced"
    assert shapes.expect("k-bn-degrades", here) == "reproduced"
    with pytest.raises(ValueError, match="exactly one"):
        shapes.expect("k-bn-degrades")
    with pytest.raises(TypeError, match="paper_setting"):
        shapes.expect("k-bn-degrades", paper_setting="yes")
    assert shapes.at_paper("ks") is (shapes.P.ks == shapes.paper.ks)
    with pytest.raises(ValueError, match="settings of chapter"):
        shapes.at_paper("no_such_setting")


def test_decide_refuses_a_claim_without_its_stated_expectation(shapes):
    row = dict(statement="s", source="Leaner paper, Fig. 15", paper="p", evidence=ev())
    with pytest.raises(ValueError, match="ch.expect"):
        shapes.decide("k-bn-degrades", expected="reproduced", **row)
    shapes.expect("k-oh-insensitive", sweeps.configs("fig15", "paper")[:1])
    with pytest.raises(ValueError, match="stated 'reproduced'"):
        shapes.decide("k-oh-insensitive", expected="not reproduced", **row)
    shapes.expect("n-too-few-points", paper_setting=False)
    with pytest.raises(ValueError, match="disagree"):
        shapes.decide("n-too-few-points", expected="beyond the paper", **row)
    shapes.expect("k-bn-degrades", paper_setting=True)
    shapes.decide("k-bn-degrades", expected="reproduced", **row)


def test_chapter_06_reads_the_papers_models_at_the_paper_scale():
    for scale in ("ci", "default"):
        assert set(sweeps.configs("fig6", scale)) <= set(sweeps.configs("fig10", scale))
    paper = sweeps.configs("fig6", "paper")
    assert {(c.n, c.d, c.k, c.tau, c.steps) for c in paper} == {(512, 32, 10, 0.1, 10_000)}
    assert {c.embedding for c in paper} == {"OH", "BN", "NA"} and len({c.seed for c in paper}) == 10
    assert all(c.key() in sweeps.paper_keys() for c in paper)


def test_post_hoc_needs_a_pilot_and_never_applies_at_the_papers_setting():
    from lloydbook.claims.expectations import Expectation

    with pytest.raises(ValueError, match="post_hoc marks a pilot"):
        Expectation(of_paper=True, post_hoc=True)
    with pytest.raises(TypeError, match="post_hoc must be a bool"):
        Expectation(of_paper=True, pilot="partly", basis="b", post_hoc="yes")
    e = Expectation(of_paper=True, pilot="partly", basis="the same runs", post_hoc=True)
    assert e.post_hoc_at(False) and not e.post_hoc_at(True)
    assert not Expectation(of_paper=True, pilot="partly", basis="other runs").post_hoc_at(False)
    for cid, e in expectations.EXPECTATIONS.items():
        assert expectations.post_hoc(cid, True) is (e.found_at_paper is not None), cid
        assert expectations.post_hoc(cid, False) == e.post_hoc, cid


def test_a_disagreement_read_at_the_papers_setting_is_stated_post_hoc_with_its_basis():
    e = Expectation(of_paper=True, found_at_paper="not reproduced", basis="runs, numbers, the blind commit")
    assert e.at(True) == "not reproduced" and e.post_hoc_at(True)
    assert e.at(False) == "reproduced" and not e.post_hoc_at(False)  # elsewhere: the paper's, or a pilot's
    with pytest.raises(ValueError, match="found_at_paper needs its basis"):
        Expectation(of_paper=True, found_at_paper="partly")
    with pytest.raises(ValueError, match="found_at_paper must be None or one of"):
        Expectation(of_paper=True, found_at_paper="reproduced", basis="b")  # the paper's own verdict
    with pytest.raises(ValueError, match="found_at_paper must be None or one of"):
        Expectation(of_paper=True, found_at_paper="maybe", basis="b")


def test_a_chapter_marks_the_row_of_a_post_hoc_expectation():
    from lloydbook import book
    from lloydbook.claims.evidence import Evidence

    ch = book.Chapter("learning")
    assert ch.expect("d32-ne-tau1-fails", paper_setting=False) == "not reproduced"
    ch.decide(
        "d32-ne-tau1-fails",
        statement="s",
        source="Leaner paper",
        paper="p",
        expected="not reproduced",
        evidence=[Evidence("part", "fails", "numbers")],
    )
    assert ch.expect("l2-lower-train-loss", paper_setting=False) == "reproduced"
    ch.decide(
        "l2-lower-train-loss",
        statement="t",
        source="Leaner paper",
        paper="p",
        expected="reproduced",
        evidence=[Evidence("part", "holds", "numbers")],
    )
    post_hoc = {r.id: r.post_hoc for r in ch.rows.rows()}
    assert post_hoc == {"learning-d32-ne-tau1-fails": True, "learning-l2-lower-train-loss": False}
