"""Loss surfaces of a trained layer along two filter-normalised random directions (Leaner paper, Figs. 3 and 5).

The picture of Li et al. (2018), "Visualizing the loss landscape of neural nets": around trained weights
theta, draw two Gaussian directions delta and eta, rescale every *filter* of each to the norm of the same
filter of theta, and evaluate a loss on the plane

    f(a, b) = loss(theta + a * delta + b * eta),    a, b in [-r, r],  on a g x g grid.

For the one layer of Eq. 4 (:class:`lloydlib.model.LearnableTransformer`, parameters ``Q``, ``K``, ``V`` of
shape (4, D, D) and biases ``bQ``, ``bK``, ``bV`` of shape (4, D), D = d_emb) a filter is one output unit:
one row ``W[mu, i, :]`` of one of the twelve matrices. Each such row of a direction is a standard Gaussian
row rescaled to ``||W[mu, i, :]||``. Biases get a zero direction, as Li et al. do for their 1-D parameters
(biases and batch-norm), so the plane moves the twelve matrices only.

* :func:`random_directions` draws (delta, eta) from one seed; :func:`grid_coordinates` gives the g values
  of a (and of b), the centre (0, 0) being a grid point (g odd).
* :func:`loss_surface` evaluates any ``loss_fn(model) -> scalar`` on the grid: it perturbs the model in
  place under ``torch.no_grad`` (in eval mode) and always restores its weights and mode, also on error;
  with ``dtype`` it works on a converted copy and leaves the model untouched.
* :func:`task_surfaces` is the fast form for the losses of :mod:`lloydlib.losses` on a fixed batch of tasks
  (the training objective of Eq. 6, :func:`lloydlib.losses.training_loss`'s smoothed loss of Eqs. 24-29;
  the k-means loss of Eq. 5; the smoothing gap L~ - L of :func:`lloydlib.losses.smoothing_gap`, whose maximum
  is the constant C^tau_Omega of the generalisation bound, Section 3): many grid points at once through the
  stacked forward of :mod:`lloydlib.training.stacked_model`. :func:`smoothing_gap_surface` is Fig. 5's surface.
* :func:`local_minima`, :func:`minimum_offset`, :func:`mean_log_rise` and :func:`surface_distance` measure
  the surfaces: strict local minima among the 8 grid neighbours (a discrete unimodality measure), where the
  lowest point lies relative to the centre, how steeply the loss rises away from it, and how far apart two
  surfaces' shapes are.

Surfaces are numpy arrays (g, g), indexed ``[i, j]`` for a = ``coords[i]``, b = ``coords[j]``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

import numpy as np
import torch

from .. import losses
from .._random import generator
from .._validate import (
    check_bool,
    check_centers,
    check_choice,
    check_float_dtype,
    check_int,
    check_points,
    check_positive,
)
from ..distances import sqdist
from ..model import LearnableTransformer
from ..training.stacked_model import StackShape, stacked_forward

__all__ = [
    "FILTER_PARAMS",
    "SURFACE_KINDS",
    "filter_normalized_direction",
    "random_directions",
    "grid_coordinates",
    "loss_surface",
    "task_surfaces",
    "smoothing_gap_surface",
    "local_minima",
    "minimum_offset",
    "surface_distance",
    "mean_log_rise",
]

#: the parameters a direction moves (their rows are the filters); the biases get zero directions
FILTER_PARAMS = ("Q", "K", "V")
#: what :func:`task_surfaces` evaluates: the smoothed loss of Eq. 6, the k-means loss of Eq. 5, their gap
SURFACE_KINDS = ("smoothed", "kmeans", "gap")
#: score entries (grid points x tasks x n x n) one stacked forward may hold
_CHUNK_ENTRIES = 1 << 22


def _check_model(model) -> LearnableTransformer:
    if not isinstance(model, LearnableTransformer):
        raise TypeError(f"model must be a lloydlib.model.LearnableTransformer, got {type(model).__name__}")
    return model


def filter_normalized_direction(model: LearnableTransformer, seed: int | torch.Generator) -> dict[str, torch.Tensor]:
    """One filter-normalised Gaussian direction (Li et al. 2018, Sec. 4): name -> tensor shaped like the parameter.

    For ``Q``, ``K``, ``V`` (4, D, D) every row ``[mu, i, :]`` is a standard Gaussian row rescaled to the
    norm of the same row of the model's weights (a zero row of weights gives a zero row); the biases
    ``bQ``, ``bK``, ``bV`` (4, D), when the model has them, get zeros. ``seed`` is an integer >= 0 or a
    CPU ``torch.Generator`` (drawn from in the order Q, K, V). The draws are float64 on the CPU, then cast
    to the parameters' dtype and device, so a seed gives the same direction everywhere.
    """
    model = _check_model(model)
    g = seed if isinstance(seed, torch.Generator) else generator(check_int("seed", seed, 0))
    out = {}
    for name, p in model.named_parameters():
        w = p.detach().to("cpu", torch.float64)
        if name in FILTER_PARAMS:
            z = torch.randn(w.shape, generator=g, dtype=torch.float64)
            z = z * (w.norm(dim=-1, keepdim=True) / z.norm(dim=-1, keepdim=True))
        else:  # 1-D per head: biases move with zero direction
            z = torch.zeros_like(w)
        out[name] = z.to(p.device, p.dtype)
    return out


def random_directions(model: LearnableTransformer, seed: int) -> tuple[dict, dict]:
    """The plane's two directions (delta, eta), both from :func:`filter_normalized_direction`, drawn one
    after the other from one generator seeded with ``seed`` (integer >= 0)."""
    g = generator(check_int("seed", seed, 0))
    return filter_normalized_direction(model, g), filter_normalized_direction(model, g)


def grid_coordinates(radius: float = 1.0, grid: int = 21) -> np.ndarray:
    """The ``grid`` values of a (and b), evenly spaced over [-radius, radius], shape (grid,).

    ``grid`` must be odd and >= 3, so that the centre 0 (the trained weights) is a grid point.
    """
    radius = check_positive("radius", radius)
    grid = check_int("grid", grid, 3)
    if grid % 2 == 0:
        raise ValueError(f"grid must be odd (so that the centre is a grid point), got {grid}")
    c = np.linspace(-radius, radius, grid)
    c[grid // 2] = 0.0
    return c


def _check_directions(model: LearnableTransformer, directions) -> tuple[dict, dict]:
    if not isinstance(directions, (tuple, list)) or len(directions) != 2:
        raise TypeError("directions must be a pair (delta, eta) of dicts, as random_directions returns")
    names = {n: p for n, p in model.named_parameters()}
    for which, dct in zip(("delta", "eta"), directions):
        if not isinstance(dct, dict) or set(dct) != set(names):
            got = sorted(dct) if isinstance(dct, dict) else type(dct).__name__
            raise ValueError(f"directions: {which} must map the model's parameters {sorted(names)}, got {got}")
        for n, t in dct.items():
            if not isinstance(t, torch.Tensor) or t.shape != names[n].shape:
                raise ValueError(f"directions: {which}[{n!r}] must be a tensor of shape {tuple(names[n].shape)}")
    return directions[0], directions[1]


def _cast(directions, dtype, device) -> tuple[dict, dict]:
    return tuple({n: t.to(device, dtype) for n, t in dct.items()} for dct in directions)


def loss_surface(
    model: LearnableTransformer,
    loss_fn: Callable[[LearnableTransformer], object],
    directions,
    *,
    radius: float = 1.0,
    grid: int = 21,
    dtype: torch.dtype | None = None,
) -> np.ndarray:
    """``loss_fn`` on the plane theta + a delta + b eta (Li et al. 2018; Leaner paper, Fig. 3): shape (grid, grid).

    Entry ``[i, j]`` is ``float(loss_fn(m))`` for the model ``m`` with weights theta + a_i delta + b_j eta,
    a, b from :func:`grid_coordinates` (``radius``, ``grid``); entry ``[grid // 2, grid // 2]`` is the loss
    of the unperturbed model. ``directions`` is a pair (delta, eta) as :func:`random_directions` returns.
    Runs under ``torch.no_grad`` in eval mode. With ``dtype`` None (or the model's dtype) the model is
    perturbed in place and its weights and training mode are restored afterwards, also when ``loss_fn``
    raises; with another ``dtype`` (e.g. ``torch.float64``) a converted copy is perturbed and the model is
    not touched. ``loss_fn`` receives the perturbed model, so it should cast its data to ``m.Q.dtype``.
    """
    model = _check_model(model)
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable (model -> scalar), got {type(loss_fn).__name__}")
    coords = grid_coordinates(radius, grid)
    _check_directions(model, directions)
    if dtype is not None and check_float_dtype("dtype", dtype) != model.Q.dtype:
        model = copy.deepcopy(model).to(dtype)
    delta, eta = _cast(directions, model.Q.dtype, model.Q.device)
    params = dict(model.named_parameters())
    saved = {n: p.detach().clone() for n, p in params.items()}
    was_training = model.training
    out = np.empty((len(coords), len(coords)))
    try:
        model.eval()
        with torch.no_grad():
            for i, a in enumerate(coords):
                for j, b in enumerate(coords):
                    for n, p in params.items():
                        p.copy_(saved[n] + a * delta[n] + b * eta[n])
                    out[i, j] = float(loss_fn(model))
    finally:
        with torch.no_grad():
            for n, p in params.items():
                p.copy_(saved[n])
        model.train(was_training)
    return out


def _stack_shape(model: LearnableTransformer) -> StackShape | None:
    """The stacked layout for this model, or None where the stacked forward does not apply."""
    if model.weighting != "softmax" or math.isinf(model.gamma):
        return None
    return StackShape(model.d, model.k, model.embedding, model.bias, model.gamma)


def _measures(X: torch.Tensor, C: torch.Tensor, tau: float, regularizer: str, kinds) -> dict[str, torch.Tensor]:
    """The ``kinds`` of :func:`task_surfaces` per task, kind -> (m,), for checked points X (m, n, d) and centers
    C (m, k, d) (checked here: finite, of X's shape): :func:`lloydlib.losses.smoothed_loss` and
    :func:`lloydlib.kmeans_objective` computed by their own operations, but on one matrix of squared distances r
    (m, n, k) (both compute it by :func:`lloydlib.distances.sqdist` with ``expand=None``), and only those the kinds
    need."""
    C = check_centers(C, X)
    r = sqdist(X, C)
    out = {}
    if "smoothed" in kinds or "gap" in kinds:
        out["smoothed"] = (losses.regularized_argmax(-r / tau, regularizer, dim=2) * r).sum(dim=(1, 2))
    if "kmeans" in kinds or "gap" in kinds:
        out["kmeans"] = r.amin(dim=2).sum(dim=1)
    if "gap" in kinds:
        out["gap"] = out["smoothed"] - out["kmeans"]
    return out


def task_surfaces(
    model: LearnableTransformer,
    X: torch.Tensor,
    C0: torch.Tensor,
    directions,
    *,
    tau: float,
    regularizer: str,
    kinds=SURFACE_KINDS,
    radius: float = 1.0,
    grid: int = 21,
    dtype: torch.dtype | None = torch.float64,
    stacked: bool = True,
) -> dict[str, np.ndarray]:
    """The losses of :mod:`lloydlib.losses` on the plane, on fixed tasks: kind -> (grid, grid) array.

    X (batch, n, d) points and C0 (batch, k, d) initial centers are fixed; at each grid point the model
    maps them to C = F(X, C0; theta + a delta + b eta) and each kind is the mean over the batch of

    * ``"smoothed"``: L~^tau_Omega(X, C), the objective of Eq. 6 (Eqs. 24-29, ``regularizer`` "NE" or "L2");
    * ``"kmeans"``: the k-means loss L(X, C) of Eq. 5;
    * ``"gap"``: L~ - L (:func:`lloydlib.losses.smoothing_gap`), Fig. 5's quantity.

    Each is a sum over the n points of a task, so it grows with n. ``dtype`` (default float64) is the
    precision of the evaluation (the model is never modified). With ``stacked`` (and a softmax model of
    finite gamma) many grid points run as one stacked forward (:func:`lloydlib.training.stacked_model.stacked_forward`);
    otherwise, or with ``stacked=False``, one :func:`loss_surface` pass per grid point. The two agree to rounding.
    """
    model = _check_model(model)
    X = check_points(X)
    C0 = check_centers(C0, X, name="C0")
    tau = check_positive("tau", tau)
    check_choice("regularizer", regularizer, losses.REGULARIZERS)
    kinds = tuple(check_choice("kinds", k, SURFACE_KINDS) for k in kinds)
    if not kinds:
        raise ValueError(f"kinds must name at least one of {list(SURFACE_KINDS)}, got none")
    check_bool("stacked", stacked)
    coords = grid_coordinates(radius, grid)
    _check_directions(model, directions)
    dt = model.Q.dtype if dtype is None else check_float_dtype("dtype", dtype)
    dev = model.Q.device
    Xd, Cd = X.to(dev, dt), C0.to(dev, dt)

    def measures(Xs, C):  # Xs (m, n, d), C (m, k, d) -> kind -> (m,)
        return _measures(Xs, C, tau, regularizer, kinds)

    shape = _stack_shape(model) if stacked else None
    if shape is None:
        rows = []  # one dict per grid point, in the surface's row order

        def loss_fn(m):
            values = measures(Xd, m(Xd, Cd))
            rows.append({k: float(values[k].mean()) for k in kinds})
            return rows[-1][kinds[0]]

        loss_surface(model, loss_fn, directions, radius=radius, grid=grid, dtype=dt)
        return {k: np.array([r[k] for r in rows]).reshape(grid, grid) for k in kinds}

    delta, eta = _cast(directions, dt, dev)
    names = shape.names
    theta0 = torch.cat([p.detach().to(dev, dt).reshape(-1) for n, p in model.named_parameters() if n in names])
    d_flat = torch.cat([delta[n].reshape(-1) for n in names])
    e_flat = torch.cat([eta[n].reshape(-1) for n in names])
    A, B = np.meshgrid(coords, coords, indexing="ij")
    a = torch.as_tensor(A.reshape(-1), dtype=dt, device=dev)
    b = torch.as_tensor(B.reshape(-1), dtype=dt, device=dev)
    batch, n = X.shape[0], X.shape[1]
    per_point = batch * max(n * n, n * shape.D)
    chunk = max(1, min(len(a), _CHUNK_ENTRIES // per_point))
    codes = shape.codes(dt, dev)
    out = {k: [] for k in kinds}
    with torch.no_grad():
        for s in range(0, len(a), chunk):
            aa, bb = a[s : s + chunk], b[s : s + chunk]
            theta = theta0[None] + aa[:, None] * d_flat[None] + bb[:, None] * e_flat[None]
            S = len(aa)
            Xs = Xd[None].expand(S, *Xd.shape)
            C = stacked_forward(shape, theta, Xs, Cd[None].expand(S, *Cd.shape), codes)
            values = measures(Xs.reshape(S * batch, *Xd.shape[1:]), C.reshape(S * batch, *Cd.shape[1:]))
            for k in kinds:
                out[k].append(values[k].reshape(S, batch).mean(1))
    return {k: torch.cat(v).cpu().numpy().reshape(grid, grid) for k, v in out.items()}


def smoothing_gap_surface(model, X, C0, directions, *, tau: float, regularizer: str, **kw) -> np.ndarray:
    """Fig. 5's surface: the mean over tasks of L~^tau_Omega - L (:func:`lloydlib.losses.smoothing_gap`) on
    the plane, shape (grid, grid); keywords as :func:`task_surfaces`. Its maximum over the plane is the
    smoothing gap C^tau_Omega of the generalisation bound, restricted to that plane and those tasks."""
    return task_surfaces(model, X, C0, directions, tau=tau, regularizer=regularizer, kinds=("gap",), **kw)["gap"]


def _check_surface(name: str, S) -> np.ndarray:
    S = np.asarray(S, dtype=float)
    if S.ndim != 2 or min(S.shape) < 2:
        raise ValueError(f"{name} must be a 2-D array with at least 2 rows and columns, got shape {S.shape}")
    if not np.all(np.isfinite(S)):
        raise ValueError(f"{name} must be finite, got {int((~np.isfinite(S)).sum())} NaN or infinite entries")
    return S


def local_minima(surface) -> list[tuple[int, int]]:
    """The strict local minima of a surface (g1, g2): grid points lower than every one of their (up to 8)
    neighbours, edges and corners included (an edge point has 5 neighbours, a corner 3). A unimodal surface
    has exactly one; ties are not strict, so a flat plateau has none. Returns [(i, j), ...] in row order."""
    S = _check_surface("surface", surface)
    P = np.pad(S, 1, constant_values=np.inf)
    g1, g2 = S.shape
    lower = np.ones(S.shape, dtype=bool)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di or dj:
                lower &= S < P[1 + di : 1 + di + g1, 1 + dj : 1 + dj + g2]
    return [(int(i), int(j)) for i, j in zip(*np.nonzero(lower))]


def minimum_offset(surface) -> int:
    """How far the lowest grid point lies from the centre, in grid steps (Chebyshev distance): 0 when the
    centre (the trained weights, for a surface of :func:`loss_surface`) is the lowest point."""
    S = _check_surface("surface", surface)
    i, j = np.unravel_index(int(np.argmin(S)), S.shape)
    return int(max(abs(i - S.shape[0] // 2), abs(j - S.shape[1] // 2)))


def surface_distance(A, B) -> float:
    """How different two surfaces' shapes are: the root mean square over the grid of
    log(A / A_0) - log(B / B_0), with A_0, B_0 the centre values.

    Each surface is read as its rise relative to its own centre, so the distance ignores the loss level
    (which differs between embeddings and dimensions) and compares shapes: 0 for proportional surfaces,
    and 0.1 means the two relative rises differ by about 10% on average. A and B (g, g) must be positive
    and of one shape (losses on the same grid of coordinates).
    """
    A, B = _check_surface("A", A), _check_surface("B", B)
    if A.shape != B.shape:
        raise ValueError(f"A and B must have one shape (the same grid), got {A.shape} and {B.shape}")
    if A.min() <= 0 or B.min() <= 0:
        raise ValueError("A and B must be positive (losses), got a value <= 0")
    c = (A.shape[0] // 2, A.shape[1] // 2)
    diff = np.log(A / A[c]) - np.log(B / B[c])
    return float(np.sqrt(np.mean(diff**2)))


def mean_log_rise(surface) -> float:
    """How steeply a surface rises around its centre: the mean over the grid of log(S / S_0), S_0 the centre
    value (a positive surface (g, g), e.g. a loss). 0 for a flat surface; log 2 when the loss is on average
    twice its centre value. Filter normalisation makes it comparable between models of different sizes."""
    S = _check_surface("surface", surface)
    if S.min() <= 0:
        raise ValueError("surface must be positive (a loss), got a value <= 0")
    return float(np.mean(np.log(S / S[S.shape[0] // 2, S.shape[1] // 2])))
