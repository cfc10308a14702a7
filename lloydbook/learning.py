"""What the two learning chapters share: per-seed statistics of their runs (:mod:`lloydbook.sweeps`), claims.

The chapters *Learning one Lloyd step* (``book/04_learning.ipynb``) and *What shapes learning*
(``book/05_shapes.ipynb``) train one layer of Eq. 4 of the Leaner paper with Algorithm 1 and read every
result off a setting's seeds. A *setting* is a list of :class:`lloydlib.training.Run` (one per seed);
per-seed statistics return a numpy array of shape ``(len(runs),)``; a curve is a numpy array over the
evaluation steps of ``run.history`` (step 0, then every ``eval_every`` steps). The relative validation
loss ``val_rel_loss`` is Eq. 20 of the paper: the k-means loss of the layer's centers over that of one
Lloyd step from the same initial centers, so values below 1 beat one Lloyd step.

A claim is decided on its seeds in the book's one evidence vocabulary, :mod:`lloydbook.claims.evidence`
(the chapter's judge, ``ch.judge.lower``, ``.below``, ``.within``, ...; ``all_of`` and ``cheaper`` from there), as
the chapters import :func:`lloydbook.tables.fmt_list` from :mod:`lloydbook.tables`. The plots are in :mod:`lloydbook.figures`.
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
from .sweeps import SWEEPS, paper_sweeps, select, specs, sweep_commands, sweep_configs
from .tables import Table, fmt_list, setting_text

__all__ = [
    "command_line_runs",
    "q3",
    "final",
    "final_train",
    "auc",
    "steps_to_settle",
    "largest_rise",
    "step_ms",
    "ms_per_step",
    "final_lrs",
    "wall_numbers",
    "cost_ratios",
    "center_spread",
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
    """``path`` as the shorter of its absolute and its relative form (from the working folder)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return min(str(path), relative, key=len)


def command_line_runs(cmd: str, configs, cache=None) -> list:
    """Run ``cmd``, a ``python -m lloydlib train ...`` line (as :func:`lloydlib.training.command` writes it),
    with this interpreter, training into the cache root ``cache`` (default: the book's,
    :func:`lloydbook.results.cache_dir`), passed as ``--cache-dir`` (a ``cmd`` that names its own
    ``--cache-dir`` is refused), and return the runs of ``configs`` that it left there.

    Prints the command as it runs, its output and how long it took (the chapter shows the command line at
    work); raises RuntimeError, with the end of its error output, when the command fails, and when a run of
    ``configs`` is not in the cache afterwards."""
    args = shlex.split(cmd)
    if args[:4] != ["python", "-m", "lloydlib", "train"]:
        raise ValueError(f"cmd must be a 'python -m lloydlib train ...' line, got {cmd!r}")
    if any(a == "--cache-dir" or a.startswith("--cache-dir=") for a in args):
        raise ValueError(f"cmd must not name --cache-dir (the cache is the argument cache), got {cmd!r}")
    cache = results.cache_dir() if cache is None else Path(cache)
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


def steps_to_settle(run, tol: float = 0.05) -> int:
    """First evaluation step from which the training loss stays within ``tol`` (relative) of its final value
    (step 0, one untrained batch, excluded)."""
    tl, steps = run.history["train_loss"][1:], run.history["step"][1:]
    inside = np.abs(tl - tl[-1]) <= tol * abs(tl[-1])
    outside = np.flatnonzero(~inside)
    return int(steps[outside[-1] + 1]) if outside.size else int(steps[0])


def largest_rise(run) -> float:
    """The largest increase of a run's relative validation loss between consecutive evaluations after
    step 0: ``max_m (v_{m+1} - v_m)``, non-finite values read as +inf; 0 with fewer than two evaluations."""
    v = np.asarray(run.history["val_rel_loss"][1:], dtype=float)
    v = np.where(np.isfinite(v), v, np.inf)
    return float(np.max(np.diff(v))) if len(v) > 1 else 0.0


def step_ms(runs, clock: str = "wall") -> np.ndarray:
    """Per-run milliseconds per training step (steps only, validation excluded), shape ``(len(runs),)``:
    ``1000 * info['seconds'] / steps`` on the wall clock, or ``info['cpu_seconds']`` with ``clock="cpu"``
    (which other processes on the machine disturb less)."""
    key = {"wall": "seconds", "cpu": "cpu_seconds"}[clock]
    return np.array([1000 * r.info[key] / len(r.train_losses) for r in runs])


