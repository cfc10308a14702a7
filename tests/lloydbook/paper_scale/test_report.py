"""lloydbook.paper_scale.report: the learning chapters' GPU sections, on (here: made-up) machine folders whose
runs have the paper-scale sweeps' real configs."""

from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from _made_up_runs import run

from lloydbook import book, claims, results
from lloydbook.paper_scale import report
from lloydbook.sweeps import paper_sweeps, sweep_commands, sweep_configs

matplotlib.use("Agg")

PAPER = book.params("learning", "paper")
SWEEPS = {name: (specs, unstacked) for name, specs, unstacked in paper_sweeps(PAPER)}


@pytest.fixture(autouse=True)
def close_figures():
    plt.close("all")
    yield
    plt.close("all")


def recorded(name, val=0.95, hardware="NVIDIA H200"):
    """Made-up runs, flat at ``val``, with the real configs of the paper-scale sweep ``name``."""
    runs = [run(np.full(11, val), c.seed, config=c) for c in sweep_configs(SWEEPS[name][0])]
    for r in runs:
        r.info["hardware"] = hardware
    return runs


@pytest.fixture
def machine(monkeypatch):
    """A machine folder ``h200`` whose runs the test sets: ``held.extend(runs)``; find_runs reads them."""
    held = []
    monkeypatch.setattr(report, "find_runs", lambda configs, root: [r for r in held if r.config in set(configs)])
    return held


def test_gpu_commands_lists_every_command_of_the_sweeps_named():
    table = report.gpu_commands(PAPER, ("fig10", "fig17"))
    expected = [sweep_commands(*SWEEPS[n], results.RECORDED_STORE) for n in ("fig10", "fig17")]
    assert [r[0] for r in table.rows] == ["fig10"] * len(expected[0]) + ["fig17"] * len(expected[1])
    assert table.rows[0][1] == f"<code>{expected[0][0].replace('<', '&lt;').replace('>', '&gt;')}</code>"
    assert "&lt;machine&gt;" in table.header[1] and "<machine>" not in table._repr_html_().replace("<code>", "")
    assert "for n in 256 512 1024" in table.rows[-1][1]  # Fig. 17 trains one run at a time
    with pytest.raises(ValueError, match="names must be paper-scale sweeps"):
        report.gpu_commands(PAPER, ("fig99",))


def test_gpu_section_says_when_no_gpu_results_are_committed():
    table = report.gpu_section(("fig14", "fig11"), PAPER, dirs=[])
    assert table.header == ["machine", "hardware", "sweep", "recorded runs"]
    assert table.rows == [
        ["none", "-", "fig14, fig11", "no recorded results are committed (nothing under results/recorded/)"]
    ]


def test_gpu_section_judges_a_complete_sweep_and_shows_it_beside_ours(chapter, machine, capsys):
    claims.start("shapes")
    machine.extend(recorded("fig13"))
    ours = [run(np.full(11, 0.9), s, config=c) for s, c in enumerate(sweep_configs(SWEEPS["fig13"][0])[:3])]
    table = report.gpu_section(("fig13", "fig15"), PAPER, {"fig13": ours}, dirs=[Path("results/recorded/h200")])
    fig15 = sweep_configs(SWEEPS["fig15"][0])
    shared = len(set(fig15) & set(sweep_configs(SWEEPS["fig13"][0])))  # Fig. 15 at d=4, tau=0.1, k=6: n=512's
    assert shared == 60 and table.rows == [
        ["h200", "NVIDIA H200", "fig13", "judged at paper scale: shapes-n-little-difference-gpu-h200"],
        ["h200", "NVIDIA H200", "fig15", f"partial ({shared} of {len(fig15)} runs): shown, not judged"],
    ]
    assert [c.id for c in claims.claims()] == ["shapes-n-little-difference-gpu-h200"]
    shown = capsys.readouterr().out  # the comparison table (outside IPython, display prints its text)
    assert "GPU, paper scale" in shown and "this build" in shown
    rows = [line.split(" | ") for line in shown.splitlines()[1:]]
    ours_cells = {(r[0].strip(), r[1].strip(), r[2].strip()): r[-1].strip() for r in rows}
    assert len(ours_cells) == 24 and ours_cells[("128", "OH", "NE")] == "0.899 [0.899, 0.899]"  # where it matches
    assert ours_cells[("128", "OH", "L2")] == "-" and ours_cells[("1024", "NA", "L2")] == "-"  # (n, embedding, loss)
    assert not plt.get_fignums()  # Fig. 13 is compared, not drawn


def test_gpu_section_draws_figures_10_and_17_and_judges_nothing_partial(chapter, machine):
    machine.extend(recorded("fig10")[:-1] + recorded("fig17")[1:])
    table = report.gpu_section(("fig10", "fig10b", "fig17"), PAPER, dirs=["h200"])
    ten, seventeen = len(sweep_configs(SWEEPS["fig10"][0])), len(sweep_configs(SWEEPS["fig17"][0]))
    assert [r[2:] for r in table.rows] == [
        ["fig10", f"partial ({ten - 1} of {ten} runs): shown, not judged"],
        ["fig10b", "not recorded"],
        ["fig17", f"partial ({seventeen - 1} of {seventeen} runs): shown, not judged"],
    ]
    assert claims.claims() == []
    assert len(plt.get_fignums()) == 2  # Fig. 10 at d=4 and Fig. 17


def test_the_gpu_section_reads_the_gpu_machines_folders_only(monkeypatch, tmp_path):
    folders = [tmp_path / name for name in ("cpu-amd-epyc", "h200", "h100-80gb")]
    monkeypatch.setattr(results, "recorded_run_dirs", lambda: folders)
    assert results.gpu_run_dirs() == folders[1:]  # cpu-<model>: the CPU's paper-setting store, chapter 04's own section
