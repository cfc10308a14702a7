"""Reference Lloyd's algorithm, batched (Algorithm 2 and Eq. 5 of the Leaner paper).

Shapes: X (batch, n, d) points, C (batch, k, d) centers; see :mod:`lloydlib.tasks` for the layout.

Conventions
-----------
* Assignment: a(i) = argmin_j ||x_i - c_j||^2; ties go to the lowest index j.
* Empty clusters: a cluster with no assigned point has no mean. The policy is explicit:
  ``empty="keep"`` (default) keeps the old center; ``empty="reseed"`` moves it to a uniformly random
  data point of its task (what the authors' code does). Every function can report which clusters were
  empty (``return_empty=True``).
"""

from __future__ import annotations

import torch

from . import _random
from ._validate import check_centers, check_choice, check_int, check_points, check_positive
from .distances import sqdist

__all__ = [
    "sqdist",
    "assign",
    "kmeans_objective",
    "lloyd_step",
    "lloyd",
    "soft_kmeans_step",
    "EMPTY_POLICIES",
    "assignment_gaps",
]

EMPTY_POLICIES = ("keep", "reseed")


def assign(X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """Nearest-center index (batch, n), ties to the lowest index."""
    X = check_points(X)
    C = check_centers(C, X)
    return sqdist(X, C).argmin(dim=2)  # torch.argmin returns the first minimal index


def kmeans_objective(X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """The k-means objective of Eq. 5, sum_i min_j ||x_i - c_j||^2, per task: shape (batch,)."""
    X = check_points(X)
    C = check_centers(C, X)
    return sqdist(X, C).amin(dim=2).sum(dim=1)


def _means(X: torch.Tensor, a: torch.Tensor, k: int):
    """Cluster sums divided by counts: (means (batch, k, d) with NaN-free zeros for empty, counts)."""
    onehot = torch.nn.functional.one_hot(a, k).to(X.dtype)  # (batch, n, k)
    counts = onehot.sum(1)  # (batch, k)
    sums = onehot.transpose(1, 2) @ X  # (batch, k, d)
    means = sums / counts.clamp_min(1)[..., None]
    return means, counts


def lloyd_step(
    X: torch.Tensor,
    C: torch.Tensor,
    *,
    empty: str = "keep",
    seed=None,
    generator: torch.Generator | None = None,
    return_empty: bool = False,
):
    """One Lloyd iteration: assign every point to its nearest center, move each center to its mean.

    Returns ``C_next`` (batch, k, d), or ``(C_next, empty_mask)`` with ``empty_mask`` (batch, k) bool
    when ``return_empty``. Empty clusters follow ``empty`` (see the module docstring).
    """
    X = check_points(X)
    C = check_centers(C, X)
    check_choice("empty", empty, EMPTY_POLICIES)
    k = C.shape[1]
    means, counts = _means(X, sqdist(X, C).argmin(dim=2), k)
    is_empty = counts == 0
    C_next = torch.where(is_empty[..., None], C, means)
    if empty == "reseed" and bool(is_empty.any()):
        g = generator if generator is not None else _random.generator(seed)
        pick = torch.randint(X.shape[1], tuple(is_empty.shape), generator=g).to(X.device)
        random_points = torch.gather(X, 1, pick[..., None].expand(-1, -1, X.shape[2]))
        C_next = torch.where(is_empty[..., None], random_points, C_next)
    return (C_next, is_empty) if return_empty else C_next


def lloyd(X: torch.Tensor, C: torch.Tensor, steps: int, *, empty: str = "keep", seed=None, return_empty: bool = False):
    """Run ``steps`` Lloyd iterations from C.

    Returns ``(C_T, objectives)`` with objectives (batch, steps + 1): column t is the Eq. 5 objective
    after t steps (column 0 is the initial one). With ``return_empty`` a third output (batch, steps, k)
    says which clusters were empty at each step.
    """
    X = check_points(X)
    C = check_centers(C, X)
    steps = check_int("steps", steps, 0)
    check_choice("empty", empty, EMPTY_POLICIES)
    g = _random.generator(seed) if empty == "reseed" else None
    objectives = [kmeans_objective(X, C)]
    empties = []
    for _ in range(steps):
        C, e = lloyd_step(X, C, empty=empty, generator=g, return_empty=True)
        objectives.append(kmeans_objective(X, C))
        empties.append(e)
    objectives = torch.stack(objectives, dim=1)
    if return_empty:
        e = (
            torch.stack(empties, 1)
            if empties
            else torch.zeros(X.shape[0], 0, C.shape[1], dtype=torch.bool, device=X.device)
        )
        return C, objectives, e
    return C, objectives


def soft_kmeans_step(X: torch.Tensor, C: torch.Tensor, beta: float) -> torch.Tensor:
    """One soft k-means step with stiffness ``beta``.

    r_ij = ||x_i - c_j||^2, w_ij = softmax_j(-beta r_ij), c_j <- sum_i w_ij x_i / sum_i w_ij.
    As beta -> inf this is Lloyd's step (for unique nearest centers and non-empty clusters).
    """
    X = check_points(X)
    C = check_centers(C, X)
    beta = check_positive("beta", beta)
    w = torch.softmax(-beta * sqdist(X, C), dim=2)  # (batch, n, k)
    mass = w.sum(1)  # (batch, k)
    return (w.transpose(1, 2) @ X) / mass.clamp_min(torch.finfo(X.dtype).tiny)[..., None]


def assignment_gaps(X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """Per point, the second-nearest minus the nearest squared center distance: (batch, n), >= 0.

    This is the margin of the assignment head (head 1): at inverse temperature gamma its softmax puts
    weight at most (k - 1) exp(-gamma gap / sqrt(d_emb)) off the nearest center.
    """
    X = check_points(X)
    C = check_centers(C, X, min_k=2)
    D = sqdist(X, C).topk(2, dim=2, largest=False).values
    return D[..., 1] - D[..., 0]
