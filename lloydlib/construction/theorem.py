"""The exact Lloyd transformer: Eq. 4 with the weights of Theorem B.1 (Theorem 2.1) of the Leaner paper.

One layer, four distance-attention heads, two residual sublayers (tokens are rows, see lloydlib.tasks):

    Xbar' = Xbar + A(Xbar, Cbar; Q1,K1,V1) + A(Xbar, Xbar;  Q2,K2,V2)     points attend centers / points
    Cbar' = Cbar + A(Cbar, Xbar'; Q3,K3,V3) + A(Cbar, Cbar;  Q4,K4,V4)     centers attend updated points / centers

Theorem B.1 weights, with P_x = I^{:d} (keep the data coordinates) and P_y = I^{d+1:} (keep the code):

    Q1 = K1 = Q2 = K2 = P_x,   V1 = -V2 = P_y        (write the nearest center's code, erase the old one)
    Q3 = K3 = Q4 = K4 = P_y,   V3 = -V4 = P_x        (average the cluster's members, erase the old center)

At gamma = inf, with a unique nearest center for every point and no empty cluster, layer t outputs
Lloyd's centers after t iterations, for OH, BN and the scalar code SC alike.

What happens when the assumptions fail (specified here, reported by :meth:`ExactTransformer.run`
through ``report`` and an :class:`~lloydlib.AssumptionWarning`):

* duplicate points: head 2 averages the codes of identical points, which are identical (same x, same
  nearest center), so the result stays exact; reported as ``duplicates``.
* a point equidistant from several nearest centers (a tie): head 1 writes the *average* of their codes,
  which matches no cluster code, so the point is left out of every mean; reported as ``ties``.
* an empty cluster: no point carries its code, so head 3 averages the points whose codes are nearest
  to it and the center moves there instead of staying; reported as ``empty``.

``center_update="linear"`` replaces head 3 by the older paper's row-normalised linear attention
a_ji = <Q3 c_j, K3 x_i> / sum_i' <Q3 c_j, K3 x_i'> (OH only: BN's all-zero code breaks dot products).
With a finite gamma in head 1 only, this is soft k-means exactly (:func:`soft_kmeans_transformer`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import torch
from torch import nn

from .._validate import (
    AssumptionWarning,
    check_centers,
    check_choice,
    check_int,
    check_points,
    check_positive,
    check_task_shape,
)
from ..attention import WEIGHTINGS, distance_attention
from ..embeddings import EMBEDDINGS, code_dim, embed_centers, embed_points, embedding_dim

__all__ = [
    "theorem_weights",
    "ExactTransformer",
    "exact_transformer",
    "soft_kmeans_transformer",
    "CENTER_UPDATES",
    "head_gammas",
]


CENTER_UPDATES = ("distance", "linear")


def theorem_weights(d: int, k: int, embedding: str = "BN", *, dtype=torch.float64):
    """Q, K, V of Theorem B.1 stacked per head: three tensors of shape (4, d_emb, d_emb)."""
    d = check_int("d", d, 1)
    check_choice("embedding", embedding, EMBEDDINGS)
    if embedding == "NA":
        raise ValueError(
            "embedding must carry a cluster code to realise Lloyd's algorithm (one of 'OH', 'BN', 'SC'), got 'NA'"
        )
    m = code_dim(k, embedding)
    D = d + m
    Px = torch.diag(torch.cat([torch.ones(d), torch.zeros(m)])).to(dtype)
    Py = torch.diag(torch.cat([torch.zeros(d), torch.ones(m)])).to(dtype)
    Q = torch.stack([Px, Px, Py, Py])
    K = Q.clone()
    V = torch.stack([Py, -Py, Px, -Px])
    assert Q.shape == (4, D, D)
    return Q, K, V


def head_gammas(gamma) -> tuple[float, float, float, float]:
    """The four heads' temperatures from ``gamma``: one number for all, or a sequence of four (checked)."""
    if isinstance(gamma, Sequence) and not isinstance(gamma, str):
        if len(gamma) != 4:
            raise ValueError(
                f"gamma must be a number or a sequence of 4 numbers (one per head), "
                f"got a sequence of length {len(gamma)}"
            )
        return tuple(check_positive(f"gamma[{i}]", g, allow_inf=True) for i, g in enumerate(gamma))
    g = check_positive("gamma", gamma, allow_inf=True)
    return (g, g, g, g)


