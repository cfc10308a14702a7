"""Tests of lloydbook.scales: every chapter has settings for the three scales, the same names at each scale."""

import json
import re
from pathlib import Path

import pytest

from lloydbook import book
from lloydbook.scales import SCALES

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
