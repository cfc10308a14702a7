"""Beyond the paper: an exact Lloyd transformer that also handles empty clusters (it keeps the old center).

The layout and heads are described below; :mod:`lloydlib.construction.theorem` holds the paper's construction.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .._validate import (
    check_centers,
    check_choice,
    check_int,
    check_points,
    check_positive,
    check_task_shape,
)
from ..attention import distance_attention
from ..embeddings import EMBEDDINGS, cluster_codes, code_dim
from .theorem import head_gammas

__all__ = ["KEEP_EPS", "keep_layout", "keep_weights", "KeepTransformer", "keep_transformer"]


# ----------------------------------------------------------------------------------------------------
# Beyond the paper: an exact construction that also handles empty clusters (keeps the old center)
# ----------------------------------------------------------------------------------------------------
#
# Theorem B.1 erases the old center in head 4 (V4 = -P_x) and writes the cluster mean in head 3. With an
# empty cluster head 3 has nothing to average, so the center cannot survive. Here the erase is made
# *conditional on membership*: head 1 writes, next to the nearest center's code, minus that center's
# position into a scratch block W of the point. A member of cluster j then carries the value
# x_i - c_j in head 3, and the cluster's average is mean_j - c_j: the residual c_j + (mean_j - c_j)
# gives the mean and head 4 is not needed (V4 = 0). An empty cluster falls back on an "anchor" token
# whose value is 0, so the residual keeps c_j. Two helper tokens keep the anchors clean.
#
# Token layout (rows), width D = 2d + m + 2 (m = code size):
#
#     block      X (d)    code (m)   W (d)      f    g
#     point      x_i      0 -> b     0 -> -c    0    0     n tokens   (X stream)
#     anchor j   0        b_j        0          1    1     k tokens   (X stream)
#     zero       0        0          0          1    0     1 token    (X stream)
#     center j   c_j      b_j        0          0    0     k tokens   (C stream)
#     null       0        0          0          1    0     1 token    (C stream)
#
# Heads (matrices act on column tokens, as in Eq. 3):
#
#     1  X -> C    Q1 = K1 = P_X + lam P_f       V1: code <- code, W <- -X       points: nearest center;
#                                                                                anchors, zero: the null
#     2  X -> X    Q2 = P_X + lam P_f            V2 = -P_code - P_W              points: themselves;
#                  K2 = P_X + lam P_f + P_g                                      anchors, zero: the zero token
#     3  C -> X'   Q3 = K3 = P_code + eps P_f    V3: X <- X + W                  centers: members, else anchor j
#     4  C -> C    Q4 = K4 = P_code              V4 = 0                          (unused)


KEEP_EPS = 0.5


def keep_layout(d: int, k: int, embedding: str = "BN") -> dict[str, slice]:
    """Coordinate blocks of the keep construction's tokens: {"X", "code", "W", "f", "g"} -> slice."""
    d = check_int("d", d, 1)
    check_choice("embedding", embedding, EMBEDDINGS)
    if embedding == "NA":
        raise ValueError("embedding must carry a cluster code (one of 'OH', 'BN', 'SC'), got 'NA'")
    m = code_dim(k, embedding)
    return {
        "X": slice(0, d),
        "code": slice(d, d + m),
        "W": slice(d + m, 2 * d + m),
        "f": slice(2 * d + m, 2 * d + m + 1),
        "g": slice(2 * d + m + 1, 2 * d + m + 2),
    }


def keep_weights(
    d: int, k: int, embedding: str = "BN", *, lam: float | None = None, eps: float = KEEP_EPS, dtype=torch.float64
):
    """Q, K, V of the keep construction, each of shape (4, D, D) with D = 2d + m + 2.

    ``lam`` separates the helper tokens from the points in heads 1 and 2; lam^2 must exceed every squared
    point-center distance (default sqrt(d + 1), enough for data and centers in [0,1]^d, Assumption I.1;
    :class:`KeepTransformer` checks it against the bounding box of the inputs).
    ``eps`` (0 < eps < 1) puts each anchor at squared code distance eps^2 from its center, closer than any
    other cluster's code (>= 1) and farther than the members (0).
    """
    L = keep_layout(d, k, embedding)
    lam = math.sqrt(d + 1) if lam is None else check_positive("lam", lam)
    eps = check_positive("eps", eps)
    if eps >= 1:
        raise ValueError(
            f"eps must be < 1 so that an anchor is nearer to its center than any other cluster's "
            f"code (squared code distances >= 1), got {eps}"
        )
    D = L["g"].stop
    X, code, W, f, g = (L[b] for b in ("X", "code", "W", "f", "g"))
    Z = torch.zeros(4, D, D, dtype=dtype)
    Q, K, V = Z.clone(), Z.clone(), Z.clone()
    idx = torch.arange(D)

    def diag(M, mu, block, value):
        M[mu, idx[block], idx[block]] = value

    for mu in (0, 1):  # heads 1 and 2: data coordinates and the flag
        for M in (Q, K):
            diag(M, mu, X, 1.0)
            diag(M, mu, f, lam)
    diag(K, 1, g, 1.0)  # head 2 keys: anchors differ from the zero token
    diag(V, 0, code, 1.0)  # head 1 writes the code ...
    V[0, idx[W], idx[X]] = -1.0  # ... and minus the center into W
    diag(V, 1, code, -1.0)  # head 2 erases the old code and W
    diag(V, 1, W, -1.0)
    for M in (Q, K):  # head 3: codes; anchors sit eps away
        diag(M, 2, code, 1.0)
        diag(M, 2, f, eps)
        diag(M, 3, code, 1.0)  # head 4: any queries/keys; its value is 0
    diag(V, 2, X, 1.0)  # head 3 values x_i + W_i = x_i - c_j
    V[2, idx[X], idx[W]] = 1.0
    return Q, K, V


