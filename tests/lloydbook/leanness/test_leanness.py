"""lloydbook.leanness: the bookkeeping of the chapter "What leanness buys" (book/03_leanness.ipynb)."""

import json
from pathlib import Path

import pytest
import torch

from lloydbook import book
from lloydbook import leanness as lean
from lloydbook.scales import SCALES, params
from lloydlib.bench.timing import min_reps

ROOT = Path(__file__).resolve().parents[3]


def _row(k, oh, bn, mem=(100, 90), mem_na=(50, 40), d=32):
    """A row of lloydlib.bench.grid with the given per-repetition times (ms) for every pass."""
    side = lambda t, m, na: {  # noqa: E731
        "samples": {p: list(t) for p in lean.PASSES},
        "memory_bytes": m,
        "memory_bytes_no_attention": na,
        **{p: {"median_ms": sorted(t)[len(t) // 2]} for p in lean.PASSES},
    }
    return {"d": d, "k": k, "OH": side(oh, mem[0], mem_na[0]), "BN": side(bn, mem[1], mem_na[1])}


def test_the_paper_table_is_consistent():
    for k, v in lean.PAPER_T1.items():
        for col in ("fwd", "bwd"):
            oh, bn, s = v[col]
            assert oh / bn == pytest.approx(s, abs=0.01), (k, col)
        oh, bn, red = v["mem"]
        assert 100 * (1 - bn / oh) == pytest.approx(red, abs=0.05), k


@pytest.mark.parametrize("scale", book.SCALE_NAMES)
def test_every_scale_has_enough_repetitions_for_its_intervals(scale):
    P = book.params("leanness", scale)
    alpha = lean.chapter_alpha(P)
    assert alpha == lean.FALSE_FAILURE / lean.n_intervals(P)
    assert P["grid_reps"] >= min_reps(alpha)
    assert min(P["table1_reps"], P["step_reps"]) >= min_reps(alpha, lean.OUTLIERS)


def test_chapter_alpha_refuses_too_few_repetitions():
    P = book.Params(SCALES["leanness"]["ci"] | {"grid_reps": 5})
    with pytest.raises(ValueError, match="grid_reps must be >= 17"):
        lean.chapter_alpha(P)


def test_speedup_is_the_median_paired_ratio_with_its_interval():
    oh = [10.0 * (1 + 0.01 * i) for i in range(20)]
    row = _row(100, oh, [t / 2 for t in oh])
    s = lean.speedup(row, "forward", 1e-3)
    assert s == (2.0, 2.0, 2.0) and str(s) == "2.00x [2.00, 2.00]"
    assert lean.gain(row, "forward") == pytest.approx(50.0)
    assert lean.mem_reduction(row) == pytest.approx(10.0)
    assert lean.mem_reduction(row, "no_attention") == pytest.approx(20.0) == lean.gain(row, "memory")
    del row["OH"]["memory_bytes_no_attention"]
    assert lean.mem_reduction(row, "no_attention") is None and lean.gain(row, "memory") == pytest.approx(10.0)


def test_bands_and_judgements():
    assert lean.band(0.88, "speedup") == (0.44, 1.0)  # BN slower, as the paper measures at k = 6
    assert lean.band(1.05, "speedup") == (1.0, 2.1)
    assert lean.band(12.0, "speedup") == (6.0, 24.0)
    assert lean.band(69.3, "memory") == (34.65, 100.0)
    assert lean.judge((7.0, 20.0), (6.0, 24.0)) == "inside"
    assert lean.judge((20.0, 30.0), (6.0, 24.0)) == "overlapping"
    assert lean.judge((0.95, 1.05), (0.44, 1.0)) == "overlapping"
    assert lean.judge((1.01, 1.05), (0.44, 1.0)) == "outside"
    assert lean.judge((25.0, 30.0), (6.0, 24.0)) == "outside"


def _table(speedups):
    """Rows {k: row} with constant speed-ups per k (20 repetitions)."""
    return {k: _row(k, [10.0] * 20, [10.0 / s] * 20) for k, s in speedups.items()}


def test_table1_cells_and_the_verdict_rule():
    paper = {k: v["fwd"][2] for k, v in lean.PAPER_T1.items()}
    rows = _table(paper)
    cells = lean.table1_cells(rows, "forward", 1e-3)
    assert [c["status"] for c in cells] == ["inside"] * 5
    assert lean.evidence(cells, "reproduced") and not lean.evidence(cells, "partly")
    rows = _table(paper | {6: 1.1})  # BN faster at k = 6, against the paper
    cells = lean.table1_cells(rows, "forward", 1e-3)
    assert cells[0]["status"] == "outside" and lean.evidence(cells, "partly")
    assert not lean.evidence(cells, "reproduced") and not lean.evidence(cells, "not reproduced")
    rows = _table(paper | {1000: 30.0})  # beyond twice the paper's at k = 1000
    assert lean.evidence(lean.table1_cells(rows, "forward", 1e-3), "not reproduced")
    noisy = {k: _row(k, [10.0] * 20, [10.0 / s] * 10 + [10.0 / (3 * s)] * 10) for k, s in paper.items()}
    cells = lean.table1_cells(noisy, "forward", 1e-3)  # intervals [s, 3s]: overlapping at k >= 100
    assert {c["status"] for c in cells if c["k"] >= 100} == {"overlapping"} and lean.evidence(cells, "partly")
    mem = lean.table1_cells(rows, "memory", accounting="full")
    assert all(c["interval"] == pytest.approx((10.0, 10.0)) for c in mem)
    assert [c["status"] for c in mem] == ["outside", "outside", "inside", "outside", "outside"]
    with pytest.raises(ValueError, match="verdict must be one of"):
        lean.evidence(mem, "beyond the paper")
    assert lean.cells_text(mem[:1]) == "k=6: 10.0% outside"


def _repeat(speedups, hw="AMD EPYC", **config):
    """A result of lloydlib.bench.grid at d = 32 with constant speed-ups {k: s}, as the repeats record it."""
    rows = [_row(k, [10.0] * 20, [10.0 / s] * 20) for k, s in speedups.items()]
    config = {"impl": "reference", "clock": "cpu", "n": 1024, "batch": 1, "ds": [32]} | config
    return {"benchmark": "table1", "hardware": {"device": "cpu", "cpu": hw}, "config": config, "rows": rows}


def test_the_drift_between_builds_widens_a_cells_interval():
    paper = {k: v["fwd"][2] for k, v in lean.PAPER_T1.items()}
    edge = 2 * paper[1000]
    repeats = [_repeat(paper | {1000: edge - 0.2}), _repeat(paper | {1000: edge + 0.3})]
    drift = lean.build_drift(repeats, "forward")
    assert drift[1000] == pytest.approx((edge + 0.3) / (edge - 0.2)) and drift[6] == pytest.approx(1.0)
    assert lean.build_drift(repeats[:1], "forward") == {} and lean.build_drift([], "backward") == {}
    rows = _table(paper | {1000: edge + 0.3})  # a build whose median lies just beyond the edge
    bare, wide = (lean.table1_cells(rows, "forward", 1e-3, drift=d) for d in (None, drift))
    assert bare[-1]["status"] == "outside" and lean.evidence(bare, "not reproduced")
    assert wide[-1]["status"] == "overlapping" and lean.evidence(wide, "partly")
    assert wide[-1]["interval"] == pytest.approx(((edge + 0.3) / drift[1000], (edge + 0.3) * drift[1000]))
    lo, hi = wide[-1]["interval"]
    text = f"widened by 2.1% for the drift between builds to [{lo:.2f}, {hi:.2f}]: overlapping"
    assert text in lean.cells_text(wide[-1:])
    with pytest.raises(ValueError, match="metric must be 'forward' or 'backward'"):
        lean.build_drift(repeats, "memory")
    with pytest.raises(TypeError, match=r"repeats\[0\] must be a result of lloydlib.bench.grid, got list"):
        lean.build_drift([[1]], "forward")
    with pytest.raises(ValueError, match="drift must be empty for memory"):
        lean.table1_cells(rows, "memory", drift=drift)


def test_cpu_repeats_are_those_made_as_this_build_measures():
    P = params("leanness", "ci")
    mine, other_cpu, other_n = _repeat({6: 1.0}), _repeat({6: 1.0}, hw="Intel"), _repeat({6: 1.0}, n=512)
    assert lean.cpu_repeats([mine, other_cpu, other_n], P, {"cpu": "AMD EPYC"}) == [mine]
    assert lean.cpu_repeats([mine], P, {"cpu": "AMD EPYC", "gpu": "H100"}) == []
    low, high = _repeat({1000: 24.0}), _repeat({1000: 24.5})
    values = lean.drift_values([low, high])
    assert values["t1-nrepeats"] == 2 and values["t1-drift-k1000"] == pytest.approx(100 * (24.5 / 24.0 - 1))
    assert values["t1-drift-note"] == (
        "Across them the median forward speed-up at k = 1000 ranged from 24.00 to 24.50 (median 24.25), "
        "on both sides of the band's upper edge 24.28, 2 times the paper's 12.14."
    )
    assert "all below" in lean.drift_values([low, low])["t1-drift-note"]
    none = lean.drift_values([])
    assert none["t1-drift-k1000"] == 0.0 and none["t1-drift-note"].startswith("No recorded repeat matches")
    assert list(lean.repeat_medians([low, high], "forward")[1000]) == pytest.approx([24.0, 24.5])
    cells = lean.table1_cells(_table({6: 1.0, 1000: 30.0}), "forward", 1e-3)
    assert lean.band_phrase(cells, 1000) == "beyond the factor of 2 of the paper's 12.14"
    with pytest.raises(ValueError, match=r"k must be one of the cells' \[6, 1000\], got 25"):
        lean.band_phrase(cells, 25)


def test_fig1_memory_cells_use_the_paper_rounding():
    rows = [_row(10, [1.0], [1.0], mem_na=(1000, 1000 - g), d=d) for d, g in ((4, 4), (8, 150), (16, 155))]
    cells = lean.fig1_memory_cells(rows)
    assert [c["within"] for c in cells] == [False, True, False]  # 0.4%, 15%, 15.5%: [0.5, 15.5)
    assert [c["within"] for c in lean.fig1_memory_cells(rows, "full")] == [True] * 3  # 10% each


def test_large_k_and_growth():
    t1 = {i: _table({6: 1.0, 25: 1.1, 100: 2.0, 400: 4.0, 1000: 10.0}) for i in lean.IMPLS}
    grid = {i: [_row(10, [1.0] * 20, [1.0] * 20, d=4), _row(100, [1.5] * 20, [1.0] * 20, d=4)] for i in lean.IMPLS}
    worst, big = lean.large_k(t1, grid, [6, 25, 100, 400, 1000], 1e-3)
    assert len(big) == 2 * (1 + 3) * 3 and worst[3].hi == 1.5
    failures, summary = lean.growth_failures(t1, grid, [6, 25, 100, 400, 1000], [4], [10, 100], 1e-3)
    assert failures == [] and summary[0] == "1.00x to 10.00x (reference form)"
    t1["lloydlib"][25] = _row(25, [10.0] * 20, [20.0] * 20)  # falls from 1.0 to 0.5
    failures, _ = lean.growth_failures(t1, grid, [6, 25, 100, 400, 1000], [4], [10, 100], 1e-3)
    assert failures and all(f.startswith("lloydlib") for f in failures)


def test_step_speedup_pairs_the_repetitions():
    wall = {"reference": [4.0 + i for i in range(20)], "lloydlib": [2.0 + i / 2 for i in range(20)]}
    ts = {"samples_ms": wall, "cpu_samples_ms": {"reference": [3.0] * 20, "lloydlib": [1.0] * 20}}
    assert lean.step_speedup(ts, 1e-3, "wall") == (2.0, 2.0, 2.0)
    assert lean.step_speedup(ts, 1e-3) == (3.0, 3.0, 3.0)


def test_the_recorded_gpu_results_bear_out_the_chapter_verdicts():
    # the chapter's "partly" for every row of Table 1 recorded on the GPU (a fixed file, so exact here)
    path = ROOT / "results" / "table1_h200_reference.json"
    rows = lean.rows_by_k(json.loads(path.read_text()))
    for m in ("forward", "backward", "memory"):
        assert lean.evidence(lean.table1_cells(rows, m, 1e-5, accounting="full"), "partly"), m


def test_measurement_values_are_what_the_text_quotes(monkeypatch):
    monkeypatch.setenv("LLOYD_SCALE", "ci")
    P = book.params("leanness")
    alpha = lean.chapter_alpha(P)
    values = lean.measurement_values(P, alpha)
    assert values == {
        "n": P.n,
        "n-intervals": lean.n_intervals(P),
        "min-reps": min_reps(alpha),
        "min-reps-robust": min_reps(alpha, lean.OUTLIERS),
    }
    assert values["min-reps-robust"] > values["min-reps"] and P.table1_reps >= values["min-reps-robust"]


def _step_result(compile_):
    return {
        "lloydlib_ms_per_step": 36.0,
        "reference_ms_per_step": 72.0,
        "lloydlib_cpu_ms_per_step": 30.0,
        "reference_cpu_ms_per_step": 90.0,
        "cpu_speedup": 3.0,
        "compile": compile_,
        "compile_warmup_seconds": 12.4 if compile_ else None,
    }


def test_step_values_name_every_number_of_the_text(monkeypatch):
    monkeypatch.setenv("LLOYD_SCALE", "ci")
    P = book.params("leanness")
    values = lean.step_values(_step_result(False), lean.Speedup(2.1, 1.5, 2.5), P)
    assert values == {
        "step-lloydlib-ms-per-step": 36.0,
        "step-reference-ms-per-step": 72.0,
        "step-lloydlib-cpu-ms-per-step": 30.0,
        "step-reference-cpu-ms-per-step": 90.0,
        "step-cpu-speedup": 3.0,
        "step-speedup": 2.1,
        "step-hours-reference": pytest.approx(0.2),  # 10,000 steps of 72 ms
        "step-hours-lloydlib": pytest.approx(0.1),
        "step-compile-note": "not compiled",
        "step-threads": P.step_threads,
        "step-batch": P.step_batch,
    }
    values = lean.step_values(_step_result(True), lean.Speedup(2.1, 1.5, 2.5), P)
    assert values["step-compile-note"] == "compiled (compilation took 12 s once, not counted)"


def test_step_values_count_torchs_threads_when_the_settings_leave_them():
    P = book.params("leanness", "paper")
    assert P.step_threads is None
    assert (
        lean.step_values(_step_result(True), lean.Speedup(1.0, 1.0, 1.0), P)["step-threads"] == torch.get_num_threads()
    )


def test_fast_vs_plain_draws_its_weights_from_the_seed_it_is_given():
    X, C = torch.rand(2, 12, 3, dtype=torch.float64), torch.rand(2, 4, 3, dtype=torch.float64)
    out, grad = lean.fast_vs_plain(X, C, "BN", seed=3)
    assert 0 <= out < 1e-9 and 0 <= grad < 1e-9  # the two forms agree to rounding
    assert lean.fast_vs_plain(X, C, "BN", seed=3) == (out, grad)  # seeded
    with pytest.raises(ValueError, match="seed"):
        lean.fast_vs_plain(X, C, "BN", seed=-1)
    with pytest.raises(TypeError, match="seed"):  # no default: the chapter names the draw (ch.seed)
        lean.fast_vs_plain(X, C, "BN")
