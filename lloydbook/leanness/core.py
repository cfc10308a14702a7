"""What leanness buys, the judging: the paper's numbers, BN's advantage with its interval, cells against
the paper, the tables and Figure 1 (see :mod:`lloydbook.leanness`)."""

from __future__ import annotations

import contextlib
import statistics
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown
from matplotlib.colors import TwoSlopeNorm

from lloydlib import bench
from lloydlib.bench.timing import median_interval, min_reps, paired_ratios, ratio_interval
from lloydlib.checks import check_int
from lloydlib.embeddings import code_dim
from lloydlib.model import LearnableTransformer

__all__ = ["PAPER_T1", "PAPER_FIG1_MEMORY", "IMPLS", "PASSES", "T1_PASSES", "METRICS", "FALSE_FAILURE", "OUTLIERS", "BAND",
           "PARTLY_KS", "Speedup", "torch_threads", "n_intervals", "chapter_alpha", "speedup", "time_ms", "form_ratio", "mem_reduction",
           "gain", "band", "judge", "table1_cells", "evidence", "table1_row", "rows_by_k", "repeat_medians", "build_drift", "fig1_memory_cells", "cells_text", "dims_table", "table1",
           "heatmaps", "figure1_grid", "fast_vs_plain", "large_k", "growth_failures"]  # fmt: skip

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
#: the two forms of the layer: implementation name -> how the chapter names it
IMPLS = {"reference": "reference form", "lloydlib": "lloydlib"}
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


class Speedup(NamedTuple):
    """BN's speed-up over OH: the median of the per-repetition ratios t_OH / t_BN and its interval."""

    median: float
    lo: float
    hi: float

    def __str__(self):
        return f"{self.median:.2f}x [{self.lo:.2f}, {self.hi:.2f}]"


@contextlib.contextmanager
def torch_threads(n):
    """Run a block with n torch threads (None: leave torch's choice)."""
    old = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def n_intervals(P):
    """How many intervals the chapter's timing claims examine at settings ``P``: every Table 1 cell
    (k, pass, form), OH's two forms at the largest k (two a pass: one ratio interval is taken, so the
    count is conservative), the grid's smallest and largest k in every row d (pass, form), the step."""
    table1 = (len(P.table1_ks) + 1) * len(T1_PASSES) * len(IMPLS)
    return table1 + len(P.grid_ds) * 2 * len(PASSES) * len(IMPLS) + 1


def chapter_alpha(P):
    """The level of every interval: :data:`FALSE_FAILURE` / :func:`n_intervals` (Bonferroni), so that a
    build fails a true claim with probability below :data:`FALSE_FAILURE`. Raises ValueError when a
    setting of ``P`` has fewer repetitions than such an interval needs
    (:func:`lloydlib.bench.timing.min_reps`): Table 1 and the training step, on which claims that an
    effect exists rest, enough to leave out :data:`OUTLIERS` wild samples on each side."""
    alpha = FALSE_FAILURE / n_intervals(P)
    for name in ("table1_reps", "grid_reps", "step_reps"):
        need = min_reps(alpha, 0 if name == "grid_reps" else OUTLIERS)
        if P[name] < need:
            raise ValueError(f"{name} must be >= {need} for intervals at alpha={alpha:.2g}, got {P[name]}")
    return alpha


def speedup(row, metric, alpha):
    """BN's speed-up over OH in ``metric`` (a pass): :class:`Speedup` of the paired ratios, interval at
    level 1 - ``alpha``."""
    r = _ratios(row, metric)
    return Speedup(statistics.median(r), *median_interval(r, alpha))


def _ratios(row, metric):
    return paired_ratios(row["OH"]["samples"][metric], row["BN"]["samples"][metric])


