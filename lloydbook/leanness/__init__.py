"""The chapter "What leanness buys" (``book/03_leanness.ipynb``): the paper's numbers, BN's advantage over OH
with its interval, cells judged against the paper, Table 1, Figure 1 and the GPU results recorded under
``results/``; :mod:`.measure` (re-exported here) runs Figure 1's grid, the fast and plain forms and the training step.

A *row* is one entry of ``lloydlib.bench.grid(...)["rows"]``: ``d``, ``k`` and, per embedding, timing
summaries, samples and memory (see :func:`lloydlib.bench.measure_embeddings`).
"""

from __future__ import annotations

import statistics
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from matplotlib.colors import TwoSlopeNorm

from lloydlib.bench.timing import median_interval, min_reps, paired_ratios, ratio_interval
from lloydlib.bench.timing import torch_threads as torch_threads  # the chapter's, re-exported
from lloydlib.embeddings import code_dim

from .measure import (  # noqa: F401 (the measuring, re-exported)
    IMPLS,
    cpu_repeats,
    fast_vs_plain,
    figure1_grid,
    run_json,
    step_values,
    train_step_command,
)

#: Table 1 of the Leaner paper (RTX PRO 3000 Blackwell laptop GPU, n = 1024, 32 tasks, d = 32), per k:
#: extra dims OH/BN, forward and backward ms OH/BN and speed-up, memory MB OH/BN and reduction in %
PAPER_T1 = {
    6: dict(dims=(6, 3), fwd=(4.25, 4.83, 0.88), bwd=(9.53, 10.66, 0.89), mem=(419.93, 416.29, 0.9)),
    25: dict(dims=(25, 5), fwd=(5.24, 4.99, 1.05), bwd=(11.21, 11.01, 1.02), mem=(441.08, 423.23, 4.0)),
    100: dict(dims=(100, 7), fwd=(9.76, 4.52, 2.16), bwd=(20.21, 9.93, 2.03), mem=(532.96, 447.04, 16.1)),
    400: dict(dims=(400, 9), fwd=(38.68, 7.89, 4.90), bwd=(66.13, 16.47, 4.02), mem=(1095.60, 531.02, 51.5)),
    1000: dict(dims=(1000, 10), fwd=(193.07, 15.90, 12.14), bwd=(308.28, 32.33, 9.54), mem=(3930.34, 1207.75, 69.3)),
}
#: Figure 1's memory gains: "BN shows gains across the board, ranging from +1-15%" (in %)
PAPER_FIG1_MEMORY = (1.0, 15.0)
#: the timed passes of a row of Figure 1's grid, and of Table 1 (which has no eval column)
PASSES = ("forward", "backward", "eval")
T1_PASSES = ("forward", "backward")
#: Figure 1's columns: metric -> title
METRICS = {"forward": "forward (train)", "backward": "backward", "memory": "memory", "eval": "forward (eval)"}
#: the chance that one build of the chapter fails a timing claim that holds (split over its intervals)
FALSE_FAILURE = 1e-3
#: wild samples on each side that the intervals of Table 1 and the step leave out (a positive claim
#: compares an interval's far end with a threshold, and [min, max] would let one wild sample fail it)
OUTLIERS = 2
#: a cell of Table 1 agrees with the paper when our value can lie within this factor of the paper's
BAND = 2.0
#: the columns of Table 1 that must agree for the verdict "partly" (all of them for "reproduced")
PARTLY_KS = (100, 400, 1000)
_COL = {"forward": "fwd", "backward": "bwd", "memory": "mem"}
_PHRASE = {"inside": "within", "overlapping": "at the edge of", "outside": "beyond"}


class Speedup(NamedTuple):
    """BN's speed-up over OH: the median of the per-repetition ratios t_OH / t_BN and its interval."""

    median: float
    lo: float
    hi: float

    def __str__(self):
        return f"{self.median:.2f}x [{self.lo:.2f}, {self.hi:.2f}]"


