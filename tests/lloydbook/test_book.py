"""Tests of lloydbook.book: a chapter's settings at the active scale, the device, the seeds, ``setup`` and
the :class:`~lloydbook.book.Chapter` it returns (glue under the chapter's prefix, seeds by name, claims).

``setup`` leaves the environment as it found it (the training cache is passed on as an argument); the tests
that call it still set ``$LLOYD_CACHE`` through ``monkeypatch``, so that nothing they train lands in the
checkout's cache.
"""

import json
import os
import sys

import numpy as np
import pytest
import torch
from _support import assert_raises_naming

from lloydbook import book, claims, scales
from lloydbook.claims import evidence
from lloydbook.claims.seeds import SeededRows
from lloydbook.glue import glue
from lloydbook.scales import SCALES
from lloydbook.tables import Table


@pytest.fixture
def cache_env(monkeypatch, tmp_path):
    """A temporary $LLOYD_CACHE, restored after the test."""
    monkeypatch.setenv("LLOYD_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_params_reads_the_scale(monkeypatch):
    for s in book.SCALE_NAMES:
        monkeypatch.setenv("LLOYD_SCALE", s)
        p = book.params("lloyd")
        assert p.scale == s and p["scale"] == s
        assert dict(p) == {**SCALES["lloyd"][s], "scale": s}


def test_unknown_scale_raises(monkeypatch, cache_env):
    monkeypatch.setenv("LLOYD_SCALE", "huge")
    with pytest.raises(ValueError, match="LLOYD_SCALE.*'huge'"):
        book.params("lloyd")
    with pytest.raises(ValueError, match="LLOYD_SCALE"):
        book.setup("lloyd")


def test_default_scale_is_default(monkeypatch):
    monkeypatch.delenv("LLOYD_SCALE", raising=False)
    assert book.scale() == "default"


def test_params_bad_chapter_and_readonly():
    with pytest.raises(ValueError, match="chapter"):
        book.params("no-such-chapter")
    with pytest.raises(ValueError, match="scale_name"):
        book.params("lloyd", "big")
    p = book.params("lloyd", "ci")
    with pytest.raises(TypeError, match="read-only"):
        p["n"] = 3
    for change in (lambda: p.update(n=3), lambda: p.pop("n"), lambda: p.clear(), lambda: p.setdefault("x", 1)):
        with pytest.raises(TypeError, match="read-only"):
            change()
    with pytest.raises(AttributeError, match="chapter settings have no"):
        p.no_such_setting  # noqa: B018


def test_setup_prints_scale_and_device_and_seeds(capsys, monkeypatch, cache_env):
    monkeypatch.setenv("LLOYD_SCALE", "ci")
    monkeypatch.setenv("LLOYD_SEED", "5")  # an explicit seed_value wins over LLOYD_SEED
    ch = book.setup("construction", seed_value=3)
    assert isinstance(ch, book.Chapter) and ch.key == "construction" and ch.seed_value == 3
    assert ch.P == book.params("construction", "ci") and ch.scale == "ci"
    out = capsys.readouterr().out
    assert "scale=ci" in out and f"device={book.device()}" in out and "seed=3 (seed_value)" in out
    a = torch.rand(3)
    b = np.random.rand(2)
    book.setup("construction", seed_value=3)
    assert torch.equal(a, torch.rand(3)) and np.array_equal(b, np.random.rand(2))
    assert isinstance(ch.rows, SeededRows) and ch.rows.chapter == "construction" and len(ch.rows) == 0
    assert ch.rows.seed_value == 3 and isinstance(ch.judge, evidence.Judge)


def test_setup_leaves_the_environment_alone(monkeypatch, cache_env):
    before = dict(os.environ)
    book.setup("lloyd")
    assert dict(os.environ) == before
    monkeypatch.delenv("LLOYD_CACHE")
    without = dict(os.environ)
    book.setup("lloyd")  # without $LLOYD_CACHE, setup does not set it either
    assert dict(os.environ) == without


def test_lloyd_seed_reads_the_environment(monkeypatch):
    monkeypatch.delenv("LLOYD_SEED", raising=False)
    assert book.lloyd_seed() == 0
    for text, value in (("0", 0), ("7", 7), (" 12\n", 12), ("4294967295", 2**32 - 1)):
        monkeypatch.setenv("LLOYD_SEED", text)
        assert book.lloyd_seed() == value
    for bad in ("-1", "1.5", "seven", "", "0x10", "+3", "4294967296"):
        monkeypatch.setenv("LLOYD_SEED", bad)
        assert_raises_naming(book.lloyd_seed, ValueError, ["LLOYD_SEED", "non-negative integer", repr(bad)])


def test_setup_takes_the_chapters_seed_from_lloyd_seed(capsys, monkeypatch, cache_env):
    """LLOYD_SEED is the chapter's seed value: its named seeds, the bootstrap of its evidence (through its judge)
    and the global generators all move with it; it is printed as the chapter's seed."""
    monkeypatch.delenv("LLOYD_SEED", raising=False)
    zero = book.setup("construction")
    assert zero.seed_value == 0 and "seed=0 (LLOYD_SEED)" in capsys.readouterr().out
    monkeypatch.setenv("LLOYD_SEED", "5")
    five = book.setup("construction")
    assert five.seed_value == 5 and "seed=5 (LLOYD_SEED)" in capsys.readouterr().out
    assert five.seed("x") == book.Chapter("construction", seed_value=5).seed("x") != zero.seed("x")
    assert five.judge.seed_of("p") == five.seed("bootstrap: p") != zero.judge.seed_of("p")
    assert evidence.Judge.at(5, "construction").seed_of("p") == five.judge.seed_of("p")  # a chapter's judge, at will
    assert book.setup("construction", seed_value=5).judge.seed_of("p") == five.judge.seed_of("p")
    a = torch.rand(3)
    book.seed(5)
    assert torch.equal(a, torch.rand(3))
    monkeypatch.setenv("LLOYD_SEED", "-5")
    assert_raises_naming(lambda: book.setup("lloyd"), ValueError, ["LLOYD_SEED", "'-5'"])


def test_book_reexports_the_settings_of_lloydbook_scales():
    assert (book.params, book.scale, book.Params, book.SCALE_NAMES) == (
        scales.params,
        scales.scale,
        scales.Params,
        scales.SCALE_NAMES,
    )


def test_device_and_seed():
    assert book.device().type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert book.seed(5) == 5
    with pytest.raises((TypeError, ValueError)):
        book.seed(-1)
    assert_raises_naming(lambda: book.seed(2**32), ValueError, ["value", str(2**32)])
    with pytest.raises(TypeError, match="value must be an integer"):
        book.seed(1.5)


def test_book_reexports_glue():
    assert book.glue is glue


# --- the Chapter object -----------------------------------------------------------------------------------


@pytest.fixture
def glued(monkeypatch):
    """What is glued, as {name: (value, display)}, through a stand-in for myst_nb (so lloydbook.glue runs)."""
    out = {}
    fake = type(sys)("myst_nb")
    fake.glue = lambda name, obj, display=True: out.__setitem__(name, (obj, display))
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    return out


@pytest.fixture
def started(monkeypatch, cache_env):
    """A chapter set up at ci scale (its rows fresh), for the tests that record claims."""
    monkeypatch.setenv("LLOYD_SCALE", "ci")
    return book.setup("lloyd")


def test_chapter_settings_follow_the_chapters_table(monkeypatch):
    monkeypatch.setenv("LLOYD_SCALE", "ci")
    for key, settings in book.CHAPTERS.items():
        ch = book.Chapter(key)
        assert ch.P == book.params(settings, "ci") and ch.paper == book.params(settings, "paper")
        assert ch.scale == "ci" and repr(ch) == f"Chapter({key!r}, scale='ci')"
    assert book.Chapter("shapes").P == book.Chapter("learning").P  # chapter 05 reads chapter 04's settings
    with pytest.raises(TypeError, match="read-only"):
        book.Chapter("lloyd").P["n"] = 3


def test_chapter_keys_are_the_notebooks_names():
    from pathlib import Path

    stems = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "book").glob("*.ipynb"))
    assert sorted(book.CHAPTERS) == sorted(s.split("_", 1)[1].replace("_", "-") for s in stems)
    assert set(book.CHAPTERS.values()) <= set(SCALES)


