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
"""

from __future__ import annotations

import math

import torch

from ._validate import check_choice, check_positive, check_tensor, check_tokens
from .distances import sqdist

__all__ = ["WEIGHTINGS", "attention_weights", "distance_attention"]

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
