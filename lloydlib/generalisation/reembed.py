"""Re-embedding a model's points step after step, with what depends on the points alone computed once: the same
numbers as ``model(X, C)`` at every step, bit for bit.

Appendix C's ``"reembed"`` mode (:mod:`lloydlib.generalisation.multistep`) applies one layer F(X, C_t) to the
*same* points X at every step t. In the fast form of Eq. 4 (:func:`lloydlib.fast_layer.fast_layer`, the model's
forward), head 2 (points attending to points, an n x n attention per task: most of a step at large n) reads the
point tokens only: a point token [x ; 0] has no code block and no center enters it. :func:`reembedder` computes
head 2's output, the point queries [x ; 1] and the padded points once for a batch of tasks, and returns a step
``C -> F(X, C)`` that runs the rest of :func:`~lloydlib.fast_layer.fast_layer` as written there: the same
operations on the same shapes, in the same order, so every step's centers are those of ``model(X, C)``.

It is a copy of that arithmetic, split in two, kept here because ``fast_layer.py`` is part of every stored run's
fingerprint (:mod:`lloydlib.training.fingerprint`): the tests hold the two equal bit for bit, and the next change
that re-certifies the stores should split :func:`~lloydlib.fast_layer.fast_layer` itself so that this module reuses it.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .. import fast_layer as fast
from .._validate import check_centers, check_points, check_task_shape
from ..attention import cpu_attention
from ..model import LearnableTransformer

__all__ = ["reembedder"]


def _lin(Z: torch.Tensor, W: torch.Tensor, b) -> torch.Tensor:
    """Z (S, B, m, D) -> Z W^T + b per layer, as :mod:`lloydlib.fast_layer` forms it: W (S, r, D), b (S, r)."""
    out = fast.per_run(Z, W.transpose(1, 2))
    return out if b is None else out + b[:, None, None, :]


def _kept(model: LearnableTransformer) -> bool:
    """Whether the model's forward is the fast layer with softmax weights and no dropout (what a step here runs)."""
    dropping = model.training and model.dropout > 0
    return model.fast and math.isfinite(model.gamma) and model.weighting == "softmax" and not dropping


def reembedder(model: LearnableTransformer, X: torch.Tensor):
    """A step ``C -> model(X, C)`` for the fixed points X (B, n, d): centers C (B, k, d) -> (B, k, d), bit for bit
    the model's forward, with head 2 (points attending to points) computed here once (see the module docstring).

    A model whose forward is not the fast softmax layer (``fast=False``, gamma = inf, sparsemax weights, dropout
    in training mode) gets ``model(X, C)`` itself. Centers are checked at every step as the model checks them.
    """
    if not isinstance(model, LearnableTransformer):
        raise TypeError(f"model must be a lloydlib.model.LearnableTransformer, got {type(model).__name__}")
    X = check_points(X)
    if not _kept(model):
        return lambda C: model(X, C)
    check_task_shape(X, X.new_zeros(X.shape[0], model.k, X.shape[2]), model.d, model.k, "model")
    if X.dtype != model.Q.dtype:
        raise TypeError(f"X must have the model's dtype {model.Q.dtype}, got {X.dtype}")
    p = {name: w[None] for name, w in model.named_parameters()}
    Q, K, V = p["Q"], p["K"], p["V"]
    bQ, bK, bV = (p.get(name) for name in ("bQ", "bK", "bV"))
    Xs = X[None]
    S, B, n, d = Xs.shape
    D = Q.shape[-1]
    scale = model.gamma / math.sqrt(D)

    def b(kind, mu, rows=None):
        return None if kind is None else kind[:, mu, :rows]

    xt = torch.cat([Xs, Xs.new_ones(S, B, n, 1)], dim=-1)  # [x ; 1]
    Wc = torch.cat([K[:, 0], V[:, 0], Q[:, 2], Q[:, 3], K[:, 3], V[:, 3, :d]], dim=1)
    bc = None if bQ is None else torch.cat([bK[:, 0], bV[:, 0], bQ[:, 2], bQ[:, 3], bK[:, 3], bV[:, 3, :d]], dim=1)
    k2 = _lin(Xs, K[:, 1, :, :d], b(bK, 1))  # head 2, as fast_layer computes it for softmax weights without dropout
    kt2 = fast.point_keys(k2, Q[:, 1], b(bQ, 1), d)
    if B * n * n <= fast.FUSED_LIMIT:
        PX = torch.softmax(scale * xt @ kt2.transpose(-1, -2), dim=-1) @ Xs
    elif Xs.device.type == "cpu" and fast.BLOCKED_ON_CPU:
        PX = cpu_attention(xt.flatten(0, 1), kt2.flatten(0, 1), Xs.flatten(0, 1), scale).view(S, B, n, d)
    else:
        PX = F.scaled_dot_product_attention(xt, kt2, xt, scale=scale)[..., :d]
    A2 = _lin(PX, V[:, 1, :, :d], b(bV, 1))
    Xpad = F.pad(Xs, (0, D - d))
    W3 = torch.cat([K[:, 2], V[:, 2, :d]], dim=1)
    b3 = None if bK is None else torch.cat([bK[:, 2], bV[:, 2, :d]], dim=1)
    codes = model.codes.expand(S, B, -1, -1)

    def head(q, k, v):
        return torch.softmax(scale * (2 * q @ k.transpose(-1, -2) - (k * k).sum(-1)[..., None, :]), dim=-1) @ v

    def step(C: torch.Tensor) -> torch.Tensor:
        C = check_centers(C, X)
        check_task_shape(X, C, model.d, model.k, "model")
        Cs = C[None]
        k1, v1, q3, q4, k4, v4 = _lin(torch.cat([Cs, codes], dim=-1), Wc, bc).split([D, D, D, D, D, d], dim=-1)
        A1 = torch.softmax(scale * xt @ fast.point_keys(k1, Q[:, 0], b(bQ, 0), d).transpose(-1, -2), dim=-1) @ v1
        Xbar1 = Xpad + A1 + A2  # Xbar' (S, B, n, D)
        k3, v3 = _lin(Xbar1, W3, b3).split([D, d], dim=-1)
        return (Cs + head(q3, k3, v3) + head(q4, k4, v4))[0]

    return step
