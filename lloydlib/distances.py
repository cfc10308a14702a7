"""The one squared-distance kernel: ||a_i - b_j||^2 for every pair of rows, with no square root.

Small inputs subtract directly, so equal vectors give exactly equal distances (exact zeros, exact ties).
Large inputs (or ``expand=True``) expand ||a||^2 + ||b||^2 - 2 a.b clamped at 0, as BLAS-based k-means
codes do; the rounding of that expansion is bounded by a few ulps of ||a||^2 + max ||b||^2, which
``tolerance=True`` returns as the margin within which two distances count as a tie. No square root is
taken, so gradients stay finite at distance 0.
"""

from __future__ import annotations

import torch

__all__ = ["sqdist"]

DIRECT_LIMIT = 2**24  # elements of the (batch, m, m', p) difference tensor below which we subtract


def sqdist(A: torch.Tensor, B: torch.Tensor, *, tolerance: bool = False, expand: bool | None = None):
    """Squared distances (batch, m, m') between the rows of A (batch, m, p) and B (batch, m', p).

    With ``tolerance=True`` also a per-row tie tolerance (batch, m, 1): 0 when the distances were
    computed by subtraction (exact), else the rounding bound of the expanded form. ``expand``: None picks
    by size (above), True always expands (a training loss, where exact ties do not matter and the
    (batch, m, m', p) difference tensor and its gradient would cost the most of a step), False always
    subtracts.
    """
    if expand not in (None, True, False):
        raise TypeError(f"expand must be None, True or False, got {expand!r}")
    direct = A.shape[0] * A.shape[1] * B.shape[1] * A.shape[2] <= DIRECT_LIMIT if expand is None else not expand
    if direct:
        D = ((A[:, :, None, :] - B[:, None, :, :]) ** 2).sum(-1)
        return (D, torch.zeros_like(D[..., :1])) if tolerance else D
    an = (A * A).sum(-1, keepdim=True)  # (batch, m, 1)
    bn = (B * B).sum(-1)[:, None, :]  # (batch, 1, m')
    D = (an + bn - 2 * A @ B.transpose(1, 2)).clamp_min(0)
    if not tolerance:
        return D
    eps = torch.finfo(A.dtype).eps
    return D, 8 * A.shape[2] * eps * (an + bn.amax(-1, keepdim=True))
