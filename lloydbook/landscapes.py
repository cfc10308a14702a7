"""The chapter *Loss landscapes* (``book/08_landscapes.ipynb``): per-seed surfaces, their statistics, figures.

The surfaces are :mod:`lloydlib.generalisation.landscape`'s: a loss of a trained layer on the plane
theta + a delta + b eta spanned by two filter-normalised random directions (Leaner paper, Figs. 3 and 5;
Li et al. 2018). A *setting* is a list of :class:`lloydlib.training.Run` (its seeds); :func:`surfaces` gives per kind
an array (seeds, g, g), which the statistics below reduce to per-seed values (seeds,).

Seeds: the book's tasks and directions come from seeds the chapter names (``Chapter.seed``, from ``LLOYD_SEED``).
The pilot that set the expected verdicts (:data:`PILOT_EVAL_SEED`, :data:`PILOT_DIRECTION_SEED`) and a second look
after which two claims were reworded (:data:`LOOK_EVAL_SEED`, :data:`LOOK_DIRECTION_SEED`) are records no draw uses,
so every asserted claim is confirmed on tasks and directions that played no part in its wording; training streams
draw from 63-bit seeds derived from the run's seed (:func:`lloydlib.training.derive_seed`), never from these.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.colors import LogNorm, Normalize

import lloydlib as L
from lloydlib.checks import check_choice
from lloydlib.generalisation.landscape import (
    grid_coordinates,
    local_minima,
    mean_log_rise,
    minimum_offset,
    random_directions,
    task_surfaces,
)
from lloydlib.training import DTYPES

from .claims.evidence import pooled_median, q3
from .tables import Table

__all__ = [
    "PILOT_EVAL_SEED",
    "PILOT_DIRECTION_SEED",
    "eval_tasks",
    "surfaces",
    "minima_counts",
    "offsets",
    "second_minimum_ratios",
    "rises",
    "plane_rises",
    "plane_max",
    "centre",
    "shape_numbers",
    "gap_numbers",
    "shape_table",
    "gap_table",
    "surface_panels",
    "seed_strip",
]

#: records (no draw of the book uses them): the pilot's evaluation tasks, seed PILOT_EVAL_SEED + i for the i-th batch,
#: and its directions of a run with training seed s, PILOT_DIRECTION_SEED + s (the book's are named by the chapter)
PILOT_EVAL_SEED, PILOT_DIRECTION_SEED = 20_000, 40_000
#: the second look's tasks and directions (the claims' wording was settled on them; not used by the book)
LOOK_EVAL_SEED, LOOK_DIRECTION_SEED = 10_000, 30_000


def eval_tasks(count: int, n: int, d: int, k: int, *, seed: int, family: str = "normal"):
    """``count`` fixed evaluation tasks (Appendix D of the Leaner paper) in float64: X (count, n, d),
    C0 (count, k, d), from :func:`lloydlib.sample_tasks` with ``seed``."""
    return L.sample_tasks(count, n, d, k, family=family, seed=seed, dtype=torch.float64)


def surfaces(
    runs, X, C0, *, direction_seed: int, kinds, radius: float, grid: int, precision: str = "float64"
) -> dict[str, np.ndarray]:
    """Every run's surfaces on its own plane: kind -> array (len(runs), grid, grid).

    Run ``r`` is evaluated on the tasks X (count, n, d), C0 (count, k, d) at its own ``tau`` and ``loss`` (the
    training objective of Eq. 6), along the directions :func:`lloydlib.generalisation.landscape.random_directions`
    draws from ``direction_seed + r.config.seed``, in ``precision`` ("float64" or "float32"); ``kinds`` are those of
    :func:`lloydlib.generalisation.landscape.task_surfaces`. A run that is not finished raises ValueError.
    """
    where = dict(kinds=kinds, radius=radius, grid=grid, dtype=DTYPES[check_choice("precision", precision, DTYPES)])
    out = {k: [] for k in kinds}
    for r in runs:
        if r.status != "done":
            raise ValueError(f"run {r.config.label()} has status {r.status!r}; surfaces need a finished run")
        dirs = random_directions(r.model, direction_seed + r.config.seed)
        s = task_surfaces(r.model, X, C0, dirs, tau=r.config.tau, regularizer=r.config.loss, **where)
        for k in kinds:
            out[k].append(s[k])
    return {k: np.stack(v) for k, v in out.items()}


def _per_seed(S, stat) -> np.ndarray:
    """``stat`` of each seed's surface: (seeds, g, g) -> (seeds,)."""
    S = np.asarray(S, dtype=float)
    if S.ndim != 3:
        raise ValueError(f"surfaces must have shape (seeds, g, g), got {S.shape}")
    return np.array([stat(s) for s in S])


