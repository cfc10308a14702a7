"""lloydbook.claims.seeds: a chapter's rows own its seed value and derive its draws' seeds by name, and the
bootstrap of lloydbook.claims.evidence draws from the seed of the chapter its judge is (issue 36: one seed switch
that reaches every draw)."""

from dataclasses import FrozenInstanceError

import numpy as np
import pytest
from _support import assert_raises_naming

from lloydbook import book, claims
from lloydbook.claims import evidence as E
from lloydbook.claims.seeds import SeededRows, named_seed
from lloydlib import training

# per-seed values of two settings, 30 runs each, whose bootstrap intervals move with the resampling seed
X, Y = (np.random.default_rng(s).normal(m, 0.2, 30) for s, m in ((1, 1.0), (2, 1.05)))


def test_named_seed_is_a_31_bit_seed_of_value_chapter_and_name():
    s = named_seed(0, "lloyd", "tasks")
    assert isinstance(s, int) and 0 <= s < 2**31 and named_seed(0, "lloyd", "tasks") == s
    others = {named_seed(1, "lloyd", "tasks"), named_seed(0, "construction", "tasks"), named_seed(0, "lloyd", "x")}
    assert s not in others and len(others) == 3
    assert_raises_naming(lambda: named_seed(-1, "lloyd", "tasks"), ValueError, ["seed_value", ">= 0", "-1"])
    assert_raises_naming(lambda: named_seed(0, "lloyd", " "), ValueError, ["name", "' '"])


def test_seeded_rows_are_rows_that_own_the_seed_value():
    rows = SeededRows("lloyd", 3)
    assert isinstance(rows, claims.Rows) and rows.seed_value == 3 and rows.chapter == "lloyd"
    assert rows.seed("tasks") == named_seed(3, "lloyd", "tasks")
    assert "seed_value=3" in repr(rows)
    assert_raises_naming(lambda: SeededRows("lloyd", 1.5), TypeError, ["seed_value", "1.5"])
    ch = book.Chapter("lloyd", seed_value=3)
    assert isinstance(ch.rows, SeededRows) and ch.seed_value == 3 and ch.seed("tasks") == rows.seed("tasks")


def test_a_judge_at_a_seed_value_and_key_is_that_chapters_judge():
    judge = E.Judge.at(4, "construction")
    assert judge.seed_of("x") == named_seed(4, "construction", "bootstrap: x")
    assert judge.seed_of("x") == book.Chapter("construction", seed_value=4).judge.seed_of("x")
    assert E.Judge.at(0, "lloyd").seed_of("x") == book.Chapter("lloyd").judge.seed_of("x") != judge.seed_of("x")
    assert E.Judge(lambda part: 7).seed_of("any part") == 7  # any function of a part's name to a seed
    assert_raises_naming(lambda: E.Judge(7), TypeError, ["seed_of", "7"])
    with pytest.raises(FrozenInstanceError):
        judge.seed_of = lambda part: 7
    assert_raises_naming(lambda: judge.below(" ", X, 1.1, "A"), ValueError, ["part", "' '"])


def test_the_bootstrap_draws_from_the_chapters_seed_and_the_parts_name():
    for value in (0, 1):
        judge = book.Chapter("learning", seed_value=value).judge
        assert judge.seed_of("A below B") == named_seed(value, "learning", "bootstrap: A below B")
        m = training.median_difference(X, Y, paired=False, level=E.LEVEL, seed=judge.seed_of("p"))
        e = judge.lower("p", X, Y, "A", "B", paired=False)
        assert f"[{m.low:+.3f}, {m.high:+.3f}]" in e.text  # the interval of that seed
    texts = {}
    for value in range(4):
        judge = E.Judge.at(value, "learning")
        texts[value] = (
            judge.lower("p", X, Y, "A", "B", paired=False).text,
            judge.below("p", X, 1.1, "A").text,
            judge.above("p", X, 0.9, "A").text,
            judge.within("p", X, Y, "A", "B", 0.2, paired=True).text,
        )
    for i in range(4):  # every part's interval moves with the seed value
        assert len({t[i] for t in texts.values()}) > 1
    assert E.Judge.at(2, "learning").lower("p", X, Y, "A", "B", paired=False).text == texts[2][0]  # repeatable
