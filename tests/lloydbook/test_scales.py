"""Tests of lloydbook.scales: every chapter has settings for the three scales, the same names at each scale; a
chapter's settings (``params``) are read-only at every depth and share nothing mutable with the table."""

import copy
import json
import pickle
import re
from pathlib import Path

import pytest

from lloydbook import book
from lloydbook.scales import SCALES, Params, ReadOnlyList, params

ROOT = Path(__file__).resolve().parents[2]


def test_every_chapter_has_the_three_scales():
    assert SCALES, "no chapter settings"
    for chapter, by_scale in SCALES.items():
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", chapter), f"chapter key {chapter!r} is not a glue-safe key"
        assert set(by_scale) == set(book.SCALE_NAMES), f"{chapter}: scales {sorted(by_scale)}"


@pytest.mark.parametrize("chapter", sorted(SCALES))
def test_the_same_settings_at_every_scale(chapter):
    names = {s: set(v) for s, v in SCALES[chapter].items()}
    assert all(n == names["ci"] for n in names.values()), f"{chapter}: {names}"
    assert "scale" not in names["ci"], "'scale' is added by book.params"


@pytest.mark.parametrize("chapter", sorted(SCALES))
def test_settings_are_plain_data(chapter):
    # json round trip: numbers, strings, lists and dicts only (the cache keys and glue values depend on it)
    assert json.loads(json.dumps(SCALES[chapter])) == SCALES[chapter]


def test_every_chapter_key_belongs_to_a_chapter():
    from lloydbook.book import CHAPTERS

    keys = set()
    for path in (ROOT / "book").glob("*.ipynb"):
        text = "".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"])
        found = re.findall(r"""(?:book\.setup|book\.params|params)\(\s*["']([a-z0-9-]+)["']""", text)
        keys.update(CHAPTERS.get(k, k) for k in found)  # a chapter key names its settings through book.CHAPTERS
    assert set(SCALES) - keys == set(), f"settings for no chapter: {sorted(set(SCALES) - keys)}"


def _changes(p):
    """Every way of changing the learning settings ``p`` below its top level, as (what, change) pairs."""
    base, taus, tier = p.base, p.taus, p.fig10a_paper["tiers"][0]
    return [
        ("base[steps] =", lambda: base.__setitem__("steps", 1)),
        ("base.update", lambda: base.update(steps=1)),
        ("base |=", lambda: base.__ior__({"steps": 1})),
        ("del base[steps]", lambda: base.__delitem__("steps")),
        ("base.steps =", lambda: setattr(base, "steps", 1)),
        ("base.pop", lambda: base.pop("steps")),
        ("base.setdefault", lambda: base.setdefault("x", 1)),
        ("taus[0] =", lambda: taus.__setitem__(0, 9.0)),
        ("taus +=", lambda: taus.__iadd__([9.0])),
        ("taus *=", lambda: taus.__imul__(2)),
        ("del taus[0]", lambda: taus.__delitem__(0)),
        ("taus.append", lambda: taus.append(9.0)),
        ("taus.extend", lambda: taus.extend([9.0])),
        ("taus.insert", lambda: taus.insert(0, 9.0)),
        ("taus.pop", lambda: taus.pop()),
        ("taus.remove", lambda: taus.remove(taus[0])),
        ("taus.sort", lambda: taus.sort()),
        ("taus.reverse", lambda: taus.reverse()),
        ("taus.clear", lambda: taus.clear()),
        ("nested list", lambda: tier["seed"].append(99)),
        ("list of lists", lambda: p.k_cases[0].__setitem__(0, 99)),
        ("P.n =", lambda: setattr(p, "n", 1)),
    ]


def test_settings_are_read_only_at_every_depth():
    p = params("learning", "ci")
    before = json.dumps(SCALES, sort_keys=True)
    for what, change in _changes(p):
        with pytest.raises(TypeError, match="read-only"):
            change()
        assert json.dumps(SCALES, sort_keys=True) == before, what
    assert isinstance(p.base, Params) and isinstance(p.taus, ReadOnlyList) and isinstance(p.k_cases[0], ReadOnlyList)
    assert p.base.steps == p.base["steps"] == SCALES["learning"]["ci"]["base"]["steps"]


def test_no_change_leaks_to_other_settings():
    """The settings of every scale and chapter are copies: nothing of one is anything of another, or of the
    table, even where the table shares one object between scales (the learning chapters' base run)."""
    assert SCALES["learning"]["ci"]["base"] is SCALES["learning"]["default"]["base"]  # shared in the table
    ci, default, again = params("learning", "ci"), params("learning", "default"), params("learning", "ci")
    assert ci.base is not default.base and ci.base is not again.base and ci.taus is not again.taus
    steps = default.base["steps"]
    with pytest.raises(TypeError):
        ci.base["steps"] = 1
    assert default.base["steps"] == again.base["steps"] == SCALES["learning"]["ci"]["base"]["steps"] == steps


def test_settings_read_like_the_table_and_copy_whole():
    p = params("learning", "paper")
    assert p == {**SCALES["learning"]["paper"], "scale": "paper"}  # equal to the table's dicts and lists
    assert json.loads(json.dumps(p)) == p and repr(p.taus) == repr(SCALES["learning"]["paper"]["taus"])
    for twin in (copy.deepcopy(p), copy.copy(p), pickle.loads(pickle.dumps(p))):
        assert twin == p and type(twin) is Params and type(twin.taus) is ReadOnlyList
        with pytest.raises(TypeError, match="read-only"):
            twin.base["steps"] = 1
    assert p.taus + [9.0] == [*p.taus, 9.0] and type(p.taus + [9.0]) is list  # a new list is the caller's own
    built = Params({"a": {"b": [1, [2]]}})  # any Params is frozen whole, copying what it is given
    with pytest.raises(TypeError):
        built.a.b[1].append(3)