def _median_interval(samples, alpha):
    """(median, lo, hi) of ``samples``, the interval at level 1 - ``alpha``."""
    return (statistics.median(samples), *median_interval(samples, alpha))


def _ratios(row, metric):
    return paired_ratios(row["OH"]["samples"][metric], row["BN"]["samples"][metric])


def n_intervals(P):
    """How many intervals the chapter's timing claims examine at settings ``P``: every Table 1 cell
    (k, pass, form), OH's two forms at the largest k (two a pass: one ratio interval is taken, so the
    count is conservative), the grid's smallest and largest k in every row d (pass, form), the step."""
    table1 = (len(P.table1_ks) + 1) * len(T1_PASSES) * len(IMPLS)
    return table1 + len(P.grid_ds) * 2 * len(PASSES) * len(IMPLS) + 1


def chapter_alpha(P):
    """The level of every interval: :data:`FALSE_FAILURE` / :func:`n_intervals` (Bonferroni). Raises ValueError
    when a setting of ``P`` has fewer repetitions than such an interval needs (:func:`min_reps`; for Table 1 and
    the step, on which claims that an effect exists rest, leaving out :data:`OUTLIERS` on each side)."""
    alpha = FALSE_FAILURE / n_intervals(P)
    for name in ("table1_reps", "grid_reps", "step_reps"):
        need = min_reps(alpha, 0 if name == "grid_reps" else OUTLIERS)
        if P[name] < need:
            raise ValueError(f"{name} must be >= {need} for intervals at alpha={alpha:.2g}, got {P[name]}")
    return alpha


def measurement_values(P, alpha):
    """The numbers the section on measuring quotes: ``n``, ``n-intervals`` and the repetitions an interval at
    level 1 - ``alpha`` needs, ``min-reps`` and ``min-reps-robust`` (leaving out :data:`OUTLIERS` on each side)."""
    return {
        "n": P.n,
        "n-intervals": n_intervals(P),
        "min-reps": min_reps(alpha),
        "min-reps-robust": min_reps(alpha, OUTLIERS),
    }


def speedup(row, metric, alpha):
    """BN's speed-up over OH in ``metric`` (a pass): :class:`Speedup` of the paired ratios, interval at
    level 1 - ``alpha``."""
    return Speedup(*_median_interval(_ratios(row, metric), alpha))


def time_ms(row, embedding, metric, alpha):
    """The median time of one embedding's pass in a row, in ms, with its interval at level 1 - ``alpha``:
    (median, lo, hi)."""
    return _median_interval(row[embedding]["samples"][metric], alpha)


def form_ratio(T1, k, embedding, metric, alpha):
    """How many times longer ``embedding``'s pass takes in the reference form than in lloydlib's at k, from
    Table 1's rows ``T1`` {impl: {k: row}}: :class:`Speedup` (estimate, lo, hi) of ``ratio_interval``."""
    s = {impl: T1[impl][k][embedding]["samples"][metric] for impl in IMPLS}
    return Speedup(*ratio_interval(s["reference"], s["lloydlib"], alpha))


def mem_reduction(row, accounting="full"):
    """Memory saved by BN, in % of OH's, in the ``accounting`` "full" or "no_attention" (without the
    n x n attention matrices, Figure 1's); None when the row has no such measurement."""
    key = {"full": "memory_bytes", "no_attention": "memory_bytes_no_attention"}[accounting]
    oh, bn = row["OH"].get(key), row["BN"].get(key)
    return None if oh is None or bn is None else 100.0 * (1.0 - bn / oh)


def gain(row, metric):
    """Figure 1's quantity: BN's gain over OH in %, 100 (1 - t_BN / t_OH) of the median paired ratio, or
    the memory reduction (without the attention matrices where measured, else the full accounting)."""
    if metric == "memory":
        red = mem_reduction(row, "no_attention")
        return mem_reduction(row) if red is None else red
    return 100.0 * (1.0 - 1.0 / statistics.median(_ratios(row, metric)))


