"""How robust the book's claims are to the random draw: every chapter under nbval at several seeds, one table.

``python -m lloydbook.robust --seeds "0 1 2" --scale ci [--out _build/robust] [--no-run] [CHAPTER.ipynb ...]``
(``make robust``; every ``book/*.ipynb`` by default) runs, for each seed, ``make test``'s nbval step
(:func:`nbval_command`) with ``LLOYD_SEED=<seed>`` and ``LLOYD_SCALE=<scale>`` into ``<out>/seed-<seed>/``:
``nbval.log``, the chapters :mod:`lloydbook.nbval_keep` kept, and ``cells.json`` (:mod:`lloydbook.robust_cells`:
each cell's outcome, and the claims rows its passing cells glued, so that a chapter with a failing cell still shows
its other rows). A failing cell fails that cell alone. ``--no-run`` only reads those folders again. It then writes
``<out>/robust.md`` and ``<out>/robust.json``, one row per chapter and seed, with

- **failing**: each claim whose check failed (and its cell), and the first other failing cell (its error; later
  failing cells are counted, not named);
- **changed**: each row whose verdict or kind (an open row's verdict reads "open") differs from the same row at the
  first seed given, as ``id: old -> new`` ("missing" where one side lacks the row; a row missing because its claim
  failed is counted under failing alone);
- **thin margins**: each part of a decided row (a claim, not an open row) whose interval comes within 5% of its
  boundary (:func:`thin_parts`).

The exit status is 0 when the table has no failing claim or cell and no changed row, 1 otherwise (2: bad
arguments). It is not part of ``make test``, which runs the chapters at seed 0.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from itertools import takewhile
from pathlib import Path

import nbformat
from myst_nb.ext.glue import extract_glue_data_cell

from lloydlib.checks import check_choice

from .claims.registry import OPEN, Row
from .claims.render import ClaimsTable, glue_keys
from .scales import SCALE_NAMES

__all__ = [
    "THIN",
    "ChapterRun",
    "claims_rows",
    "rows_of_notebook",
    "rows_outputs",
    "thin_parts",
    "failures",
    "changes",
    "table",
    "nbval_command",
    "main",
]

ROOT = Path(__file__).resolve().parents[1]
#: a decided interval within this share of its width from its boundary (a threshold: of the threshold) is thin
THIN = 0.05
_NUM = r"[+-]?(?:inf|nan|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
_INTERVAL = re.compile(
    rf"(?P<est>{_NUM}), (?:\d+(?:\.\d+)?)% interval \[(?P<lo>{_NUM}), (?P<hi>{_NUM})\](?P<after>[^;]*)"
)
_TOLERANCE = re.compile(rf"^, tolerance (?P<tol>{_NUM})")
_MARGIN = re.compile(rf"\bmargin (?P<m>{_NUM})")
_THRESHOLD = re.compile(rf"(?P<v>{_NUM}) against [\"']?(?P<op>>=|<=|≥|≤|>|<) ?(?P<t>{_NUM})")
_CLAIM_FAILED = re.compile(r"claim '(?P<id>[a-z0-9]+(?:-[a-z0-9]+)*)' failed its check")


# ----------------------------------------------------------------------------------------- reading the rows
def _is_rows_key(name) -> bool:
    """``claims-<key>-rows``, as :func:`lloydbook.claims.glue_keys` names it."""
    if not (isinstance(name, str) and name.startswith("claims-") and name.endswith("-rows")):
        return False
    try:
        return glue_keys(name[len("claims-") : -len("-rows")])["rows"] == name
    except (TypeError, ValueError):
        return False


def rows_outputs(outputs) -> list:
    """The outputs among ``outputs`` that glue a chapter's claims rows."""
    return [o for o in outputs if _is_rows_key(o.get("metadata", {}).get("scrapbook", {}).get("name"))]


def claims_rows(outputs) -> list[Row] | None:
    """The claims rows glued by a chapter's cell outputs (nbformat output dicts), in order; None when none glued
    a table. The glue is found as myst-nb finds it for the book; its text is read as the Scorecard reads it
    (:func:`lloydbook.claims.sphinx.chapter_tables`: a glued str is kept as its repr)."""
    cell = nbformat.from_dict({"cell_type": "code", "source": "", "metadata": {}, "outputs": list(outputs)})
    found = None
    for key, output in extract_glue_data_cell(cell):
        if _is_rows_key(key):
            text = output["data"].get("text/plain", "")
            found = (found or []) + ClaimsTable.from_json(ast.literal_eval(text)).rows
    return found


