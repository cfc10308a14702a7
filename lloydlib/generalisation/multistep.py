"""Many steps of a trained one-layer transformer, against Lloyd's algorithm (Leaner paper, Appendix C, Fig. 6).

A trained model F = :class:`lloydlib.model.LearnableTransformer` maps points X (batch, n, d) and centers
C (batch, k, d) to new centers F(X, C) (batch, k, d): one layer of Eq. 4, trained for one step. Appendix C
of the Leaner paper runs it for T steps in two ways:

* ``"reembed"`` ("T single steps"): at every step embed the *original* points X with the current centers
  and apply the layer once,

      C_0 = initial centers,    C_{t+1} = F(X, C_t) = first d coordinates of Eq. 4's Cbar' for (E_X(X), E_C(C_t));

* ``"iterate"``: feed Eq. 4's output tokens back in, as a T-layer transformer with shared weights would,

      (Xbar_0, Cbar_0) = (E_X(X), E_C(C_0)),    (Xbar_{t+1}, Cbar_{t+1}) = Eq. 4 (Xbar_t, Cbar_t),
      C_t = first d coordinates of Cbar_t.

  The learned value maps may rewrite the points' data coordinates too, so the objective of C_t is always
  measured against the *original* X.

Both start from the same C_0, so step 1 is the same in both modes. Lloyd's algorithm (:func:`lloydlib.lloyd`)
from the same C_0 is the baseline. Every curve is the k-means objective of Eq. 5,
L(X, C_t) = sum_i min_j ||x_i - c_j||^2, per task and step: shape (batch, T + 1), column 0 for C_0.
A task whose centers stop being finite (the iterated layer can blow up) gets ``inf`` from that step on,
never NaN. Evaluation runs in chunks of tasks under ``torch.no_grad()`` with the model in eval mode (no
dropout), so memory stays small at large n.

The paper's summary (Appendix C and the authors' plotting code): per model (one training seed), the mean
over tasks of log L(X, C_t) at every step (:func:`mean_log`); then the median and quartiles over seeds
(:func:`seed_quartiles`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .._validate import check_centers, check_choice, check_int, check_points, check_task_shape
from ..distances import sqdist
from ..lloyd import EMPTY_POLICIES, lloyd
from ..model import LearnableTransformer
from .blocked_layer import layer as blocked_layer
from .reembed import reembedder

__all__ = [
    "MODES",
    "objective_or_inf",
    "model_objectives",
    "lloyd_objectives",
    "multistep",
    "mean_log",
    "seed_quartiles",
]

#: the two ways of running a one-layer model for many steps (Appendix C)
MODES = ("reembed", "iterate")

#: a chunk of tasks holds at most about this many entries of its widest per-point tensor: the point-point attention
#: (n x n per task) where a chunk materialises it, else the (n x D) tokens or (n x k) distances
CHUNK_ENTRIES = 1 << 22


def objective_or_inf(X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """The k-means objective of Eq. 5 per task, (batch,), with ``inf`` where C (batch, k, d) is not finite.

    Unlike :func:`lloydlib.lloyd.kmeans_objective`, centers with NaN or infinite entries are allowed
    (a diverged model's output); their task scores ``inf``. X (batch, n, d) must be finite.
    """
    X = check_points(X)
    if not isinstance(C, torch.Tensor) or C.dim() != 3 or C.shape[0] != X.shape[0] or C.shape[2] != X.shape[2]:
        raise ValueError(
            f"C must be a tensor of shape (batch, k, d) = ({X.shape[0]}, k, {X.shape[2]}) to match X, "
            f"got {tuple(C.shape) if isinstance(C, torch.Tensor) else type(C).__name__}"
        )
    return _objective_or_inf(X, C)


def _objective_or_inf(X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """:func:`objective_or_inf` for inputs already checked (a chunk's, at every step)."""
    ok = torch.isfinite(C).flatten(1).all(1)
    safe = torch.where(ok[:, None, None], C, torch.zeros_like(C))
    obj = sqdist(X, safe).amin(dim=2).sum(dim=1)
    return torch.where(ok & torch.isfinite(obj), obj, torch.full_like(obj, math.inf))


def _check_inputs(model, X, C0, steps):
    if not isinstance(model, LearnableTransformer):
        raise TypeError(f"model must be a lloydlib.model.LearnableTransformer, got {type(model).__name__}")
    X = check_points(X)
    C0 = check_centers(C0, X, "C0")
    check_task_shape(X, C0, model.d, model.k, "model")
    if X.dtype != model.Q.dtype:
        raise TypeError(
            f"X and C0 must have the model's dtype {model.Q.dtype}, got {X.dtype}; convert the tasks "
            f"(X.to({model.Q.dtype})) or the model (model.to({X.dtype}))"
        )
    return X, C0, check_int("steps", steps, 0)


def _chunk_size(chunk, batch: int, n: int, width: int) -> int:
    """``chunk``, or by default as many of ``batch`` tasks as keep ``n x width`` entries per task within
    :data:`CHUNK_ENTRIES`."""
    if chunk is None:
        return max(1, min(batch, CHUNK_ENTRIES // (n * width)))
    return check_int("chunk", chunk, 1)


def _finite_tasks(*tensors) -> torch.Tensor:
    """(batch,) bool: every entry of every tensor (batch, ...) of that task is finite."""
    ok = torch.isfinite(tensors[0]).flatten(1).all(1)
    for t in tensors[1:]:
        ok = ok & torch.isfinite(t).flatten(1).all(1)
    return ok


def _run_chunk(model: LearnableTransformer, X, C0, steps: int, mode: str) -> torch.Tensor:
    """Objectives (batch, steps + 1) of one chunk; a task that ever goes non-finite stays at inf.

    A dead task's inputs are replaced by its (finite) step-0 inputs so that the batch can go on (the
    layer's input checks refuse non-finite tokens); its objective stays inf whatever it computes.
    Re-embedding computes the model's head 2 (points attending to points: the same at every step) once
    (:func:`.reembed.reembedder`: the same numbers as ``model(X, C)``); iterating runs the model's reference
    layer with its point-point head in blocks (:func:`.blocked_layer.layer`: the same numbers as
    ``model.layer``, in less memory and time).
    """
    objs = [_objective_or_inf(X, C0)]
    dead = ~torch.isfinite(objs[0])
    C = C0
    if mode == "iterate":
        Xbar0, Cbar0 = model.embed(X, C0)
        Xbar, Cbar = Xbar0, Cbar0
    else:
        step = reembedder(model, X)
    for _ in range(steps):
        keep = dead[:, None, None]
        if mode == "reembed":
            C = step(torch.where(keep, C0, C))
            ok = _finite_tasks(C)
        else:
            Xbar, Cbar = blocked_layer(model, torch.where(keep, Xbar0, Xbar), torch.where(keep, Cbar0, Cbar))
            C = Cbar[..., : model.d]
            ok = _finite_tasks(Xbar, Cbar)
        obj = _objective_or_inf(X, C)
        dead = dead | ~ok | ~torch.isfinite(obj)
        objs.append(torch.where(dead, torch.full_like(obj, math.inf), obj))
    return torch.stack(objs, dim=1)


def model_objectives(
    model: LearnableTransformer,
    X: torch.Tensor,
    C0: torch.Tensor,
    steps: int,
    *,
    mode: str = "reembed",
    chunk: int | None = None,
) -> torch.Tensor:
    """The k-means objective (Eq. 5) of ``steps`` steps of a one-layer model: (batch, steps + 1).

    ``model``: a trained :class:`~lloydlib.model.LearnableTransformer` for (d, k); X (batch, n, d) points
    and C0 (batch, k, d) initial centers, in the model's dtype; ``mode`` "reembed" or "iterate" (see the
    module docstring, Appendix C); ``chunk`` tasks are evaluated at a time (default: as many as keep about
    ``CHUNK_ENTRIES`` attention entries). Column t is L(X, C_t), column 0 that of C0; ``inf`` from the step
    a task's centers stop being finite. The model's train/eval mode is restored afterwards.
    """
    X, C0, steps = _check_inputs(model, X, C0, steps)
    check_choice("mode", mode, MODES)
    n, k, D = X.shape[1], C0.shape[1], model.Q.shape[-1]
    # re-embedding computes the n x n head once, blocked above fast_layer.FUSED_LIMIT entries, so only its
    # (n x D) and (n x k) tensors grow with the chunk; iterating materialises a block of the n x n head per step
    size = _chunk_size(chunk, X.shape[0], n, max(k, D) if mode == "reembed" else max(n, k))
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            parts = [
                _run_chunk(model, X[i : i + size], C0[i : i + size], steps, mode) for i in range(0, X.shape[0], size)
            ]
    finally:
        model.train(was_training)
    return torch.cat(parts, dim=0)


def lloyd_objectives(
    X: torch.Tensor, C0: torch.Tensor, steps: int, *, empty: str = "keep", chunk: int | None = None
) -> torch.Tensor:
    """Lloyd's algorithm from the same initial centers: its objectives (batch, steps + 1), column 0 for C0.

    X (batch, n, d), C0 (batch, k, d); ``empty`` is the empty-cluster policy of :func:`lloydlib.lloyd`
    ("keep", the default, keeps the old center; "reseed" is seeded per chunk by its first task index);
    ``chunk`` as in :func:`model_objectives`.
    """
    X = check_points(X)
    C0 = check_centers(C0, X, "C0")
    steps = check_int("steps", steps, 0)
    check_choice("empty", empty, EMPTY_POLICIES)
    n, k = X.shape[1], C0.shape[1]
    # Lloyd's step holds (n x k) distances per task; "reseed" keeps its chunks of n x n entries, which seed it
    size = _chunk_size(chunk, X.shape[0], n, k if empty == "keep" else max(n, k))
    with torch.no_grad():
        parts = [
            lloyd(X[i : i + size], C0[i : i + size], steps, empty=empty, seed=i)[1] for i in range(0, X.shape[0], size)
        ]
    return torch.cat(parts, dim=0)


def multistep(
    model: LearnableTransformer,
    X: torch.Tensor,
    C0: torch.Tensor,
    steps: int,
    *,
    modes=MODES,
    chunk: int | None = None,
) -> dict[str, torch.Tensor]:
    """Appendix C's comparison on one batch of tasks: ``{mode: objectives, ..., "lloyd": objectives}``.

    Each value is (batch, steps + 1) (see :func:`model_objectives` and :func:`lloyd_objectives`);
    ``modes`` is a non-empty subset of :data:`MODES`.
    """
    modes = tuple(modes) if not isinstance(modes, str) else (modes,)
    if not modes:
        raise ValueError(f"modes must name at least one of {list(MODES)}, got none")
    for m in modes:
        check_choice("modes", m, MODES)
    out = {m: model_objectives(model, X, C0, steps, mode=m, chunk=chunk) for m in modes}
    out["lloyd"] = lloyd_objectives(X, C0, steps, chunk=chunk)
    return out


def mean_log(objectives) -> np.ndarray:
    """The paper's per-model curve: the mean over tasks of log L(X, C_t), shape (steps + 1,).

    ``objectives`` (batch, steps + 1) (a tensor or array of k-means objectives >= 0, ``inf`` allowed).
    A step where any task is ``inf`` gives ``inf``; an objective of exactly 0 gives ``-inf``; NaN raises.
    """
    a = objectives.detach().cpu().double().numpy() if isinstance(objectives, torch.Tensor) else np.asarray(objectives)
    a = a.astype(np.float64)
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"objectives must have shape (batch, steps + 1) with batch >= 1, got {a.shape}")
    if np.isnan(a).any() or (a < 0).any():
        raise ValueError("objectives must be >= 0 or inf (k-means objectives), got NaN or negative entries")
    with np.errstate(divide="ignore"):
        logs = np.log(a)
    out = np.empty(a.shape[1])
    for t in range(a.shape[1]):  # inf beats -inf: a diverged task makes the step inf
        col = logs[:, t]
        out[t] = math.inf if np.isposinf(col).any() else float(col.mean())
    return out


def _quantile(v: np.ndarray, q: float) -> float:
    """numpy's linear quantile of sorted ``v``, but with inf staying inf (numpy gives NaN for inf - inf)."""
    p = (len(v) - 1) * q
    lo, hi = math.floor(p), math.ceil(p)
    w = p - lo
    if w == 0 or v[lo] == v[hi]:
        return float(v[lo])
    return float(v[lo] * (1 - w) + v[hi] * w)


def seed_quartiles(curves) -> np.ndarray:
    """The first quartile, median and third quartile over seeds of per-seed curves: (3, steps + 1).

    ``curves`` (seeds, steps + 1), e.g. one :func:`mean_log` per trained seed. numpy's linear
    interpolation, except that inf (a diverged seed) is kept as the largest value rather than turning
    an interpolation into NaN.
    """
    a = np.asarray(curves, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] < 1:
        raise ValueError(f"curves must have shape (seeds, steps + 1) with seeds >= 1, got {a.shape}")
    if np.isnan(a).any():
        raise ValueError("curves must not contain NaN")
    s = np.sort(a, axis=0)
    return np.array([[_quantile(s[:, t], q) for t in range(a.shape[1])] for q in (0.25, 0.5, 0.75)])
