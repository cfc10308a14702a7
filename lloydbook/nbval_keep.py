"""Keep the notebooks that nbval executed, so that one execution of each chapter serves both nbval and the book build.

``pytest --nbval-lax book/*.ipynb -p lloydbook.nbval_keep --nbval-keep-dir DIR`` runs every chapter under nbval
(every code cell an item in pytest's report) and writes each executed notebook to ``DIR/<its path relative to the
rootdir>``: the notebook as nbformat reads it (cells, metadata, cell ids), every code cell with the outputs nbval
captured from the kernel (``IPyNbCell.test_outputs``) and a sequential ``execution_count``, and the kernel's
``language_info`` (as nbclient records it; myst-nb picks the code lexer from it). ``scripts/stage_book.py`` then
builds the book from these copies with execution off. So that nbval's execution is the one the book would make,
the plugin has nbval's kernel execute with ``store_history=True``, as nbclient does (nbval's ``False`` keeps a
trailing ``;`` from silencing a cell's result).

A notebook is written only when every one of its code cells passed (a failed, skipped or deselected cell, a cell
after a timeout, a failed kernel shutdown, or a notebook that could not be read all count against it). Any copy
already at its target path is deleted when the notebook is collected, before any cell runs, so that a later build
cannot take a partial or stale execution for a complete one. Writes are atomic (a temporary file, then ``os.replace``). Without ``--nbval-keep-dir`` the plugin
does nothing.

Under pytest-xdist (``-n 2 --dist loadfile``, as ``make test`` runs the chapters two at a time) each notebook runs
whole in one worker, with its own kernel, and that worker writes it; the controller prints the summary. Any other
``--dist`` would split a notebook's cells across kernels, so the plugin refuses it.
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
            # nbval executes with store_history=False, so IPython's displayhook reads the last *stored* cell to
            # decide whether a trailing ";" silences the result (it never does), and _, Out and In stay empty.
            # Execute as nbclient (the book build) does.
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
        if state is None:
            return
        target = self.target(node)
        nb = getattr(node, "nb", None)  # None: nbval could not read it
        n_code = None if nb is None else sum(c.cell_type == "code" for c in nb.cells)
        if state["bad"] or n_code is None or sorted(state["cells"]) != list(range(n_code)):
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
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")  # same folder: os.replace is atomic
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                nbformat.write(nb, f)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