def ms_per_step(runs) -> float:
    """Median over seeds of the wall-clock milliseconds per training step (:func:`step_ms`)."""
    return float(np.median(step_ms(runs)))


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


def center_spread(C: torch.Tensor) -> torch.Tensor:
    """Per-task spread of centers ``C`` of shape ``(B, k, d)``: the mean over the ``k`` centers of the
    squared distance to their centroid, shape ``(B,)``."""
    return ((C - C.mean(1, keepdim=True)) ** 2).sum(-1).mean(1)


def relative_spread(model, X: torch.Tensor, C0: torch.Tensor) -> float:
    """Mean over tasks of ``spread(model(X, C0)) / spread(lloyd_step(X, C0))`` (see :func:`center_spread`);
    ``X`` is ``(B, n, d)``, ``C0`` is ``(B, k, d)``. Below 1: the layer pulls the centers together more than
    one Lloyd step does."""
    with torch.no_grad():
        out = model(X, C0)
    return float((center_spread(out) / center_spread(lloyd_step(X, C0))).mean())


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
def _flat(runs) -> list:
    if isinstance(runs, dict):
        runs = list(runs.values())
    out = []
    for r in runs:
        out.extend(_flat(r) if isinstance(r, (list, tuple, dict)) else [r])
    return out


def _one_or_set(values):
    values = list(dict.fromkeys(values))
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        values = sorted(values)
    return values[0] if len(values) == 1 else values


def setting_of(runs, fields=("n", "d", "k"), **more) -> str:
    """The setting of a claim decided on ``runs`` (Runs or TrainConfigs; a list, nested lists or a dict of
    lists), as :func:`lloydbook.tables.setting_text` writes it: each of ``fields`` as the runs hold it (one
    value, or the set of values), then ``more`` (e.g. ``T=20, tasks=64``), the training steps and the number
    of seeds. Read from the runs' configs, never typed; runs of different step counts raise."""
    configs = [getattr(r, "config", r) for r in _flat(runs)]
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
    return f"{name}={fmt_list([value])}"


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


def _paper_specs(name: str):
    if name not in SWEEPS:
        raise ValueError(f"name must be one of the book's sweeps {list(SWEEPS)}, got {name!r}")
    found = {n: (entries, unstacked) for n, entries, unstacked in paper_sweeps()}
    return found.get(name, (specs(name, "paper"), not SWEEPS[name].stacked))


def paper_decides(name: str, fields=("n", "d", "k"), **where) -> str:
    """What would decide a statement this build leaves open: the sweep ``name`` of the registry at the paper's
    settings (as :func:`lloydbook.sweeps.paper_sweeps` gives it for the learning chapters' sweeps, such as
    ``"fig13"``; any other, such as ``"families"``, as trained at ``paper``), restricted to the runs whose fields
    match ``where`` (a value or a list), as its setting (:func:`setting_of` with ``fields``) and the ``python -m lloydlib train`` command(s) that train it into
    ``results/recorded/<machine>`` (:func:`lloydbook.sweeps.sweep_commands`), in backticks."""
    entries, unstacked = _paper_specs(name)
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
    """The shell commands that train the paper-scale sweeps ``names`` (:func:`lloydbook.sweeps.paper_sweeps`) into a
    machine's folder :data:`lloydbook.results.RECORDED_STORE` (``results/recorded/<machine>``, to be committed), one
    row per command (:func:`lloydbook.sweeps.sweep_commands`), as HTML code."""
    found = {name: (entries, unstacked) for name, entries, unstacked in paper_sweeps()}
    unknown = [n for n in names if n not in found]
    if isinstance(names, str) or unknown:
        raise ValueError(f"names must be a list of paper-scale sweeps {list(found)}, got {names!r}")
    store = results.RECORDED_STORE
    rows = [(n, f"<code>{html.escape(c)}</code>") for n in names for c in sweep_commands(*found[n], store)]
    return Table(("sweep", f"command (then commit <code>{html.escape(store)}/</code>)"), rows)


def gpu_status() -> str:
    """What the checkout holds of training runs recorded on GPUs, in words: the GPU machines' folders under
    ``results/recorded/`` (:func:`lloydbook.results.gpu_run_dirs`), or that there are none. The CPU's
    paper-setting store (``cpu-<model>``) is chapter 04's own section."""
    dirs = results.gpu_run_dirs()
    if dirs:
        return f"results/recorded/ holds the runs of {len(dirs)} GPU machine(s): {', '.join(d.name for d in dirs)}"
    return "no runs recorded on a GPU are committed (no GPU machine's folder under results/recorded/)"
