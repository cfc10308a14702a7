"""Tests of lloydbook/robust.py and lloydbook/robust_cells.py (the robustness table over seeds), on synthetic rows,
cell reports and notebooks: no notebook is executed here."""

import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import numpy as np
import pytest
from myst_nb.ext.glue import GLUE_PREFIX
from nbformat.v4 import new_code_cell, new_notebook, new_output

from lloydbook import robust, robust_cells
from lloydbook.claims import ClaimsTable, Row, evidence

ROOT = Path(__file__).resolve().parents[2]


def row(id, verdict="reproduced", ours="exact", kind="claim"):
    return Row(id=id, statement="s", source="src", paper="p", ours=ours, verdict=verdict, kind=kind)


def glued(rows, chapter="lloyd", display=False):
    """The output ``lloydbook.claims.table`` leaves for its rows (myst-nb's glue of a str, not displayed)."""
    prefix = "" if display else GLUE_PREFIX
    return new_output(
        "display_data",
        data={prefix + "text/plain": repr(ClaimsTable(chapter, rows).to_json())},
        metadata={"scrapbook": {"name": f"claims-{chapter}-rows", "mime_prefix": prefix}},
    )


def cell(n, outcome="passed", error="", line="x = 1"):
    return {"cell": n, "outcome": outcome, "line": line, "error": error}


def run(seed, rows, cells=None, chapter="book/01_lloyd.ipynb"):
    return robust.ChapterRun(chapter, seed, [cell(0), cell(1)] if cells is None else cells, rows)


# ------------------------------------------------------------------------------------------ reading the rows
def test_claims_rows_reads_the_glued_table_and_nothing_else():
    rows = [row("lloyd-a"), row("lloyd-b", "open", kind="open")]
    noise = [
        new_output("stream", name="stdout", text="claims-lloyd-rows"),
        new_output("display_data", data={"text/plain": "1"}, metadata={"scrapbook": {"name": "lloyd-x"}}),
        new_output("display_data", data={"text/plain": "2"}, metadata={"scrapbook": {"name": "claims-lloyd-n"}}),
    ]
    assert robust.claims_rows([*noise, glued(rows)]) == rows
    assert robust.claims_rows([glued(rows, display=True)]) == rows  # a displayed glue has no mime prefix
    assert robust.claims_rows(noise) is None
    assert robust.rows_outputs([*noise, glued(rows)]) == [glued(rows)]


def test_claims_rows_refuses_a_table_that_does_not_read_as_rows():
    bad = glued([row("lloyd-a")])
    bad["data"][GLUE_PREFIX + "text/plain"] = repr('{"chapter": "lloyd"}')
    with pytest.raises(ValueError, match="claims table's JSON"):
        robust.claims_rows([bad])


def test_rows_of_notebook_reads_every_code_cell(tmp_path):
    nb = new_notebook(cells=[new_code_cell("a"), new_code_cell("ch.table()", outputs=[glued([row("lloyd-a")])])])
    nbformat.write(nb, tmp_path / "nb.ipynb")
    assert robust.rows_of_notebook(tmp_path / "nb.ipynb") == [row("lloyd-a")]


# ------------------------------------------------------------------------------------------ thin margins
@pytest.mark.parametrize(
    "text, thin",
    [
        ("b - a +0.012, 90% interval [+0.001, +0.023] (paired by seed, 10 pairs)", ["[+0.001, +0.023] vs 0"]),
        ("b - a +0.012, 90% interval [+0.002, +0.023] (paired by seed, 10 pairs)", []),  # 0.002 > 5% of 0.021
        ("b - a -0.012, 90% interval [-0.023, -0.000] (10 runs)", ["[-0.023, -0.000] vs 0"]),  # an end on 0
        ("b - a +0.012, 90% interval [-0.001, +0.023] (10 runs)", []),  # undetermined: not decided
        ("B - A +0.013, 90% interval [-0.002, +0.030], tolerance 0.05", []),
        ("B - A +0.040, 90% interval [+0.031, +0.0495], tolerance 0.05", ["[+0.031, +0.0495] vs -0.05 and 0.05"]),
        ("B - A +0.080, 90% interval [+0.051, +0.100], tolerance 0.05", ["[+0.051, +0.100] vs -0.05 and 0.05"]),
        ("OH / BN 1.089, 90% interval [1.001, 1.105] (40 interleaved repetitions)", ["[1.001, 1.105] vs 1"]),
        ("OH / BN 1.089, 90% interval [1.065, 1.105] (40 interleaved repetitions)", []),
        ("b - a +0.212, 90% interval [+0.101, +0.323] (10 pairs), margin 0.1", ["[+0.101, +0.323] vs 0.1"]),
        ("ratio 1.02 against > 1", ["1.02 against > 1"]),
        ("observed 0.984 against >= 0.98; and 2.5 against '< 2'", ["0.984 against >= 0.98"]),
        ("median 0.123 [0.100, 0.150]; no interval here", []),
        ("b - a +inf, 90% interval [+0.001, +inf] (10 runs)", []),
    ],
)
def test_thin_parts(text, thin):
    assert robust.thin_parts(text) == thin