def minima_counts(S) -> np.ndarray:
    """Per seed, the number of strict local minima of its surface (:func:`~lloydlib.generalisation.landscape.local_minima`):
    (seeds, g, g) -> (seeds,) integers; 1 is a unimodal surface on the grid."""
    return _per_seed(S, lambda s: len(local_minima(s)))


def _second_minimum_ratio(s) -> float:
    values = sorted(s[i, j] for i, j in local_minima(s))
    return values[1] / values[0] if len(values) > 1 else np.inf


def second_minimum_ratios(S) -> np.ndarray:
    """Per seed, how high its surface's second-lowest strict local minimum lies, as a multiple of the lowest
    point's value: (seeds, g, g) -> (seeds,), +inf for a surface with one strict local minimum. A second
    basin at low loss gives a value near 1; a ripple in the high-loss periphery, a large one."""
    return _per_seed(S, _second_minimum_ratio)


def offsets(S) -> np.ndarray:
    """Per seed, how many grid steps the lowest point lies from the centre (the trained weights):
    (seeds, g, g) -> (seeds,) integers (:func:`~lloydlib.generalisation.landscape.minimum_offset`)."""
    return _per_seed(S, minimum_offset)


def rises(S) -> np.ndarray:
    """Per seed, how steeply its surface rises around the centre
    (:func:`~lloydlib.generalisation.landscape.mean_log_rise`): (seeds, g, g) -> (seeds,)."""
    return _per_seed(S, mean_log_rise)


def plane_rises(runs, X, C0, *, direction_seeds, radius: float, grid: int, precision: str = "float64") -> np.ndarray:
    """Per run, its training loss's :func:`rises` averaged over several planes, one per seed of
    ``direction_seeds`` (each plane of run ``r`` drawn from ``seed + r.config.seed``, as :func:`surfaces`
    does, in its ``precision``): (len(runs),). One plane's rise depends on its random directions; the mean
    over planes is what the model decides."""
    seeds = list(direction_seeds)
    if not seeds:
        raise ValueError("direction_seeds must hold at least one seed, got none")
    where = dict(kinds=("smoothed",), radius=radius, grid=grid, precision=precision)
    per_plane = [rises(surfaces(runs, X, C0, direction_seed=s, **where)["smoothed"]) for s in seeds]
    return np.mean(per_plane, axis=0)


def plane_max(S) -> np.ndarray:
    """Per seed, the largest value on the plane: (seeds, g, g) -> (seeds,)."""
    return _per_seed(S, np.max)


