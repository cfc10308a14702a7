"""The chapter notebooks follow the book's conventions.

Stored without outputs; cell 1 a markdown title; the first code cell the Colab bootstrap, tagged
remove-cell; the next code cell ``book.setup("<chapter key>")``; every chapter in _toc.yml; and each
chapter's claims table pasted on the Scorecard.
"""
import json
import re
import sys
from pathlib import Path

import pytest

from lloydlib.scales import SCALES

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import update_scorecard  # noqa: E402

NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
IDS = [p.name for p in NOTEBOOKS]


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


toc_files = update_scorecard.toc_files


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_outputs_or_execution_counts(path):
    nb = load(path)
    bad = [i for i, c in enumerate(nb["cells"])
           if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not bad, (f"{path.name}: code cells {bad} have stored outputs or execution counts; strip them "
                     f"(e.g. .venv/bin/nbstripout {path.relative_to(ROOT)})")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_kernelspec_and_title(path):
    nb = load(path)
    assert nb["metadata"].get("kernelspec", {}).get("name") == "python3", f"{path.name}: kernelspec must be python3"
    first = nb["cells"][0]
    assert first["cell_type"] == "markdown" and source(first).lstrip().startswith("# "), \
        f"{path.name}: the first cell must be a markdown cell starting with the '# Title'"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_first_code_cell_is_the_hidden_bootstrap(path):
    cells = code_cells(load(path))
    assert cells, f"{path.name} has no code cells"
    boot = cells[0]
    src = source(boot)
    for needed in ("import lloydlib", "except ModuleNotFoundError", "%pip install",
                   "git+https://github.com/lloydlib/transformers-that-cluster"):
        assert needed in src, f"{path.name}: the first code cell must be the Colab bootstrap (missing {needed!r})"
    assert "remove-cell" in boot.get("metadata", {}).get("tags", []), \
        f"{path.name}: the bootstrap cell must be tagged remove-cell"


def chapter_key(path):
    cells = code_cells(load(path))
    m = re.search(r"""book\.setup\(\s*["']([a-z0-9-]+)["']""", source(cells[1])) if len(cells) > 1 else None
    return m.group(1) if m else None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_second_code_cell_sets_up_the_chapter(path):
    key = chapter_key(path)
    assert key is not None, f'{path.name}: the second code cell must call book.setup("<chapter key>")'
    assert key in SCALES, f"{path.name}: chapter key {key!r} is not in lloydlib/scales.py ({sorted(SCALES)})"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_chapter_is_in_the_toc(path):
    entry = path.relative_to(ROOT).with_suffix("").as_posix()
    assert entry in toc_files(), f"{path.name} is not in _toc.yml (add '- file: {entry}')"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_claims_table_is_in_the_last_code_cell(path):
    nb = load(path)
    cells = code_cells(nb)
    calls = [i for i, c in enumerate(cells) if re.search(r"claims\.table\(\)", source(c))]
    if not any("claims.record(" in source(c) for c in cells):
        assert not calls, f"{path.name} calls claims.table() but records no claims"
        return
    assert calls == [len(cells) - 1], f"{path.name}: claims.table() must be called once, in the last code cell"


def test_scorecard_pastes_every_chapter_of_the_toc():
    assert (ROOT / "book" / "scorecard.md").read_text(encoding="utf-8") == update_scorecard.render(), \
        "book/scorecard.md is out of date with _toc.yml: run python scripts/update_scorecard.py --write"


def test_toc_ends_with_scorecard_and_references():
    files = toc_files()
    assert files[0] == "book/intro"
    assert files[-2:] == ["book/scorecard", "book/references"]
    for f in files:
        assert (ROOT / f"{f}.md").exists() or (ROOT / f"{f}.ipynb").exists(), f"_toc.yml lists a missing file {f}"