def test_thin_parts_reads_every_interval_evidence_writes(judge):
    """The formats of lloydbook.claims.evidence, as it writes them: one interval each, read as decided or not."""
    a, b = np.linspace(0, 1, 10), np.linspace(0, 1, 10) + 0.5
    texts = [
        judge.lower("p", a, b, "a", "b", paired=True).text,
        judge.below("p", a, 2.0, "a").text,
        judge.above("p", b, -1.0, "b").text,
        judge.within("p", a, a + 0.001, "a", "b", 0.05, paired=True).text,
        evidence.cheaper("p", [1.0] * 8, [2.0] * 8, "a", "b").text,
    ]
    for text in texts:
        assert len(robust._INTERVAL.findall(text)) == 1, text
        assert robust.thin_parts(text) == [], text  # all clear of their boundaries
    touching = judge.lower("p", a, a + np.repeat([0, 0.01], 5), "a", "b", paired=True).text
    assert robust.thin_parts(touching) == ["[+0.000, +0.010] vs 0"], touching  # an end on the boundary
    with pytest.raises(TypeError, match="text must be a str"):
        robust.thin_parts(None)


# ------------------------------------------------------------------------------------------ the table
def test_failures_name_the_claims_and_the_first_other_failing_cell():
    claim = "AssertionError: claim 'lloyd-a' failed its check (verdict stated: 'reproduced'): ..."
    cells = [cell(0), cell(1, "failed", claim, "ch.record("), cell(2, "failed", "NameError: x"), cell(3, "failed", "E")]
    out = robust.failures(run(1, None, cells))
    assert out[0] == "claim `lloyd-a` (cell 1 (`ch.record(`))"
    assert out[1] == "cell 2 (`x = 1`) failed: NameError: x; 1 later cells failed too"
    assert robust.failures(run(1, None, [])) == ["not run (no cell reported; see nbval.log)"]
    assert robust.failures(run(1, [row("lloyd-a")])) == []
    whole = [{"cell": None, "outcome": "failed", "line": "", "error": "bad json"}]
    assert robust.failures(run(1, None, whole)) == ["the notebook failed: bad json"]


def test_changes_name_verdicts_and_kinds_against_the_baseline():
    base = run(0, [row("lloyd-a"), row("lloyd-b"), row("lloyd-c", "open", kind="open"), row("lloyd-d")])
    failed = [cell(0), cell(1, "failed", "AssertionError: claim 'lloyd-d' failed its check (...)")]
    now = run(1, [row("lloyd-a"), row("lloyd-b", "partly"), row("lloyd-c"), row("lloyd-e")], failed)
    assert robust.changes(base, now) == [
        "`lloyd-b`: reproduced -> partly",
        "`lloyd-c`: open -> reproduced",
        "`lloyd-e`: missing -> reproduced",
    ]  # lloyd-d is missing because its claim failed: counted under failing alone
    assert robust.changes(base, run(2, None)) == [] and robust.changes(run(0, None), now) == []
    assert robust.changes(base, run(3, [row("lloyd-a")]))[0] == "`lloyd-b`: reproduced -> missing"


