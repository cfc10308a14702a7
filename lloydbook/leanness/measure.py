"""What leanness buys, the measuring: Figure 1's grid, the fast form against the plain one, the
``bench train-step`` command and its numbers, and the recorded CPU repeats of Table 1 (see
:mod:`lloydbook.leanness`)."""

from __future__ import annotations

import json
import subprocess
import sys

import torch

from lloydlib import bench
from lloydlib.checks import check_int
from lloydlib.model import LearnableTransformer

#: the two forms of the layer: implementation name -> how the chapter names it
IMPLS = {"reference": "reference form", "lloydlib": "lloydlib"}


def cpu_repeats(recorded, P, hw):
    """The repeats of Table 1 that ``scripts/record_table1_repeats.py`` recorded as this build measures: the
    reference form on the CPU model ``hw["cpu"]`` (of ``lloydlib.hardware.probe``), by ``P``'s clock, n and batch,
    at d = 32. [] on a GPU or by the wall clock, where the build's own intervals decide."""
    if "gpu" in hw or P.clock != "cpu":
        return []
    want = {"impl": "reference", "clock": P.clock, "n": P.n, "batch": P.table1_batch, "ds": [32]}
    same_cpu = [r for r in recorded if "gpu" not in r["hardware"] and r["hardware"].get("cpu") == hw["cpu"]]
    return [r for r in same_cpu if all(r["config"].get(key) == value for key, value in want.items())]


def figure1_grid(P, impl, device, *, seed: int):
    """Figure 1's grid for one form at settings ``P``, as rows of ``lloydlib.bench.grid`` sorted by (d, k), its
    inputs drawn from ``seed``: ``P.grid_reps`` repetitions for the smallest and largest k (the claims' intervals),
    ``P.grid_map_reps`` for the columns between (only in the heat maps and the memory claims)."""
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


def step_values(result, wall, P):
    """The numbers the text quotes about a ``bench train-step`` ``result`` at settings ``P``: its ms per step (wall
    clock and CPU time, both forms) and ``cpu_speedup`` as ``step-<key with - for _>``; ``step-speedup`` (the
    median of ``wall``, :func:`lloydbook.leanness.step_speedup` on the wall clock); ``step-hours-<form>`` (the
    paper's 10,000 steps at that rate); ``step-compile-note``; ``step-threads`` (torch's choice when
    ``P.step_threads`` is None) and ``step-batch``."""
    keys = ("lloydlib_ms_per_step", "reference_ms_per_step", "lloydlib_cpu_ms_per_step", "reference_cpu_ms_per_step")
    out = {f"step-{key.replace('_', '-')}": result[key] for key in (*keys, "cpu_speedup")}
    out["step-speedup"] = wall.median
    for form in IMPLS:
        out[f"step-hours-{form}"] = result[f"{form}_ms_per_step"] * 1e4 / 3.6e6
    out["step-compile-note"] = "not compiled"
    if result["compile"]:
        warmup = result["compile_warmup_seconds"]
        out["step-compile-note"] = f"compiled (compilation took {warmup:.0f} s once, not counted)"
    out["step-threads"] = P.step_threads or torch.get_num_threads()
    out["step-batch"] = P.step_batch
    return out
