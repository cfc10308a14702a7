"""How much of the chapters' code is plumbing: glue, print and display statements, against all code lines.

    python scripts/count_plumbing.py [--max SHARE]

Counted per chapter (``book/*.ipynb``) and in all: a *code line* is a non-blank line of a code cell that is
not only a comment (IPython magics count as code); a *plumbing line* is a code line inside a statement, at
any depth, that is a call of ``glue``, ``glue_many``, ``print`` or ``display`` (as a name or a method, e.g.
``ch.glue(...)``), or an assignment of such a call's value. A multi-line call counts every line it spans.
With ``--max``, exits 1 when the share in all passes it.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLUMBING = {"glue", "glue_many", "print", "display"}


def _source(cell) -> str:
    src = "".join(cell["source"])
    out = []
    for line in src.splitlines():
        body = line.lstrip()
        out.append(line[: len(line) - len(body)] + "pass" if body.startswith(("%", "!")) else line)
    return "\n".join(out)


def _call_name(node) -> str | None:
    if isinstance(node, ast.Call):
        f = node.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    return None


def count_cell(src: str) -> tuple[int, int]:
    """(code lines, plumbing lines) of one cell's source."""
    lines = src.splitlines()
    code = {i + 1 for i, line in enumerate(lines) if line.strip() and not line.strip().startswith("#")}
    plumbing: set[int] = set()
    for node in ast.walk(ast.parse(src)):
        value = node.value if isinstance(node, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
        if _call_name(value) in PLUMBING:
            plumbing.update(range(node.lineno, node.end_lineno + 1))
    return len(code), len(plumbing & code)


def count_notebook(path: Path) -> tuple[int, int]:
    """(code lines, plumbing lines) of a chapter."""
    cells = json.loads(path.read_text())["cells"]
    totals = [count_cell(_source(c)) for c in cells if c["cell_type"] == "code"]
    return sum(t[0] for t in totals), sum(t[1] for t in totals)


def count_book(root: Path = ROOT) -> dict[str, tuple[int, int]]:
    """{notebook file name: (code lines, plumbing lines)} for every chapter ``root/book/*.ipynb``, sorted."""
    return {path.name: count_notebook(path) for path in sorted((root / "book").glob("*.ipynb"))}


def share(counts) -> float:
    """The plumbing share in all of ``counts`` (values ``(code lines, plumbing lines)``); 0 without code."""
    code = sum(c for c, _ in counts)
    return sum(g for _, g in counts) / code if code else 0.0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max", type=float, default=None, help="fail when plumbing is more than this share of all")
    args = p.parse_args(argv)
    counts = count_book(ROOT)
    for name, (c, g) in counts.items():
        print(f"{name:34s} {c:5d} code lines {g:4d} plumbing {share([(c, g)]):6.1%}")
    code, plumbing = sum(c for c, _ in counts.values()), sum(g for _, g in counts.values())
    share_all = share(counts.values())
    print(f"{'all chapters':34s} {code:5d} code lines {plumbing:4d} plumbing {share_all:6.1%}")
    return 1 if args.max is not None and share_all > args.max else 0


if __name__ == "__main__":
    sys.exit(main())