def rows_of_notebook(path) -> list[Row] | None:
    """The claims rows an executed notebook glued (:func:`claims_rows` over every code cell's outputs)."""
    nb = nbformat.read(path, as_version=4)
    return claims_rows([o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])])


# ----------------------------------------------------------------------------------------- thin margins
def thin_parts(text: str) -> list[str]:
    """The thin parts of a row's text (its "Ours"), each as ``'[lo, hi] vs b'`` (``'v against > t'`` for a
    threshold); a TypeError when ``text`` is not a str.

    An interval, as :mod:`lloydbook.claims.evidence` writes it, reads ``E, L% interval [lo, hi]``. Its boundaries:
    ``±tol`` when ``, tolerance tol`` follows (``within``); else 1 when ``E`` has no sign (``cheaper``'s ratio
    b / a); else ``m`` when ``margin m`` follows in the same clause, or 0 (``lower``'s difference, ``below``'s and
    ``above``'s distance to their threshold). A boundary strictly inside (lo, hi) leaves the part undetermined: it
    is skipped. Otherwise the part is thin when the distance from the nearest boundary to the nearest end of the
    interval is <= THIN (hi - lo) (an end shown equal to a boundary is 0). A threshold ``v against > t`` (or ``>=``,
    ``<``, ``<=``, ``≥``, ``≤``) is thin when |v - t| <= THIN |t|. Thresholds that live only in a chapter's
    ``check=`` expression, not in the row's text, cannot be seen here."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str (a row's 'ours'), got {type(text).__name__} {text!r}")
    found = []
    for m in _INTERVAL.finditer(text):
        lo, hi = float(m["lo"]), float(m["hi"])
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
            continue
        tol, margin = _TOLERANCE.match(m["after"]), _MARGIN.search(m["after"])
        if tol:
            bounds = (-abs(float(tol["tol"])), abs(float(tol["tol"])))
        elif m["est"][0] not in "+-":
            bounds = (1.0,)
        else:
            bounds = (float(margin["m"]) if margin else 0.0,)
        undetermined = any(lo < b < hi for b in bounds)
        if not undetermined and min(abs(end - b) for end in (lo, hi) for b in bounds) <= THIN * (hi - lo):
            vs = " and ".join(f"{b:g}" for b in bounds)
            found.append(f"[{m['lo']}, {m['hi']}] vs {vs}")
    for m in _THRESHOLD.finditer(text):
        v, t = float(m["v"]), float(m["t"])
        if math.isfinite(v) and math.isfinite(t) and abs(v - t) <= THIN * abs(t):
            found.append(f"{m['v']} against {m['op']} {m['t']}")
    return found


# ----------------------------------------------------------------------------------------- one chapter, one seed
@dataclass
class ChapterRun:
    """One chapter at one seed: its cells (``{"cell", "outcome", "line", "error"}`` dicts, nbval's code-cell
    numbering) and its rows (None: no table was glued)."""

    chapter: str
    seed: int
    cells: list
    rows: list[Row] | None

    def failed_claims(self) -> list[str]:
        return [i for c in self.cells for i in _failed_claims(c)]


def _failed_claims(cell: dict) -> list[str]:
    """The ids of the claims whose check failed in ``cell`` (none when it did not fail)."""
    return [m["id"] for m in _CLAIM_FAILED.finditer(cell["error"])] if cell["outcome"] == "failed" else []


def _cell_name(cell: dict) -> str:
    if cell.get("cell") is None:
        return "the notebook"
    line = cell.get("line", "")
    line = line if len(line) <= 40 else line[:39] + "…"
    return f"cell {cell['cell']}" + (f" (`{line}`)" if line else "")


def failures(run: ChapterRun) -> list[str]:
    """The failing claims and the first other failing cell of ``run`` (later ones counted), or that it never ran."""
    if not run.cells:
        return ["not run (no cell reported; see nbval.log)"]
    out = [f"claim `{i}` ({_cell_name(c)})" for c in run.cells for i in _failed_claims(c)]
    other = [c for c in run.cells if c["outcome"] == "failed" and not _failed_claims(c)]
    if other:
        later = f"; {len(other) - 1} later cells failed too" if len(other) > 1 else ""
        out.append(f"{_cell_name(other[0])} failed: {other[0]['error']}{later}")
    return out


def _verdicts(rows: list[Row]) -> dict[str, str]:
    return {r.id: (OPEN if r.kind == OPEN else r.verdict) for r in rows}


def changes(base: ChapterRun, run: ChapterRun) -> list[str]:
    """The rows of ``run`` whose verdict or kind differs from ``base``'s (``id: old -> new``)."""
    if base.rows is None or run.rows is None:
        return []
    old, new, failed = _verdicts(base.rows), _verdicts(run.rows), set(run.failed_claims())
    out = [f"`{i}`: {v} -> {new.get(i, 'missing')}" for i, v in old.items() if new.get(i) != v and i not in failed]
    return out + [f"`{i}`: missing -> {v}" for i, v in new.items() if i not in old]