def test_chapter_glues_under_its_prefix_without_display(glued):
    ch = book.Chapter("many-steps")
    assert ch.glue("gap", 0.5) is None  # a cell ending with it shows nothing
    assert ch.glue("shown", np.float64(2.0), display=True) is None
    assert glued == {"many-steps-gap": (0.5, False), "many-steps-shown": (2.0, True)}
    assert ch.name("gap") == "many-steps-gap" and ch.claim_id("gap") == "many-steps-gap"


def test_chapter_refuses_a_repeated_prefix_or_an_empty_name(glued):
    ch = book.Chapter("lloyd")
    assert_raises_naming(lambda: ch.glue("lloyd-gap", 1), ValueError, ["name", "'lloyd-'", "'lloyd-gap'"])
    for bad in ("", "  ", None, 3):
        assert_raises_naming(lambda bad=bad: ch.glue(bad, 1), ValueError, ["name", repr(bad)])
    assert ch.glue("lloydgap", 1) is None  # a name that merely starts with the key's letters is fine
    assert list(glued) == ["lloyd-lloydgap"]


def test_glue_many_glues_every_name_or_none(glued):
    ch = book.Chapter("construction")
    values = {"a": 1, "b-c": 2.5, "d": "text"}
    assert ch.glue_many(values) is None  # a cell that ends with it displays nothing
    assert glued == {"construction-a": (1, False), "construction-b-c": (2.5, False), "construction-d": ("text", False)}
    assert ch.glue_many({}) is None
    glued.clear()
    with pytest.raises(ValueError, match="prefix"):
        ch.glue_many({"fine": 1, "construction-again": 2})
    assert glued == {}  # checked before anything is glued
    assert_raises_naming(lambda: ch.glue_many([("a", 1)]), TypeError, ["values", "dict", "list"])