def centre(S) -> np.ndarray:
    """Per seed, the value at the centre (the trained weights): (seeds, g, g) -> (seeds,)."""
    return _per_seed(S, lambda s: s[s.shape[0] // 2, s.shape[1] // 2])


def shape_numbers(S: dict) -> dict:
    """What Fig. 3's text and its unimodality claim quote of the surfaces ``S[key]`` (seeds, g, g), every seed of
    every key pooled: ``{glue name: value}``, the number of surfaces, how many have exactly one strict local minimum
    (:func:`minima_counts`) and the lowest :func:`second_minimum_ratios` (+inf when none has a second)."""
    counts = np.concatenate([minima_counts(s) for s in S.values()])
    second = np.concatenate([second_minimum_ratios(s) for s in S.values()])
    return {"n-surfaces": len(counts), "n-unimodal": int(np.sum(counts == 1)), "second-min": float(second.min())}


def gap_numbers(by_family: dict, by_d: dict, embeddings, *, dmin: int, dmax: int, n: int) -> dict:
    """The numbers the text of Fig. 5 quotes, ``{glue name (without the chapter prefix): value}``, from the gap
    surfaces (seeds, g, g) ``by_family[(family, embedding)]`` (the family runs) and ``by_d[(d, embedding)]``
    (normal tasks at the dimensions ``dmin`` and ``dmax``): medians over seeds and ``embeddings`` pooled of the
    largest gap on the plane (:func:`plane_max`) and of the gap at the trained weights (:func:`centre`); the
    normal family's largest gap at ``dmin`` also per point (``n`` points per task)."""
    both = {**by_family, **by_d}

    def over(stat, first):
        return pooled_median(stat(both[(first, e)]) for e in embeddings)

    normal_max = over(plane_max, dmin)
    return {
        "normal-max": normal_max,
        "normal-per-point": normal_max / n,
        "normal-max-hi": over(plane_max, dmax),
        "normal-centre-hi": over(centre, dmax),
        "cauchy-max": over(plane_max, "cauchy"),
        "ratio": over(plane_max, "cauchy") / over(plane_max, "normal"),
        "cauchy-centre": over(centre, "cauchy"),
        "normal-centre": over(centre, "normal"),
    }


# ----------------------------------------------------------------------------------------- tables
def shape_table(surfaces: dict) -> Table:
    """Fig. 3's surfaces in numbers: per setting (``surfaces[label]``, (seeds, g, g)) the number of strict local
    minima of each seed's surface (:func:`minima_counts`), how many grid steps its lowest point lies from the
    centre (:func:`offsets`) and the loss at the centre, the trained weights (median [q25, q75] over seeds)."""
    rows = [[label, minima_counts(S).tolist(), offsets(S).tolist(), q3(centre(S))] for label, S in surfaces.items()]
    header = ["setting", "strict local minima per seed", "lowest point's distance from the centre", "centre loss"]
    return Table(header, rows)


def gap_table(surfaces: dict) -> Table:
    """Fig. 5's surfaces in numbers: per setting (``surfaces[label]``, (seeds, g, g), one surface per finished
    run) the number of surfaces, the largest gap on the plane and the gap at the trained weights (median
    [q25, q75] over seeds)."""
    rows = [[label, len(S), q3(plane_max(S)), q3(centre(S))] for label, S in surfaces.items()]
    return Table(["setting", "finished runs", "largest gap on the plane", "at the trained weights"], rows)


# ----------------------------------------------------------------------------------------- figures
def surface_panels(panels, rows, cols, *, radius: float, title: str, label: str, log: bool = False):
    """Small multiples of surfaces with shared axes and one colour scale: ``panels[(row, col)]`` is a (g, g)
    array on the grid of :func:`~lloydlib.generalisation.landscape.grid_coordinates` (``radius``), drawn as
    filled contours of a (horizontal) and b (vertical) with the centre marked; ``rows`` and ``cols`` give
    the order and the labels; ``log`` uses a logarithmic colour scale; ``label`` names the colour bar."""
    missing = [(r, c) for r in rows for c in cols if (r, c) not in panels]
    if missing:
        raise ValueError(f"panels must hold every (row, col) of rows x cols, missing {missing}")
    values = np.concatenate([np.ravel(panels[(r, c)]) for r in rows for c in cols])
    lo, hi = float(values.min()), float(values.max())
    scale, spacing = (LogNorm, np.geomspace) if log else (Normalize, np.linspace)
    norm, levels = scale(lo, hi), spacing(lo, hi, 16)
    size = (2.6 * len(cols) + 1, 2.4 * len(rows) + 0.6)
    fig, axes = plt.subplots(len(rows), len(cols), figsize=size, squeeze=False, sharex=True, sharey=True)
    g = np.shape(panels[(rows[0], cols[0])])[0]
    x = grid_coordinates(radius, g)
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            ax = axes[i, j]
            cs = ax.contourf(x, x, np.asarray(panels[(r, c)]).T, levels=levels, norm=norm, cmap="viridis")
            ax.plot(0, 0, "w+", ms=8)
            ax.set_title(f"{r}, {c}", fontsize=9)
            ax.set_aspect("equal")
        axes[i, 0].set_ylabel("b")
    for ax in axes[-1]:
        ax.set_xlabel("a")
    fig.colorbar(cs, ax=axes, shrink=0.85, label=label)
    fig.suptitle(title, fontsize=10)
    plt.show()


def seed_strip(values, *, lines=None, ylabel: str, title: str, log: bool = True):
    """Per-seed values of several settings side by side: ``values`` maps a setting's name to its per-seed
    array; each seed is a dot, the median a bar; ``lines`` maps a label to a horizontal reference level."""
    if not values:
        raise ValueError("values must hold at least one setting, got none")
    fig, ax = plt.subplots(figsize=(1.1 * len(values) + 2.5, 3.4))
    for i, v in enumerate(values.values()):
        v = np.asarray(v, dtype=float)
        jitter = np.linspace(-0.15, 0.15, len(v))
        ax.plot(i + jitter, v, "o", color="C0", ms=4, alpha=0.7)
        ax.plot([i - 0.25, i + 0.25], [np.median(v)] * 2, "k-", lw=2)
    for k, (lab, y) in enumerate((lines or {}).items()):
        ax.axhline(y, color=f"C{k + 1}", ls="--", lw=1, label=lab)
    ax.set_xticks(range(len(values)), list(values), fontsize=8)
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if lines:
        ax.legend(fontsize=8)
    plt.show()
