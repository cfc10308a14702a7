"""The chapter "What leanness buys" (``book/03_leanness.ipynb``): its bookkeeping, tables and figure.

The chapter times OH against BN (Figure 1 and Table 1 of the Leaner paper) with :mod:`lloydlib.bench`;
this module holds what turns the results into numbers, tables and the heat maps:

- :data:`PAPER_T1`: the paper's Table 1, to compare with;
- :func:`speedup`, :func:`mem_reduction`, :func:`gain`: BN's advantage in one row of a result, with the
  noise of a speed-up from :func:`median_and_noise`;
- :func:`dims_table`, :func:`table1`, :func:`heatmaps`: the tables and Figure 1;
- :func:`fast_vs_plain`: how far lloydlib's rearranged layer is from the plain one (Eq. 4);
- :func:`worst_large_k`, :func:`growth_failures`: what the chapter's claims on Figure 1 examine;
- :func:`train_step_command`, :func:`run_json`: the ``python -m lloydlib bench train-step`` run;
- :func:`gpu_values`: the numbers of the GPU results recorded under ``results/``.

A *row* is one entry of ``lloydlib.bench.grid(...)["rows"]``: ``d``, ``k`` and, per embedding, timing
summaries, samples and memory (see :func:`lloydlib.bench.measure_embeddings`).
"""

from __future__ import annotations

import contextlib
import json
import math
import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display
from matplotlib.colors import TwoSlopeNorm

from lloydlib.embeddings import code_dim
from lloydlib.model import LearnableTransformer

__all__ = ["PAPER_T1", "IMPLS", "PASSES", "METRICS", "torch_threads", "median_and_noise", "speedup",
           "mem_reduction", "gain", "dims_table", "table1", "heatmaps", "fast_vs_plain", "worst_large_k",
           "growth_failures", "train_step_command", "run_json", "gpu_values"]  # fmt: skip

#: Table 1 of the Leaner paper (RTX PRO 3000 Blackwell laptop GPU, n = 1024, 32 tasks, d = 32), per k:
#: extra dims OH/BN, forward and backward ms OH/BN and speed-up, memory MB OH/BN and reduction in %
PAPER_T1 = {
    6: dict(dims=(6, 3), fwd=(4.25, 4.83, 0.88), bwd=(9.53, 10.66, 0.89), mem=(419.93, 416.29, 0.9)),
    25: dict(dims=(25, 5), fwd=(5.24, 4.99, 1.05), bwd=(11.21, 11.01, 1.02), mem=(441.08, 423.23, 4.0)),
    100: dict(dims=(100, 7), fwd=(9.76, 4.52, 2.16), bwd=(20.21, 9.93, 2.03), mem=(532.96, 447.04, 16.1)),
    400: dict(dims=(400, 9), fwd=(38.68, 7.89, 4.90), bwd=(66.13, 16.47, 4.02), mem=(1095.60, 531.02, 51.5)),
    1000: dict(dims=(1000, 10), fwd=(193.07, 15.90, 12.14), bwd=(308.28, 32.33, 9.54), mem=(3930.34, 1207.75, 69.3)),
}
#: the two forms of the layer: implementation name -> how the chapter names it
IMPLS = {"reference": "reference form", "lloydlib": "lloydlib"}
#: the timed passes of a row
PASSES = ("forward", "backward", "eval")
#: Figure 1's columns: metric -> title
METRICS = {"forward": "forward (train)", "backward": "backward", "memory": "memory", "eval": "forward (eval)"}


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


def median_and_noise(r):
    """Median of ratios r and its noise: the half-width of a box plot's notch, 1.57 IQR / sqrt(len(r))."""
    q1, med, q3 = np.percentile(r, [25, 50, 75])
    return float(med), float(1.57 * (q3 - q1) / math.sqrt(len(r)))


def speedup(row, metric):
    """BN's speed-up over OH: median of per-repetition ratios t_OH / t_BN, and its noise."""
    return median_and_noise(np.array(row["OH"]["samples"][metric]) / np.array(row["BN"]["samples"][metric]))


