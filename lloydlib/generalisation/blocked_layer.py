"""The reference layer of Eq. 4 (:meth:`lloydlib.model.LearnableTransformer.layer`) with its point-point head in
blocks: the same numbers, bit for bit, in less memory and time.

The model's ``layer`` is the readable reference path: every head is :func:`lloydlib.attention.attention_weights`
followed by ``W @ (Z' V^T)``. Head 2 (points attending to points) then forms, for a batch of B tasks of n points,
the (B, n, n) squared distances (through a (B, n, n, D) difference tensor when that holds at most
:data:`lloydlib.distances.DIRECT_LIMIT` entries, else through the expansion ||a||^2 + ||b||^2 - 2 a.b), its row
minima, scores and softmax weights, each a pass over far more memory than the caches hold (a difference tensor of
42 MB for 4 tasks at n=512 and D=10). :func:`layer` runs the same operations on a few tasks (and, for the
difference tensor, a few query rows) at a time, :data:`BLOCK_ENTRIES` entries of the largest intermediate per
block. Every operation of head 2 acts row by row (the difference, its square and the sum over D of one pair of
tokens; a row's minimum and softmax) or task by task (the batched products), so a block's numbers are those of the
whole batch; the way the squared distances are formed (difference or expansion) is chosen, as
:func:`lloydlib.distances.sqdist` would, from the whole batch's size. The query, key and value maps, heads 1, 3
and 4 (k centers: small) are the model's own, on the whole batch.
"""

from __future__ import annotations

import math

import torch

from ..distances import DIRECT_LIMIT, sqdist
from ..model import LearnableTransformer

__all__ = ["BLOCK_ENTRIES", "layer"]

#: entries of head 2's largest intermediate per block: the (tasks, rows, n, D) difference tensor, or the
#: (tasks, n, n) distances of the expanded form (2 MiB in float32)
BLOCK_ENTRIES = 1 << 19


def _ones(Z: torch.Tensor) -> torch.Tensor:
    """Tokens (batch, m, D) with a constant 1 appended: (batch, m, D + 1), as the model's ``layer`` forms them."""
    return torch.cat([Z, Z.new_ones(Z.shape[0], Z.shape[1], 1)], dim=2)


def _points_head(model: LearnableTransformer, X1: torch.Tensor, block_entries: int) -> torch.Tensor:
    """Head 2 of ``model`` on point tokens with a trailing 1, X1 (B, n, D + 1) -> (B, n, D): softmax over keys of
    -(gamma / sqrt(D)) (||q_i - k_j||^2 - min_j ||q_i - k_j||^2), times the values, block by block."""
    Q, K, V = (model._affine(kind, 1) for kind in "QKV")  # [W | b] (D, D + 1), as the model's _head uses them
    q, k, v = X1 @ Q.T, X1 @ K.T, X1 @ V.T  # (B, n, D) each, over the whole batch as in the model
    B, n, D = q.shape
    direct = B * n * n * D <= DIRECT_LIMIT  # sqdist's choice for the whole batch
    per_task = n * n * D if direct else n * n
    tasks = max(1, block_entries // per_task)
    rows = n if tasks > 1 or not direct else max(1, block_entries // (n * D))
    scale = -(model.gamma / math.sqrt(Q.shape[0]))
    out = torch.empty_like(v)
    for b in range(0, B, tasks):
        sl = slice(b, b + tasks)
        W = torch.empty(q[sl].shape[0], n, n, dtype=q.dtype, device=q.device)
        for r in range(0, n, rows):
            dist = sqdist(q[sl, r : r + rows], k[sl], expand=not direct)
            W[:, r : r + rows] = torch.softmax(scale * (dist - dist.amin(-1, keepdim=True)), dim=-1)
        torch.bmm(W, v[sl], out=out[sl])
    return out


def layer(
    model: LearnableTransformer, Xbar: torch.Tensor, Cbar: torch.Tensor, *, block_entries: int = BLOCK_ENTRIES
) -> tuple[torch.Tensor, torch.Tensor]:
    """``model.layer(Xbar, Cbar)``, bit for bit: Eq. 4 on tokens Xbar (B, n, D) and Cbar (B, k, D) -> (Xbar',
    Cbar'), the same shapes, with head 2 in blocks of about ``block_entries`` entries (see the module docstring).

    The model's own ``layer`` serves what the blocks do not cover: hardmax (gamma = inf), sparsemax weights,
    attention dropout (a model in training mode with dropout > 0) and gradients (the blocks run under
    ``torch.no_grad()``). The tokens are checked as the model checks them (its head 1 checks them first).
    """
    if not isinstance(model, LearnableTransformer):
        raise TypeError(f"model must be a lloydlib.model.LearnableTransformer, got {type(model).__name__}")
    blocked = math.isfinite(model.gamma) and model.weighting == "softmax"
    if not blocked or (model.training and model.dropout > 0) or torch.is_grad_enabled():
        return model.layer(Xbar, Cbar)
    X1, C1 = _ones(Xbar), _ones(Cbar)
    Xbar_next = Xbar + model._head(0, X1, C1) + _points_head(model, X1, block_entries)
    Cbar_next = Cbar + model._head(2, C1, _ones(Xbar_next)) + model._head(3, C1, C1)
    return Xbar_next, Cbar_next
