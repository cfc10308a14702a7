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

__all__ = ["FAMILIES", "INITS", "sample_tasks", "sample_task_streams", "init_centers", "minmax_scale"]

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


def _check_task_args(batch, n, d, k, family, init, scale, dtype):
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
    return batch, n, d, k, scale


def _draw(g: torch.Generator, batch, n, d, k, family, scale, isotropic, equal_weights):
    """Steps 1-4 of one seed, and the uniforms of step 6's permutation, read from ``g`` in this order:
    locations (batch, k, d), scales (batch, k, d), component labels (batch, n), noise (batch, n, d) and
    uniforms (batch, n); float64 on the CPU (labels long, uniforms float32)."""
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
    noise = _standard_noise(family, (batch, n, d), g)
    u = torch.rand(batch, n, generator=g)
    return loc, s, labels, noise, u


def _assemble(loc, s, labels, noise, u, family):
    """Steps 4-6 from the draws of :func:`_draw`, each task on its own (so any number of tasks at once):
    the points X (tasks, n, d), scaled to [0,1]^d and permuted, and their permuted labels (tasks, n)."""
    d = loc.shape[2]
    pick = labels[..., None].expand(-1, -1, d)
    X = torch.gather(loc, 1, pick) + torch.gather(s, 1, pick) * noise
    if family == "lognormal":
        X = torch.exp(X)
    X = minmax_scale(X)
    perm = torch.argsort(u, dim=1)
    return torch.gather(X, 1, perm[..., None].expand(-1, -1, d)), torch.gather(labels, 1, perm)


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
    batch, n, d, k, scale = _check_task_args(batch, n, d, k, family, init, scale, dtype)
    g = _random.generator(seed)
    X, labels = _assemble(*_draw(g, batch, n, d, k, family, scale, isotropic, equal_weights), family)
    C0 = init_centers(X, k, init, generator=g)
    X, C0 = X.to(device=device, dtype=dtype), C0.to(device=device, dtype=dtype)
    if return_labels:
        return X, C0, labels.to(device)
    return X, C0


def sample_task_streams(
    seeds,
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
    device=None,
    dtype: torch.dtype = torch.float32,
):
    """:func:`sample_tasks` for several seeds at once: X (len(seeds), batch, n, d), C0 (len(seeds), batch, k, d).

    Row i equals ``sample_tasks(batch, n, d, k, seed=seeds[i], ...)`` bit for bit: each seed's generator
    is read exactly as there, and only the arithmetic after the draws (scaling, permuting, "random" and
    "gonzalez" initial centers) runs once for all seeds. ``seeds``: a non-empty list of integers >= 0.
    """
    batch, n, d, k, scale = _check_task_args(batch, n, d, k, family, init, scale, dtype)
    if not isinstance(seeds, (list, tuple)) or not seeds:
        raise ValueError(f"seeds must be a non-empty list of integers >= 0, got {seeds!r}")
    gens = [_random.generator(seed) for seed in seeds]
    draws = [_draw(g, batch, n, d, k, family, scale, isotropic, equal_weights) for g in gens]
    X, _ = _assemble(*(torch.cat(parts) for parts in zip(*draws)), family)
    if init == "kmeans++":  # D^2 sampling reads each seed's generator again
        C0 = torch.cat([init_centers(x, k, init, generator=g) for x, g in zip(X.split(batch), gens)])
    else:
        C0 = init_centers(X, k, init)
    X, C0 = X.to(device=device, dtype=dtype), C0.to(device=device, dtype=dtype)
    return X.view(len(seeds), batch, n, d), C0.view(len(seeds), batch, k, d)
