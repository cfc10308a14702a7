"""Distance attention A_2^gamma (Eq. 3 / Definition 2.2 of the Leaner paper).

For query tokens Z (batch, m, d_emb), key tokens Z' (batch, m', d_emb) and matrices Q, K (p, d_emb),
V (d_out, d_emb) acting on column tokens (row tokens use ``Z @ Q.T``, see :mod:`lloydlib.tasks`):

    S_ij   = -(gamma / sqrt(p)) * ||Q z_i - K z'_j||^2            (p = d_emb for the paper's square Q, K)
    W_i.   = softmax_j(S_i.)          (or sparsemax_j, or hardmax at gamma = inf)
    out_i  = sum_j W_ij V z'_j        -> shape (batch, m, d_out)

* ``gamma=math.inf`` is exact averaging hard attention (AHAT): weight 1/|T_i| on the set T_i of keys
  at the minimal distance, 0 elsewhere; not a large number.
* Large finite gamma never overflows: the scores are shifted by their row minimum distance first,
  so the largest score is exactly 0 and far keys underflow to weight 0, never NaN.
* Squared distances are never square-rooted, so gradients stay finite at distance 0.

:func:`blocked_attention` is the dot-product softmax attention the fast model
(:class:`lloydlib.model.LearnableTransformer`) reduces Eq. 3 to, for long prompts on the CPU: a few tasks
at a time, so no more than a block of scores exists at once, and a backward pass that forms only the
gradients asked for; :func:`cpu_attention` runs the same function through the fused kernel of
:mod:`lloydlib.fused_attention` where it can (float32 on a CPU with a C compiler), else through
:func:`blocked_attention`.
"""

from __future__ import annotations

import math

import torch

from . import fused_attention as fused
from ._validate import check_choice, check_int, check_positive, check_tensor, check_tokens
from .distances import sqdist

__all__ = ["WEIGHTINGS", "attention_weights", "blocked_attention", "cpu_attention", "distance_attention"]

WEIGHTINGS = ("softmax", "sparsemax")


def _check_qkv(Q, K, V, d_emb: int):
    Q = check_tensor("Q", Q, 2)
    K = check_tensor("K", K, 2)
    V = check_tensor("V", V, 2)
    for name, W in (("Q", Q), ("K", K), ("V", V)):
        if W.shape[1] != d_emb:
            raise ValueError(
                f"{name} must have shape (p, d_emb={d_emb}) to act on tokens of width {d_emb}, "
                f"got shape {tuple(W.shape)}"
            )
    if Q.shape != K.shape:
        raise ValueError(f"Q and K must have the same shape, got {tuple(Q.shape)} and {tuple(K.shape)}")
    return Q, K, V


def attention_weights(
    Z: torch.Tensor,
    Zp: torch.Tensor,
    Q: torch.Tensor,
    K: torch.Tensor,
    gamma: float = 1.0,
    *,
    weighting: str = "softmax",
) -> torch.Tensor:
    """The attention matrix W (batch, m, m') of Eq. 3; each row sums to 1."""
    Z = check_tokens(Z, name="Z")
    Zp = check_tokens(Zp, Z.shape[2], name="Zp")
    if Z.shape[0] != Zp.shape[0]:
        raise ValueError(f"Z and Zp must have the same batch size, got {Z.shape[0]} and {Zp.shape[0]}")
    if Z.dtype != Zp.dtype:
        raise TypeError(f"Z and Zp must have the same dtype, got {Z.dtype} and {Zp.dtype}")
    Q, K, _ = _check_qkv(Q, K, K, Z.shape[2])
    gamma = check_positive("gamma", gamma, allow_inf=True)
    check_choice("weighting", weighting, WEIGHTINGS)
    D, tol = sqdist(Z @ Q.T, Zp @ K.T, tolerance=True)
    Dmin = D.amin(-1, keepdim=True)
    if math.isinf(gamma):
        ties = (D <= Dmin + tol).to(D.dtype)
        return ties / ties.sum(-1, keepdim=True)
    scores = -(gamma / math.sqrt(Q.shape[0])) * (D - Dmin)  # max score exactly 0
    if weighting == "softmax":
        return torch.softmax(scores, dim=-1)
    from entmax import sparsemax

    return sparsemax(scores, dim=-1)


def distance_attention(
    Z: torch.Tensor,
    Zp: torch.Tensor,
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
    gamma: float = 1.0,
    *,
    weighting: str = "softmax",
    return_weights: bool = False,
):
    """A_2^gamma(Z, Z'; Q, K, V) of Eq. 3: output (batch, m, d_out); also W with ``return_weights``."""
    W = attention_weights(Z, Zp, Q, K, gamma, weighting=weighting)
    _check_qkv(Q, K, V, Z.shape[2])
    out = W @ (Zp @ V.T)
    return (out, W) if return_weights else out


#: score entries :func:`blocked_attention` forms at once (2 MiB in float32), so that a block stays in the
#: cores' caches: the n x n attention of long prompts is bound by memory. Measured on 2 cores (forward and
#: backward, 32 tasks of 512 points, weights kept), against the fused kernel: blocks of 2 tasks 1.64x
#: faster, of 8 tasks 1.20x, of all 32 0.77x
BLOCK_ENTRIES = 1 << 19
#: the forward keeps the attention weights for the backward up to this many entries in all (256 MiB in
#: float32); above, the backward recomputes them block by block (in the measurement above: 1.30-1.37x
#: faster than the fused kernel instead of 1.58-1.64x)
KEEP_ENTRIES = 1 << 26


