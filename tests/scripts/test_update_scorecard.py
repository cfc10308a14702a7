"""Tests of scripts/update_scorecard.py, which keeps book/scorecard.md in step with _toc.yml."""

import json
from pathlib import Path

from _support import load_script

ROOT = Path(__file__).resolve().parents[2]


update_scorecard = load_script("update_scorecard")


def test_scorecard_pastes_every_chapter_of_the_toc():
    assert (ROOT / "book" / "scorecard.md").read_text(encoding="utf-8") == update_scorecard.render(), (
        "book/scorecard.md is out of date with _toc.yml: run python scripts/update_scorecard.py --write"
    )


def notebook(*code):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# T"]}]
    cells += [
        {"cell_type": "code", "metadata": {}, "source": [c], "outputs": [], "execution_count": None} for c in code
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def small_book(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nparts:\n- caption: P\n  chapters:\n  - file: book/01_a\n"
        "    sections:\n    - file: book/02_b.ipynb\n  - file: book/03_c\n  - file: book/scorecard\n",
        encoding="utf-8",
    )
    (tmp_path / "book" / "01_a.ipynb").write_text(
        notebook('ch = book.setup("alpha")\nP = ch.P', 'ch.record("x", **row)', "ch.table()"), encoding="utf-8"
    )
    (tmp_path / "book" / "02_b.ipynb").write_text(  # the older form: claims.table()
        notebook("P = book.setup('beta-two').P", "claims.table()"), encoding="utf-8"
    )
    # no claims table: a table of another object, or of a name that is not the chapter
    (tmp_path / "book" / "03_c.ipynb").write_text(
        notebook('ch = book.setup("gamma")', "lean.table()\nbench.table()\nother.ch.table()"), encoding="utf-8"
    )
    (tmp_path / "book" / "scorecard.md").write_text("# Scorecard\n\nWritten by hand.\n\n## Summary\n\nold\n")
    return tmp_path


def test_toc_files_in_order_without_suffix(tmp_path):
    root = small_book(tmp_path)
    assert update_scorecard.toc_files(root) == ["book/intro", "book/01_a", "book/02_b", "book/03_c", "book/scorecard"]


def test_only_chapters_with_a_claims_table_are_pasted(tmp_path):
    root = small_book(tmp_path)
    assert update_scorecard.chapters_with_claims(root) == [("01_a.ipynb", "alpha"), ("02_b.ipynb", "beta-two")]
    page = update_scorecard.render(root)
    assert page.startswith("# Scorecard\n\nWritten by hand.\n\n## Summary\n") and "old" not in page
    assert ":class: claims-summary" in page
    assert "{glue:text}`01_a.ipynb::claims-alpha-n:d`" in page
    assert "{glue:text}`02_b.ipynb::claims-beta-two-not-reproduced:d`" in page
    assert "{glue:text}`02_b.ipynb::claims-beta-two-background:d`" in page
    assert "```{glue} claims-beta-two\n:doc: 02_b.ipynb\n```" in page
    assert "03_c" not in page and "gamma" not in page
    assert page.index("01_a") < page.index("02_b")


def test_summary_has_one_column_per_verdict_and_the_total():
    from lloydbook.claims import VERDICTS, glue_keys

    page = update_scorecard.render()
    header = next(line for line in page.splitlines() if line.startswith("| Chapter |"))
    assert header == "| Chapter | " + " | ".join(VERDICTS) + " | claims |"
    row = next(line for line in page.splitlines() if line.startswith("| {doc}`01_lloyd`"))
    # the columns paste exactly the counts lloydbook.claims.table glues, in the header's order
    keys = glue_keys("lloyd")
    expected = [f"01_lloyd.ipynb::{keys[v]}:d" for v in VERDICTS] + ["01_lloyd.ipynb::claims-lloyd-n:d"]
    assert [c.strip()[len("{glue:text}`") : -1] for c in row.split("|")[2:-1]] == expected


def test_chapter_of_finds_the_key_and_the_claims_table():
    of = update_scorecard.chapter_of
    assert of('import x\nch = book.setup("many-steps")\nch.table()') == ("many-steps", True)
    assert of("chapter = book.setup( 'shapes' )\nchapter.table()") == ("shapes", True)
    assert of('book.setup("lloyd")\nclaims.table()') == ("lloyd", True)
    assert of('ch = book.setup("lloyd")\nch.record("a")') == ("lloyd", False)
    assert of('ch = book.setup("lloyd")\nx = lean.table()\nbench.table()\nch.table1()') == ("lloyd", False)
    assert of('other = book.setup("lloyd")\nch.table()') == ("lloyd", False)
    assert of("ch = book.setup(key)\nch.table()") is None  # no literal key
    assert of("claims.table()") is None


def test_every_chapter_is_pasted_under_its_key():
    """Each chapter of the book is on the page under the key its notebook's name gives (05_shapes ->
    shapes): what --write produces once every chapter calls book.setup with its own key."""
    expected = []
    for entry in update_scorecard.toc_files():
        path = ROOT / f"{entry}.ipynb"
        if path.exists():
            expected.append((path.name, path.stem.split("_", 1)[1].replace("_", "-")))
    found = update_scorecard.chapters_with_claims()
    wrong = [f"{nb}: book.setup({key!r}), not {want!r}" for (nb, key), (_, want) in zip(found, expected) if key != want]
    assert found == expected, wrong or f"chapters with a claims table {found}, expected {expected}"
    page = update_scorecard.render()
    for nb, key in expected:
        assert f"```{{glue}} claims-{key}\n:doc: {nb}\n```" in page
        assert f"{{glue:text}}`{nb}::claims-{key}-n:d`" in page
