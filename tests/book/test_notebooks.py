"""The chapter notebooks follow the book's conventions.

Stored without outputs; cell 1 a markdown title; the first code cell the Colab bootstrap, tagged
remove-cell; then ``book.setup("<chapter key>")`` in the next code cell that does more than import, with the
book layer imported from ``lloydbook``; every chapter in _toc.yml; the claims table last. (The Scorecard is
built from every chapter's glued rows: tests/lloydbook/claims/test_sphinx.py.)
"""

import ast
import json
import re
from pathlib import Path

import pytest
import yaml

from lloydbook.book import CHAPTERS

ROOT = Path(__file__).resolve().parents[2]


NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
IDS = [p.name for p in NOTEBOOKS]


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def toc_files() -> list[str]:
    """Every file of _toc.yml in order, without suffix (``book/01_lloyd``)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries):
        for e in entries or []:
            if "file" in e:
                files.append(e["file"])
            walk(e.get("sections"))

    walk(toc.get("chapters"))
    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    return [re.sub(r"\.(ipynb|md)$", "", f) for f in files]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_outputs_or_execution_counts(path):
    nb = load(path)
    bad = [
        i
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count") is not None)
    ]
    assert not bad, (
        f"{path.name}: code cells {bad} have stored outputs or execution counts; strip them "
        f"(e.g. .venv/bin/nbstripout --keep-id {path.relative_to(ROOT)}, which keeps the cell ids)"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_kernelspec_and_title(path):
    nb = load(path)
    assert nb["metadata"].get("kernelspec", {}).get("name") == "python3", f"{path.name}: kernelspec must be python3"
    first = nb["cells"][0]
    assert first["cell_type"] == "markdown" and source(first).lstrip().startswith("# "), (
        f"{path.name}: the first cell must be a markdown cell starting with the '# Title'"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_first_code_cell_is_the_hidden_bootstrap(path):
    cells = code_cells(load(path))
    assert cells, f"{path.name} has no code cells"
    boot = cells[0]
    src = source(boot)
    for needed in ('find_spec("lloydbook") is None', "LLOYDLIB_SOURCE", "%pip install"):
        assert needed in src, f"{path.name}: the first code cell must be the Colab bootstrap (missing {needed!r})"
    assert "remove-cell" in boot.get("metadata", {}).get("tags", []), (
        f"{path.name}: the bootstrap cell must be tagged remove-cell"
    )


def imports_only(cell) -> bool:
    """True for a code cell that only imports (a chapter may import in a cell of its own before setup)."""
    try:
        body = ast.parse(source(cell)).body
    except SyntaxError:  # IPython magics
        return False
    return bool(body) and all(isinstance(node, (ast.Import, ast.ImportFrom)) for node in body)


def setup_cell(cells) -> int:
    """Index of the code cell that must start the chapter: the first after the bootstrap that is not only imports."""
    i = 1
    while i < len(cells) and imports_only(cells[i]):
        i += 1
    return i


def chapter_key(path):
    cells = code_cells(load(path))
    i = setup_cell(cells)
    m = re.search(r"""book\.setup\(\s*["']([a-z0-9-]+)["']""", source(cells[i])) if i < len(cells) else None
    return m.group(1) if m else None


OLD_BOOK_IMPORTS = re.compile(r"from lloydlib import[^\n]*\b(book|claims|scales)\b|lloydlib\.(book|claims|scales)\b")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_the_book_layer_comes_from_lloydbook(path):
    cells = code_cells(load(path))
    bad = [i for i, c in enumerate(cells) if OLD_BOOK_IMPORTS.search(source(c))]
    assert not bad, (
        f"{path.name}: code cells {bad} import the book layer from lloydlib; it moved to lloydbook "
        f"(from lloydbook import book, claims)"
    )
    assert any("from lloydbook import" in source(c) for c in cells[1 : setup_cell(cells) + 1]), (
        f"{path.name}: the cells before book.setup must import the book layer (from lloydbook import book, claims)"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_setup_cell_starts_the_chapter(path):
    key = chapter_key(path)
    assert key is not None, (
        f'{path.name}: the first code cell after the bootstrap and the imports must call book.setup("<chapter key>")'
    )
    assert key in CHAPTERS, f"{path.name}: chapter key {key!r} is not in lloydbook.book.CHAPTERS ({sorted(CHAPTERS)})"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_chapter_is_in_the_toc(path):
    entry = path.relative_to(ROOT).with_suffix("").as_posix()
    assert entry in toc_files(), f"{path.name} is not in _toc.yml (add '- file: {entry}')"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_claims_table_is_in_the_last_code_cell(path):
    nb = load(path)
    cells = code_cells(nb)
    calls = [i for i, c in enumerate(cells) if re.search(r"\b(claims|ch)\.table\(\)", source(c))]
    if not any(re.search(r"\b(claims|ch)\.(record|decide)\(", source(c)) for c in cells):
        assert not calls, f"{path.name} calls ch.table() but records no claims"
        return
    assert calls == [len(cells) - 1], f"{path.name}: ch.table() must be called once, in the last code cell"


def test_toc_ends_with_scorecard_and_references():
    files = toc_files()
    assert files[0] == "book/intro"
    assert files[-2:] == ["book/scorecard", "book/references"]
    for f in files:
        assert (ROOT / f"{f}.md").exists() or (ROOT / f"{f}.ipynb").exists(), f"_toc.yml lists a missing file {f}"
