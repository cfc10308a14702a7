"""The pytest plugin behind :mod:`lloydbook.robust`: ``pytest --nbval-lax ... -p lloydbook.robust_cells
--robust-report FILE`` writes FILE (JSON) when the session ends: per notebook (its path relative to the rootdir),
``"cells"``, each code cell nbval ran (``{"cell": nbval's code-cell number, "outcome": "passed" | "failed" |
"skipped", "line": its first line, "error": the kernel's "ename: evalue" in one line, or what nbval raised}``; a
notebook that could not be collected is one entry with ``"cell": None``), and ``"glue"``, the outputs of the cells
that passed that glue the chapter's claims rows (:func:`lloydbook.robust.rows_outputs`). Under pytest-xdist each
worker writes its chapters to ``FILE.<worker id>`` and the controller, which records the collection errors, merges
them into FILE.
"""

from __future__ import annotations

import glob
import json
import re
from pathlib import Path

import pytest

from .nbval_keep import write_atomic
from .robust import rows_outputs

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _one_line(text: str) -> str:
    text = " ".join(_ANSI.sub("", text).split())
    return text if len(text) <= 400 else text[:399] + "…"


def pytest_addoption(parser):
    parser.getgroup("nbval").addoption(
        "--robust-report",
        default=None,
        metavar="FILE",
        help="write each notebook cell's outcome and error, and the claims rows glued by cells that passed, to FILE "
        "(JSON; lloydbook.robust reads it)",
    )


def pytest_configure(config):
    if config.option.robust_report:
        worker = getattr(config, "workerinput", {}).get("workerid")  # an xdist worker's id, else None
        controller = worker is None and bool(getattr(config.option, "numprocesses", None))
        recorder = CellRecorder(Path(config.option.robust_report), worker, controller)
        config.pluginmanager.register(recorder, "robust-recorder")


def _error(item, call, report) -> str:
    """A failed cell's error in one line: the kernel's ``ename: evalue``, else what nbval raised."""
    errors = [o for o in getattr(item, "test_outputs", None) or [] if o.get("output_type") == "error"]
    if errors:
        text = f"{errors[-1].get('ename', '')}: {errors[-1].get('evalue', '')}"
    elif call.excinfo is not None:
        text = f"{call.excinfo.typename}: {call.excinfo.value}"
    else:
        text = report.longreprtext
    return _one_line(text)


class CellRecorder:
    """Records every notebook cell nbval runs (``--robust-report FILE``) and writes FILE when the session ends; an
    xdist ``worker`` (its id) writes ``FILE.<id>`` instead, which the ``controller`` merges into FILE."""

    def __init__(self, path: Path, worker: str | None = None, controller: bool = False):
        self.path, self.worker, self.controller = path, worker, controller
        self.chapters: dict[str, dict] = {}
        for stale in self._parts() if controller else []:  # an earlier session's; the workers start after this
            stale.unlink()

    def _parts(self) -> list[Path]:
        return sorted(self.path.parent.glob(f"{glob.escape(self.path.name)}.gw*"))

    def _chapter(self, nodeid: str) -> dict:
        return self.chapters.setdefault(nodeid.split("::")[0], {"cells": [], "glue": []})

    def pytest_collectreport(self, report):
        if self.worker is None and report.failed and report.nodeid.endswith(".ipynb"):
            entry = {"cell": None, "outcome": "failed", "line": "", "error": _one_line(report.longreprtext)}
            self._chapter(report.nodeid)["cells"].append(entry)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        if hasattr(item, "cell_num") and (report.when == "call" or report.failed):
            chapter = self._chapter(item.nodeid)
            source = getattr(getattr(item, "cell", None), "source", "") or ""
            line = next((s.strip() for s in source.splitlines() if s.strip()), "")
            error = _error(item, call, report) if report.failed else ""
            entry = {"cell": item.cell_num, "outcome": report.outcome, "line": line[:80], "error": error}
            chapter["cells"].append(entry)
            if report.passed:
                chapter["glue"] += [dict(o) for o in rows_outputs(getattr(item, "test_outputs", None) or [])]
        return report

    def pytest_sessionfinish(self, session, exitstatus):
        path = self.path if self.worker is None else self.path.with_name(f"{self.path.name}.{self.worker}")
        if self.controller:  # the workers have finished and written their parts
            for part in self._parts():
                for name, chapter in json.loads(part.read_text(encoding="utf-8"))["chapters"].items():
                    mine = self._chapter(name)
                    mine["cells"] += chapter["cells"]
                    mine["glue"] += chapter["glue"]
                part.unlink()
        write_atomic(path, json.dumps({"chapters": self.chapters}, ensure_ascii=False, default=str))