def band(paper, kind):
    """The values that agree with the paper's ``paper``, as (lo, hi). ``kind`` "speedup": within a factor
    :data:`BAND` of it and on its side of 1 (BN slower for a paper's value below 1, faster above);
    "memory": within a factor :data:`BAND` of its reduction in % (at most 100)."""
    lo, hi = paper / BAND, paper * BAND
    if kind == "memory":
        return lo, min(hi, 100.0)
    return (lo, 1.0) if paper < 1 else (max(lo, 1.0), hi)


def judge(interval, bnd):
    """Where an interval (lo, hi) of our value lies against a band (lo, hi): "inside" it, "overlapping"
    it, or "outside" it (the interval misses the band: our value disagrees beyond noise)."""
    lo, hi = interval
    if hi < bnd[0] or lo > bnd[1]:
        return "outside"
    return "inside" if bnd[0] <= lo and hi <= bnd[1] else "overlapping"


def table1_cells(rows, metric, alpha=None, accounting="no_attention", drift=None):
    """Table 1's cells of ``metric`` ("forward", "backward" or "memory") judged against the paper, for
    rows {k: row} (the ks of :data:`PAPER_T1` present): [{k, paper, ours, interval, band, status, drift}]. A
    speed-up's interval is at level 1 - ``alpha``, widened by the factor ``drift[k]`` on either side (of
    :func:`build_drift`; 1 without it); a memory reduction (``accounting``) is exact, its interval a point."""
    drift = drift or {}
    if metric == "memory" and drift:
        raise ValueError(f"drift must be empty for memory, which is exact, got {drift!r}")
    cells = []
    for k in sorted(set(rows) & set(PAPER_T1)):
        paper = PAPER_T1[k][_COL[metric]][2]
        f = drift.get(k, 1.0)
        if metric == "memory":
            ours = mem_reduction(rows[k], accounting)
            interval = (ours, ours)
        else:
            ours = speedup(rows[k], metric, alpha)
            interval = (ours.lo / f, ours.hi * f)
        bnd = band(paper, "memory" if metric == "memory" else "speedup")
        status = judge(interval, bnd)
        cells.append(dict(k=k, paper=paper, ours=ours, interval=interval, band=bnd, status=status, drift=f))
    return cells


def evidence(cells, verdict):
    """Whether Table 1's ``cells`` (of :func:`table1_cells`) bear out ``verdict``, by the chapter's rule: a
    cell agrees when its interval lies inside its band and disagrees when it misses it. "reproduced" needs
    every cell to agree; "partly" no cell of :data:`PARTLY_KS` to disagree and some cell not to agree;
    "not reproduced" some cell of :data:`PARTLY_KS` to disagree."""
    status = {c["k"]: c["status"] for c in cells}
    big = all(status[k] != "outside" for k in PARTLY_KS)
    every = all(s == "inside" for s in status.values())
    rules = {"reproduced": every, "partly": big and not every, "not reproduced": not big}
    if verdict not in rules:
        raise ValueError(f"verdict must be one of {list(rules)}, got {verdict!r}")
    return rules[verdict]


def table1_row(metric, what, cells, measured):
    """A Table 1 row's fields (statement, source, paper, ours) for ``metric`` ("forward", "backward", "memory"
    or "memory-full"), ``what`` naming the pass or accounting, from its ``cells`` (:func:`table1_cells`);
    ``measured`` says how ours was measured (form, clock or hardware)."""
    col = _COL["memory" if metric.startswith("memory") else metric]
    return dict(
        statement=f"Table 1 at $d = 32$, {what}: BN's gain over OH agrees with the paper's within a factor of "
        "two at every $k$",
        source="Leaner paper, Table 1",
        paper=", ".join(f"k={k}: {PAPER_T1[k][col][2]}{'%' if col == 'mem' else 'x'}" for k in PAPER_T1) + " (GPU)",
        ours=cells_text(cells) + "; " + measured,
    )


