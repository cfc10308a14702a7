"""Clustering tasks: batches of mixture samples with initial centers (Appendix D of the Leaner paper).

Layout convention (used everywhere in lloydlib)
-----------------------------------------------
The papers write points as *columns*: X in R^{d x n}, C in R^{d x k}, tokens of width d_emb stacked as
columns. lloydlib stores *rows*, batch first:

    paper                      lloydlib
    X      (d, n)              X      (batch, n, d)        X[b, i] = x_i of task b
    C      (d, k)              C      (batch, k, d)        C[b, j] = c_j
    X_bar  (d_emb, n)          Xbar   (batch, n, d_emb)
    W z    (matrix on column)  z @ W.T                     (the same linear map on a row)

so a paper matrix W (d_emb x d_emb acting on column tokens) is used unchanged, and ``Z @ W.T``
applies it to every token of ``Z``. This is the only place the mapping is documented.

Task recipe (Leaner paper, Appendix D, and the authors' task generator)
-----------------------------------------------------------------------
1. k locations l_j ~ U(0,1)^d.
2. Per-dimension scales: isotropic s_j = scale * 1_d, or anisotropic s_j ~ scale * U(0,1)^d.
3. Mixture weights: equal 1/k, or unequal w ~ U(0,1)^k normalised.
4. n points from the mixture of ``family`` (normal, cauchy, gumbel, laplace, lognormal) with location
   l_j and scale s_j (for lognormal, loc and scale parametrise the underlying normal).
5. Per-dimension min-max scaling of each task to [0,1]^d (a constant dimension becomes 0).
6. A random permutation of the points; initial centers from ``init``:
   "random" = the first k points (a uniformly random k-subset), "gonzalez" = farthest-first traversal
   from the first point, "kmeans++" = D^2 sampling seeded with the first point.

All randomness comes from one ``torch.Generator`` seeded by ``seed`` and is drawn in float64 on the
CPU, then cast, so a seed gives the same tasks on every device and dtype.
"""

from __future__ import annotations

import math

import torch

from . import _random
from ._validate import check_choice, check_float_dtype, check_int, check_points, check_positive

__all__ = ["FAMILIES", "INITS", "sample_tasks", "init_centers", "minmax_scale"]

FAMILIES = ("normal", "cauchy", "gumbel", "laplace", "lognormal")
INITS = ("random", "gonzalez", "kmeans++")


def _standard_noise(family: str, shape, g: torch.Generator) -> torch.Tensor:
    """Standard (loc 0, scale 1) draws of ``family`` by inverse-CDF from seeded uniforms, float64."""
    if family in ("normal", "lognormal"):
        return torch.randn(shape, generator=g, dtype=torch.float64)
    # open interval (0, 1) so that the logs and tangents below stay finite
    u = torch.rand(shape, generator=g, dtype=torch.float64).clamp(1e-12, 1 - 1e-12)
    if family == "cauchy":
        return torch.tan(math.pi * (u - 0.5))
    if family == "gumbel":
        return -torch.log(-torch.log(u))
    if family == "laplace":
        v = u - 0.5
        return -torch.sign(v) * torch.log1p(-2 * v.abs())
    raise AssertionError(family)  # unreachable: family is validated by the caller


def minmax_scale(X: torch.Tensor) -> torch.Tensor:
    """Scale each task of ``X`` (batch, n, d) to [0,1]^d per dimension; constant dimensions become 0."""
    X = check_points(X)
    lo = X.amin(dim=1, keepdim=True)
    span = (X - lo).amax(dim=1, keepdim=True)
    return torch.where(span > 0, (X - lo) / torch.where(span > 0, span, torch.ones_like(span)), torch.zeros_like(X))