def test_table_counts_and_is_ok_only_without_failing_or_changed_rows():
    thin = row("lloyd-t", ours="p: holds (b - a +0.5, 90% interval [+0.001, +1.000] (10 pairs))")
    open_thin = row("lloyd-o", "open", ours=thin.ours, kind="open")  # open rows are not decided: never thin
    runs = [run(0, [row("lloyd-a"), thin, open_thin]), run(1, [row("lloyd-a"), thin, open_thin])]
    data = robust.table(runs, "ci")
    assert (data["seeds"], data["baseline"], data["failing"], data["changed"], data["thin"]) == ([0, 1], 0, 0, 0, 2)
    assert data["ok"] and data["rows"][0]["thin"] == ["`lloyd-t`: [+0.001, +1.000] vs 0"]
    assert data["rows"][0]["rows"] == 3 and data["rows"][0]["open"] == 1
    data = robust.table([*runs, run(2, [row("lloyd-a", "partly"), thin])], "ci")
    assert not data["ok"] and data["changed"] == 2  # lloyd-a's verdict, and lloyd-o gone
    text = robust.markdown(data)
    assert text.startswith("| Chapter | Seed | Rows (open) | Failing | Changed vs seed 0 | Thin margins (5%) |")
    assert (
        "| book/01_lloyd.ipynb | 2 | 2 (0) | - | `lloyd-a`: reproduced -> partly; `lloyd-o`: open -> missing |" in text
    )
    assert "2 changed (against seed 0)" in text and text.rstrip().endswith("NOT OK")
    with pytest.raises(ValueError, match=r"scale must be one of .* got 'huge'"):
        robust.table(runs, "huge")
    with pytest.raises(TypeError, match="runs must be a non-empty list of ChapterRun"):
        robust.table([], "ci")


def test_markdown_escapes_pipes():
    cells = [cell(0, "failed", "ValueError: a | b")]
    assert "a \\| b" in robust.markdown(robust.table([run(0, None, cells)], "ci"))


# ------------------------------------------------------------------------------------------ plugin, files, command
def _drive(recorder, item, call, report):
    gen = recorder.pytest_runtest_makereport(item, call)
    next(gen)
    with pytest.raises(StopIteration):
        gen.send(report)


def test_the_recorder_writes_what_read_run_reads(tmp_path):
    folder = tmp_path / "seed-3"
    recorder = robust_cells.CellRecorder(folder / "cells.json")
    chapter = "book/01_lloyd.ipynb"
    fail = new_output("error", ename="AssertionError", evalue="claim 'lloyd-b' failed its check (...)", traceback=[])
    items = [
        (0, "\n  import x\n", [new_output("stream", name="stdout", text="hi")], "passed"),
        (1, "ch.record(...)", [fail], "failed"),
        (2, "ch.table()", [glued([row("lloyd-a")])], "passed"),
    ]
    for n, source, outputs, outcome in items:
        item = SimpleNamespace(cell_num=n, nodeid=f"{chapter}::Cell {n}", cell=SimpleNamespace(source=source))
        item.test_outputs = outputs
        report = SimpleNamespace(when="call", outcome=outcome, passed=outcome == "passed", failed=outcome == "failed")
        _drive(recorder, item, SimpleNamespace(excinfo=None), report)
    recorder.pytest_sessionfinish(None, 1)
    got = robust.read_run(folder, chapter, 3)
    assert [c["line"] for c in got.cells] == ["import x", "ch.record(...)", "ch.table()"]
    assert got.cells[1]["error"].startswith("AssertionError: claim 'lloyd-b' failed")
    assert got.rows == [row("lloyd-a")] and got.failed_claims() == ["lloyd-b"]
    assert robust.read_run(folder, "book/02_construction.ipynb", 3).cells == []
    assert robust.read_run(tmp_path / "nothing", chapter, 3).rows is None


def test_read_run_prefers_the_kept_notebook_when_every_cell_passed(tmp_path):
    chapter = "book/01_lloyd.ipynb"
    (tmp_path / "book").mkdir()
    report = {"chapters": {chapter: {"cells": [cell(0)], "glue": [glued([row("lloyd-captured")])]}}}
    (tmp_path / "cells.json").write_text(json.dumps(report), encoding="utf-8")
    assert robust.read_run(tmp_path, chapter, 0).rows == [row("lloyd-captured")]
    nb = new_notebook(cells=[new_code_cell("ch.table()", outputs=[glued([row("lloyd-kept")])])])
    nbformat.write(nb, tmp_path / chapter)
    assert robust.read_run(tmp_path, chapter, 0).rows == [row("lloyd-kept")]


