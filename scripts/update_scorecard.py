#!/usr/bin/env python3
"""Keep book/scorecard.md in step with _toc.yml: one summary row and one table per chapter with claims.

Usage: python scripts/update_scorecard.py          # print what the page should be
       python scripts/update_scorecard.py --write  # rewrite book/scorecard.md
       python scripts/update_scorecard.py --check  # exit 1 if book/scorecard.md is out of date

The page pastes what the chapters glue (lloydbook.claims.table): this script only writes the glue
references, in table of contents order, for every chapter in _toc.yml whose notebook shows its claims
table: ``ch.table()`` on the chapter that ``ch = book.setup("<key>")`` returns (or ``claims.table()``).
The chapter's key is the one its ``book.setup`` call names. Everything above the line "## Summary" in the
page is kept as written.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

from lloydbook.claims import VERDICTS

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "scorecard.md"
# one column per verdict of lloydbook.claims (the glue suffixes claims.table writes), then the total
COUNTS = tuple(v.replace(" ", "-") for v in VERDICTS) + ("n",)
HEADER = "| Chapter | " + " | ".join(VERDICTS) + " | claims |\n" + "|:---|" + "---:|" * (len(VERDICTS) + 1) + "\n"
CAPTION = "Claims per chapter and verdict. The last row is summed from the rows above when the book is built."


def toc_files(root: Path = ROOT) -> list[str]:
    """Every file of _toc.yml in order, without suffix (``book/01_lloyd``)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
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


#: ``book.setup("<key>")``, with the name its chapter is bound to when there is one (``ch = book.setup(...)``)
SETUP = re.compile(r"""(?:\b([A-Za-z_]\w*)\s*=\s*)?\bbook\.setup\(\s*["']([a-z0-9-]+)["']""")


def chapter_of(code: str) -> tuple[str, bool] | None:
    """The chapter key a notebook's code starts with ``book.setup("<key>")``, and whether the code shows
    the chapter's claims table (``<chapter>.table()`` on what setup returned, or ``claims.table()``);
    None when the code never calls ``book.setup`` with a literal key."""
    m = SETUP.search(code)
    if m is None:
        return None
    names = ["claims"] + ([m.group(1)] if m.group(1) else [])
    shows = any(re.search(rf"(?<![\w.]){re.escape(name)}\.table\(\s*\)", code) for name in names)
    return m.group(2), shows


def chapters_with_claims(root: Path = ROOT) -> list[tuple[str, str]]:
    """(notebook file name, chapter key) for each toc chapter whose notebook shows its claims table."""
    out = []
    for entry in toc_files(root):
        path = root / f"{entry}.ipynb"
        if not path.exists():
            continue
        nb = json.loads(path.read_text(encoding="utf-8"))
        code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        found = chapter_of(code)
        if found is not None and found[1]:
            out.append((path.name, found[0]))
    return out


def render(root: Path = ROOT) -> str:
    """The whole page: the hand-written top, then the generated summary and per-chapter tables."""
    text = (root / "book" / "scorecard.md").read_text(encoding="utf-8")
    top = re.split(r"(?m)^## Summary[ \t]*$", text, maxsplit=1)[0].rstrip() + "\n\n"
    chapters = chapters_with_claims(root)
    rows = [
        f"| {{doc}}`{Path(nb).stem}` | " + " | ".join(f"{{glue:text}}`{nb}::claims-{key}-{c}:d`" for c in COUNTS) + " |"
        for nb, key in chapters
    ]
    sections = [f"### {{doc}}`{Path(nb).stem}`\n\n```{{glue}} claims-{key}\n:doc: {nb}\n```\n" for nb, key in chapters]
    summary = (
        f"## Summary\n\n```{{table}} {CAPTION}\n:class: claims-summary\n\n" + HEADER + "\n".join(rows) + "\n```\n\n"
    )
    return top + summary + "## The claims, chapter by chapter\n\n" + "\n".join(sections)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    page = render()
    if "--write" in argv:
        PAGE.write_text(page, encoding="utf-8")
        print(f"wrote {PAGE.relative_to(ROOT)} ({len(chapters_with_claims())} chapters)")
    elif "--check" in argv:
        if PAGE.read_text(encoding="utf-8") != page:
            print(
                "book/scorecard.md is out of date with _toc.yml: run python scripts/update_scorecard.py --write",
                file=sys.stderr,
            )
            return 1
        print("book/scorecard.md is up to date")
    else:
        print(page, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
