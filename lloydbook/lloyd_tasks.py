"""Helpers of the chapter "Lloyd's algorithm and clustering tasks" (``book/01_lloyd.ipynb``): scikit-learn's
Lloyd iteration against :func:`lloydlib.lloyd_step` (Leaner paper, Algorithm 2), the two rescalings of
Appendix D, the initialisations' objectives, and the chapter's figures. Points ``X`` are (batch, n, d),
centers ``C`` (batch, k, d), stored as rows.
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
    "sklearn_agreement",
    "appendix_d_rescale",
    "minmax_with_centers",
    "median_ratios",
    "quartile_band",
    "plot_objective_bands",
    "plot_init_bands",
    "plot_families",
    "plot_variants",
    "plot_minmax_example",
]

CMAP = plt.get_cmap("tab10")


def sklearn_agreement(X: torch.Tensor, C: torch.Tensor, steps: int) -> tuple[float, int, int]:
    """Chain ``steps`` Lloyd steps of ours and of scikit-learn's on every task, from the same centers.

    ``X`` (batch, n, d) and ``C`` (batch, k, d), float64. At every step both implementations start from
    *our* previous centers; scikit-learn's step is ``KMeans(algorithm="lloyd", max_iter=1)``. A task on
    which our step meets an empty cluster (where the two conventions differ) is skipped. Returns
    ``(max_dev, compared, skipped)``: the largest absolute difference of a center coordinate over the
    compared tasks and steps, and the numbers of compared and skipped tasks.
    """
    max_dev, compared, skipped = 0.0, 0, 0
    for b in range(X.shape[0]):
        Xb, Cb, dev = X[b : b + 1], C[b : b + 1], 0.0
        for _ in range(steps):
            ours, empty = L.lloyd_step(Xb, Cb, return_empty=True)
            if bool(empty.any()):
                skipped += 1
                break
            km = KMeans(n_clusters=Cb.shape[1], init=Cb[0].numpy(), n_init=1, max_iter=1, algorithm="lloyd", tol=0.0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                ref = km.fit(Xb[0].numpy()).cluster_centers_
            dev = max(dev, float(np.abs(ours[0].numpy() - ref).max()))
            Cb = ours
        else:
            max_dev, compared = max(max_dev, dev), compared + 1
    return max_dev, compared, skipped


def appendix_d_rescale(X: torch.Tensor, C: torch.Tensor):
    """Appendix D's recipe for real data: shift by the per-dimension minimum, divide by one scalar.

    ``lo`` (batch, 1, d) is the per-dimension minimum over X and C together, ``v`` (batch, 1, 1) the largest
    shifted coordinate v_ub. Returns ``((X - lo) / v, (C - lo) / v, lo, v)``; squared distances are divided
    by v^2, so Lloyd's algorithm is unchanged.
    """
    lo = torch.minimum(X.amin(1, keepdim=True), C.amin(1, keepdim=True))
    v = torch.maximum((X - lo).amax((1, 2), keepdim=True), (C - lo).amax((1, 2), keepdim=True))
    return (X - lo) / v, (C - lo) / v, lo, v


def minmax_with_centers(X: torch.Tensor, C: torch.Tensor):
    """Per-dimension min-max scaling of the points (:func:`lloydlib.minmax_scale`), centers mapped alike,
    ``(C - min X) / (max X - min X)`` per dimension. Returns the scaled ``(X, C)``, shapes unchanged."""
    lo, span = X.amin(1, keepdim=True), (X - X.amin(1, keepdim=True)).amax(1, keepdim=True)
    return L.minmax_scale(X), (C - lo) / span


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


# --- figures (each returns its figure) ---------------------------------------------------------------


def quartile_band(ax, curves, *, label=None, alpha=0.3):
    """Draw the median of ``curves`` (tasks, steps + 1) against the step and its interquartile band."""
    r = np.asarray(curves)
    q25, q50, q75 = np.percentile(r, [25, 50, 75], axis=0)
    steps = range(r.shape[1])
    (line,) = ax.plot(steps, q50, lw=2, label=label)
    ax.fill_between(steps, q25, q75, alpha=alpha, color=line.get_color())
    return line


def plot_objective_bands(objs: dict, title: str):
    """One panel per family: its objectives ``objs[family]`` (tasks, steps + 1) relative to their start."""
    fig, axes = plt.subplots(1, len(objs), figsize=(15, 3), sharey=True, squeeze=False)
    for ax, (family, obj) in zip(axes[0], objs.items()):
        quartile_band(ax, (obj / obj[:, :1]).numpy())
        ax.set_title(family)
        ax.set_xlabel("Lloyd step $t$")
    axes[0, 0].set_ylabel(r"$\mathcal{L}(X, C^{(t)}) / \mathcal{L}(X, C^{(0)})$")
    fig.suptitle(title, y=1.04)
    return fig


def plot_init_bands(init_obj: dict, best: torch.Tensor, title: str):
    """The objectives of each initialisation relative to the best found; arguments as :func:`median_ratios`."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for init, obj in init_obj.items():
        quartile_band(ax, (obj / best[:, None]).numpy(), label=init, alpha=0.2)
    ax.set_xlabel("Lloyd step $t$")
    ax.set_ylabel("objective / best objective found")
    ax.set_title(title)
    ax.legend()
    return fig