class _BlockedAttention(torch.autograd.Function):
    """softmax(scale q k^T) v a block of ``step`` tasks at a time. The forward keeps each block's weights
    when all of them fit in :data:`KEEP_ENTRIES`, else the backward recomputes them; it forms only the
    gradients asked for."""

    @staticmethod
    def forward(ctx, q, k, v, scale, step):
        qs = q * scale
        out = q.new_empty(q.shape[0], q.shape[1], v.shape[2])
        keep = q.shape[0] * q.shape[1] * k.shape[1] <= KEEP_ENTRIES
        kept = []
        for b in range(0, q.shape[0], step):
            sl = slice(b, b + step)
            P = torch.softmax(torch.bmm(qs[sl], k[sl].transpose(1, 2)), -1)
            torch.bmm(P, v[sl], out=out[sl])
            if keep:
                kept.append(P)
        ctx.save_for_backward(qs, k, v, out, *kept)
        ctx.scale, ctx.step = scale, step
        return out

    @staticmethod
    def backward(ctx, g):
        qs, k, v, out, *kept = ctx.saved_tensors
        need_q, need_k, need_v = ctx.needs_input_grad[:3]
        minus_delta = -(g * out).sum(-1, keepdim=True)  # (batch, m, 1): -sum_j P_ij dP_ij, since dP = g v^T
        dq, dk, dv = (torch.empty_like(t) if need else None for t, need in ((qs, need_q), (k, need_k), (v, need_v)))
        for i, b in enumerate(range(0, qs.shape[0], ctx.step)):
            sl = slice(b, b + ctx.step)
            P = kept[i] if kept else torch.softmax(torch.bmm(qs[sl], k[sl].transpose(1, 2)), -1)
            if need_v:
                torch.bmm(P.transpose(1, 2), g[sl], out=dv[sl])
            dS = torch.baddbmm(minus_delta[sl], g[sl], v[sl].transpose(1, 2))
            dS.mul_(P)  # softmax's backward; P itself stays as saved (a second backward reads it again)
            if need_q:
                torch.bmm(dS, k[sl], out=dq[sl]).mul_(ctx.scale)
            if need_k:
                torch.bmm(dS.transpose(1, 2), qs[sl], out=dk[sl])
        return dq, dk, dv, None, None


def _check_qkv_batches(q, k, v):
    """Shapes and dtypes only: a diverging run's non-finite keys must reach the loss, which reports them."""
    q, k, v = (check_tensor(name, t, 3, allow_nonfinite=True) for name, t in (("q", q), ("k", k), ("v", v)))
    if k.shape[0] != q.shape[0] or k.shape[2] != q.shape[2]:
        raise ValueError(f"k must have shape (batch={q.shape[0]}, m', e={q.shape[2]}) like q, got {tuple(k.shape)}")
    if v.shape[:2] != k.shape[:2]:
        raise ValueError(f"v must have shape (batch, m'={k.shape[1]}, f) like k, got {tuple(v.shape)}")
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must have one dtype, got {q.dtype}, {k.dtype} and {v.dtype}")
    return q, k, v


@torch.compiler.disable  # under torch.compile it runs as written, block by block (a graph break)
def blocked_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, *, block_entries: int = BLOCK_ENTRIES
) -> torch.Tensor:
    """softmax(scale * q k^T) v for q (batch, m, e), k (batch, m', e), v (batch, m', f) -> (batch, m, f).

    The same function as ``F.scaled_dot_product_attention(q, k, v, scale=scale)`` (up to rounding),
    computed for as many tasks at a time as keep a block of scores within ``block_entries``. The weights
    are kept for the backward pass up to :data:`KEEP_ENTRIES` in all, and recomputed block by block
    above; the backward forms only the gradients of the inputs that require one. That is the case that
    matters for the fast model's point self-attention (head 2), whose queries and values are the data:
    only its keys carry parameters, and the backward then costs two products a block (three when it
    recomputes the weights) instead of the fused kernel's five. Under ``torch.compile`` it runs as
    written (a graph break).
    """
    q, k, v = _check_qkv_batches(q, k, v)
    block_entries = check_int("block_entries", block_entries, 1)
    step = max(1, block_entries // max(1, q.shape[1] * k.shape[1]))
    return _BlockedAttention.apply(q.contiguous(), k.contiguous(), v.contiguous(), float(scale), step)


def cpu_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """softmax(scale * q k^T) v for q (batch, m, e), k (batch, m', e), v (batch, m', f) -> (batch, m, f) on a
    CPU: :func:`lloydlib.fused_attention.fused_attention` (one pass, no stored scores) for float32 tensors of
    head 2's shape (e = f + 1 <= :data:`~lloydlib.fused_attention.MAX_WIDTH`: d <= 8) where its kernel builds, else
    :func:`blocked_attention`. Both compute the same function up to rounding (about 1e-6 relative)."""
    q, k, v = _check_qkv_batches(q, k, v)
    narrow = 2 <= q.shape[2] <= fused.MAX_WIDTH and v.shape[2] == q.shape[2] - 1  # head 2's shape, d <= 8
    if q.dtype == torch.float32 and q.device.type == "cpu" and narrow and fused.available():
        return fused.fused_attention(q, k, v, float(scale))
    return blocked_attention(q, k, v, scale)