def table(runs, scale: str) -> dict:
    """The robustness table of ``runs`` (every chapter at every seed; a chapter's first seed listed is its
    baseline) as data: ``{"scale", "seeds", "baseline", "rows": [...], "failing", "changed", "thin", "ok"}``; a row's
    ``"thin"`` holds the thin parts of its decided rows (claims), as ``id: part``."""
    runs = list(runs)
    if not runs or not all(isinstance(r, ChapterRun) for r in runs):
        raise TypeError(f"runs must be a non-empty list of ChapterRun, got {[type(r).__name__ for r in runs]}")
    check_choice("scale", scale, SCALE_NAMES)
    seeds = list(dict.fromkeys(r.seed for r in runs))
    base = {r.chapter: r for r in reversed(runs)}  # each chapter's first run
    rows = [
        {
            "chapter": r.chapter,
            "seed": r.seed,
            "rows": None if r.rows is None else len(r.rows),
            "open": sum(x.kind == OPEN for x in r.rows or []),
            "failing": failures(r),
            "changed": changes(base[r.chapter], r),
            "thin": [f"`{x.id}`: {p}" for x in r.rows or [] if x.kind != OPEN for p in thin_parts(x.ours)],
        }
        for r in runs
    ]
    count = {k: sum(len(x[k]) for x in rows) for k in ("failing", "changed", "thin")}
    ok = not (count["failing"] or count["changed"])
    return {"scale": scale, "seeds": seeds, "baseline": seeds[0], "rows": rows, **count, "ok": ok}


def _cell(items: list[str]) -> str:
    return "; ".join(i.replace("|", "\\|").replace("\n", " ") for i in items) or "-"


def markdown(data: dict) -> str:
    """The table of :func:`table` as markdown, with a summary line."""
    head = f"| Chapter | Seed | Rows (open) | Failing | Changed vs seed {data['baseline']} | Thin margins (5%) |"
    lines = [head, "|---|---|---|---|---|---|"]
    for x in data["rows"]:
        n = "-" if x["rows"] is None else f"{x['rows']} ({x['open']})"
        cells = (x["chapter"], str(x["seed"]), n, _cell(x["failing"]), _cell(x["changed"]), _cell(x["thin"]))
        lines.append("| " + " | ".join(cells) + " |")
    seeds = " ".join(map(str, data["seeds"]))
    summary = (
        f"LLOYD_SCALE={data['scale']}, seeds {seeds}: {data['failing']} failing, {data['changed']} changed "
        f"(against seed {data['baseline']}), {data['thin']} thin margins: {'OK' if data['ok'] else 'NOT OK'}"
    )
    return "\n".join(lines) + "\n\n" + summary + "\n"