def _task_panels(panels, n: int, seed: int, suptitle: str):
    """One task (d = 2, k = 6) per ``(title, sample_tasks keywords)`` of ``panels``, each drawn from ``seed``:
    points coloured by mixture component, initial centers as crosses, in [0, 1]^2."""
    fig, axes = plt.subplots(1, len(panels), figsize=(16, 3.4), squeeze=False)
    for ax, (title, kw) in zip(axes[0], panels):
        X, C, lab = L.sample_tasks(1, n, 2, 6, seed=seed, dtype=torch.float64, return_labels=True, **kw)
        ax.scatter(X[0, :, 0], X[0, :, 1], s=4, c=[CMAP(int(a) % 10) for a in lab[0]], alpha=0.6, lw=0)
        ax.scatter(C[0, :, 0], C[0, :, 1], marker="x", s=60, c="k", lw=2)
        ax.set_title(title, fontsize=10)
        ax.set(xlim=(-0.03, 1.03), ylim=(-0.03, 1.03), aspect="equal", xticks=[0, 1], yticks=[0, 1])
    fig.suptitle(suptitle, y=1.02)
    return fig


def plot_families(families, n: int, *, seed: int):
    """One task of each family, each drawn from ``seed``."""
    suptitle = "The five families of Appendix D (d=2, k=6; colours: mixture component; crosses: initial centers)"
    return _task_panels([(f, {"family": f}) for f in families], n, seed, suptitle)


def plot_variants(variants, n: int, *, seed: int):
    """One normal task per variant ``(title, keyword arguments of lloydlib.sample_tasks)``, each drawn from ``seed``."""
    suptitle = "Variants of the normal family (Figure 7 of the Leaner paper); same seed in every panel"
    return _task_panels(variants, n, seed, suptitle)


def plot_minmax_example(n: int, *, seed: int, steps: int = 20):
    """Lloyd (k = 2) before and after per-dimension min-max scaling, on a stretched task (1, n, 2) drawn from
    ``seed``: long axis of scale 4, short one 0.25, the first n // 2 points shifted by 1.5 along the short
    axis only."""
    g = torch.Generator().manual_seed(seed)
    raw = torch.randn(1, n, 2, generator=g, dtype=torch.float64) * torch.tensor([4.0, 0.25], dtype=torch.float64)
    raw[0, : n // 2, 1] += 1.5
    C_raw = raw[:, torch.tensor([0, n - 1])]  # one initial center in each group
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    panels = (
        (axes[0], raw, C_raw, "raw data: Lloyd (k=2) cuts the long axis"),
        (axes[1], *minmax_with_centers(raw, C_raw), "per-dimension min-max: Lloyd finds the two groups"),
    )
    for ax, Z, C0, title in panels:
        part = L.assign(Z, L.lloyd(Z, C0, steps)[0])[0]
        ax.scatter(Z[0, :, 0], Z[0, :, 1], s=5, c=[CMAP(int(a)) for a in part], alpha=0.7, lw=0)
        ax.set_aspect("equal")
        ax.set_title(title, fontsize=10)
    return fig
