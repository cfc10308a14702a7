#!/usr/bin/env python3
"""Stage the book's sources with already executed chapters, to build the HTML without executing them again.

Usage: python scripts/stage_book.py EXECUTED_DIR STAGE_DIR [--toc TOC]
       jupyter-book build STAGE_DIR --path-output OUT --all -W -n --keep-going

EXECUTED_DIR holds the chapters as nbval ran them (``pytest --nbval-lax book/*.ipynb -p lloydbook.nbval_keep
--nbval-keep-dir EXECUTED_DIR`` writes ``EXECUTED_DIR/book/<chapter>.ipynb``, see lloydbook/nbval_keep.py).
STAGE_DIR is wiped, then gets ``_config.yml`` (with ``execute.execute_notebooks: "off"``, everything else as it
is), ``_toc.yml`` (or TOC, a variant listing fewer chapters), ``references.bib`` and the whole ``book/`` folder
(``book/_static`` included), every notebook of the table of contents replaced by its executed copy. A chapter
listed in the table of contents without an executed copy, or whose copy's cells are not those of the source
(a stale execution of an older version) is an error; notebooks the table of contents does not list are left
out (``only_build_toc_files: true`` would not build them). The staged tree keeps the repository's layout, so
the config's relative paths (html_static_path, favicon, html_extra_path, bibtex_bibfiles) and the launch
buttons' links (repository.path_to_book) hold as they are.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
FILES = ("_config.yml", "_toc.yml", "references.bib")


def toc_notebooks(toc_path: Path, root: Path = ROOT) -> list[str]:
    """The notebooks the table of contents lists, as paths relative to ``root`` (``book/01_lloyd.ipynb``)."""
    files = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("file"), str):
                files.append(re.sub(r"\.(ipynb|md)$", "", node["file"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    files.append(re.sub(r"\.(ipynb|md)$", "", toc["root"]))
    walk(toc)
    return [f"{f}.ipynb" for f in dict.fromkeys(files) if (root / f"{f}.ipynb").exists()]


def _executed_copy(executed: Path, rel: str, root: Path) -> Path:
    path = executed / rel
    if not path.is_file():
        raise SystemExit(
            f"stage_book: {path} is missing: {rel} is listed in the table of contents but was not executed "
            f"(or not every one of its cells passed under nbval)"
        )
    source, done = (nbformat.read(p, as_version=4) for p in (root / rel, path))
    key = lambda nb: [(c.cell_type, c.source) for c in nb.cells]
    if key(source) != key(done):
        raise SystemExit(f"stage_book: {path} is not an execution of the current {rel} (its cells differ): rerun it")
    if any(c.cell_type == "code" and c.execution_count is None for c in done.cells):
        raise SystemExit(f"stage_book: {path} has code cells that were not executed")
    return path


def stage(executed: Path, stage_dir: Path, toc: Path | None = None, root: Path = ROOT) -> list[str]:
    """Fill ``stage_dir`` (wiped first); returns the staged notebooks."""
    executed, stage_dir, root = executed.resolve(), stage_dir.resolve(), root.resolve()
    for inside in (root, executed):
        if inside == stage_dir or stage_dir in inside.parents:
            raise SystemExit(f"stage_book: refusing to wipe {stage_dir}: it holds {inside}")
    toc = (toc or root / "_toc.yml").resolve()
    notebooks = toc_notebooks(toc, root)
    copies = {rel: _executed_copy(executed, rel, root) for rel in notebooks}  # every error before any change

    shutil.rmtree(stage_dir, ignore_errors=True)
    shutil.copytree(root / "book", stage_dir / "book", ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints"))
    for name in FILES:
        shutil.copy2(toc if name == "_toc.yml" else root / name, stage_dir / name)
    for rel, path in copies.items():
        shutil.copy2(path, stage_dir / rel)

    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    (stage_dir / "_config.yml").write_text(
        "# Staged by scripts/stage_book.py: the chapters were executed by nbval (lloydbook/nbval_keep.py).\n"
        + yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=120),
        encoding="utf-8",
    )
    return notebooks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("executed", type=Path, help="the --nbval-keep-dir of lloydbook.nbval_keep")
    parser.add_argument("stage", type=Path, help="the folder to build from (wiped first)")
    parser.add_argument("--toc", type=Path, default=None, help="a table of contents to use instead of _toc.yml")
    args = parser.parse_args(argv)
    notebooks = stage(args.executed, args.stage, args.toc)
    print(f"staged {len(notebooks)} executed notebooks in {args.stage}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