def init_centers(
    X: torch.Tensor, k: int, init: str = "random", *, seed=None, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Initial centers (batch, k, d) chosen among the points of ``X`` (batch, n, d).

    "random" takes the first k points (random when X is randomly permuted, as sample_tasks does);
    "gonzalez" is farthest-first traversal from the first point; "kmeans++" is D^2 sampling seeded with
    the first point. Ties in "gonzalez" go to the lowest index.
    """
    X = check_points(X)
    k = check_int("k", k, 1)
    check_choice("init", init, INITS)
    batch, n, _ = X.shape
    if k > n:
        raise ValueError(f"k must be <= n (the number of points), got k={k} and n={n}")
    if init == "random":
        return X[:, :k].clone()
    g = generator if generator is not None else _random.generator(seed)
    idx = torch.zeros(batch, k, dtype=torch.long)
    Xd = X.detach().to("cpu", torch.float64)
    d2 = ((Xd - Xd[:, :1]) ** 2).sum(-1)  # (batch, n): squared distance to the nearest chosen center
    for j in range(1, k):
        if init == "gonzalez":
            nxt = d2.argmax(dim=1)
        else:
            w = d2.clamp_min(0)
            # all points coincide with chosen centers: fall back to a uniform choice
            w = torch.where(w.sum(1, keepdim=True) > 0, w, torch.ones_like(w))
            nxt = torch.multinomial(w, 1, generator=g).squeeze(1)
        idx[:, j] = nxt
        d2 = torch.minimum(d2, ((Xd - Xd[torch.arange(batch), nxt][:, None]) ** 2).sum(-1))
    return torch.gather(X, 1, idx.to(X.device)[..., None].expand(-1, -1, X.shape[2])).clone()


def sample_tasks(
    batch: int,
    n: int,
    d: int,
    k: int,
    *,
    family: str = "normal",
    scale: float = 0.1,
    isotropic: bool = True,
    equal_weights: bool = True,
    init: str = "random",
    seed=None,
    device=None,
    dtype: torch.dtype = torch.float32,
    return_labels: bool = False,
):
    """Sample a batch of clustering tasks (Appendix D of the Leaner paper).

    Returns ``(X, C0)`` with X of shape (batch, n, d) in [0,1]^d and C0 of shape (batch, k, d), or
    ``(X, C0, labels)`` with the mixture component of every point (batch, n) when ``return_labels``.
    """
    batch = check_int("batch", batch, 1)
    n = check_int("n", n, 1)
    d = check_int("d", d, 1)
    k = check_int("k", k, 1)
    if k > n:
        raise ValueError(f"k must be <= n (each task needs at least k points), got k={k} and n={n}")
    check_choice("family", family, FAMILIES)
    check_choice("init", init, INITS)
    scale = check_positive("scale", scale)
    check_float_dtype("dtype", dtype)
    g = _random.generator(seed)

    loc = torch.rand(batch, k, d, generator=g, dtype=torch.float64)
    if isotropic:
        s = torch.full((batch, k, d), scale, dtype=torch.float64)
    else:
        s = scale * torch.rand(batch, k, d, generator=g, dtype=torch.float64)
    if equal_weights:
        w = torch.full((batch, k), 1.0 / k, dtype=torch.float64)
    else:
        w = torch.rand(batch, k, generator=g, dtype=torch.float64)
        w = w / w.sum(1, keepdim=True)
    labels = torch.multinomial(w, n, replacement=True, generator=g)  # (batch, n)
    pick = labels[..., None].expand(-1, -1, d)
    X = torch.gather(loc, 1, pick) + torch.gather(s, 1, pick) * _standard_noise(family, (batch, n, d), g)
    if family == "lognormal":
        X = torch.exp(X)
    X = minmax_scale(X)
    perm = torch.argsort(torch.rand(batch, n, generator=g), dim=1)
    X = torch.gather(X, 1, perm[..., None].expand(-1, -1, d))
    labels = torch.gather(labels, 1, perm)
    C0 = init_centers(X, k, init, generator=g)
    X, C0 = X.to(device=device, dtype=dtype), C0.to(device=device, dtype=dtype)
    if return_labels:
        return X, C0, labels.to(device)
    return X, C0