def band_phrase(cells, k):
    """Where the cell at ``k`` of ``cells`` (:func:`table1_cells`, a pass) lies against its band, for the
    text: "within", "at the edge of" or "beyond" the factor of :data:`BAND` of the paper's value."""
    by_k = {c["k"]: c for c in cells}
    if k not in by_k:
        raise ValueError(f"k must be one of the cells' {sorted(by_k)}, got {k!r}")
    return f"{_PHRASE[by_k[k]['status']]} the factor of {BAND:g} of the paper's {by_k[k]['paper']}"


def rows_by_k(result):
    """The rows of a Table 1 result (``bench.grid`` over one d) as {k: row}."""
    return {r["k"]: r for r in result["rows"]}


def repeat_medians(repeats, metric):
    """The median speed-up of each cell of Table 1 in every one of ``repeats`` (results of
    ``lloydlib.bench.grid`` at d = 32, the same measurement made again and again) in ``metric``
    ("forward" or "backward"): {k: [median, one per repeat]}."""
    if metric not in ("forward", "backward"):
        raise ValueError(f"metric must be 'forward' or 'backward' (memory is exact), got {metric!r}")
    medians = {}
    for i, result in enumerate(repeats):
        if not isinstance(result, dict) or "rows" not in result:
            raise TypeError(f"repeats[{i}] must be a result of lloydlib.bench.grid, got {type(result).__name__}")
        for k, row in rows_by_k(result).items():
            if k in PAPER_T1:
                medians.setdefault(k, []).append(statistics.median(_ratios(row, metric)))
    return dict(sorted(medians.items()))


def build_drift(repeats, metric):
    """How far the median speed-up of each cell of Table 1 moves from one build to the next (one build's
    interval covers the noise of its own repetitions, not this drift): {k: highest / lowest median over the
    ``repeats`` of :func:`repeat_medians`} in ``metric``; {} for fewer than two repeats."""
    return {k: max(m) / min(m) for k, m in repeat_medians(repeats, metric).items() if len(m) > 1}


def drift_values(repeats):
    """The glue values of the text on the drift between builds, from the ``repeats`` of :func:`cpu_repeats`:
    ``t1-nrepeats``, ``t1-drift-k1000`` (the forward widening in % at k = 1000, of :func:`build_drift`; 0
    without repeats) and ``t1-drift-note``, a sentence on where the repeats put that speed-up."""
    medians = repeat_medians(repeats, "forward").get(1000, [])
    drift = build_drift(repeats, "forward").get(1000, 1.0)
    if len(medians) > 1:
        lo, hi, edge = min(medians), max(medians), band(PAPER_T1[1000]["fwd"][2], "speedup")[1]
        side = "on both sides of" if lo < edge < hi else "all below" if hi < edge else "all above"
        note = (
            f"Across them the median forward speed-up at k = 1000 ranged from {lo:.2f} to {hi:.2f} "
            f"(median {statistics.median(medians):.2f}), {side} the band's upper edge "
            f"{edge:.2f}, {BAND:g} times the paper's {PAPER_T1[1000]['fwd'][2]}."
        )
    else:
        note = "No recorded repeat matches this build's machine and settings, so its own intervals stand."
    return {"t1-nrepeats": len(repeats), "t1-drift-k1000": 100 * (drift - 1), "t1-drift-note": note}


def fig1_memory_cells(rows, accounting="no_attention"):
    """Figure 1's memory gains cell by cell against the paper's range :data:`PAPER_FIG1_MEMORY` (rounded
    to whole percent, as the paper states it: [0.5, 15.5)): [{d, k, ours, within}]."""
    lo, hi = PAPER_FIG1_MEMORY[0] - 0.5, PAPER_FIG1_MEMORY[1] + 0.5
    reductions = [(r, mem_reduction(r, accounting)) for r in rows]
    return [dict(d=r["d"], k=r["k"], ours=red, within=red is not None and lo <= red < hi) for r, red in reductions]