# ----------------------------------------------------------------------------------------- running and reading
def nbval_command(chapters, keep_dir: Path, report: Path) -> list[str]:
    """``make test``'s nbval step over ``chapters`` (two at a time in the order given, keeping them in ``keep_dir``;
    run it with one torch thread, as :func:`run_seed` does), recording each cell to ``report``."""
    cmd = [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadfile", "--no-loadscope-reorder"]
    cmd += ["--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=1800"]
    cmd += ["-p", "lloydbook.nbval_keep", "--nbval-keep-dir", str(keep_dir), "-p", "lloydbook.robust_cells"]
    return cmd + ["--robust-report", str(report), "-p", "no:cacheprovider", *map(str, chapters)]


def run_seed(seed: int, scale: str, chapters: list[str], folder: Path) -> int:
    """Run ``chapters`` (paths relative to the repository) under nbval at ``seed`` and ``scale`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cells.json").unlink(missing_ok=True)
    env = {**os.environ, "LLOYD_SEED": str(seed), "LLOYD_SCALE": scale, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    log = folder / "nbval.log"
    print(f"== seed {seed}: LLOYD_SEED={seed} LLOYD_SCALE={scale}, {len(chapters)} chapters (log: {log})", flush=True)
    with open(log, "w", encoding="utf-8") as f:
        cmd = nbval_command(chapters, folder, folder / "cells.json")
        rc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
    text = log.read_text(encoding="utf-8", errors="replace")
    section = text.split("chapters (nbval, lloydbook.nbval_keep)", 1)[-1].splitlines()[1:]
    for line in takewhile(lambda line: not line.startswith("="), section):  # nbval_keep's summary
        if line.strip():
            print(f"   {line}", flush=True)
    return rc


def read_run(folder: Path, chapter: str, seed: int) -> ChapterRun:
    """``chapter`` at ``seed`` from ``folder`` (``<out>/seed-<seed>``): the rows of its kept execution when every
    cell passed, else those its passing cells glued (``cells.json``)."""
    report = folder / "cells.json"
    info = json.loads(report.read_text(encoding="utf-8"))["chapters"].get(chapter) if report.is_file() else None
    if info is None:
        return ChapterRun(chapter, seed, [], None)
    kept = folder / chapter
    clean = info["cells"] and all(c["outcome"] != "failed" for c in info["cells"])
    rows = rows_of_notebook(kept) if clean and kept.is_file() else claims_rows(info["glue"])
    return ChapterRun(chapter, seed, info["cells"], rows)


def _seeds(values) -> list[int]:
    out = []
    for v in values:
        if not (str(v).isdigit() and int(v) < 2**32):
            raise ValueError(f"seeds must be integers from 0 to 2**32 - 1 (LLOYD_SEED), got {v!r} in {list(values)}")
        out.append(int(v))
    if not out or len(set(out)) != len(out):
        raise ValueError(f"seeds must be at least one seed, each once, got {list(values)}")
    return out


def _chapters(values) -> list[str]:
    paths = [Path(v).resolve() for v in values] or sorted((ROOT / "book").glob("*.ipynb"))
    out = []
    for v, p in zip(values or paths, paths):
        if p.suffix != ".ipynb" or not p.is_file() or ROOT not in p.parents:
            raise ValueError(f"chapters must be notebooks (.ipynb) inside {ROOT}, got {str(v)!r}")
        out.append(p.relative_to(ROOT).as_posix())
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lloydbook.robust", description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="the notebooks to run (default: every book/*.ipynb)")
    parser.add_argument("--seeds", default="0 1 2 3 4 5", help='LLOYD_SEED values, one argument: "0 1 2" or 0,1,2')
    parser.add_argument("--scale", default="ci", help=f"LLOYD_SCALE, one of {list(SCALE_NAMES)} (default ci)")
    parser.add_argument("--out", default=str(ROOT / "_build" / "robust"), help="folder of the runs and the table")
    parser.add_argument("--no-run", action="store_true", help="only read the runs already in --out")
    args = parser.parse_args(argv)
    try:
        seeds, chapters = _seeds(args.seeds.replace(",", " ").split()), _chapters(args.chapters)
        check_choice("scale", args.scale, SCALE_NAMES)
    except ValueError as e:
        parser.error(str(e))
    out = Path(args.out).resolve()
    for seed in seeds if not args.no_run else ():
        run_seed(seed, args.scale, chapters, out / f"seed-{seed}")
    runs = [read_run(out / f"seed-{s}", c, s) for c in sorted(chapters) for s in seeds]
    data = table(runs, args.scale)
    out.mkdir(parents=True, exist_ok=True)
    text = markdown(data)
    (out / "robust.md").write_text(text, encoding="utf-8")
    (out / "robust.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\n{text}\n(written to {out / 'robust.md'} and robust.json)")
    return 0 if data["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
