"""What the two learning chapters share: training grids through the cache, per-seed statistics, claims.

The chapters *Learning one Lloyd step* (``book/04_learning.ipynb``) and *What shapes learning*
(``book/05_shapes.ipynb``) train one layer of Eq. 4 of the Leaner paper with Algorithm 1 and read every
result off a setting's seeds. A *setting* is a list of :class:`lloydlib.training.Run` (one per seed);
per-seed statistics return a numpy array of shape ``(len(runs),)``; a curve is a numpy array over the
evaluation steps of ``run.history`` (step 0, then every ``eval_every`` steps). The relative validation
loss ``val_rel_loss`` is Eq. 20 of the paper: the k-means loss of the layer's centers over that of one
Lloyd step from the same initial centers, so values below 1 beat one Lloyd step.

Seeds decide a comparison through their inter-quartile ranges (IQR): :func:`directional` records a
claim the paper states as "low < high". The plots are in :mod:`lloydbook.figures`.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import torch

from lloydlib import lloyd_step, training

from . import book, claims
from .tables import Table

__all__ = [
    "train_grid",
    "find_runs",
    "q3",
    "final",
    "final_train",
    "auc",
    "late_drop",
    "steps_to_settle",
    "largest_rise",
    "val_at",
    "common_time",
    "ms_per_step",
    "center_spread",
    "relative_spread",
    "directional",
    "fmt_list",
    "settings_table",
    "departures",
    "find_group",
    "comparison_table",
]


# ----------------------------------------------------------------------------------------- training
def train_grid(base, *, workers: int = 1, cache: str | Path | None = None, stack: bool = True, **axes) -> list:
    """Train (or load from the cache) every run of ``training.grid(base, **axes)``; print how many were new.

    ``workers`` training processes run the missing ones, in stacks of runs that share shapes unless ``stack``
    is False (experiments that time single runs); ``cache`` is the cache root (default: the library's,
    ``$LLOYD_CACHE``, which :func:`lloydbook.book.setup` points at the book's cache). Returns
    the runs in the grid's order (the last axis varying fastest).
    """
    cfgs = training.grid(base, **axes)
    dirs = None if cache is None else [cache]
    new = sum(training.lookup(c, dirs) is None for c in cfgs)
    t0 = time.time()
    runs = training.train_many(cfgs, cache_dir=cache, workers=workers, progress=False, stack=stack)
    print(f"{len(runs)} runs: {new} trained now, {len(runs) - new} from the cache ({time.time() - t0:.0f} s)")
    return runs


def find_runs(configs, root) -> list:
    """The runs of ``configs`` that the cache root ``root`` holds (e.g. a ``results/gpu/<machine>`` folder),
    in the order of ``configs``; configs it does not hold are skipped."""
    return [r for r in (training.lookup(c, [root]) for c in configs) if r is not None]


# ----------------------------------------------------------------------------------------- statistics
def q3(values) -> str:
    """``'median [q25, q75]'`` of per-seed values, three decimals each (numpy's linear quantiles)."""
    a, m, b = training.quartiles(values)
    return f"{m:.3f} [{a:.3f}, {b:.3f}]"


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


def late_drop(runs, frac: float = 0.2) -> float:
    """How much the median validation curve still fell over the last ``frac`` of training.

    With ``med`` the median over seeds at the evaluations ``0..E``: ``med[E - m] - med[E]`` where
    ``m = max(1, int(frac * E))``. Positive: still falling.
    """
    _, med, _, _ = training.curves(runs, "val_rel_loss")
    return float(med[-1 - max(1, int(frac * (len(med) - 1)))] - med[-1])


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


def val_at(run, t: float) -> float:
    """Relative validation loss at training time ``t`` seconds: the last evaluation at or before ``t``
    (the first evaluation when ``t`` precedes them all)."""
    h = run.history
    i = int(np.searchsorted(h["wall_time"], t, side="right")) - 1
    return float(h["val_rel_loss"][max(i, 0)])


def common_time(*settings) -> float:
    """The training time every setting reaches: over settings, the minimum of the longest run's final
    ``wall_time`` (seconds of training steps)."""
    return min(max(r.history["wall_time"][-1] for r in runs) for runs in settings)


def ms_per_step(runs) -> float:
    """Median over seeds of the milliseconds per training step: ``1000 * info['seconds'] / steps``."""
    return float(np.median([1000 * r.info["seconds"] / len(r.train_losses) for r in runs]))


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


# ----------------------------------------------------------------------------------------- claims
def directional(claim_id, statement, source, paper, low, high, low_name, high_name, *, at_paper=None) -> str:
    """Record a claim that the paper states as 'low < high' for per-seed values of two settings.

    reproduced: the IQR of ``low`` lies below that of ``high``; partly: the medians agree with the paper
    but the IQRs overlap (not determined at this scale); not reproduced: the medians are the other way
    round. At the paper's scale (``at_paper``; default: whether ``LLOYD_SCALE`` is ``paper``) only
    'reproduced' passes the check. Returns the verdict.
    """
    at_paper = book.scale() == "paper" if at_paper is None else bool(at_paper)
    rel = training.iqr_relation(low, high)
    med_low, med_high = np.median(low), np.median(high)
    if rel == "below":
        verdict, how, ok = "reproduced", "IQRs separate", True
    elif med_low < med_high:
        verdict, how, ok = "partly", "same direction, IQRs overlap: not determined at this scale", rel == "overlap"
    else:
        verdict, how, ok = "not reproduced", "medians the other way round", med_low >= med_high
    claims.record(
        claim_id,
        statement=statement,
        source=source,
        paper=paper,
        ours=f"{low_name} {q3(low)} vs {high_name} {q3(high)}; {how}",
        verdict=verdict,
        check=bool(ok and (verdict == "reproduced" or not at_paper)),
    )
    return verdict


# ----------------------------------------------------------------------------------------- tables
def fmt_list(v) -> str:
    """A list or tuple as ``'a, b, c'`` (floats with ``:g``); anything else as ``str(v)``."""
    if not isinstance(v, (list, tuple)):
        return str(v)
    return ", ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in v)


def departures(rows) -> list:
    """The rows ``(setting, paper, this build)`` whose two values differ as text."""
    return [r for r in rows if str(r[1]) != str(r[2])]


def settings_table(rows) -> Table:
    """The settings of a build beside the paper's: rows ``(setting, paper, this build)``, flagged
    'departs' where they differ as text."""
    return Table(
        ("setting", "paper", "this build", ""),
        [(name, p, o, "departs" if str(p) != str(o) else "") for name, p, o in rows],
    )


def find_group(groups: dict, names, config, match):
    """The first group of ``groups`` (as returned by ``training.group(runs, *names)``) whose key agrees
    with ``config`` on the fields ``match`` (a subset of ``names``); None when none does."""
    names = list(names)
    want = tuple(getattr(config, f) for f in match)
    for key, runs in groups.items():
        if tuple(key[names.index(f)] for f in match) == want:
            return runs
    return None


def comparison_table(found, by, cells, ours, header) -> Table:
    """GPU runs beside this build's, one row per setting of ``found`` (``training.group(found, *by)``).

    A row is ``cells(config)`` (the setting's description, a list), then ``'q3 (s seeds)'`` of the GPU
    runs' final relative loss, then :func:`q3` of ``ours(config)`` (this build's runs of the matching
    setting, or None for '-'). ``header`` names every column.
    """
    rows = []
    for runs in training.group(found, *by).values():
        c = runs[0].config
        mine = ours(c)
        rows.append([*cells(c), f"{q3(final(runs))} ({len(runs)} seeds)", q3(final(mine)) if mine else "-"])
    return Table(header, rows)
