"""What the two learning chapters (``book/04_learning.ipynb``, ``book/05_shapes.ipynb``) share: per-seed
statistics of their runs, where a claim holds, and the commands that would decide it at the paper's setting.

A *setting* is a list of :class:`lloydlib.training.Run` (one per seed); per-seed statistics return a numpy array
of shape ``(len(runs),)``. The relative validation loss ``val_rel_loss`` is Eq. 20 of the paper: the k-means loss
of the layer's centers over that of one Lloyd step from the same initial centers (below 1 beats one Lloyd step).
"""

from __future__ import annotations

import html
import math
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from lloydlib import bench, lloyd_step, training

from . import results
from .claims.evidence import q3
from .sweeps import configs_of, get, paper_sweeps, select, specs, sweep_commands, sweep_configs
from .tables import Table, fmt_list, fmt_value, setting_text

__all__ = [
    "command_line_runs",
    "final",
    "final_train",
    "auc",
    "steps_to_settle",
    "largest_rise",
    "ms_per_step",
    "final_lrs",
    "wall_numbers",
    "cost_ratios",
    "relative_spread",
    "outcomes",
    "evidence_table",
    "q3_table",
    "setting_of",
    "at",
    "paper_decides",
    "gpu_commands",
    "gpu_status",
]


# ----------------------------------------------------------------------------------------- training
def _shown(path: Path) -> str:
    """``path`` as the shorter of its absolute and its relative form."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return min(str(path), relative, key=len)


def command_line_runs(cmd: str, configs) -> list:
    """Run ``cmd``, a ``python -m lloydlib train ...`` line without ``--cache-dir``, with this interpreter, training
    into the book's cache (:func:`lloydbook.results.cache_dir`), and return the runs of ``configs`` that it left
    there. Prints the command, its output and how long it took; raises RuntimeError, with the end of
    its error output, when the command fails, and when a run of ``configs`` is not in the cache afterwards."""
    args = shlex.split(cmd)
    if args[:4] != ["python", "-m", "lloydlib", "train"]:
        raise ValueError(f"cmd must be a 'python -m lloydlib train ...' line, got {cmd!r}")
    if any(a == "--cache-dir" or a.startswith("--cache-dir=") for a in args):
        raise ValueError(f"cmd must not name --cache-dir (the cache is the book's), got {cmd!r}")
    cache = results.cache_dir()
    shown = _shown(cache)
    print("$", cmd, "--cache-dir", shlex.quote(shown))
    t0 = time.time()
    done = subprocess.run([sys.executable, *args[1:], "--cache-dir", shown], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the command line failed (exit {done.returncode}): {done.stderr[-2000:]}")
    print(done.stdout)
    runs = [training.lookup(c, [cache]) for c in configs]
    missing = [c.label() for c, r in zip(configs, runs) if r is None]
    if missing:
        raise RuntimeError(f"the command line's runs are not in the cache: {missing}")
    print(f"found in the cache: {len(runs)} runs, e.g. {runs[0]}  ({time.time() - t0:.0f} s)")
    return runs


# ----------------------------------------------------------------------------------------- statistics
def final(runs) -> np.ndarray:
    """Per-seed final relative validation loss (Eq. 20), shape ``(len(runs),)``; +inf for a diverged run."""
    return training.final_values(runs, "val_rel_loss")


def final_train(runs) -> np.ndarray:
    """Per-seed smoothed training loss at the last evaluation (the mean over the steps since the one
    before), shape ``(len(runs),)``; +inf for a diverged run."""
    return training.final_values(runs, "train_loss")


def auc(runs) -> np.ndarray:
    """Per-seed mean relative validation loss over training, after step 0: ``mean_{m >= 1} v_m`` for the
    evaluations ``v_m`` of one run. Lower means converged sooner; +inf for a diverged run."""
    return np.array(
        [math.inf if r.status == "diverged" else float(np.mean(r.history["val_rel_loss"][1:])) for r in runs]
    )


def steps_to_settle(run) -> int:
    """First evaluation step from which the training loss stays within 5% of its final value (step 0, one
    untrained batch, excluded)."""
    tl, steps = run.history["train_loss"][1:], run.history["step"][1:]
    inside = np.abs(tl - tl[-1]) <= 0.05 * abs(tl[-1])
    outside = np.flatnonzero(~inside)
    return int(steps[outside[-1] + 1]) if outside.size else int(steps[0])


def largest_rise(run) -> float:
    """The largest increase of a run's relative validation loss between consecutive evaluations after
    step 0: ``max_m (v_{m+1} - v_m)``, non-finite values read as +inf; 0 with fewer than two evaluations."""
    v = np.asarray(run.history["val_rel_loss"][1:], dtype=float)
    v = np.where(np.isfinite(v), v, np.inf)
    return float(np.max(np.diff(v))) if len(v) > 1 else 0.0


def ms_per_step(runs) -> float:
    """Median over seeds of the wall-clock milliseconds per training step (steps only, validation excluded):
    ``1000 * info['seconds'] / steps``."""
    return float(np.median([1000 * r.info["seconds"] / len(r.train_losses) for r in runs]))


def final_lrs(runs) -> np.ndarray:
    """Per-run learning rate at the last evaluation, shape ``(len(runs),)``: where ReduceLROnPlateau left it."""
    return np.array([float(r.history["lr"][-1]) for r in runs])


def wall_numbers(wall: dict) -> dict:
    """What the chapter says of Figure 17's timed runs, case by case: ``wall`` maps ``(d, k)`` to
    ``{("OH",): runs, ("BN",): runs}`` (``training.group(runs, "embedding")``); the cases are numbered 1, 2, ...
    in order. Returns ``{"ms-oh-<i>": .., "ms-bn-<i>": .., "wall-plateau-<i>": ..}``: the median
    milliseconds per training step (:func:`ms_per_step`) of each embedding, and the median final relative
    loss over both embeddings' runs (whether any run has left the plateau)."""
    out = {}
    for i, g in enumerate(wall.values(), 1):
        out.update({f"ms-{e.lower()}-{i}": ms_per_step(g[(e,)]) for e in ("OH", "BN")})
        out[f"wall-plateau-{i}"] = float(np.median(final(g[("OH",)] + g[("BN",)])))
    return out


