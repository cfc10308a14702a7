"""Tests of lloydbook/nbval_keep.py, the pytest plugin that keeps the notebooks nbval executed (for the book build)."""

import subprocess
import sys
from types import SimpleNamespace

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from lloydbook import nbval_keep

KERNEL = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}


def run_nbval(tmp_path, *args):
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # rootdir, and not this repo's addopts
    cmd = [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-p", "lloydbook.nbval_keep"]
    cmd += ["-p", "no:cacheprovider", "-q", *args]
    # the timeout only guards against a hang: alone this takes about 30 s, but a loaded 2-core machine (CI beside
    # other work) took over 120 s, which is not a failure of the plugin
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=900)


def write_notebooks(tmp):
    """nb/ok.ipynb, whose cells all pass, and nb/bad.ipynb, with a failing cell (and a stale copy in out/)."""
    (tmp / "nb").mkdir()
    ok = new_notebook(metadata={**KERNEL, "language_info": {"name": "python"}, "custom": {"kept": True}})
    ok.cells = [
        new_markdown_cell("# A chapter"),
        new_code_cell("import sys\nprint('hello')\nprint('oops', file=sys.stderr)"),
        new_code_cell(
            "from IPython.display import HTML, display\ndisplay(HTML('<b>bold</b>'))", metadata={"tags": ["hide-input"]}
        ),
        new_code_cell("from myst_nb import glue\nglue('answer', 42)\nglue('quiet', 7, display=False)"),
        new_code_cell("1 + 2"),
        new_code_cell("x = 5\nx;"),  # a trailing ";" silences the result, as in the book build
        new_code_cell(""),
        new_code_cell("_ + 1"),  # the last result, as in the book build
        new_code_cell("raise ValueError('boom')", metadata={"tags": ["raises-exception"]}),
    ]
    nbformat.write(ok, tmp / "nb" / "ok.ipynb")
    bad = new_notebook(metadata=KERNEL, cells=[new_code_cell("print(1)"), new_code_cell("1 / 0"), new_code_cell("2")])
    nbformat.write(bad, tmp / "nb" / "bad.ipynb")
    (tmp / "out" / "nb").mkdir(parents=True)
    (tmp / "out" / "nb" / "bad.ipynb").write_text("a stale copy from an earlier run", encoding="utf-8")
    return ok


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    """The two notebooks of :func:`write_notebooks` under nbval."""
    tmp = tmp_path_factory.mktemp("nbval_keep")
    ok = write_notebooks(tmp)
    proc = run_nbval(tmp, "--nbval-keep-dir", "out", "nb")
    return SimpleNamespace(tmp=tmp, proc=proc, source=ok)


SUMMARY = ("nb/bad.ipynb: 2 cells passed, 1 failed", "NOT kept", "nb/ok.ipynb: 8 cells passed, 0 failed")


def test_the_summary_gives_each_notebooks_cells_and_whether_it_was_kept(kept):
    lines = kept.proc.stdout.split("chapters (nbval, lloydbook.nbval_keep)", 1)[1].splitlines()
    bad = next(line for line in lines if line.startswith("nb/bad.ipynb"))
    ok = next(line for line in lines if line.startswith("nb/ok.ipynb"))
    assert bad.startswith(SUMMARY[0]) and bad.endswith(SUMMARY[1] + " (a cell did not pass)"), bad
    assert ok.startswith(SUMMARY[2]) and ok.endswith("kept in out/nb/ok.ipynb"), ok


def test_nbval_reports_every_cell(kept):
    assert kept.proc.returncode == 1, kept.proc.stdout + kept.proc.stderr
    assert "1 failed, 10 passed" in kept.proc.stdout, kept.proc.stdout


def test_a_notebook_whose_cells_all_passed_is_written_with_its_outputs(kept):
    path = kept.tmp / "out" / "nb" / "ok.ipynb"
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert not list(kept.tmp.joinpath("out", "nb").glob(".*.tmp"))
    assert [c.id for c in nb.cells] == [c.id for c in kept.source.cells]
    assert [c.source for c in nb.cells] == [c.source for c in kept.source.cells]
    assert nb.metadata.custom == {"kept": True} and nb.metadata.kernelspec == KERNEL["kernelspec"]
    assert nb.metadata.language_info["pygments_lexer"] == "ipython3"  # from the kernel, as nbclient records it
    assert nb.cells[2].metadata.tags == ["hide-input"]
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == [1, 2, 3, 4, 5, None, 6, 7]
    printed, displayed, glued, result, silenced, empty, last, raised = (c.outputs for c in code)
    assert [(o.output_type, o.name, o.text) for o in printed] == [
        ("stream", "stdout", "hello\n"),
        ("stream", "stderr", "oops\n"),
    ]
    assert displayed[0].output_type == "display_data" and displayed[0].data["text/html"] == "<b>bold</b>"
    assert [o.metadata["scrapbook"]["name"] for o in glued] == ["answer", "quiet"]
    assert glued[0].data["text/plain"] == "42" and glued[1].data == {"application/papermill.record/text/plain": "7"}
    assert [(o.output_type, o.execution_count, o.data) for o in result] == [("execute_result", 4, {"text/plain": "3"})]
    assert silenced == [] and empty == []
    assert [(o.execution_count, o.data["text/plain"]) for o in last] == [(6, "4")]
    assert [(o.output_type, o.ename, o.evalue) for o in raised] == [("error", "ValueError", "boom")]


def test_a_notebook_with_a_failing_cell_is_not_written_and_its_stale_copy_is_deleted(kept):
    assert not (kept.tmp / "out" / "nb" / "bad.ipynb").exists()


def test_without_keep_dir_the_plugin_does_nothing():
    registered = []
    config = SimpleNamespace(
        option=SimpleNamespace(nbval_keep_dir=None), pluginmanager=SimpleNamespace(register=registered.append)
    )
    nbval_keep.pytest_configure(config)
    assert registered == []


def test_a_notebook_nbval_cannot_read_has_its_stale_copy_deleted(tmp_path):
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "broken.ipynb").write_text("not a notebook", encoding="utf-8")
    (tmp_path / "out" / "nb").mkdir(parents=True)
    (tmp_path / "out" / "nb" / "broken.ipynb").write_text("a stale copy", encoding="utf-8")
    proc = run_nbval(tmp_path, "--nbval-keep-dir", "out", "nb")
    assert proc.returncode != 0 and not (tmp_path / "out" / "nb" / "broken.ipynb").exists(), proc.stdout


def test_two_xdist_workers_keep_each_notebook_whole_as_one_process_does(kept, tmp_path):
    write_notebooks(tmp_path)
    proc = run_nbval(tmp_path, "-n", "2", "--dist", "loadfile", "--nbval-keep-dir", "out", "nb")
    assert proc.returncode == 1 and "1 failed, 10 passed" in proc.stdout, proc.stdout + proc.stderr
    assert all(part in proc.stdout for part in SUMMARY), proc.stdout
    assert not (tmp_path / "out" / "nb" / "bad.ipynb").exists()
    ours, serial = (nbformat.read(t / "out" / "nb" / "ok.ipynb", as_version=4) for t in (tmp_path, kept.tmp))
    assert [c.get("outputs") for c in ours.cells] == [c.get("outputs") for c in serial.cells]


def test_xdist_that_would_split_a_notebook_across_kernels_is_refused(tmp_path):
    write_notebooks(tmp_path)
    proc = run_nbval(tmp_path, "-n", "2", "--dist", "load", "--nbval-keep-dir", "out", "nb")
    assert proc.returncode != 0 and "expected --dist loadfile" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
