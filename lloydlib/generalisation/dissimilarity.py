"""Task dissimilarity by the earth mover's distance (the Leaner paper, Sec. 5, Figs. 9 and 19).

Each clustering task ``(X, C0)`` is summarised by the empirical distribution of its ``n * k`` squared
distances ``{||x_i - c_j||^2 : i in [n], j in [k]}`` between the points and the *initial* centers. Two tasks
are as dissimilar as the 1-D Wasserstein (earth mover's) distance between those two distributions,
computed by the maintained implementation ``scipy.stats.wasserstein_distance`` (each sample weighted
uniformly). Figure 9 of the paper shows this matrix for 4 tasks per family (20 x 20), Figure 19 for 16
per family (80 x 80), in the block order normal, cauchy, gumbel, laplace, lognormal.

Shapes: points ``X`` (batch, n, d), initial centers ``C0`` (batch, k, d); a dissimilarity matrix is a
numpy array (batch, batch) (or (batch, batch') between two sets of tasks); ``labels`` give each task's
group (its family), and the block summaries are numpy arrays (groups, groups) or (batch, groups).
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import wasserstein_distance

from .._validate import check_centers, check_choice, check_points
from ..distances import sqdist

__all__ = ["center_distances", "emd_matrix", "emd_cross", "groups_of", "block_summary", "task_to_blocks"]

REDUCTIONS = ("mean", "median")


def center_distances(X: torch.Tensor, C0: torch.Tensor) -> np.ndarray:
    """The ``n * k`` squared distances between each task's points and initial centers, sorted.

    ``X`` (batch, n, d), ``C0`` (batch, k, d) -> numpy float64 (batch, n * k), each row in increasing
    order (the empirical distribution the EMD of Fig. 9 compares). Computed in float64 by subtraction.
    """
    X = check_points(X)
    C0 = check_centers(C0, X, "C0")
    D = sqdist(X.detach().to("cpu", torch.float64), C0.detach().to("cpu", torch.float64), expand=False)
    return np.sort(D.reshape(D.shape[0], -1).numpy(), axis=1)


def _emd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty((a.shape[0], b.shape[0]))
    for i, u in enumerate(a):
        for j, v in enumerate(b):
            out[i, j] = wasserstein_distance(u, v)
    return out


def emd_matrix(X: torch.Tensor, C0: torch.Tensor) -> np.ndarray:
    """Pairwise task dissimilarity (Figs. 9 and 19): the 1-D Wasserstein distance between the
    distributions of :func:`center_distances` of every two tasks, ``scipy.stats.wasserstein_distance``.

    ``X`` (batch, n, d), ``C0`` (batch, k, d) -> numpy (batch, batch), symmetric with a zero diagonal.
    Tasks may have different ``n`` or ``k`` only through :func:`emd_cross`.
    """
    D = center_distances(X, C0)
    out = np.zeros((D.shape[0], D.shape[0]))
    for i in range(D.shape[0]):
        for j in range(i + 1, D.shape[0]):
            out[i, j] = out[j, i] = wasserstein_distance(D[i], D[j])
    return out


def emd_cross(X: torch.Tensor, C0: torch.Tensor, Y: torch.Tensor, D0: torch.Tensor) -> np.ndarray:
    """Dissimilarity between two sets of tasks: ``(X, C0)`` (batch, n, d), (batch, k, d) against ``(Y, D0)``
    (batch', n', d'), (batch', k', d'); numpy (batch, batch'), entry (i, j) the EMD of :func:`emd_matrix`
    between task i of the first set and task j of the second (sizes and dimensions may differ)."""
    return _emd(center_distances(X, C0), center_distances(Y, D0))


def groups_of(labels) -> list:
    """The distinct ``labels`` in first-seen order (the block order of the summaries)."""
    out = []
    for label in labels:
        if label not in out:
            out.append(label)
    return out


def _check_square(M, labels) -> tuple[np.ndarray, np.ndarray]:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"M must be a square matrix (batch, batch), got shape {M.shape}")
    labels = np.asarray(list(labels), dtype=object)
    if labels.shape != (M.shape[0],):
        raise ValueError(f"labels must hold one label per task ({M.shape[0]}), got {labels.shape[0]}")
    return M, labels


def _reduce(values: np.ndarray, reduce: str) -> float:
    if values.size == 0:
        return float("nan")
    return float(np.mean(values) if reduce == "mean" else np.median(values))


def block_summary(M, labels, reduce: str = "mean") -> tuple[list, np.ndarray]:
    """Per pair of groups, the ``reduce`` ("mean" or "median") of the entries of a dissimilarity matrix
    ``M`` (batch, batch) between their tasks, a task's distance to itself left out.

    ``labels`` (batch,) names each task's group. Returns ``(groups, S)``: the groups in first-seen order and
    ``S`` (groups, groups); a within-group entry of a group with a single task is NaN.
    """
    M, labels = _check_square(M, labels)
    check_choice("reduce", reduce, REDUCTIONS)
    groups = groups_of(labels)
    off = ~np.eye(M.shape[0], dtype=bool)
    S = np.empty((len(groups), len(groups)))
    for a, ga in enumerate(groups):
        for b, gb in enumerate(groups):
            mask = (labels == ga)[:, None] & (labels == gb)[None, :] & off
            S[a, b] = _reduce(M[mask], reduce)
    return groups, S


def task_to_blocks(M, labels, reduce: str = "median") -> tuple[list, np.ndarray]:
    """Per task, the ``reduce`` ("median" or "mean") of its dissimilarity to the tasks of each group, itself
    left out: ``M`` (batch, batch), ``labels`` (batch,) -> ``(groups, T)`` with ``T`` (batch, groups)."""
    M, labels = _check_square(M, labels)
    check_choice("reduce", reduce, REDUCTIONS)
    groups = groups_of(labels)
    T = np.empty((M.shape[0], len(groups)))
    for i in range(M.shape[0]):
        for b, gb in enumerate(groups):
            mask = labels == gb
            mask[i] = False
            T[i, b] = _reduce(M[i, mask], reduce)
    return groups, T