def cells_text(cells):
    """One line for a claim's "ours": k, our value (and the widening of its interval for the drift between
    builds, where there is one) and the cell's status, per cell."""
    parts = []
    for c in cells:
        value = f"{c['ours']:.1f}%" if isinstance(c["ours"], float) else str(c["ours"])
        if c.get("drift", 1.0) > 1.0:
            lo, hi = c["interval"]
            value += f", widened by {100 * (c['drift'] - 1):.1f}% for the drift between builds to [{lo:.2f}, {hi:.2f}]:"
        parts.append(f"k={c['k']}: {value} {c['status']}")
    return "; ".join(parts)


def dims_table(ks):
    """Extra token dimensions of OH and BN for each k, ours and the paper's: ({k: (OH, BN)}, Markdown)."""
    dims = {k: (code_dim(k, "OH"), code_dim(k, "BN")) for k in ks}
    paper = {k: "{} / {}".format(*PAPER_T1[k]["dims"]) if k in PAPER_T1 else "" for k in ks}
    lines = [f"| {k} | {dims[k][0]} / {dims[k][1]} | {paper[k]} |" for k in ks]
    return dims, Markdown("| k | extra dims OH / BN (ours) | paper (Table 1) |\n|---|---|---|\n" + "\n".join(lines))


def table1(tables, ks, unit, alpha):
    """Table 1 as markdown: per k, one line per form (tables: {form name: {k: row}}), then the paper's.
    Speed-ups are medians of paired ratios with their intervals at level 1 - ``alpha``; memory in MB and
    BN's reduction, in full and (where measured) without the attention matrices."""
    passes = [m for m in PASSES if m in next(iter(next(iter(tables.values())).values()))["OH"]["samples"]]
    head = "| k | | " + " | ".join(f"{m} OH / BN {unit} | speed-up" for m in passes)
    head += " | memory OH / BN MB | reduction | without attention |\n" + "|---" * (5 + 2 * len(passes)) + "|\n"
    lines = []
    for k in ks:
        for name, rows in tables.items():
            row = rows[k]
            cells = [f"{k}", name]
            for m in passes:
                cells += [
                    f"{row['OH'][m]['median_ms']:.1f} / {row['BN'][m]['median_ms']:.1f}",
                    str(speedup(row, m, alpha)),
                ]
            na = mem_reduction(row, "no_attention")
            cells += [
                f"{row['OH']['memory_bytes'] / 2**20:.1f} / {row['BN']['memory_bytes'] / 2**20:.1f}",
                f"{mem_reduction(row):.1f}%",
                "not recorded" if na is None else f"{na:.1f}%",
            ]
            lines.append("| " + " | ".join(cells) + " |")
        if k in PAPER_T1:
            p = PAPER_T1[k]
            cells = [f"{k}", "*paper (GPU)*"]
            for m in passes:
                cells += [f"{p[_COL[m]][0]} / {p[_COL[m]][1]}", f"{p[_COL[m]][2]:.2f}x"] if m in _COL else ["", ""]
            cells += [f"{p['mem'][0]} / {p['mem'][1]}", f"{p['mem'][2]}%", ""]
            lines.append("| " + " | ".join(cells) + " |")
    return Markdown(head + "\n".join(lines))


def heatmaps(grids, ds, ks, title):
    """Figure 1: BN's gain over OH in % for each metric (columns) and each grid (rows; {label: rows})."""
    fig, axes = plt.subplots(len(grids), len(METRICS), figsize=(4.2 * len(METRICS), 3.6 * len(grids)), squeeze=False)
    for i, (label, rows) in enumerate(grids.items()):
        by = {(r["d"], r["k"]): r for r in rows}
        for j, (metric, name) in enumerate(METRICS.items()):
            G = np.array([[gain(by[d, k], metric) for k in ks] for d in ds])
            lim = max(1.0, float(np.abs(G).max()))
            ax = axes[i, j]
            ax.imshow(G, cmap="RdYlGn", norm=TwoSlopeNorm(0.0, -lim, lim), origin="lower", aspect="auto")
            for (a, b), g in np.ndenumerate(G):
                ax.text(b, a, f"{g:.0f}", ha="center", va="center", fontsize=8)
            ax.set(xticks=range(len(ks)), xticklabels=ks, xlabel="$k$")
            ax.set(yticks=range(len(ds)), yticklabels=ds, ylabel="$d$")
            ax.set_title(f"{label}: {name}", fontsize=10)
    fig.suptitle(title, y=1.01)
    fig.tight_layout()
    plt.show()


