"""The chapter *Many steps and new inputs* (``book/06_many_steps.ipynb``): bookkeeping, statistics, figures.

Chapter 04's trained one-layer models run for T steps (Leaner paper, Appendix C, Figs. 6, 7 and 12) with
:mod:`lloydlib.generalisation.multistep`. A *setting* is a list of :class:`lloydlib.training.Run` (one per seed);
its *curves* (:func:`evaluate`) hold per seed the mean log k-means objective at every step. The run of seed s reads
tasks of seed ``task_seed + s``, the same for every setting and for Lloyd's (differences are paired by seed); training
streams draw from 63-bit hashed seeds (``lloydlib.training.derive_seed``), never these. :func:`gap` and :func:`rise`
are per-seed statistics (seeds,) for :func:`lloydbook.claims.evidence.decide`; :func:`pooled_median` (of
:mod:`lloydbook.claims.evidence`) and :func:`init_numbers` give the numbers the chapter's prose quotes.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import torch

import lloydlib as L
from lloydlib.checks import check_choice, check_int
from lloydlib.generalisation.blocked_layer import layer as blocked_layer
from lloydlib.generalisation.multistep import (
    MODES,
    lloyd_objectives,
    mean_log,
    model_objectives,
    multistep,
    seed_quartiles,
)
from lloydlib.model import LearnableTransformer

from .claims.evidence import pooled_median
from .figures import COLOR, DASH

__all__ = [
    "PILOT_SEED",
    "PAPER_MODELS",
    "SHIFTS",
    "shift_tasks",
    "evaluate",
    "gap",
    "mean_gap",
    "rise",
    "pooled_median",
    "init_numbers",
    "eval_ns",
    "exact_deviation",
    "data_rewrite",
    "panels",
    "gap_panels",
]

#: a record: the pilot's evaluation tasks for the run of seed s were drawn with seed PILOT_SEED + s (other tasks,
#: the same models), which fixed the chapter's expected verdicts (:mod:`lloydbook.expectations.many_steps`)
PILOT_SEED = 20_000

#: the models the paper evaluates in Figs. 6, 7 and 12 (their captions: n=512, d=32, k=10, tau=0.1; the paper's
#: M=10,000 training steps) and the training n's multiples Fig. 12 evaluates at (128 to 2048 points at n=512)
PAPER_MODELS = {"n": 512, "d": 32, "k": 10, "tau": 0.1, "steps": 10_000, "n_ratios": [0.25, 0.5, 2, 4]}

#: Fig. 7's shifts of the task distribution: name -> changes to the training config's task fields
#: (``scale`` entries are factors of the training scale)
SHIFTS = {
    "unequal weights": {"equal_weights": False},
    "anisotropic": {"isotropic": False},
    "scale halved": {"scale": 0.5},
    "scale doubled": {"scale": 2.0},
}


def shift_tasks(config, shift: str | None) -> dict:
    """The task fields (family, scale, isotropic, equal_weights) of ``config`` under a shift of
    :data:`SHIFTS` (None: the training distribution itself)."""
    fields = {f: getattr(config, f) for f in ("family", "scale", "isotropic", "equal_weights")}
    if shift is None:
        return fields
    check_choice("shift", shift, SHIFTS)
    for key, value in SHIFTS[shift].items():
        fields[key] = fields[key] * value if key == "scale" else value
    return fields


def _tasks(config, tasks: int, seed: int, n: int | None = None, init: str = "random", shift: str | None = None):
    n = config.n if n is None else check_int("n", n, config.k)
    dtype = getattr(torch, config.dtype)
    return L.sample_tasks(tasks, n, config.d, config.k, init=init, seed=seed, dtype=dtype, **shift_tasks(config, shift))


def _drawn(cache, config, tasks: int, seed: int, n=None, init: str = "random", shift=None):
    """``(key, (X, C0))``: :func:`_tasks`' draw and what it depends on (the task count, the config's n, d, k,
    dtype and task distribution under ``shift``, ``n``, ``init`` and the seed), read from ``cache`` (a dict, or
    None: none) when drawn before and stored there otherwise."""
    key = (tasks, config.n if n is None else n, config.d, config.k, config.dtype, init, seed)
    key += tuple(shift_tasks(config, shift).items())
    if cache is None:
        return key, _tasks(config, tasks, seed, n, init, shift)
    if key not in cache:
        cache[key] = _tasks(config, tasks, seed, n, init, shift)
    return key, cache[key]


def _lloyd_curve(cache, key, X, C0, steps: int) -> np.ndarray:
    """:func:`mean_log` of Lloyd's objectives on the draw ``key`` (X, C0) over ``steps``, from ``cache`` when
    computed before (a dict, or None: none)."""
    if cache is None:
        return mean_log(lloyd_objectives(X, C0, steps))
    if ("lloyd", key, steps) not in cache:
        cache[("lloyd", key, steps)] = mean_log(lloyd_objectives(X, C0, steps))
    return cache[("lloyd", key, steps)]


def evaluate(
    runs,
    steps: int,
    *,
    tasks: int,
    modes=("reembed",),
    n: int | None = None,
    init: str = "random",
    shift: str | None = None,
    task_seed: int,
    lloyd: bool = True,
    cache: dict | None = None,
) -> dict[str, np.ndarray]:
    """Curves (seeds, steps + 1) of mean log k-means objective per step: ``{mode: ..., "lloyd": ...}``.

    ``runs``: one setting (its seeds; all of one d, k); ``tasks`` evaluation tasks per seed with ``n`` points each
    (default: the training n), initial centers from ``init`` ("random", "gonzalez", "kmeans++"), drawn from the
    training distribution or under a ``shift`` of :data:`SHIFTS`, with seed ``task_seed + run.config.seed``.
    ``lloyd``: also Lloyd's curve from the same centers (False: no "lloyd" entry). ``cache``: a dict that keeps
    every task draw and Lloyd's curve on it, so that other settings of the same task distribution (the same draw
    for the same seed: it depends on the config's n, d, k, dtype and task fields, not on its embedding or loss)
    and other calls read them instead of computing them again (the same numbers); None keeps nothing.
    """
    runs = list(runs)
    if not runs:
        raise ValueError("runs must hold at least one run, got none")
    steps = check_int("steps", steps, 0)
    tasks, task_seed = check_int("tasks", tasks, 1), check_int("task_seed", task_seed, 0)
    modes = [check_choice("modes", m, MODES) for m in modes]
    if cache is not None and not isinstance(cache, dict):
        raise TypeError(f"cache must be a dict or None, got {type(cache).__name__}")
    out = {m: [] for m in [*modes, *(["lloyd"] if lloyd else [])]}
    for r in runs:
        key, (X, C0) = _drawn(cache, r.config, tasks, task_seed + r.config.seed, n, init, shift)
        for m in modes:
            out[m].append(mean_log(model_objectives(r.model, X, C0, steps, mode=m)))
        if lloyd:
            out["lloyd"].append(_lloyd_curve(cache, key, X, C0, steps))
    return {m: np.array(v) for m, v in out.items()}


def gap(curves: dict, step: int) -> np.ndarray:
    """Per seed, the re-embedded model's mean log objective minus Lloyd's at ``step`` (shape (seeds,)); below 0 the
    model is ahead (-0.05: about 5% lower). A diverged seed gives +inf."""
    a, b = curves["reembed"][:, step], curves["lloyd"][:, step]
    with np.errstate(invalid="ignore"):
        return np.where(np.isposinf(a), math.inf, a - b)


def mean_gap(curves: dict, start: int = 1, end: int | None = None) -> np.ndarray:
    """Per seed, the mean of :func:`gap` over steps ``start..end`` (inclusive; default: 1 to the last), shape
    (seeds,). The chapter reads "beats Lloyd's over T steps" as this mean over steps 1..T below 0."""
    last = curves["reembed"].shape[1] - 1
    end = last if end is None else check_int("end", end, 0, last)
    start = check_int("start", start, 0, end)
    return np.mean([gap(curves, t) for t in range(start, end + 1)], axis=0)


def rise(curves: dict, mode: str, start: int, end: int) -> np.ndarray:
    """Per seed, the change of ``mode``'s mean log objective from step ``start`` to ``end`` (shape (seeds,));
    above 0 the objective grew. A seed that is inf at ``end`` (and finite at ``start``) gives +inf."""
    a, b = curves[mode][:, start], curves[mode][:, end]
    with np.errstate(invalid="ignore"):
        return np.where(np.isposinf(b) & np.isfinite(a), math.inf, b - a)


def init_numbers(curves: dict, inits, settings, step: int) -> dict:
    """Per initialisation, the pooled medians (:func:`pooled_median`) over ``settings`` of Lloyd's and the
    re-embedded model's mean log objective at ``step``, and of the mean gap over steps 1 to the last
    (:func:`mean_gap`). ``curves`` maps ``(init, setting)`` to :func:`evaluate`'s curves. Returns
    ``{"lloydT-<init>": .., "modelT-<init>": .., "gapinit-<init>": ..}``, ``+`` written ``p`` in the init's
    name (``kmeans++`` -> ``kmeanspp``)."""
    out = {}
    for i in inits:
        name, cs = i.replace("+", "p"), [curves[(i, s)] for s in settings]
        out[f"lloydT-{name}"] = pooled_median(c["lloyd"][:, step] for c in cs)
        out[f"modelT-{name}"] = pooled_median(c["reembed"][:, step] for c in cs)
        out[f"gapinit-{name}"] = pooled_median(mean_gap(c) for c in cs)
    return out


def eval_ns(train_n: int, ratios) -> list[int]:
    """Fig. 12's evaluation sizes ``ratio * train_n``, sorted, without the training n itself (the paper's
    ratios 1/4, 1/2, 2, 4 of its training n = 512 give its 128, 256, 1024, 2048)."""
    return sorted({int(round(r * train_n)) for r in ratios} - {int(train_n)})


def exact_deviation(T: int, seed: int) -> float:
    """The largest deviation from Lloyd's centers of Theorem B.1's exact layer (``gamma = inf``, OH and BN, float64)
    run for ``T`` steps in every mode of :data:`lloydlib.generalisation.multistep.MODES`, on 16 tasks (d=3, k=5,
    n=48) drawn with ``seed``: a check of the evaluation code (0 up to rounding)."""
    X, C0 = L.sample_tasks(16, 48, 3, 5, seed=seed, dtype=torch.float64)
    dev = 0.0
    for emb in ("OH", "BN"):
        exact = LearnableTransformer(3, 5, emb, gamma=float("inf"), dtype=torch.float64).load_theorem_weights()
        out = multistep(exact, X, C0, check_int("T", T, 1))
        dev = max(dev, max(float((out[m] - out["lloyd"]).abs().max()) for m in MODES))
    return dev


def data_rewrite(runs, tasks: int, task_seed: int, *, cache: dict | None = None) -> np.ndarray:
    """Per run, shape ``(len(runs),)``: how far one layer of Eq. 4 on fresh tokens moves the data rows of the point
    tokens, ``||Xbar^(1)[:, :, :d] - X|| / ||X||`` (Frobenius norms over ``tasks`` evaluation tasks of the run's
    training distribution, seed ``task_seed + seed``; ``cache`` as in :func:`evaluate`: Fig. 6's draw). Appendix C:
    a learned value map "can also overwrite the x rows of the point tokens"; with Theorem B.1's weights they stay X
    (0). +inf for a diverged run. The layer is the model's reference one, in blocks
    (:func:`lloydlib.generalisation.blocked_layer.layer`: the same numbers)."""
    task_seed, out = check_int("task_seed", task_seed, 0), []
    for run in runs:
        _, (X, C0) = _drawn(cache, run.config, tasks, task_seed + run.config.seed)
        with torch.no_grad():
            Xbar = blocked_layer(run.model, *run.model.embed(X, C0))[0][..., : run.config.d]
        change = float(torch.linalg.norm(Xbar - X) / torch.linalg.norm(X))
        out.append(change if run.status != "diverged" and math.isfinite(change) else math.inf)
    return np.array(out)


# ----------------------------------------------------------------------------------------- figures
def _style(label: str):
    """Colour and line style from a label 'EMB:LOSS ...' (Lloyd's: black, dotted)."""
    if label.startswith("Lloyd"):
        return "k", ":"
    emb, _, rest = label.partition(":")
    return COLOR.get(emb, "C3"), DASH.get(rest.split(" ")[0], "-")


def panels(grid, titles, suptitle: str, *, ylabel="mean log k-means objective", sharey="row", zero=False):
    """Small multiples of curves over steps, median over seeds with the inter-quartile range shaded.

    ``grid``: rows of panels, each panel a dict ``{label: curves (seeds, T + 1)}`` (labels 'OH:L2 ...'
    take the embedding's colour and the loss's line style; 'Lloyd ...' is black and dotted); ``titles``
    the same rows of panel titles. Axes are shared (x everywhere, y per row or everywhere: ``sharey``);
    ``zero`` draws a dotted line at 0 (Lloyd's level when the curves are gaps to it).
    """
    rows, cols = len(grid), max(len(r) for r in grid)
    size = (2.6 * cols + 0.6, 2.3 * rows + 0.6)
    fig, axes = plt.subplots(rows, cols, figsize=size, squeeze=False, sharex=True, sharey=sharey)
    for i, row in enumerate(grid):
        for ax in axes[i, len(row) :]:
            ax.set_visible(False)
        for j, panel in enumerate(row):
            ax = axes[i, j]
            for label, curves in panel.items():
                color, ls = _style(label)
                q, steps = seed_quartiles(curves), np.arange(curves.shape[1])
                ax.plot(steps, q[1], ls, color=color, label=label, lw=1.5)
                ax.fill_between(steps, q[0], q[2], color=color, alpha=0.2, lw=0)
            if zero:
                ax.axhline(0.0, color="k", ls=":", lw=1)
            ax.set_title(titles[i][j], fontsize=9)
            if i == rows - 1:
                ax.set_xlabel("step t")
        axes[i, 0].set_ylabel(ylabel, fontsize=8)
        axes[i, 0].legend(fontsize=7)
    fig.suptitle(suptitle, y=1.0)
    fig.tight_layout()
    plt.show()


def gap_panels(grid, titles, suptitle: str):
    """:func:`panels` of per-seed gaps to Lloyd's (dicts ``{label: gaps (seeds, T + 1)}``, e.g.
    ``curves["reembed"] - curves["lloyd"]``): one y axis for all panels, Lloyd's level 0 dotted."""
    panels(grid, titles, suptitle, ylabel="model minus Lloyd's, log objective", sharey=True, zero=True)
