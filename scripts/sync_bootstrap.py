#!/usr/bin/env python3
"""Write every chapter's Colab bootstrap cell from the one setting in _config.yml (``repository.url``).

Usage: python scripts/sync_bootstrap.py          # print the cell
       python scripts/sync_bootstrap.py --write  # rewrite the first code cell of every book/*.ipynb
       python scripts/sync_bootstrap.py --check  # exit 1 if a chapter's bootstrap differs from the setting

The same URL feeds Jupyter Book's launch buttons, so the Colab button and the cell it opens agree. The cell
installs this repository's packages (``lloydlib`` and ``lloydbook``) when they are missing, as on Colab.
``LLOYDLIB_SOURCE`` overrides where from: a pip URL (``git+https://...``) or the path of a copy of the
repository (see README.md, "Running a chapter on Colab"); a copy's run store (``results/runs``) is then
the one the chapter reads (``$LLOYD_STORE``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
ENV = "LLOYDLIB_SOURCE"


def repository_url(root: Path = ROOT) -> str:
    """``repository.url`` of ``_config.yml``."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    url = (config.get("repository") or {}).get("url")
    if not isinstance(url, str) or not url.startswith("https://"):
        raise ValueError(f"_config.yml: repository.url must be an https URL, got {url!r}")
    return url.rstrip("/")


def bootstrap_source(url: str) -> str:
    """The bootstrap cell's code for a repository at ``url``."""
    return (
        "# On Colab: install this book's packages (lloydlib, lloydbook) when they are missing. The environment\n"
        f"# variable {ENV} overrides where from: a pip URL (git+https://...) or the path of a copy of the repository.\n"
        "import importlib.util\n"
        "import os\n"
        "\n"
        'if importlib.util.find_spec("lloydbook") is None:\n'
        f'    source = os.environ.get("{ENV}", "git+{url}")\n'
        "    %pip install -q {source}\n"
        "    importlib.invalidate_caches()\n"
        '    if os.path.isdir(os.path.join(source, "results", "runs")):  # a copy\'s committed run store\n'
        '        os.environ.setdefault("LLOYD_STORE", os.path.join(source, "results", "runs"))'
    )


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + [parts[-1]]


def chapters(root: Path = ROOT) -> list[Path]:
    return sorted((root / "book").glob("*.ipynb"))


def first_code_cell(nb: dict) -> dict:
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            return cell
    raise ValueError("the notebook has no code cell")


def out_of_sync(root: Path = ROOT) -> list[str]:
    """Chapters whose bootstrap cell is not the one ``_config.yml`` asks for."""
    want = bootstrap_source(repository_url(root))
    bad = []
    for path in chapters(root):
        cell = first_code_cell(json.loads(path.read_text(encoding="utf-8")))
        if "".join(cell["source"]) != want or "remove-cell" not in cell.get("metadata", {}).get("tags", []):
            bad.append(path.name)
    return bad


def write(root: Path = ROOT) -> list[str]:
    """Rewrite the bootstrap cell of every chapter that is out of sync; returns their names."""
    want = bootstrap_source(repository_url(root))
    changed = []
    for path in chapters(root):
        nb = json.loads(path.read_text(encoding="utf-8"))
        cell = first_code_cell(nb)
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "".join(cell["source"]) == want and "remove-cell" in tags:
            continue
        cell["source"] = _lines(want)
        if "remove-cell" not in tags:
            tags.append("remove-cell")
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        changed.append(path.name)
    return changed


def main(argv: list[str]) -> int:
    if "--write" in argv:
        changed = write()
        print(f"rewrote the bootstrap cell of {len(changed)} chapter(s): {changed}")
        return 0
    if "--check" in argv:
        bad = out_of_sync()
        if bad:
            print(f"bootstrap cell out of sync with _config.yml in {bad}: run python scripts/sync_bootstrap.py --write")
            return 1
        print("every chapter's bootstrap cell matches _config.yml")
        return 0
    print(bootstrap_source(repository_url()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
