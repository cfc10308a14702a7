"""Tests of scripts/stage_book.py, which stages the book's sources with the chapters nbval executed."""

from pathlib import Path

import nbformat
import pytest
import yaml
from _support import assert_raises_naming, load_script
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

ROOT = Path(__file__).resolve().parents[2]

stage_book = load_script("stage_book")

CONFIG = """title: T  # a comment
only_build_toc_files: true
execute:
  execute_notebooks: force
  timeout: 1800
html:
  favicon: book/_static/favicon.ico
sphinx:
  config:
    html_static_path: [book/_static]
    mathjax3_config: {tex: {macros: {R: "\\\\mathbb{R}", norm: ["\\\\left\\\\lVert #1 \\\\right\\\\rVert", 1]}}}
"""
TOC = "format: jb-book\nroot: book/intro\nchapters:\n- file: book/01_a\n  sections:\n  - file: book/02_b.ipynb\n"


def executed(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` as nbval_keep writes it: every code cell run, with an output."""
    nb = nbformat.from_dict(nb)
    for i, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), start=1):
        cell.execution_count = i
        cell.outputs = [new_output("stream", name="stdout", text=f"cell {i}\n")]
    return nb


@pytest.fixture
def book(tmp_path):
    """A small repository (``root``) and the executed copies of its two chapters (``done``)."""
    root, done = tmp_path / "repo", tmp_path / "done"
    (root / "book" / "_static").mkdir(parents=True)
    (root / "_config.yml").write_text(CONFIG, encoding="utf-8")
    (root / "_toc.yml").write_text(TOC, encoding="utf-8")
    (root / "references.bib").write_text("@misc{a, title={A}}\n", encoding="utf-8")
    (root / "book" / "intro.md").write_text("# Intro\n", encoding="utf-8")
    (root / "book" / "_static" / "favicon.ico").write_bytes(b"ico")
    (done / "book").mkdir(parents=True)
    for name in ("01_a", "02_b", "99_unlisted"):
        nb = new_notebook(cells=[new_markdown_cell(f"# {name}"), new_code_cell("print(1)"), new_code_cell("2")])
        nbformat.write(nb, root / "book" / f"{name}.ipynb")
        nbformat.write(executed(nb), done / "book" / f"{name}.ipynb")
    return root, done


def test_stages_the_sources_with_the_executed_chapters_and_execution_off(book, tmp_path):
    root, done = book
    stage = tmp_path / "stage"
    (stage / "book").mkdir(parents=True)
    (stage / "book" / "old.md").write_text("from an earlier staging", encoding="utf-8")
    assert stage_book.stage(done, stage, root=root) == ["book/01_a.ipynb", "book/02_b.ipynb"]
    assert not (stage / "book" / "old.md").exists(), "the stage is wiped first"
    for rel in ("_toc.yml", "references.bib", "book/intro.md", "book/_static/favicon.ico"):
        assert (stage / rel).read_bytes() == (root / rel).read_bytes()
    for rel in ("book/01_a.ipynb", "book/02_b.ipynb"):
        assert (stage / rel).read_bytes() == (done / rel).read_bytes()
    assert not (stage / "book" / "99_unlisted.ipynb").exists()
    config, staged = (yaml.safe_load((d / "_config.yml").read_text(encoding="utf-8")) for d in (root, stage))
    assert staged["execute"]["execute_notebooks"] == "off"
    staged["execute"]["execute_notebooks"] = config["execute"]["execute_notebooks"]
    assert staged == config


def test_a_chapter_without_an_executed_copy_is_an_error_naming_it(book, tmp_path):
    root, done = book
    (done / "book" / "02_b.ipynb").unlink()
    call = lambda: stage_book.stage(done, tmp_path / "stage", root=root)
    assert_raises_naming(call, SystemExit, ["02_b.ipynb", "not executed"])
    assert not (tmp_path / "stage").exists(), "nothing is staged when a chapter is missing"


def test_a_stale_or_unexecuted_copy_is_an_error(book, tmp_path):
    root, done = book
    nb = nbformat.read(root / "book" / "01_a.ipynb", as_version=4)
    nb.cells[1].source = "print('changed since')"
    nbformat.write(nb, root / "book" / "01_a.ipynb")
    assert_raises_naming(
        lambda: stage_book.stage(done, tmp_path / "s", root=root), SystemExit, ["01_a.ipynb", "differ"]
    )
    nbformat.write(nb, done / "book" / "01_a.ipynb")  # the current source, never run
    assert_raises_naming(lambda: stage_book.stage(done, tmp_path / "s", root=root), SystemExit, ["not executed"])


def test_a_toc_variant_stages_only_its_chapters(book, tmp_path):
    root, done = book
    (done / "book" / "02_b.ipynb").unlink()
    toc = tmp_path / "toc.yml"
    toc.write_text("format: jb-book\nroot: book/intro\nchapters:\n- file: book/01_a\n", encoding="utf-8")
    assert stage_book.stage(done, tmp_path / "stage", toc=toc, root=root) == ["book/01_a.ipynb"]
    assert (tmp_path / "stage" / "_toc.yml").read_text(encoding="utf-8") == toc.read_text(encoding="utf-8")


def test_refuses_to_wipe_the_repository(book):
    root, done = book
    assert_raises_naming(lambda: stage_book.stage(done, root, root=root), SystemExit, ["refusing", str(root)])
    assert (root / "_toc.yml").exists()


def test_the_real_book_stages_with_its_relative_paths_intact(tmp_path):
    """Every chapter of the repository's _toc.yml, with the config's relative paths resolving in the stage."""
    done = tmp_path / "done"
    notebooks = stage_book.toc_notebooks(ROOT / "_toc.yml")
    assert sorted(notebooks) == sorted(f"book/{p.name}" for p in (ROOT / "book").glob("*.ipynb"))
    for rel in notebooks:
        (done / rel).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(executed(nbformat.read(ROOT / rel, as_version=4)), done / rel)
    stage = tmp_path / "stage"
    stage_book.main([str(done), str(stage)])
    config = yaml.safe_load((stage / "_config.yml").read_text(encoding="utf-8"))
    assert config["execute"]["execute_notebooks"] == "off"
    sphinx = config["sphinx"]["config"]
    for rel in [config["html"]["favicon"], *sphinx["html_static_path"], *sphinx["html_extra_path"]]:
        assert (stage / rel).exists(), rel
    for rel in config["bibtex_bibfiles"]:
        assert (stage / rel).read_bytes() == (ROOT / rel).read_bytes()
