"""Helpers of the chapter "Lloyd's algorithm and clustering tasks" (``book/01_lloyd.ipynb``).

Bookkeeping and figures only; the algorithm itself is :mod:`lloydlib.lloyd` and the tasks are
:mod:`lloydlib.tasks`. Tensors follow the library's layout: points ``X`` of shape (batch, n, d), centers
``C`` of shape (batch, k, d) (the paper writes them as columns, we store them as rows).

- :func:`sklearn_step`, :func:`sklearn_agreement`: scikit-learn's Lloyd iteration, chained step by step
  against :func:`lloydlib.lloyd_step` (Leaner paper, Algorithm 2);
- :func:`appendix_d_rescale`, :func:`minmax_with_centers`: the two rescalings the chapter compares
  (Leaner paper, Appendix D);
- :func:`median_ratios`: how far each initialisation starts and ends from the best objective found;
- :func:`quartile_band`, :func:`plot_objective_bands`, :func:`plot_init_bands`, :func:`scatter_task`,
  :func:`plot_families`, :func:`plot_variants`, :func:`two_groups`, :func:`plot_minmax_example`: the
  chapter's figures.
"""

from __future__ import annotations

import warnings

import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

import lloydlib as L

__all__ = [
    "sklearn_step",
    "sklearn_agreement",
    "appendix_d_rescale",
    "minmax_with_centers",
    "median_ratios",
    "quartile_band",
    "plot_objective_bands",
    "plot_init_bands",
    "scatter_task",
    "plot_families",
    "plot_variants",
    "two_groups",
    "plot_minmax_example",
]

CMAP = plt.get_cmap("tab10")


# --- scikit-learn comparison -------------------------------------------------------------------------