class ExactTransformer(nn.Module):
    """Eq. 4 with fixed weights ``Q, K, V`` of shape (4, d_emb, d_emb) (Theorem B.1 by default).

    ``self(X, C)`` maps points (batch, n, d) and centers (batch, k, d) to the centers after one layer,
    (batch, k, d). :meth:`run` loops the same layer over its own token outputs.
    """

    def __init__(
        self,
        d: int,
        k: int,
        embedding: str = "BN",
        gamma=math.inf,
        *,
        center_update: str = "distance",
        weighting: str = "softmax",
        dtype=torch.float64,
    ):
        super().__init__()
        self.d, self.k = check_int("d", d, 1), check_int("k", k, 1)
        self.embedding = check_choice("embedding", embedding, EMBEDDINGS)
        self.center_update = check_choice("center_update", center_update, CENTER_UPDATES)
        if center_update == "linear" and embedding != "OH":
            raise ValueError(
                f"center_update='linear' needs one-hot codes (embedding='OH'): with "
                f"embedding={embedding!r} some code is orthogonal to every other, so the "
                f"row normalisation divides by zero"
            )
        self.weighting = check_choice("weighting", weighting, WEIGHTINGS)
        self.gammas = head_gammas(gamma)
        self.d_emb = embedding_dim(d, k, embedding)
        Q, K, V = theorem_weights(d, k, embedding, dtype=dtype)
        self.register_buffer("Q", Q)
        self.register_buffer("K", K)
        self.register_buffer("V", V)

    def extra_repr(self) -> str:
        return (
            f"d={self.d}, k={self.k}, embedding={self.embedding!r}, d_emb={self.d_emb}, "
            f"gammas={self.gammas}, center_update={self.center_update!r}"
        )

    def _head(self, mu: int, Z, Zp, return_weights=False):
        return distance_attention(
            Z,
            Zp,
            self.Q[mu].to(Z.dtype),
            self.K[mu].to(Z.dtype),
            self.V[mu].to(Z.dtype),
            self.gammas[mu],
            weighting=self.weighting,
            return_weights=return_weights,
        )

    def _linear_head3(self, Cbar, Xbar1):
        q = Cbar @ self.Q[2].to(Cbar.dtype).T
        kk = Xbar1 @ self.K[2].to(Cbar.dtype).T
        a = q @ kk.transpose(1, 2)  # (batch, k, n)
        mass = a.sum(-1, keepdim=True)
        if bool((mass == 0).any()):
            raise ValueError(
                "linear center update: some cluster has zero total attention mass (an empty "
                "cluster); it has no mean. Use center_update='distance' or another init."
            )
        return (a / mass) @ (Xbar1 @ self.V[2].to(Cbar.dtype).T)

    def layer(self, Xbar: torch.Tensor, Cbar: torch.Tensor, *, return_weights: bool = False):
        """Eq. 4 on tokens: (Xbar (batch, n, d_emb), Cbar (batch, k, d_emb)) -> the updated pair.

        With ``return_weights`` a third output lists the four heads' attention matrices (head 3 is the
        row-normalised linear one for ``center_update="linear"``).
        """
        a1, w1 = self._head(0, Xbar, Cbar, True)
        a2, w2 = self._head(1, Xbar, Xbar, True)
        Xbar1 = Xbar + a1 + a2
        if self.center_update == "distance":
            a3, w3 = self._head(2, Cbar, Xbar1, True)
        else:
            a3, w3 = self._linear_head3(Cbar, Xbar1), None
        a4, w4 = self._head(3, Cbar, Cbar, True)
        Cbar1 = Cbar + a3 + a4
        return (Xbar1, Cbar1, (w1, w2, w3, w4)) if return_weights else (Xbar1, Cbar1)

    def _check(self, X, C):
        X = check_points(X)
        C = check_centers(C, X)
        check_task_shape(X, C, self.d, self.k, "transformer")
        return X, C

    def embed(self, X, C):
        """(E_X(X), E_C(C)): the layer's input tokens."""
        X, C = self._check(X, C)
        return embed_points(X, self.k, self.embedding), embed_centers(C, self.embedding)

    def forward(self, X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
        Xbar, Cbar = self.embed(X, C)
        return self.layer(Xbar, Cbar)[1][..., : self.d]

    def run(
        self,
        X: torch.Tensor,
        C: torch.Tensor,
        steps: int,
        *,
        return_trajectory: bool = False,
        return_report: bool = False,
        warn: bool = True,
    ):
        """Apply the layer ``steps`` times to its own outputs (weights shared across layers).

        Returns C_T (batch, k, d); with ``return_trajectory`` also all centers (batch, steps + 1, k, d);
        with ``return_report`` also a dict of assumption checks per step:
        ``ties`` (batch, steps) points with no exact cluster code after head 1,
        ``duplicates`` (batch,) points equal to an earlier point,
        ``empty`` (batch, steps, k) clusters that no point's code matches.
        An :class:`AssumptionWarning` is issued when any check fails and ``warn`` is true.
        """
        steps = check_int("steps", steps, 0)
        Xbar, Cbar = self.embed(X, C)
        codes = embed_centers(C, self.embedding)[0, :, self.d :]  # (k, m)
        traj, ties, empty = [Cbar[..., : self.d]], [], []
        for _ in range(steps):
            Xbar, Cbar = self.layer(Xbar, Cbar)
            Y = Xbar[..., self.d :]  # (batch, n, m)
            match = (Y[:, :, None, :] == codes[None, None]).all(-1)  # (batch, n, k)
            ties.append((~match.any(-1)).sum(-1))
            empty.append(~match.any(1))
            traj.append(Cbar[..., : self.d])
        X = X.detach()
        distinct = torch.tensor([len(torch.unique(x, dim=0)) for x in X], device=X.device)
        report = {
            "ties": torch.stack(ties, 1) if ties else X.new_zeros(X.shape[0], 0, dtype=torch.long),
            "duplicates": X.shape[1] - distinct,
            "empty": torch.stack(empty, 1) if empty else X.new_zeros(X.shape[0], 0, self.k, dtype=torch.bool),
        }
        if warn:
            problems = [
                f"{int(report['ties'].sum())} tied point assignments" if report["ties"].any() else "",
                f"{int(report['duplicates'].sum())} duplicate points" if report["duplicates"].any() else "",
                f"{int(report['empty'].sum())} empty clusters" if report["empty"].any() else "",
            ]
            problems = [p for p in problems if p]
            if problems:
                warnings.warn(
                    "Theorem B.1's assumptions failed over the run: "
                    + ", ".join(problems)
                    + " (see ExactTransformer.run's docstring for what the layer then does)",
                    AssumptionWarning,
                    stacklevel=2,
                )
        out = [Cbar[..., : self.d]]
        if return_trajectory:
            out.append(torch.stack(traj, 1))
        if return_report:
            out.append(report)
        return out[0] if len(out) == 1 else tuple(out)


def exact_transformer(
    d: int,
    k: int,
    embedding: str = "BN",
    gamma=math.inf,
    *,
    center_update: str = "distance",
    weighting: str = "softmax",
    dtype=torch.float64,
) -> ExactTransformer:
    """The one-layer, four-head transformer of Theorem B.1 for ``embedding`` in {"OH", "BN", "SC"}."""
    return ExactTransformer(d, k, embedding, gamma, center_update=center_update, weighting=weighting, dtype=dtype)


def soft_kmeans_transformer(d: int, k: int, beta: float, *, dtype=torch.float64) -> ExactTransformer:
    """Soft k-means with stiffness ``beta`` as a transformer (a variant listed by the older paper, Clarkson et al.;
    its weights, a finite-gamma head 1 with the linear center update, are our reconstruction).

    OH codes, a finite gamma = beta * sqrt(d_emb) in head 1 only (so its scores are -beta ||x - c||^2),
    hardmax elsewhere and the linear center update. Its first layer equals
    :func:`lloydlib.lloyd.soft_kmeans_step` exactly.
    """
    beta = check_positive("beta", beta)
    d_emb = embedding_dim(d, k, "OH")
    return ExactTransformer(
        d, k, "OH", (beta * math.sqrt(d_emb), math.inf, math.inf, math.inf), center_update="linear", dtype=dtype
    )