def test_seed_by_name_is_deterministic_and_distinct():
    a, b = book.Chapter("lloyd"), book.Chapter("lloyd")
    s = a.seed("tasks")
    assert isinstance(s, int) and 0 <= s < 2**31
    assert a.seed("tasks") == b.seed("tasks") == s  # the same at every run
    names = ["tasks", "tasks-2", "centers", "a", "b"]
    seeds = [a.seed(n) for n in names]
    assert len(set(seeds)) == len(names) and all(0 <= x < 2**31 for x in seeds)
    assert len({book.Chapter(key).seed("tasks") for key in book.CHAPTERS}) == len(book.CHAPTERS)
    assert book.Chapter("lloyd", seed_value=1).seed("tasks") != s
    assert book.Chapter("shapes").seed("x") != book.Chapter("learning").seed("x")  # same settings, other key


def test_seed_does_not_depend_on_the_scale(monkeypatch):
    seeds = set()
    for s in book.SCALE_NAMES:
        monkeypatch.setenv("LLOYD_SCALE", s)
        seeds.add(book.Chapter("construction").seed("exactness"))
    assert len(seeds) == 1


def test_bad_arguments_name_the_argument(monkeypatch):
    monkeypatch.setenv("LLOYD_SCALE", "ci")
    assert_raises_naming(lambda: book.Chapter("no-such-chapter"), ValueError, ["chapter", "'no-such-chapter'"])
    assert_raises_naming(lambda: book.Chapter("05_shapes"), ValueError, ["chapter", "shapes"])
    assert_raises_naming(lambda: book.Chapter(["lloyd"]), TypeError, ["chapter", "['lloyd']"])
    assert_raises_naming(lambda: book.Chapter("lloyd", seed_value=-1), ValueError, ["seed_value"])
    assert_raises_naming(lambda: book.Chapter("lloyd", seed_value=1.5), TypeError, ["seed_value"])
    ch = book.Chapter("lloyd")
    for bad in ("", None, 7):
        assert_raises_naming(lambda bad=bad: ch.seed(bad), ValueError, ["name", repr(bad)])
    assert_raises_naming(lambda: ch.settings([("n", 1)]), ValueError, ["rows", "('n', 1)"])


def test_setup_refuses_a_bad_chapter_or_seed_before_doing_anything(capsys, monkeypatch, cache_env):
    book.seed(4)
    before = torch.random.get_rng_state()
    capsys.readouterr()
    assert_raises_naming(lambda: book.setup("nope"), ValueError, ["chapter", "'nope'"])
    assert_raises_naming(lambda: book.setup("lloyd", seed_value=-2), ValueError, ["seed_value"])
    assert torch.equal(torch.random.get_rng_state(), before) and capsys.readouterr().out == ""  # nothing seeded


def _row(**kw):
    return dict(statement="A statement", source="a source", paper="p", ours="o", **kw)


def test_record_records_the_claim_and_glues_its_verdict(glued, started):
    assert started.record("monotone", **_row(verdict="reproduced", check=True)) is None  # a cell shows nothing
    (claim,) = started.rows.rows()
    assert claim.id == "lloyd-monotone" and claim.verdict == "reproduced"
    assert [c.id for c in started.rows.claims()] == ["lloyd-monotone"]
    assert glued == {"lloyd-v-monotone": ("reproduced", False)}
    started.record("beyond", **_row(verdict="beyond the paper", check=True))
    assert glued["lloyd-v-beyond"] == ("beyond the paper", False)