def cost_ratios(cost: dict) -> dict:
    """``{"cost-ratio-<i>": ..}`` for the cases of ``cost`` (``(d, k)`` -> :func:`step_costs`), numbered 1, 2, ...
    in order: the median over repetitions of the per-repetition ratio OH / BN (how many times as long OH's
    forward and backward took)."""
    return {
        f"cost-ratio-{i}": float(np.median(np.array(c["OH"]) / np.array(c["BN"])))
        for i, c in enumerate(cost.values(), 1)
    }


def relative_spread(model, X: torch.Tensor, C0: torch.Tensor) -> float:
    """Mean over tasks of ``spread(model(X, C0)) / spread(lloyd_step(X, C0))``, where the spread of centers of
    shape ``(B, k, d)`` is the mean over the ``k`` centers of the squared distance to their centroid; ``X`` is
    ``(B, n, d)``, ``C0`` is ``(B, k, d)``. Below 1: the layer pulls the centers together more than one Lloyd step
    does."""

    def spread(C):
        return ((C - C.mean(1, keepdim=True)) ** 2).sum(-1).mean(1)

    with torch.no_grad():
        out = model(X, C0)
    return float((spread(out) / spread(lloyd_step(X, C0))).mean())


def step_costs(d: int, k: int, *, n: int, batch: int, reps: int, warmup: int, seed: int) -> dict:
    """Milliseconds of forward + backward of one layer per repetition, ``{"OH": [...], "BN": [...]}``:
    :func:`lloydlib.bench.measure_embeddings` on the CPU clock with one torch thread, the embeddings
    interleaved in each repetition, on inputs and weights drawn from ``seed``."""
    res = bench.measure_embeddings(
        d,
        k,
        seed=seed,
        n=n,
        batch=batch,
        reps=reps,
        warmup=warmup,
        passes=("forward", "backward"),
        clock="cpu",
        memory=False,
        threads=1,
    )
    return {e: [f + b for f, b in zip(r["samples"]["forward"], r["samples"]["backward"])] for e, r in res.items()}


def outcomes(evidence) -> str:
    """The parts' outcomes in one line, ``'part: outcome; part: outcome'`` (for the prose of a reported,
    not asserted, comparison)."""
    return "; ".join(f"{e.part}: {e.outcome}" for e in evidence)


def evidence_table(evidence) -> Table:
    """The parts of a comparison with their outcomes and numbers, one row each (a comparison the chapter
    reports without recording it as a claim)."""
    return Table(("part", "outcome", "what the seeds say"), [(e.part, e.outcome, e.text) for e in evidence])


# ----------------------------------------------------------------------------------------- tables
def _cell(value) -> str:
    if isinstance(value, (np.ndarray, list, tuple)):
        return q3(value)
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def q3_table(header, rows) -> Table:
    """Per-seed statistics side by side: ``rows`` are ``(label, [cell, ...])``, where a cell of per-seed
    values (an array or list) is shown as :func:`q3`, a float with three significant digits and anything
    else as ``str``; ``header`` names the label's column and every cell's."""
    return Table(header, [[_cell(label), *(_cell(v) for v in cells)] for label, cells in rows])


# ----------------------------------------------------------------------------------------- where a claim holds
def _one_or_set(values):
    values = list(dict.fromkeys(values))
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        values = sorted(values)
    return values[0] if len(values) == 1 else values