def sklearn_step(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """One Lloyd step of scikit-learn from the centers ``C``: ``X`` (n, d), ``C`` (k, d) -> (k, d).

    ``KMeans(algorithm="lloyd", init=C, n_init=1, max_iter=1, tol=0)`` performs exactly one assignment
    and one update. scikit-learn moves the center of an empty cluster to a far point.
    """
    km = KMeans(n_clusters=C.shape[0], init=C, n_init=1, max_iter=1, algorithm="lloyd", tol=0.0)
    return km.fit(X).cluster_centers_


def sklearn_agreement(X: torch.Tensor, C: torch.Tensor, steps: int) -> tuple[float, int, int]:
    """Chain ``steps`` Lloyd steps of ours and of scikit-learn's on every task, from the same centers.

    ``X`` (batch, n, d) and ``C`` (batch, k, d), float64. At every step both implementations start from
    *our* previous centers. A task on which our step meets an empty cluster (where the two conventions
    differ) is skipped. Returns ``(max_dev, compared, skipped)``: the largest absolute difference of a
    center coordinate over the compared tasks and steps, and the numbers of compared and skipped tasks.
    """
    max_dev, compared, skipped = 0.0, 0, 0
    for b in range(X.shape[0]):
        Xb, Cb, dev = X[b : b + 1], C[b : b + 1], 0.0
        ok = True
        for _ in range(steps):
            ours, empty = L.lloyd_step(Xb, Cb, return_empty=True)
            if bool(empty.any()):
                ok = False
                break
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                ref = sklearn_step(Xb[0].numpy(), Cb[0].numpy())
            dev = max(dev, float(np.abs(ours[0].numpy() - ref).max()))
            Cb = ours
        if ok:
            max_dev, compared = max(max_dev, dev), compared + 1
        else:
            skipped += 1
    return max_dev, compared, skipped


# --- rescaling (Appendix D) --------------------------------------------------------------------------


def appendix_d_rescale(X: torch.Tensor, C: torch.Tensor):
    """Appendix D's recipe for real data: shift by the per-dimension minimum, divide by one scalar.

    ``X`` (batch, n, d), ``C`` (batch, k, d). ``lo`` (batch, 1, d) is the per-dimension minimum over
    X and C together, ``v`` (batch, 1, 1) the largest shifted coordinate v_ub. Returns
    ``((X - lo) / v, (C - lo) / v, lo, v)``; squared distances are divided by v^2, so every comparison,
    hence Lloyd's algorithm, is unchanged.
    """
    lo = torch.minimum(X.amin(1, keepdim=True), C.amin(1, keepdim=True))
    v = torch.maximum((X - lo).amax((1, 2), keepdim=True), (C - lo).amax((1, 2), keepdim=True))
    return (X - lo) / v, (C - lo) / v, lo, v


def minmax_with_centers(X: torch.Tensor, C: torch.Tensor):
    """Per-dimension min-max scaling of the points (:func:`lloydlib.minmax_scale`), centers mapped alike.

    ``X`` (batch, n, d), ``C`` (batch, k, d). Each dimension of X is sent to [0, 1]; the centers go
    through the same affine map, ``(C - min X) / (max X - min X)`` per dimension. Returns the scaled
    ``(X, C)`` with the shapes of the inputs.
    """
    lo, span = X.amin(1, keepdim=True), (X - X.amin(1, keepdim=True)).amax(1, keepdim=True)
    return L.minmax_scale(X), (C - lo) / span


# --- initialisations --------------------------------------------------------------------------------


def median_ratios(init_obj: dict, best: torch.Tensor) -> dict:
    """Per initialisation, the median over tasks of its objective divided by the best objective found,
    before the first Lloyd step and after the last.

    ``init_obj`` maps an initialisation to its objectives (tasks, steps + 1); ``best`` (tasks,) is the
    smallest objective any initialisation reached on each task. Returns ``{"init0-<init>": ...,
    "initT-<init>": ...}`` (floats), the names the chapter glues them under.
    """
    out = {}
    for init, obj in init_obj.items():
        if obj.ndim != 2 or obj.shape[0] != best.shape[0]:
            raise ValueError(
                f"init_obj[{init!r}] must have shape (tasks, steps + 1) with tasks = {best.shape[0]}, "
                f"got {tuple(obj.shape)}"
            )
        out[f"init0-{init}"] = float((obj[:, 0] / best).median())
        out[f"initT-{init}"] = float((obj[:, -1] / best).median())
    return out


# --- figures -----------------------------------------------------------------------------------------


def quartile_band(ax, curves, *, label=None, alpha=0.3):
    """Draw the median of ``curves`` (tasks, steps + 1) against the step and its interquartile band."""
    r = np.asarray(curves)
    q25, q50, q75 = np.percentile(r, [25, 50, 75], axis=0)
    steps = range(r.shape[1])
    (line,) = ax.plot(steps, q50, lw=2, label=label)
    ax.fill_between(steps, q25, q75, alpha=alpha, color=line.get_color())
    return line


def plot_objective_bands(objs: dict, title: str):
    """One panel per family: the objective along Lloyd's algorithm relative to its start.

    ``objs`` maps a family to its objectives, (tasks, steps + 1). Returns the figure.
    """
    fig, axes = plt.subplots(1, len(objs), figsize=(15, 3), sharey=True)
    for ax, (family, obj) in zip(np.atleast_1d(axes), objs.items()):
        quartile_band(ax, (obj / obj[:, :1]).numpy())
        ax.set_title(family)
        ax.set_xlabel("Lloyd step $t$")
    np.atleast_1d(axes)[0].set_ylabel(r"$\mathcal{L}(X, C^{(t)}) / \mathcal{L}(X, C^{(0)})$")
    fig.suptitle(title, y=1.04)
    return fig


def plot_init_bands(init_obj: dict, best: torch.Tensor, title: str):
    """The objective of each initialisation relative to the best objective found, median and IQR.

    ``init_obj`` maps an initialisation to its objectives (tasks, steps + 1); ``best`` (tasks,) is the
    smallest objective any initialisation reached on each task. Returns the figure.
    """
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for init, obj in init_obj.items():
        quartile_band(ax, (obj / best[:, None]).numpy(), label=init, alpha=0.2)
    ax.set_xlabel("Lloyd step $t$")
    ax.set_ylabel("objective / best objective found")
    ax.set_title(title)
    ax.legend()
    return fig


def scatter_task(ax, X, C, labels, title: str) -> None:
    """One two-dimensional task in [0, 1]^2: ``X`` (n, 2) coloured by ``labels`` (n,), ``C`` (k, 2) as crosses."""
    ax.scatter(X[:, 0], X[:, 1], s=4, c=[CMAP(int(lab) % 10) for lab in labels], alpha=0.6, lw=0)
    ax.scatter(C[:, 0], C[:, 1], marker="x", s=60, c="k", lw=2)
    ax.set_title(title, fontsize=10)
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_aspect("equal")
    ax.set_xticks([0, 1])
    ax.set_yticks([0, 1])


def plot_families(families, n: int, *, seed: int, k: int = 6):
    """One task of each family (d = 2, each drawn from ``seed``), coloured by mixture component. Returns the figure."""
    fig, axes = plt.subplots(1, len(families), figsize=(16, 3.4))
    for ax, family in zip(np.atleast_1d(axes), families):
        X, C, lab = L.sample_tasks(1, n, 2, k, family=family, seed=seed, dtype=torch.float64, return_labels=True)
        scatter_task(ax, X[0], C[0], lab[0], family)
    fig.suptitle(
        f"The five families of Appendix D (d=2, k={k}; colours: mixture component; crosses: initial centers)",
        y=1.02,
    )
    return fig


def plot_variants(variants, n: int, *, seed: int, k: int = 6):
    """One normal task per variant (title, keyword arguments of :func:`lloydlib.sample_tasks`), each drawn from
    ``seed``. Returns the figure."""
    fig, axes = plt.subplots(1, len(variants), figsize=(16, 3.4))
    for ax, (title, kw) in zip(np.atleast_1d(axes), variants):
        X, C, lab = L.sample_tasks(1, n, 2, k, seed=seed, dtype=torch.float64, return_labels=True, **kw)
        scatter_task(ax, X[0], C[0], lab[0], title)
    fig.suptitle("Variants of the normal family (Figure 7 of the Leaner paper); same seed in every panel", y=1.02)
    return fig


def two_groups(n: int, *, seed: int):
    """A stretched two-dimensional task, (1, n, 2), drawn from ``seed``, and one initial center in each group,
    (1, 2, 2).

    The long axis has scale 4, the short one 0.25; the first n // 2 points are shifted by 1.5 along the
    short axis only, so the groups are apart along the short axis.
    """
    g = torch.Generator().manual_seed(seed)
    raw = torch.randn(1, n, 2, generator=g, dtype=torch.float64) * torch.tensor([4.0, 0.25], dtype=torch.float64)
    raw[0, : n // 2, 1] += 1.5
    return raw, raw[:, torch.tensor([0, n - 1])]


def plot_minmax_example(n: int, *, seed: int, steps: int = 20):
    """Lloyd (k = 2) on :func:`two_groups` (drawn from ``seed``) before and after per-dimension min-max scaling.
    Returns the figure."""
    raw, C_raw = two_groups(n, seed=seed)
    scaled, C_sc = minmax_with_centers(raw, C_raw)
    part_raw = L.assign(raw, L.lloyd(raw, C_raw, steps)[0])[0]
    part_sc = L.assign(scaled, L.lloyd(scaled, C_sc, steps)[0])[0]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    panels = (
        (axes[0], raw[0], part_raw, "raw data: Lloyd (k=2) cuts the long axis"),
        (axes[1], scaled[0], part_sc, "per-dimension min-max: Lloyd finds the two groups"),
    )
    for ax, Z, part, title in panels:
        ax.scatter(Z[:, 0], Z[:, 1], s=5, c=[CMAP(int(a)) for a in part], alpha=0.7, lw=0)
        ax.set_aspect("equal")
        ax.set_title(title, fontsize=10)
    return fig