def test_record_glues_nothing_when_the_check_fails(glued, started):
    with pytest.raises(AssertionError, match="lloyd-fails"):
        started.record("fails", **_row(verdict="reproduced", check=False))
    assert glued == {} and started.rows.claims() == []
    with pytest.raises(ValueError, match="prefix"):
        started.record("lloyd-monotone", **_row(verdict="reproduced", check=True))
    with pytest.raises(ValueError, match="verdict"):
        started.record("odd", **_row(verdict="mostly", check=True))
    assert glued == {}


def test_decide_records_through_learning_and_glues_the_stated_verdict(glued, started):
    holds, fails = evidence.Evidence("a", "holds", "1 < 2"), evidence.Evidence("b", "fails", "3 > 2")
    row = dict(statement="Two parts", source="a source", paper="both")
    assert started.decide("two-parts", **row, expected="partly", evidence=[holds, fails]) is None  # shows nothing
    (claim,) = started.rows.claims()
    assert claim.id == "lloyd-two-parts" and claim.verdict == "partly" and "a: holds (1 < 2)" in claim.ours
    assert glued == {"lloyd-v-two-parts": ("partly", False)}
    with pytest.raises(AssertionError, match="lloyd-wrong"):  # the parts support "reproduced", not "partly"
        started.decide("wrong", **row, expected="partly", evidence=[holds])
    assert "lloyd-v-wrong" not in glued


def test_settings_table_glues_the_departures(glued, started):
    rows = [("n", 512, 128), ("d", 32, 32), ("seeds", "10", 10)]
    table = started.settings(rows)
    assert isinstance(table, Table) and [r[-1] for r in table.rows] == ["departs", "", ""]
    assert glued == {"lloyd-ndepart": (1, False), "lloyd-nrows": (3, False), "lloyd-scale": ("ci", False)}
    started.settings(iter([["n", 1, 1]]))  # any iterable of triples
    assert glued["lloyd-ndepart"] == (0, False) and glued["lloyd-nrows"] == (1, False)


def test_table_shows_the_chapters_claims(glued, started):
    started.record("monotone", **_row(verdict="reproduced", check=True))
    started.table()
    keys = claims.glue_keys("lloyd")
    assert glued[keys["n"]][0] == 1 and glued[keys["reproduced"]][0] == 1 and keys["table"] in glued


def test_each_chapter_owns_its_rows(glued, started):
    """``ch.rows`` are the chapter's own: another Chapter's claims never land in them, and what records a row without
    the chapter's ``record`` (the GPU sections' verdicts) is given its rows."""
    assert started.rows.chapter == "lloyd"
    other = book.Chapter("lloyd")
    other.record("elsewhere", **_row(verdict="reproduced", check=True))
    started.record("here", **_row(verdict="reproduced", check=True))
    started.rows.record("lloyd-given-the-rows", **_row(verdict="reproduced", check=True))
    assert [r.id for r in other.rows.rows()] == ["lloyd-elsewhere"]
    assert [r.id for r in started.rows.rows()] == ["lloyd-here", "lloyd-given-the-rows"]
    glued.clear()
    other.table()  # glues the other chapter's rows, not the started one's
    assert json.loads(glued[claims.glue_keys("lloyd")["rows"]][0])["rows"][0]["id"] == "lloyd-elsewhere"
    again = book.setup("lloyd")  # a new chapter: fresh rows
    assert again.rows is not started.rows and again.rows.rows() == [] and len(started.rows) == 2


def test_open_rows_and_settings_through_the_chapter(monkeypatch):
    glued = {}
    monkeypatch.setattr(book, "glue", lambda name, value, display=False: glued.setdefault(name, value))
    ch = book.setup("shapes")
    assert (
        ch.open(
            "fig13-little", statement="s", source="Leaner paper, Fig. 13", paper="little difference", decides="n=512"
        )
        is None
    )
    (row,) = ch.rows.rows()
    assert row.id == "shapes-fig13-little" and row.kind == "open" and glued["shapes-v-fig13-little"] == "open"
    assert (
        book.Chapter.setting(n=32, d=[4, 16], k=6, steps=6000, seeds=10)
        == "n=32, d in {4, 16}, k=6; 6,000 steps; 10 seeds"
    )
    assert book.Chapter.setting(tau=0.25) == "tau=0.25"


def test_table_refuses_a_chapter_that_dropped_a_claim_it_stated(glued, monkeypatch, cache_env):
    """A chapter with expectations must have a row for every claim lloydbook.expectations states for it."""
    monkeypatch.setenv("LLOYD_SCALE", "ci")
    ch = book.setup("learning")
    with pytest.raises(ValueError, match=r"chapter 'learning' has no row for the claims it states.*'upper-bound'"):
        ch.table()