def mem_reduction(row):
    """Memory saved by BN, in % of OH's."""
    return 100.0 * (1.0 - row["BN"]["memory_bytes"] / row["OH"]["memory_bytes"])


def gain(row, metric):
    """Figure 1's quantity: BN's gain over OH in %, 100 (1 - t_BN / t_OH) (or the memory reduction)."""
    if metric == "memory":
        return mem_reduction(row)
    return 100.0 * (1.0 - 1.0 / speedup(row, metric)[0])


def dims_table(ks):
    """Extra token dimensions of OH and BN for each k, ours and the paper's: ({k: (OH, BN)}, Markdown)."""
    dims = {k: (code_dim(k, "OH"), code_dim(k, "BN")) for k in ks}
    lines = []
    for k in ks:
        paper = PAPER_T1[k]["dims"] if k in PAPER_T1 else None
        lines.append(f"| {k} | {dims[k][0]} / {dims[k][1]} | " + (f"{paper[0]} / {paper[1]}" if paper else "") + " |")
    return dims, Markdown("| k | extra dims OH / BN (ours) | paper (Table 1) |\n|---|---|---|\n" + "\n".join(lines))


def table1(tables, ks, unit):
    """Table 1 as markdown: per k, one line per form (tables: {form name: {k: row}}), then the paper's."""
    head = (
        "| k | | forward OH / BN " + unit + " | speed-up | backward OH / BN " + unit + " | speed-up "
        "| eval OH / BN " + unit + " | speed-up | memory OH / BN MB | reduction |\n" + "|---" * 10 + "|\n"
    )
    lines = []
    for k in ks:
        for name, rows in tables.items():
            row = rows[k]
            cells = [f"{k}", name]
            for m in PASSES:
                s, nz = speedup(row, m)
                cells += [f"{row['OH'][m]['median_ms']:.1f} / {row['BN'][m]['median_ms']:.1f}", f"{s:.2f}x ± {nz:.2f}"]
            cells += [
                f"{row['OH']['memory_bytes'] / 2**20:.1f} / {row['BN']['memory_bytes'] / 2**20:.1f}",
                f"{mem_reduction(row):.1f}%",
            ]
            lines.append("| " + " | ".join(cells) + " |")
        if k in PAPER_T1:
            p = PAPER_T1[k]
            lines.append(
                f"| {k} | *paper (GPU)* | {p['fwd'][0]} / {p['fwd'][1]} | {p['fwd'][2]:.2f}x | "
                f"{p['bwd'][0]} / {p['bwd'][1]} | {p['bwd'][2]:.2f}x | | | "
                f"{p['mem'][0]} / {p['mem'][1]} | {p['mem'][2]}% |"
            )
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


def fast_vs_plain(X, C, embedding, *, seed=2):
    """Largest deviation between ``LearnableTransformer`` in its fast and its plain form (Eq. 4 head by
    head), from the same weights (drawn with ``seed``), on points X (batch, n, d) and centers C (batch, k, d):
    (outputs' absolute deviation, gradients' deviation relative to the largest plain gradient), the
    gradients being those of ``(out * G).sum()`` for a fixed Gaussian G of C's shape."""
    G = torch.randn(C.shape, dtype=C.dtype, generator=torch.Generator().manual_seed(0))
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


def worst_large_k(table1_rows, grid_rows, ks):
    """Every measurement with k >= 100 as (impl, row, pass), over both forms, Figure 1's grid and Table 1's
    ``ks``; and the one whose speed-up plus noise is smallest: (worst, all of them)."""
    big = [
        (impl, r, m)
        for impl in IMPLS
        for r in list(grid_rows[impl]) + [table1_rows[impl][k] for k in ks]
        for m in PASSES
        if r["k"] >= 100
    ]
    worst = min(big, key=lambda t: speedup(t[1], t[2])[0] + speedup(t[1], t[2])[1])
    return worst, big


