"""Tests of scripts/count_plumbing.py, which measures how much of the chapters' code is glue, print or display."""

import json

import pytest
from _support import load_script

count_plumbing = load_script("count_plumbing")


def cell(src, kind="code"):
    c = {"cell_type": kind, "metadata": {}, "source": src.splitlines(keepends=True)}
    return c | ({"outputs": [], "execution_count": None} if kind == "code" else {})


# (source, code lines, plumbing lines) of made-up cells
CELLS = [
    # a multi-line glue counts every line it spans, its comment line excepted
    ('ch.glue_many(\n    {\n        "a": 1,  # one\n        # the next\n        "b": 2,\n    }\n)', 6, 6),
    # glue in a loop: the loop's header is code, the glue plumbing
    ('for k, v in values.items():\n    ch.glue(f"x-{k}", v)\n    total += v', 3, 1),
    # the assignment of a print's (or glue's, display's) value is plumbing; a use inside an expression is not
    ('shown = print("a")\nv: float = book.glue("n", 3, display=False)\nx = 1 + glue("m", 2)', 3, 2),
    # comments and blank lines are not code
    ("# a comment\n\n   \nx = 1  # trailing comment\n    # indented comment\ndisplay(x)\n", 2, 1),
    # IPython magics and shell lines are code, not plumbing, at any indent
    ("%matplotlib inline\n!ls\nif x:\n    %pip install -q y\nprint(x)", 5, 1),
    # methods and names of the four: print, display, glue, glue_many; nothing else
    ("ch.record('a', x=print)\nch.table()\nlogger.print_all()\nIPython.display.display(t)\nsummary(glue)", 5, 1),
    # several statements of one kind, a statement split by a backslash, a semicolon
    ('print(1); print(2)\nch.glue("a", \\\n        1)\nch.glue("b", 2);', 4, 4),
]


@pytest.mark.parametrize("src, code, plumbing", CELLS, ids=[f"cell{i}" for i in range(len(CELLS))])
def test_count_cell(src, code, plumbing):
    assert count_plumbing.count_cell(count_plumbing._source(cell(src))) == (code, plumbing)


def test_magics_are_read_as_statements():
    src = count_plumbing._source(cell("%time x = 1\n  !echo hi\nprint(x)"))
    assert src.splitlines() == ["pass", "  pass", "print(x)"]


def make_book(root, notebooks):
    (root / "book").mkdir()
    for name, cells in notebooks.items():
        nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        (root / "book" / name).write_text(json.dumps(nb), encoding="utf-8")
    return root


def test_count_notebook_and_book_skip_markdown(tmp_path):
    md = cell("print('not code')\nglue('x', 1)", "markdown")
    root = make_book(
        tmp_path,
        {
            "02_b.ipynb": [md, cell(CELLS[0][0]), cell(CELLS[1][0])],
            "01_a.ipynb": [cell("x = 1\ny = 2\nz = 3"), cell("print(x)")],
        },
    )
    assert count_plumbing.count_notebook(root / "book" / "02_b.ipynb") == (9, 7)
    counts = count_plumbing.count_book(root)
    assert counts == {"01_a.ipynb": (4, 1), "02_b.ipynb": (9, 7)} and list(counts) == ["01_a.ipynb", "02_b.ipynb"]
    assert count_plumbing.share(counts.values()) == pytest.approx(8 / 13)
    assert count_plumbing.share([]) == 0.0 and count_plumbing.share([(0, 0)]) == 0.0


def test_main_prints_every_chapter_and_fails_past_max(tmp_path, monkeypatch, capsys):
    root = make_book(tmp_path, {"01_a.ipynb": [cell("x = 1\ny = 2\nz = 3"), cell("print(x)")]})
    monkeypatch.setattr(count_plumbing, "ROOT", root)
    assert count_plumbing.main([]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("01_a.ipynb") and "4 code lines" in out[0] and "25.0%" in out[0]
    assert out[-1].startswith("all chapters") and "25.0%" in out[-1]
    assert count_plumbing.main(["--max", "0.3"]) == 0
    assert count_plumbing.main(["--max", "0.2"]) == 1