def setting_of(runs, fields=("n", "d", "k"), **more) -> str:
    """The setting of a claim decided on ``runs`` (see :func:`lloydbook.sweeps.configs_of`), as
    :func:`lloydbook.tables.setting_text` writes it: each of ``fields`` as the runs hold it (one value, or the set
    of values), then ``more`` (e.g. ``T=20, tasks=64``), the training steps and the number of seeds. Runs of
    different step counts raise."""
    configs = configs_of(runs)
    if not configs:
        raise ValueError("runs must hold at least one run or config, got none")
    steps = sorted({c.steps for c in configs})
    if len(steps) != 1:
        raise ValueError(f"runs must share one step count to have one setting, got {steps}")
    values = {f: _one_or_set(getattr(c, f) for c in configs) for f in fields}
    return setting_text(**values, **more, steps=steps[0], seeds=len({c.seed for c in configs}))


def _field(name: str, value) -> str:
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    if value is None:
        return f"{name} not stated"
    if name == "steps":
        return f"{value:,} steps"
    if isinstance(value, (list, tuple)):
        return f"{name} in {{{fmt_list(list(value))}}}"
    return f"{name}={fmt_value(value)}"


def at(ours: dict, paper: dict) -> str:
    """The opening of a claim's statement when it is decided away from the paper's setting: ``"At n=32,
    6,000 steps (the paper: n=512, 10,000 steps): "`` for the fields of ``ours`` whose value differs from
    ``paper``'s (field -> value or list of values, compared as sets and written in the order given; ``steps``
    written as a count, a field the paper does not state as None), "" when none differs (at the paper's own
    setting the statement is the paper's)."""

    def text(f, v):  # a set of values reads the same in any order
        return _field(f, sorted(v, key=str) if isinstance(v, (list, tuple)) else v)

    diff = [f for f in ours if text(f, ours[f]) != text(f, paper.get(f))]
    if not diff:
        return ""
    ours_text, paper_text = (", ".join(_field(f, d.get(f)) for f in diff) for d in (ours, paper))
    return f"At {ours_text} (the paper: {paper_text}): "


def _paper_specs() -> dict:
    """Paper-scale sweep name -> ``(specs, unstacked)``, from :func:`lloydbook.sweeps.paper_sweeps`."""
    return {name: (entries, unstacked) for name, entries, unstacked in paper_sweeps()}


def paper_decides(name: str, fields=("n", "d", "k"), **where) -> str:
    """What would decide a statement this build leaves open: the sweep ``name`` at the paper's settings (as
    :func:`lloydbook.sweeps.paper_sweeps` gives it, else as trained at ``paper``), restricted to the runs whose
    fields match ``where`` (a value or a list), as its setting (:func:`setting_of` with ``fields``) and the
    command(s) that train it into ``results/recorded/<machine>``, in backticks."""
    sweep = get(name)
    found = _paper_specs()
    entries, unstacked = found[name] if name in found else (specs(name, "paper"), not sweep.stacked)
    wanted = {f: v if isinstance(v, (list, tuple)) else [v] for f, v in where.items()}
    kept = []
    for base, axes in entries:
        axes = {f: [v for v in vs if f not in wanted or v in wanted[f]] for f, vs in axes.items()}
        fixed_ok = all(getattr(base, f) in vs for f, vs in wanted.items() if f not in axes)
        if fixed_ok and all(axes.values()):
            kept.append((base, axes))
    configs = select(sweep_configs(kept), **where)
    if not configs:
        raise ValueError(f"where={where} selects no run of the paper-scale sweep {name!r}")
    how = ", one run at a time" if unstacked else ""
    commands = "; ".join(f"`{c}`" for c in sweep_commands(kept, unstacked, results.RECORDED_STORE))
    return f"the paper's setting ({setting_of(configs, fields)}) on a GPU{how}: {commands}"


def gpu_commands(names) -> Table:
    """The shell commands that train the paper-scale sweeps ``names`` into a machine's folder
    :data:`lloydbook.results.RECORDED_STORE`, one row per command, as HTML code."""
    found = _paper_specs()
    unknown = [n for n in names if n not in found]
    if isinstance(names, str) or unknown:
        raise ValueError(f"names must be a list of paper-scale sweeps {list(found)}, got {names!r}")
    store = results.RECORDED_STORE
    rows = [(n, f"<code>{html.escape(c)}</code>") for n in names for c in sweep_commands(*found[n], store)]
    return Table(("sweep", f"command (then commit <code>{html.escape(store)}/</code>)"), rows)


def gpu_status() -> str:
    """What the checkout holds of training runs recorded on GPUs, in words: the machines' folders under
    ``results/recorded/`` but the ``cpu-<model>`` ones (chapter 04's own section), or that there are none."""
    dirs = [d for d in results.recorded_run_dirs() if not d.name.startswith("cpu-")]
    if dirs:
        return f"results/recorded/ holds the runs of {len(dirs)} GPU machine(s): {', '.join(d.name for d in dirs)}"
    return "no runs recorded on a GPU are committed (no GPU machine's folder under results/recorded/)"