class KeepTransformer(nn.Module):
    """Eq. 4 with :func:`keep_weights`: exact Lloyd's algorithm with ``empty="keep"`` at gamma = inf.

    ``self(X, C)`` maps points (batch, n, d) and centers (batch, k, d) to the centers after one layer;
    :meth:`run` loops the same layer. The layer sees n + k + 1 point-stream tokens (points, k anchors, a
    zero token) and k + 1 center-stream tokens (centers, a null token) of width 2d + m + 2. A point
    equidistant from two nearest centers (a tie) is still left out of every mean, as in Theorem B.1.
    """

    def __init__(
        self,
        d: int,
        k: int,
        embedding: str = "BN",
        gamma=math.inf,
        *,
        lam: float | None = None,
        eps: float = KEEP_EPS,
        dtype=torch.float64,
    ):
        super().__init__()
        self.d, self.k = check_int("d", d, 1), check_int("k", k, 1)
        self.embedding = check_choice("embedding", embedding, EMBEDDINGS)
        self.layout = keep_layout(d, k, embedding)
        self.lam = math.sqrt(d + 1) if lam is None else check_positive("lam", lam)
        self.gammas = head_gammas(gamma)
        self.d_emb = self.layout["g"].stop
        Q, K, V = keep_weights(d, k, embedding, lam=self.lam, eps=eps, dtype=dtype)
        self.register_buffer("Q", Q)
        self.register_buffer("K", K)
        self.register_buffer("V", V)

    def extra_repr(self) -> str:
        return f"d={self.d}, k={self.k}, embedding={self.embedding!r}, d_emb={self.d_emb}, lam={self.lam:.4g}"

    def embed(self, X: torch.Tensor, C: torch.Tensor):
        """Tokens (Xbar (batch, n + k + 1, D), Cbar (batch, k + 1, D)) of the layout above."""
        X = check_points(X)
        C = check_centers(C, X)
        check_task_shape(X, C, self.d, self.k, "transformer")
        both = torch.cat([X, C], 1)
        box = ((both.amax(1) - both.amin(1)) ** 2).sum(-1).amax()  # squared diagonal of the bounding box
        if float(box) >= self.lam**2:
            raise ValueError(
                f"lam={self.lam:.4g} is too small for these inputs: points and centers span a "
                f"box of squared diagonal {float(box):.4g}, which must stay below lam^2 (data in "
                f"[0,1]^d needs lam^2 > d); pass a larger lam"
            )
        L, b, n, k = self.layout, X.shape[0], X.shape[1], self.k
        codes = cluster_codes(k, self.embedding, dtype=X.dtype, device=X.device)
        Xbar = X.new_zeros(b, n + k + 1, self.d_emb)
        Xbar[:, :n, L["X"]] = X
        Xbar[:, n : n + k, L["code"]] = codes
        Xbar[:, n:, L["f"]] = 1.0
        Xbar[:, n : n + k, L["g"]] = 1.0
        Cbar = X.new_zeros(b, k + 1, self.d_emb)
        Cbar[:, :k, L["X"]] = C
        Cbar[:, :k, L["code"]] = codes
        Cbar[:, k, L["f"]] = 1.0
        return Xbar, Cbar

    def _head(self, mu: int, Z, Zp):
        return distance_attention(
            Z, Zp, self.Q[mu].to(Z.dtype), self.K[mu].to(Z.dtype), self.V[mu].to(Z.dtype), self.gammas[mu]
        )

    def layer(self, Xbar: torch.Tensor, Cbar: torch.Tensor):
        """Eq. 4 on the tokens of :meth:`embed`; returns the updated pair."""
        Xbar1 = Xbar + self._head(0, Xbar, Cbar) + self._head(1, Xbar, Xbar)
        return Xbar1, Cbar + self._head(2, Cbar, Xbar1) + self._head(3, Cbar, Cbar)

    def forward(self, X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
        Xbar, Cbar = self.embed(X, C)
        return self.layer(Xbar, Cbar)[1][:, : self.k, : self.d]

    def run(self, X: torch.Tensor, C: torch.Tensor, steps: int, *, return_trajectory: bool = False):
        """``steps`` layers on the layer's own outputs: C_T (batch, k, d), and with ``return_trajectory``
        also every step's centers (batch, steps + 1, k, d)."""
        steps = check_int("steps", steps, 0)
        Xbar, Cbar = self.embed(X, C)
        traj = [Cbar[:, : self.k, : self.d]]
        for _ in range(steps):
            Xbar, Cbar = self.layer(Xbar, Cbar)
            traj.append(Cbar[:, : self.k, : self.d])
        return (traj[-1], torch.stack(traj, 1)) if return_trajectory else traj[-1]


def keep_transformer(
    d: int, k: int, embedding: str = "BN", *, lam: float | None = None, dtype=torch.float64
) -> KeepTransformer:
    """The exact one-layer transformer that runs Lloyd's algorithm with empty clusters kept (gamma = inf)."""
    return KeepTransformer(d, k, embedding, lam=lam, dtype=dtype)
