"""What leanness buys, the measurements: the numbers the text quotes on how it measures, the training step
(``python -m lloydlib bench train-step``) and the GPU results recorded under ``results/`` (see
:mod:`lloydbook.leanness`)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import torch
from IPython.display import display

from lloydlib.bench.timing import median_interval, min_reps, paired_ratios

from .core import (
    BAND,
    IMPLS,
    OUTLIERS,
    PAPER_T1,
    Speedup,
    band,
    gain,
    heatmaps,
    mem_reduction,
    n_intervals,
    repeat_medians,
    rows_by_k,
    speedup,
    table1,
)

__all__ = [
    "measurement_values",
    "step_values",
    "step_speedup",
    "train_step_command",
    "run_json",
    "gpu_values",
    "cpu_repeats",
    "drift_values",
    "band_phrase",
]

_PHRASE = {"inside": "within", "overlapping": "at the edge of", "outside": "beyond"}


def measurement_values(P, alpha):
    """The numbers the chapter's section on measuring quotes, at settings ``P`` and level 1 - ``alpha``:
    ``n`` (points per task), ``n-intervals`` (:func:`n_intervals`), ``min-reps`` (the repetitions an
    interval needs, :func:`lloydlib.bench.timing.min_reps`) and ``min-reps-robust`` (the same leaving
    out :data:`OUTLIERS` wild samples on each side)."""
    return {
        "n": P.n,
        "n-intervals": n_intervals(P),
        "min-reps": min_reps(alpha),
        "min-reps-robust": min_reps(alpha, OUTLIERS),
    }


def step_values(result, wall, P):
    """The numbers the chapter's text quotes about a ``bench train-step`` ``result`` (settings ``P``):
    its milliseconds per step (wall clock and CPU time, both forms) and ``cpu-speedup`` under the names
    ``step-<key with - for _>``; ``step-speedup``, the median of ``wall`` (:func:`step_speedup` on the
    wall clock); ``step-hours-<form>``, the hours the paper's 10,000 steps take at that rate;
    ``step-compile-note``; ``step-threads`` (torch threads, torch's choice when ``P.step_threads`` is
    None) and ``step-batch``."""
    keys = ("lloydlib_ms_per_step", "reference_ms_per_step", "lloydlib_cpu_ms_per_step", "reference_cpu_ms_per_step")
    out = {f"step-{key.replace('_', '-')}": result[key] for key in (*keys, "cpu_speedup")}
    out["step-speedup"] = wall.median
    for form in IMPLS:
        out[f"step-hours-{form}"] = result[f"{form}_ms_per_step"] * 1e4 / 3.6e6
    if result["compile"]:
        out["step-compile-note"] = (
            f"compiled (compilation took {result['compile_warmup_seconds']:.0f} s once, not counted)"
        )
    else:
        out["step-compile-note"] = "not compiled"
    out["step-threads"] = P.step_threads or torch.get_num_threads()
    out["step-batch"] = P.step_batch
    return out


def step_speedup(result, alpha, clock="cpu"):
    """lloydlib's step against the reference form's in a ``bench train-step`` result: :class:`Speedup` of
    the paired ratios t_reference / t_lloydlib on ``clock`` ("cpu": process CPU time, "wall": wall clock),
    interval at level 1 - ``alpha``."""
    key = {"cpu": "cpu_samples_ms", "wall": "samples_ms"}[clock]
    r = paired_ratios(result[key]["reference"], result[key]["lloydlib"])
    return Speedup(statistics.median(r), *median_interval(r, alpha))


def train_step_command(P, device):
    """The ``python -m lloydlib bench train-step --json`` command of the chapter's settings ``P``."""
    cmd = [sys.executable, "-m", "lloydlib", "bench", "train-step", "--json", "--embedding", "BN"]
    cmd += ["--n", str(P.step_n), "--d", "32", "--k", "10", "--batch", str(P.step_batch)]
    cmd += ["--warmup", str(P.step_warmup), "--reps", str(P.step_reps), "--device", str(device)]
    cmd += ["--compile" if P.step_compile else "--no-compile"]
    if P.step_threads:
        cmd += ["--threads", str(P.step_threads)]
    return cmd


