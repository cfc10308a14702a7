"""Losses for learning one Lloyd step: the k-means loss, its smoothed upper bound, the relative loss.

Shapes: X (batch, n, d) points, C (batch, k, d) centers; r_ij = ||x_i - c_j||^2 (batch, n, k).

* the exact, non-differentiable k-means loss of Eq. 5 of the Leaner paper, L(X, C) = sum_i min_j r_ij per
  task, is :func:`lloydlib.kmeans_objective` (one name for Eq. 5; ``lloydlib.training.stacked_model``'s
  ``kmeans_objective_unchecked`` is the same sum over any leading dimensions, without input checks).
* :func:`smoothed_loss` is the smoothed upper bound of Eqs. 24-29,
  L~^tau_Omega(X, C) = sum_i <P_Omega(-r_i / tau), r_i>, per task, with P_Omega the regularised argmax of
  Eq. 25: softmax for the negative-entropy regulariser ("NE", Eq. 26) and sparsemax for the squared
  l2 regulariser ("L2", Eqs. 27-29). Following the paper (and the authors' code), the value is the
  weighted distance only; the regulariser Omega(P) itself is *not* added. Because P is a probability
  vector, <P, r_i> >= min_j r_ij, so L <= L~ (an upper bound).
  The paper writes P_Omega(r / tau) for the minimiser over the simplex of <lambda, r/tau> + Omega(lambda),
  which is the regularised argmax of -r / tau; we write the argument as the argmax sees it.
* :func:`relative_loss` is Eq. 20: the mean over tasks of L(X, C_model) / L(X, C_lloyd), where C_lloyd
  is one Lloyd step from the same initial centers. Below 1 means the model beats one Lloyd step.
* :func:`training_loss` is the batch mean of :func:`smoothed_loss`, the objective of Eq. 6.
"""

from __future__ import annotations

import torch

from ._validate import check_centers, check_choice, check_points, check_positive, check_tensor
from .lloyd import kmeans_objective, lloyd_step, sqdist

__all__ = [
    "REGULARIZERS",
    "regularized_argmax",
    "smoothed_loss",
    "training_loss",
    "smoothing_gap",
    "lloyd_baseline",
    "relative_loss",
]

REGULARIZERS = ("NE", "L2")


def regularized_argmax(z: torch.Tensor, regularizer: str = "NE", dim: int = -1) -> torch.Tensor:
    """P_Omega(z) along ``dim``: softmax for "NE" (Eq. 26), sparsemax for "L2" (Eqs. 27-28).

    Sparsemax comes from the maintained ``entmax`` package (Peters, Niculae and Martins); its threshold
    is the kappa of Eq. 28. Each slice along ``dim`` is a probability vector.
    """
    check_choice("regularizer", regularizer, REGULARIZERS)
    if regularizer == "NE":
        return torch.softmax(z, dim=dim)
    from entmax import sparsemax

    return sparsemax(z, dim=dim)


def _distances(X, C, expand=None) -> torch.Tensor:
    X = check_points(X)
    C = check_centers(C, X)
    return sqdist(X, C, expand=expand)  # (batch, n, k)


def smoothed_loss(
    X: torch.Tensor, C: torch.Tensor, tau: float, regularizer: str = "NE", *, expand: bool | None = None
) -> torch.Tensor:
    """The smoothed k-means loss L~^tau_Omega of Eqs. 24-29, per task: shape (batch,).

    sum_i sum_j P_Omega(-r_i / tau)_j r_ij with r_ij = ||x_i - c_j||^2, without the regulariser term.
    ``regularizer`` is "NE" (softmax, Eq. 26) or "L2" (sparsemax, Eq. 29); ``tau`` > 0 is the
    temperature (the authors' code calls 1/tau ``loss_itemp``). Differentiable in X and C. ``expand``
    chooses how r is computed (:func:`lloydlib.distances.sqdist`): training passes True, the cheaper
    expanded form, whose rounding (a few ulps of ||x||^2 + ||c||^2) no gradient step notices.
    """
    tau = check_positive("tau", tau)
    check_choice("regularizer", regularizer, REGULARIZERS)
    r = _distances(X, C, expand)
    P = regularized_argmax(-r / tau, regularizer, dim=2)
    return (P * r).sum(dim=(1, 2))


def training_loss(X: torch.Tensor, C: torch.Tensor, tau: float, regularizer: str = "NE") -> torch.Tensor:
    """The training objective of Eq. 6 on a batch: the mean over tasks of :func:`smoothed_loss` (scalar),
    with the distances in their expanded form (``expand=True``), as :func:`lloydlib.training.train` computes it."""
    return smoothed_loss(X, C, tau, regularizer, expand=True).mean()


def smoothing_gap(X: torch.Tensor, C: torch.Tensor, tau: float, regularizer: str = "NE") -> torch.Tensor:
    """L~^tau_Omega - L per task (batch,): how loose the upper bound is; always >= 0."""
    return smoothed_loss(X, C, tau, regularizer) - kmeans_objective(X, C)


def lloyd_baseline(X: torch.Tensor, C0: torch.Tensor) -> torch.Tensor:
    """The denominator of Eq. 20: the k-means loss after one Lloyd step from C0, per task (batch,).

    Empty clusters keep their center (``lloyd_step(empty="keep")``). With the paper's initialisation
    (the centers are k of the points) no cluster can be empty after one assignment, since each center
    is at distance 0 from the point it was drawn from, so the authors' reseeding never triggers here.
    """
    with torch.no_grad():
        return kmeans_objective(X, lloyd_step(X, C0))


def relative_loss(
    X: torch.Tensor,
    C0: torch.Tensor,
    C_model: torch.Tensor,
    *,
    baseline: torch.Tensor | None = None,
    reduction: str = "mean",
) -> torch.Tensor:
    """The relative loss of Eq. 20: mean over tasks of L(X, C_model) / L(X, one Lloyd step from C0).

    X (batch, n, d); C0 (batch, k, d) the initial centers; C_model (batch, k, d) the model's output from
    (X, C0). ``baseline`` (batch,) may pass precomputed :func:`lloyd_baseline` values (for a fixed
    validation set). ``reduction="mean"`` returns a scalar (an expectation of ratios, as in the authors'
    code), ``"none"`` the per-task ratios (batch,). Values below 1 beat one Lloyd step.
    """
    X = check_points(X)
    C0 = check_centers(C0, X, name="C0")
    C_model = check_centers(C_model, X, name="C_model")
    if C_model.shape != C0.shape:
        raise ValueError(f"C_model must have the shape of C0 {tuple(C0.shape)}, got {tuple(C_model.shape)}")
    check_choice("reduction", reduction, ("mean", "none"))
    if baseline is None:
        baseline = lloyd_baseline(X, C0)
    else:
        baseline = check_tensor("baseline", baseline, 1)
        if baseline.shape[0] != X.shape[0]:
            raise ValueError(
                f"baseline must have one value per task, shape ({X.shape[0]},), got shape {tuple(baseline.shape)}"
            )
    if bool((baseline <= 0).any()):
        raise ValueError(
            "the one-step Lloyd loss is 0 for some task (every point is a center), so the "
            "relative loss of Eq. 20 is undefined there; use tasks with n > k distinct points"
        )
    ratio = kmeans_objective(X, C_model) / baseline
    return ratio.mean() if reduction == "mean" else ratio