def time_ms(row, embedding, metric, alpha):
    """The median time of one embedding's pass in a row, in ms, with its interval at level 1 - ``alpha``:
    (median, lo, hi)."""
    t = row[embedding]["samples"][metric]
    return (statistics.median(t), *median_interval(t, alpha))


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
    r = paired_ratios(row["OH"]["samples"][metric], row["BN"]["samples"][metric])
    return 100.0 * (1.0 - 1.0 / statistics.median(r))


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
    :func:`build_drift`: how far the median moves from one build to the next; 1 without it); a memory
    reduction (``accounting``) is exact, its interval a point."""
    drift = {} if drift is None else drift
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


def rows_by_k(result):
    """The rows of a Table 1 result (``bench.grid`` over one d) as {k: row}."""
    return {r["k"]: r for r in result["rows"]}


def repeat_medians(repeats, metric):
    """The median speed-up of each cell of Table 1 in every one of ``repeats``: the same measurement made again
    and again (results of ``lloydlib.bench.grid`` at d = 32, as ``scripts/record_table1_repeats.py`` records
    them), in ``metric`` ("forward" or "backward"): {k: [median, one per repeat]}."""
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
    """How far the median speed-up of each cell of Table 1 moves from one build to the next, from the
    ``repeats`` of :func:`repeat_medians`. One build's interval covers the noise of its own repetitions, not
    this drift, which can carry a build's median near a band's edge across it. Returns {k: highest / lowest
    median over the repeats} in ``metric``; {} for fewer than two repeats."""
    return {k: max(m) / min(m) for k, m in repeat_medians(repeats, metric).items() if len(m) > 1}


def fig1_memory_cells(rows, accounting="no_attention"):
    """Figure 1's memory gains cell by cell against the paper's range :data:`PAPER_FIG1_MEMORY` (rounded
    to whole percent, as the paper states it: [0.5, 15.5)): [{d, k, ours, within}]."""
    lo, hi = PAPER_FIG1_MEMORY[0] - 0.5, PAPER_FIG1_MEMORY[1] + 0.5
    out = []
    for r in rows:
        red = mem_reduction(r, accounting)
        out.append(dict(d=r["d"], k=r["k"], ours=red, within=red is not None and lo <= red < hi))
    return out


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
    lines = []
    for k in ks:
        paper = PAPER_T1[k]["dims"] if k in PAPER_T1 else None
        lines.append(f"| {k} | {dims[k][0]} / {dims[k][1]} | " + (f"{paper[0]} / {paper[1]}" if paper else "") + " |")
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
            for a in range(len(ds)):
                for b in range(len(ks)):
                    ax.text(b, a, f"{G[a, b]:.0f}", ha="center", va="center", fontsize=8)
            ax.set_xticks(range(len(ks)), ks)
            ax.set_yticks(range(len(ds)), ds)
            ax.set_xlabel("$k$")
            ax.set_ylabel("$d$")
            ax.set_title(f"{label}: {name}", fontsize=10)
    fig.suptitle(title, y=1.01)
    fig.tight_layout()
    plt.show()


def figure1_grid(P, impl, device, *, seed: int):
    """Figure 1's grid for one form at settings ``P``, as rows of ``lloydlib.bench.grid`` sorted by (d, k), its
    inputs drawn from ``seed``.

    The columns the claims examine (the smallest and largest k) get ``P.grid_reps`` timed repetitions
    each, enough for their intervals; the columns between, shown only in the heat maps and the memory
    claims, get ``P.grid_map_reps``."""
    ks = sorted(P.grid_ks)
    common = dict(n=P.n, batch=P.grid_batch, warmup=P.grid_warmup, impl=impl, clock=P.clock, device=device, seed=seed)
    rows = bench.grid(P.grid_ds, [ks[0], ks[-1]], reps=P.grid_reps, **common)["rows"]
    if len(ks) > 2:
        rows += bench.grid(P.grid_ds, ks[1:-1], reps=P.grid_map_reps, **common)["rows"]
    return sorted(rows, key=lambda r: (r["d"], r["k"]))


def fast_vs_plain(X, C, embedding, *, seed: int):
    """Largest deviation between ``LearnableTransformer`` in its fast and its plain form (Eq. 4 head by
    head), from the same weights (drawn with ``seed``), on points X (batch, n, d) and centers C (batch, k, d):
    (outputs' absolute deviation, gradients' deviation relative to the largest plain gradient), the
    gradients being those of ``(out * G).sum()`` for a Gaussian G of C's shape (drawn with ``seed + 1``)."""
    seed = check_int("seed", seed, 0)
    G = torch.randn(C.shape, dtype=C.dtype, generator=torch.Generator().manual_seed(seed + 1))
    d, k = X.shape[2], C.shape[1]
    torch.manual_seed(seed)
    fast = LearnableTransformer(d, k, embedding, dtype=X.dtype)
    plain = LearnableTransformer(d, k, embedding, fast=False, dtype=X.dtype)
    plain.load_state_dict(fast.state_dict())
    outs, grads = [], []
    for model in (fast, plain):
        out = model(X, C)
        (out * G).sum().backward()
        outs.append(out.detach())
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
    return float((outs[0] - outs[1]).abs().max()), float((grads[0] - grads[1]).abs().max() / grads[1].abs().max())


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