def growth_failures(table1_rows, grid_rows, table1_ks, grid_ds, grid_ks):
    """Where BN's speed-up falls with k beyond the noise, per form and pass: along Table 1 a speed-up
    below the previous one less both noises, a last speed-up not beyond the first plus both noises, and
    in a row d of the grid a speed-up at the largest k below that at the smallest less both noises.
    Returns (failures as text, Table 1's forward speed-ups per form as text)."""
    failures, summary = [], []
    for impl in IMPLS:
        for m in PASSES:
            s = [speedup(table1_rows[impl][k], m) for k in table1_ks]
            for (k1, a), (k2, b) in zip(zip(table1_ks, s), zip(table1_ks[1:], s[1:])):
                if b[0] < a[0] - (a[1] + b[1]):
                    failures.append(f"{impl} {m}: k={k1} {a[0]:.2f}±{a[1]:.2f} > k={k2} {b[0]:.2f}±{b[1]:.2f}")
            if not s[-1][0] > s[0][0] + s[0][1] + s[-1][1]:
                failures.append(f"{impl} {m}: k={table1_ks[-1]} not beyond k={table1_ks[0]}")
            by = {(r["d"], r["k"]): r for r in grid_rows[impl]}
            for d in grid_ds:
                lo, hi = speedup(by[d, min(grid_ks)], m), speedup(by[d, max(grid_ks)], m)
                if hi[0] < lo[0] - (lo[1] + hi[1]):
                    failures.append(
                        f"{impl} {m}: d={d} k={max(grid_ks)} {hi[0]:.2f}±{hi[1]:.2f} < "
                        f"k={min(grid_ks)} {lo[0]:.2f}±{lo[1]:.2f}"
                    )
            if m == "forward":
                summary.append(f"{s[0][0]:.2f}x to {s[-1][0]:.2f}x ({IMPLS[impl]})")
    return failures, summary


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


def gpu_values(t1, grid, steps):
    """Show the GPU results recorded under ``results/`` and return the values the chapter's text quotes.

    ``t1``: {impl: Table 1 result}, ``grid``: {impl: grid result}, ``steps``: train-step results. Returns
    {key: value} for the keys "name", "grid-range", "step" and "<fwd|bwd|mem|oh-fwd-ms>-<impl>" that
    were recorded (all of them when Table 1 is recorded for both forms), after printing where they come
    from and displaying Table 1 and the grid's heat maps.
    """
    gv = {}
    if not t1 or not all(i in t1 for i in IMPLS):
        print("No GPU results of Table 1 for both forms are recorded under results/.")
        return gv
    hw = t1["lloydlib"]["hardware"]
    gv["name"] = f"{hw['gpu']} (CUDA {hw['cuda']}, torch {hw['torch']})"
    print(f"recorded on {gv['name']}: " + ", ".join(r["file"] for r in [*t1.values(), *grid.values(), *steps]))
    rows = {i: {r["k"]: r for r in t1[i]["rows"]} for i in IMPLS}
    ks = t1["lloydlib"]["config"]["ks"]
    display(table1({IMPLS[i] + " (GPU)": rows[i] for i in IMPLS}, ks, "ms"))
    for i in IMPLS:
        top = rows[i][max(ks)]
        gv[f"fwd-{i}"], gv[f"bwd-{i}"] = speedup(top, "forward")[0], speedup(top, "backward")[0]
        gv[f"mem-{i}"], gv[f"oh-fwd-ms-{i}"] = mem_reduction(top), top["OH"]["forward"]["median_ms"]
    if "lloydlib" in grid:
        cfg, grid_rows = grid["lloydlib"]["config"], grid["lloydlib"]["rows"]
        heatmaps(
            {"lloydlib on the GPU": grid_rows}, cfg["ds"], cfg["ks"],
            f"BN's gain over OH in %, {hw['gpu']}, n={cfg['n']}, {cfg['batch']} tasks, median of "
            f"{cfg['reps']} repetitions, wall clock",
        )  # fmt: skip
        fwd = [gain(r, "forward") for r in grid_rows]
        gv["grid-range"] = f"{min(fwd):+.0f}% to {max(fwd):+.0f}%"
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