def test_the_command_is_make_tests_nbval_step(tmp_path):
    cmd = robust.nbval_command(["book/01_lloyd.ipynb"], tmp_path / "k", tmp_path / "r.json")
    recipe = re.search(r"test 4/6.*?\n(.*?)\n\t@echo", (ROOT / "Makefile").read_text(), re.S).group(1)
    flags = ("--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=1800", "lloydbook.nbval_keep", "loadfile")
    for flag in (*flags, "--no-loadscope-reorder"):
        assert flag in recipe and flag in cmd
    assert cmd[cmd.index("-n") + 1] == "2" and "-n $(NBVAL_WORKERS)" in recipe
    assert cmd[:3] == [sys.executable, "-m", "pytest"] and cmd[-1] == "book/01_lloyd.ipynb" and "-x" not in cmd
    assert cmd[cmd.index("--nbval-keep-dir") + 1] == str(tmp_path / "k")
    assert cmd[cmd.index("-p", cmd.index("--nbval-keep-dir")) + 1] == "lloydbook.robust_cells"


def test_main_without_running_writes_the_table_and_its_exit_status(tmp_path, capsys):
    chapter = "book/01_lloyd.ipynb"
    for seed, verdict in ((0, "reproduced"), (1, "partly")):
        report = {"chapters": {chapter: {"cells": [cell(0)], "glue": [glued([row("lloyd-a", verdict)])]}}}
        (tmp_path / f"seed-{seed}").mkdir()
        (tmp_path / f"seed-{seed}" / "cells.json").write_text(json.dumps(report), encoding="utf-8")
    args = ["--no-run", "--out", str(tmp_path), str(ROOT / chapter)]
    assert robust.main([*args, "--seeds", "0"]) == 0
    assert robust.main(["--seeds", "0 1", *args]) == 1
    assert "`lloyd-a`: reproduced -> partly" in (tmp_path / "robust.md").read_text(encoding="utf-8")
    data = json.loads((tmp_path / "robust.json").read_text(encoding="utf-8"))
    assert data["changed"] == 1 and not data["ok"]
    assert "1 changed (against seed 0)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--seeds", "x"], "seeds must be integers from 0 to 2**32 - 1 (LLOYD_SEED), got 'x'"),
        (["--seeds", str(2**32)], f"got '{2**32}'"),
        (["--seeds", "1,1"], "seeds must be at least one seed, each once"),
        (["--seeds", " "], "seeds must be at least one seed, each once"),
        (["--seeds", "0", "1"], "chapters must be notebooks (.ipynb) inside"),
        (["--scale", "huge"], "scale must be one of"),
        (["README.md"], "chapters must be notebooks"),
    ],
)
def test_main_names_a_bad_argument(args, message, capsys):
    with pytest.raises(SystemExit) as e:
        robust.main(["--no-run", *args])
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_under_xdist_the_workers_parts_are_merged_by_the_controller(tmp_path):
    """Each xdist worker writes FILE.<id>; the controller (which alone records collection errors) merges them into
    FILE and deletes them, and drops an earlier session's parts when it starts."""
    path = tmp_path / "seed-0" / "cells.json"
    path.parent.mkdir()
    (path.parent / "cells.json.gw7").write_text('{"chapters": {"stale.ipynb": {"cells": [], "glue": []}}}')
    controller = robust_cells.CellRecorder(path, controller=True)
    assert not (path.parent / "cells.json.gw7").exists()
    for worker, chapter in (("gw0", "book/01_lloyd.ipynb"), ("gw1", "book/02_construction.ipynb")):
        recorder = robust_cells.CellRecorder(path, worker=worker)
        recorder.pytest_collectreport(SimpleNamespace(failed=True, nodeid="x.ipynb", longreprtext="boom"))
        item = SimpleNamespace(cell_num=0, nodeid=f"{chapter}::Cell 0", cell=SimpleNamespace(source="x = 1"))
        item.test_outputs = [glued([row(f"{worker}-a")])]
        report = SimpleNamespace(when="call", outcome="passed", passed=True, failed=False)
        _drive(recorder, item, SimpleNamespace(excinfo=None), report)
        recorder.pytest_sessionfinish(None, 0)
    assert not path.exists() and (path.parent / "cells.json.gw0").exists()
    controller.pytest_collectreport(SimpleNamespace(failed=True, nodeid="x.ipynb", longreprtext="boom"))
    controller.pytest_sessionfinish(None, 1)
    assert sorted(p.name for p in path.parent.iterdir()) == ["cells.json"]
    assert robust.read_run(path.parent, "book/01_lloyd.ipynb", 0).rows == [row("gw0-a")]
    assert robust.read_run(path.parent, "book/02_construction.ipynb", 0).rows == [row("gw1-a")]
    assert [c["error"] for c in robust.read_run(path.parent, "x.ipynb", 0).cells] == ["boom"]