def run_json(cmd):
    """Run ``cmd`` in a fresh process and return the JSON object it prints."""
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def gpu_values(t1, grid, steps, alpha):
    """Show the GPU results recorded under ``results/`` and return the values the chapter's text quotes.

    ``t1``: {impl: Table 1 result}, ``grid``: {impl: grid result}, ``steps``: train-step results; speed-up
    intervals at level 1 - ``alpha``. Returns {key: value} for the keys "name", "grid-range",
    "grid-memory", "step" and "<fwd|bwd|mem|oh-fwd-ms>-<impl>" that were recorded (all of them when
    Table 1 is recorded for both forms), after printing where they come from and displaying Table 1 and
    the grid's heat maps.
    """
    gv = {}
    if not t1 or not all(i in t1 for i in IMPLS):
        print("No GPU results of Table 1 for both forms are recorded under results/.")
        return gv
    hw = t1["lloydlib"]["hardware"]
    gv["name"] = f"{hw['gpu']} (CUDA {hw['cuda']}, torch {hw['torch']})"
    print(f"recorded on {gv['name']}: " + ", ".join(r["file"] for r in [*t1.values(), *grid.values(), *steps]))
    rows = {i: rows_by_k(t1[i]) for i in IMPLS}
    ks = t1["lloydlib"]["config"]["ks"]
    display(table1({IMPLS[i] + " (GPU)": rows[i] for i in IMPLS}, ks, "ms", alpha))
    for i in IMPLS:
        top = rows[i][max(ks)]
        gv[f"fwd-{i}"], gv[f"bwd-{i}"] = speedup(top, "forward", alpha).median, speedup(top, "backward", alpha).median
        gv[f"mem-{i}"], gv[f"oh-fwd-ms-{i}"] = mem_reduction(top), top["OH"]["forward"]["median_ms"]
    if "lloydlib" in grid:
        cfg, grid_rows = grid["lloydlib"]["config"], grid["lloydlib"]["rows"]
        heatmaps(
            {"lloydlib on the GPU": grid_rows}, cfg["ds"], cfg["ks"],
            f"BN's gain over OH in % (memory: full accounting), {hw['gpu']}, n={cfg['n']}, {cfg['batch']} tasks, "
            f"median of {cfg['reps']} repetitions, wall clock",
        )  # fmt: skip
        fwd = [gain(r, "forward") for r in grid_rows]
        gv["grid-range"] = f"{min(fwd):+.0f}% to {max(fwd):+.0f}%"
        mem = [mem_reduction(r) for r in grid_rows]
        gv["grid-memory"] = f"{min(mem):.1f}% to {max(mem):.1f}%"
    if steps:
        st = steps[0]
        gv["step"] = (
            f"{st['lloydlib_ms_per_step']:.1f} ms in lloydlib against {st['reference_ms_per_step']:.1f} ms "
            f"in the reference form ({st['paired_speedup']:.2f} times faster)"
        )
        print(
            f"training step (n={st['config']['n']}, d={st['config']['d']}, k={st['config']['k']}, BN): lloydlib "
            f"{st['lloydlib_ms_per_step']:.2f} ms, reference {st['reference_ms_per_step']:.2f} ms, "
            f"{st['paired_speedup']:.2f}x; compile warm-up {st['compile_warmup_seconds']:.0f} s"
        )
    return gv


def cpu_repeats(recorded, P, hw):
    """The recorded repeats of this chapter's CPU Table 1 measurement (``recorded``: results of
    ``lloydlib.bench.grid``, as ``scripts/record_table1_repeats.py`` writes them) made as this build makes
    it: the reference form on the CPU model ``hw["cpu"]`` (of ``lloydlib.hardware.probe``), by ``P``'s clock,
    n and batch, at d = 32. [] on a GPU or by the wall clock, where the build's own intervals decide."""
    if "gpu" in hw or P.clock != "cpu":
        return []
    want = {"impl": "reference", "clock": P.clock, "n": P.n, "batch": P.table1_batch, "ds": [32]}
    return [
        r
        for r in recorded
        if "gpu" not in r["hardware"]
        and r["hardware"].get("cpu") == hw["cpu"]
        and all(r["config"].get(key) == value for key, value in want.items())
    ]


def drift_values(repeats):
    """The glue values of the text on the drift between builds, from the recorded ``repeats`` that match this
    build (:func:`cpu_repeats`): ``t1-nrepeats``, ``t1-drift-k1000`` (the forward widening in % at k = 1000, of
    :func:`lloydbook.leanness.build_drift`; 0 without repeats) and ``t1-drift-note``, a sentence on where the
    repeats put the forward speed-up at k = 1000."""
    medians = repeat_medians(repeats, "forward").get(1000, [])
    if len(medians) > 1:
        edge = band(PAPER_T1[1000]["fwd"][2], "speedup")[1]
        side = (
            "on both sides of"
            if min(medians) < edge < max(medians)
            else "all below"
            if max(medians) < edge
            else "all above"
        )
        note = (
            f"Across them the median forward speed-up at k = 1000 ranged from {min(medians):.2f} to "
            f"{max(medians):.2f} (median {statistics.median(medians):.2f}), {side} the band's upper edge "
            f"{edge:.2f}, {BAND:g} times the paper's {PAPER_T1[1000]['fwd'][2]}."
        )
    else:
        note = "No recorded repeat matches this build's machine and settings, so its own intervals stand."
    drift = max(medians) / min(medians) if len(medians) > 1 else 1.0
    return {"t1-nrepeats": len(repeats), "t1-drift-k1000": 100 * (drift - 1), "t1-drift-note": note}


def band_phrase(cells, k):
    """Where the cell at ``k`` of ``cells`` (:func:`lloydbook.leanness.table1_cells`, a pass) lies against its
    band, for the text: "within", "at the edge of" or "beyond" the factor of
    :data:`lloydbook.leanness.BAND` of the paper's value."""
    by_k = {c["k"]: c for c in cells}
    if k not in by_k:
        raise ValueError(f"k must be one of the cells' {sorted(by_k)}, got {k!r}")
    return f"{_PHRASE[by_k[k]['status']]} the factor of {BAND:g} of the paper's {by_k[k]['paper']}"
