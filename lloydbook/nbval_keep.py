"""Keep the notebooks nbval executed, so that one execution of each chapter serves both nbval and the book build.

``pytest --nbval-lax book/*.ipynb -p lloydbook.nbval_keep --nbval-keep-dir DIR`` writes each notebook whose code
cells all passed (a failed, skipped or deselected cell, a failed kernel shutdown or an unreadable notebook count
against it) to ``DIR/<its path relative to the rootdir>``, for ``scripts/stage_book.py``: the notebook as nbformat
reads it, every code cell with the outputs nbval captured and a sequential ``execution_count``, and the kernel's
``language_info`` (myst-nb picks the code lexer from it). The kernel executes with ``store_history=True``, as
nbclient (the book build) does: with nbval's ``False``, IPython's displayhook reads the last *stored* cell to decide
whether a trailing ``;`` silences a cell's result (it never does), and ``_``, ``Out`` and ``In`` stay empty. A copy
already at the target is deleted when its notebook is collected, so that a partial or stale execution is never
taken for a complete one; writes are atomic. Under pytest-xdist each notebook must run whole in one worker's kernel
(``--dist loadfile``, as ``make test`` runs the chapters); any other ``--dist`` is refused.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_output
from nbval.plugin import IPyNbCell, IPyNbFile


def pytest_addoption(parser):
    parser.getgroup("nbval").addoption(
        "--nbval-keep-dir",
        default=None,
        metavar="DIR",
        help="write each notebook nbval executed, with its outputs, to DIR/<path relative to the rootdir> "
        "(only when all its cells passed; a stale copy is deleted otherwise)",
    )


def pytest_configure(config):
    if config.option.nbval_keep_dir:
        dist = getattr(config.option, "dist", "no")
        if getattr(config.option, "numprocesses", None) and dist not in ("no", "loadfile"):
            raise pytest.UsageError(
                f"--nbval-keep-dir: expected --dist loadfile with -n (each notebook whole in one "
                f"worker), got --dist {dist}"
            )
        config.pluginmanager.register(Keeper(config.rootpath, Path(config.option.nbval_keep_dir)), "nbval-keeper")


def write_atomic(path: Path, text: str):
    """Write ``text`` to ``path`` (making its folder) through a temporary file beside it and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _output(out, count: int):
    """One captured output as a valid nbformat v4 output."""
    kind = out["output_type"]
    if kind == "stream":
        return new_output(kind, name=out["name"], text=out["text"])
    if kind == "error":
        return new_output(kind, ename=out["ename"], evalue=out["evalue"], traceback=list(out["traceback"]))
    extra = {"execution_count": count} if kind == "execute_result" else {}
    return new_output(kind, data=out.get("data", {}), metadata=out.get("metadata", {}), **extra)


class Keeper:
    def __init__(self, rootpath: Path, out_dir: Path):
        self.rootpath, self.out_dir = rootpath, out_dir
        self.notebooks: dict[IPyNbFile, dict] = {}  # node -> {"cells": {cell_num: passed item}, "bad": bool, "lang"}
        self.summary: dict[str, list] = {}  # notebook path (as in its node ids) -> [cells passed, not passed, seconds]

    def target(self, node: IPyNbFile) -> Path:
        try:
            return self.out_dir / node.path.relative_to(self.rootpath)
        except ValueError:
            raise pytest.UsageError(f"--nbval-keep-dir: {node.path} is outside the rootdir {self.rootpath}") from None

    def pytest_collectstart(self, collector):
        if isinstance(collector, IPyNbFile):
            self.target(collector).unlink(missing_ok=True)  # stale; under xdist every worker collects before any runs
            self.notebooks[collector] = {"cells": {}, "bad": False, "ran": False}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item):
        result = yield
        state = self.notebooks.get(item.parent) if isinstance(item, IPyNbCell) else None
        kernel = item.parent.kernel if state is not None and "lang" not in state else None
        if kernel is not None:  # the first cell: the kernel is up and idle
            reply = kernel.kc.kernel_info(reply=True, timeout=30)  # nbval skips replies to other requests
            state["lang"] = reply["content"].get("language_info", {})
            # execute as nbclient (the book build) does, with store_history=True (see the module docstring)
            kernel.execute_cell_input = lambda source, allow_stdin=None: kernel.kc.execute(
                source, store_history=True, allow_stdin=allow_stdin, stop_on_error=False
            )
        return result

    def pytest_runtest_logreport(self, report):
        """Count a cell's report for the summary. Under pytest-xdist this runs in the controller, which sees every
        worker's reports but executes nothing; its notebooks' ``kept`` is read from the keep dir at the end."""
        path = report.nodeid.split("::", 1)[0]
        if path.endswith(".ipynb"):
            row = self.summary.setdefault(path, [0, 0, 0.0])
            row[2] += report.duration
            if report.when == "call":
                row[0 if report.passed else 1] += 1

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        state = self.notebooks.get(item.parent) if isinstance(item, IPyNbCell) else None
        if state is not None:
            state["ran"] = True
            if not report.passed or getattr(report, "wasxfail", None) is not None:
                state["bad"] = True
            elif report.when == "call":
                state["cells"][item.cell_num] = item
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        result = yield
        if isinstance(item, IPyNbCell) and (nextitem is None or nextitem.parent is not item.parent):
            self.finish(item.parent)  # its last cell and the kernel's shutdown are done
        return result

    def pytest_sessionfinish(self, session):
        for node, state in list(self.notebooks.items()):  # those an interruption or -x left unfinished; the ones
            if state["ran"]:  # this process never ran (another xdist worker's, deselected) are left alone
                self.finish(node)

    def pytest_terminal_summary(self, terminalreporter):
        """One line per chapter: its cells that passed and failed, its time, and whether it was kept."""
        terminalreporter.section("chapters (nbval, lloydbook.nbval_keep)")
        for path, (ok, bad, seconds) in sorted(self.summary.items()):
            kept = (self.out_dir / path).is_file()  # a stale copy was deleted when its notebook was collected
            where = f"kept in {self.out_dir / path}" if kept else "NOT kept (a cell did not pass)"
            terminalreporter.write_line(f"{path}: {ok} cells passed, {bad} failed, {seconds:.0f} s; {where}")

    def finish(self, node: IPyNbFile):
        state = self.notebooks.pop(node, None)
        nb = getattr(node, "nb", None)  # None: nbval could not read it
        if state is None or state["bad"] or nb is None:
            return
        if sorted(state["cells"]) != list(range(sum(c.cell_type == "code" for c in nb.cells))):
            return
        nb = copy.deepcopy(nb)
        if state.get("lang"):
            nb.metadata["language_info"] = state["lang"]
        count = 0
        for cell_num, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):  # nbval's numbering
            cell.execution_count, cell.outputs = None, []
            if cell.source.strip():  # nbclient leaves empty cells unexecuted
                count += 1
                cell.execution_count = count
                cell.outputs = [_output(out, count) for out in state["cells"][cell_num].test_outputs or []]
        nbformat.validate(nb)
        write_atomic(self.target(node), nbformat.writes(nb) + "\n")  # as nbformat.write writes it