def large_k(table1_rows, grid_rows, ks, alpha):
    """Every speed-up with k >= 100 over both forms, Figure 1's grid and Table 1's ``ks``, as
    (impl, row, pass, :class:`Speedup`): (the one whose interval reaches highest below 1 first, i.e. the
    smallest upper end, all of them)."""
    big = []
    for impl in IMPLS:
        for r in list(grid_rows[impl]) + [table1_rows[impl][k] for k in ks]:
            if r["k"] >= 100:
                big += [(impl, r, m, speedup(r, m, alpha)) for m in PASSES if m in r["OH"]["samples"]]
    return min(big, key=lambda t: t[3].hi), big


def growth_failures(table1_rows, grid_rows, table1_ks, grid_ds, grid_ks, alpha):
    """Where BN's speed-up falls with k beyond noise, per form and pass (intervals at level 1 - ``alpha``):
    along Table 1 an interval wholly below the previous k's, a last k whose interval does not lie wholly
    above the first k's, and in a row d of the grid an interval at the largest k wholly below that at the
    smallest. Returns (failures as text, Table 1's forward speed-ups per form as text)."""
    failures, summary = [], []
    for impl in IMPLS:
        for m in PASSES:
            if m in table1_rows[impl][table1_ks[0]]["OH"]["samples"]:
                s = [speedup(table1_rows[impl][k], m, alpha) for k in table1_ks]
                for (k1, a), (k2, b) in zip(zip(table1_ks, s), zip(table1_ks[1:], s[1:])):
                    if b.hi < a.lo:
                        failures.append(f"{impl} {m}: k={k1} {a} above k={k2} {b}")
                if not s[-1].lo > s[0].hi:
                    failures.append(f"{impl} {m}: k={table1_ks[-1]} {s[-1]} not above k={table1_ks[0]} {s[0]}")
                if m == "forward":
                    summary.append(f"{s[0].median:.2f}x to {s[-1].median:.2f}x ({IMPLS[impl]})")
            by = {(r["d"], r["k"]): r for r in grid_rows[impl]}
            for d in grid_ds:
                lo, hi = speedup(by[d, min(grid_ks)], m, alpha), speedup(by[d, max(grid_ks)], m, alpha)
                if hi.hi < lo.lo:
                    failures.append(f"{impl} {m}: d={d} k={max(grid_ks)} {hi} below k={min(grid_ks)} {lo}")
    return failures, summary


def step_speedup(result, alpha, clock="cpu"):
    """lloydlib's step against the reference form's in a ``bench train-step`` result: :class:`Speedup` of the
    ratios t_reference / t_lloydlib on ``clock`` ("cpu" time or "wall" clock), interval at level 1 - ``alpha``."""
    samples = result[{"cpu": "cpu_samples_ms", "wall": "samples_ms"}[clock]]
    return Speedup(*_median_interval(paired_ratios(samples["reference"], samples["lloydlib"]), alpha))


def gpu_values(t1, grid, steps, alpha):
    """Show the GPU results recorded under ``results/`` (``t1``: {impl: Table 1 result}, ``grid``: {impl: grid
    result}, ``steps``: train-step results; intervals at level 1 - ``alpha``) and return the values the text
    quotes: {key: value} for the keys "name", "grid-range", "grid-memory", "step" and
    "<fwd|bwd|mem|oh-fwd-ms>-<impl>" that were recorded (none unless Table 1 is recorded for both forms)."""
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
        title = (
            f"BN's gain over OH in % (memory: full accounting), {hw['gpu']}, n={cfg['n']}, {cfg['batch']} tasks, "
            f"median of {cfg['reps']} repetitions, wall clock"
        )
        heatmaps({"lloydlib on the GPU": grid_rows}, cfg["ds"], cfg["ks"], title)
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
