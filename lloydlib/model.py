"""The learnable one-layer transformer F^gamma_{d:k}(X, C; Theta) of the Leaner paper (Eq. 4, Alg. 1).

Tokens are rows (see :mod:`lloydlib.tasks`). With E_X, E_C the fixed embeddings of
:mod:`lloydlib.embeddings` (OH, BN, NA or SC), Xbar = E_X(X) (batch, n, d_emb), Cbar = E_C(C) (batch, k, d_emb):

    Xbar' = Xbar + A(Xbar, Cbar;  Q1,K1,V1) + A(Xbar, Xbar; Q2,K2,V2)     head 1: X -> C,  head 2: X -> X
    Cbar' = Cbar + A(Cbar, Xbar'; Q3,K3,V3) + A(Cbar, Cbar; Q4,K4,V4)     head 3: C -> X', head 4: C -> C
    F(X, C) = the first d coordinates of Cbar'                             (batch, k, d)

A is the distance attention of Eq. 3, with the paper's scale gamma / sqrt(d_emb):

    A(Z, Z')_i = sum_j softmax_j( -(gamma / sqrt(d_emb)) ||q_i - k_j||^2 ) v_j,
    q_i = Q z_i + b_Q,  k_j = K z'_j + b_K,  v_j = V z'_j + b_V.

The twelve learned matrices are d_emb x d_emb, stored per kind as ``Q``, ``K``, ``V`` of shape
(4, d_emb, d_emb) (``Q[mu - 1]`` is the paper's Q_mu, acting on column tokens, so rows use ``Z @ Q[mu-1].T``),
with biases ``bQ``, ``bK``, ``bV`` of shape (4, d_emb) when ``bias=True`` (as the authors' code, which
uses ``nn.Linear`` with biases and PyTorch's default initialisation U(-1/sqrt(d_emb), 1/sqrt(d_emb))).
The paper fixes gamma = 1 for learning; the authors' code adds attention dropout p = 0.01, here an option
that is off by default.

Two forward paths compute the same function:

* ``fast=False``: the readable reference. Each head is :func:`lloydlib.attention.attention_weights` on
  tokens with a constant 1 appended (so the affine maps Q z + b are matrices [Q | b]), followed by the
  weighted sum of values: exactly :func:`lloydlib.attention.distance_attention` (Eq. 3).
* ``fast=True`` (default): the same layer rearranged, :func:`lloydlib.fast_layer.fast_layer` (the one fast
  forward, shared with the stacked training engine; its docstring says how). At ``gamma = inf`` (hardmax,
  not a softmax) the fast path falls back to the reference one. The forward also runs under
  ``torch.compile`` (input value checks are skipped there).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ._validate import (
    check_bool,
    check_centers,
    check_choice,
    check_points,
    check_positive,
    check_scalar,
    check_task_shape,
)
from .attention import WEIGHTINGS, attention_weights
from .construction import theorem_weights
from .embeddings import EMBEDDINGS, cluster_codes, embedding_dim
from .fast_layer import fast_layer

__all__ = ["LearnableTransformer"]

# torch >= 2.3; older versions cannot be compiling through this check anyway
_is_compiling = getattr(torch.compiler, "is_compiling", lambda: False)


class LearnableTransformer(nn.Module):
    """One layer of Eq. 4 with learnable Q_mu, K_mu, V_mu (mu = 1..4): ``model(X, C) -> C_next``.

    X (batch, n, d) points and C (batch, k, d) centers map to (batch, k, d), the first d coordinates of
    the updated center tokens. A model serves one (d, k) and any n.

    Parameters: ``d``, ``k``; ``embedding`` in {"OH", "BN", "NA", "SC"}; ``gamma`` > 0 (``math.inf``
    for exact averaging hardmax); ``bias`` adds b_Q, b_K, b_V; ``dropout`` is the attention-weight
    dropout probability in training mode; ``weighting`` is "softmax" (the paper) or "sparsemax";
    ``fast`` selects the fused forward (see the module docstring); ``dtype``, ``device`` of the parameters.
    """

    def __init__(
        self,
        d: int,
        k: int,
        embedding: str = "BN",
        *,
        gamma: float = 1.0,
        bias: bool = True,
        dropout: float = 0.0,
        weighting: str = "softmax",
        fast: bool = True,
        dtype: torch.dtype = torch.float32,
        device=None,
    ):
        super().__init__()
        self.embedding = check_choice("embedding", embedding, EMBEDDINGS)
        self.d_emb = embedding_dim(d, k, embedding)  # validates d, k
        self.d, self.k = int(d), int(k)
        self.gamma = check_positive("gamma", gamma, allow_inf=True)
        self.dropout = check_scalar("dropout", dropout, min_val=0.0, max_val=1.0, include_boundaries="left")
        self.weighting = check_choice("weighting", weighting, WEIGHTINGS)
        self.fast = check_bool("fast", fast)
        check_bool("bias", bias)
        D = self.d_emb
        kw = dict(dtype=dtype, device=device)
        self.Q = nn.Parameter(torch.empty(4, D, D, **kw))
        self.K = nn.Parameter(torch.empty(4, D, D, **kw))
        self.V = nn.Parameter(torch.empty(4, D, D, **kw))
        for name in ("bQ", "bK", "bV"):
            self.register_parameter(name, nn.Parameter(torch.empty(4, D, **kw)) if bias else None)
        codes = cluster_codes(self.k, embedding, dtype=dtype, device=device)
        self.register_buffer("codes", codes, persistent=False)  # (k, d_emb - d)
        self.reset_parameters()

    @property
    def bias(self) -> bool:
        return self.bQ is not None

    def reset_parameters(self) -> None:
        """PyTorch's ``nn.Linear`` default: every weight and bias entry U(-1/sqrt(d_emb), 1/sqrt(d_emb))."""
        bound = 1.0 / math.sqrt(self.d_emb)
        with torch.no_grad():
            for p in self.parameters():
                p.uniform_(-bound, bound)

    @torch.no_grad()
    def load_theorem_weights(self) -> LearnableTransformer:
        """Set the twelve matrices to Theorem B.1's (:func:`lloydlib.construction.theorem_weights`), biases to 0.

        With ``gamma = math.inf`` the model then computes one exact Lloyd step (under the theorem's
        assumptions), like :class:`lloydlib.construction.ExactTransformer`. Returns the model.
        """
        Q, K, V = theorem_weights(self.d, self.k, self.embedding, dtype=self.Q.dtype)
        self.Q.copy_(Q)
        self.K.copy_(K)
        self.V.copy_(V)
        if self.bias:
            for b in (self.bQ, self.bK, self.bV):
                b.zero_()
        return self

    def extra_repr(self) -> str:
        return (
            f"d={self.d}, k={self.k}, embedding={self.embedding!r}, d_emb={self.d_emb}, gamma={self.gamma}, "
            f"bias={self.bias}, dropout={self.dropout}, weighting={self.weighting!r}, fast={self.fast}"
        )

    # ----------------------------------------------------------------------------------------------
    def _check(self, X: torch.Tensor, C: torch.Tensor):
        if not _is_compiling():  # value checks (finite entries) would break a compiled graph
            X = check_points(X)
            C = check_centers(C, X)
        check_task_shape(X, C, self.d, self.k, "model")
        if X.dtype != self.Q.dtype:
            raise TypeError(
                f"X and C must have the model's dtype {self.Q.dtype}, got {X.dtype}; "
                f"convert the data or the model with model.to({X.dtype})"
            )
        return X, C

    def _embed_centers(self, C: torch.Tensor) -> torch.Tensor:
        return torch.cat([C, self.codes.expand(C.shape[0], -1, -1)], dim=2)

    def embed(self, X: torch.Tensor, C: torch.Tensor):
        """(E_X(X), E_C(C)): tokens (batch, n, d_emb) and (batch, k, d_emb)."""
        X, C = self._check(X, C)
        return F.pad(X, (0, self.d_emb - self.d)), self._embed_centers(C)

    def forward(self, X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
        """F(X, C): points (batch, n, d), centers (batch, k, d) -> next centers (batch, k, d)."""
        if self.fast and not math.isinf(self.gamma):
            X, C = self._check(X, C)
            return self._fast_layer(X, C)
        Xbar, Cbar = self.embed(X, C)
        return self.layer(Xbar, Cbar)[1][..., : self.d]

    # --- the readable reference: Eq. 3 per head via lloydlib.attention -----------------------------
    def _affine(self, kind: str, mu: int) -> torch.Tensor:
        """[W | b] (d_emb, d_emb + 1) for head ``mu`` (0-based), acting on tokens with a trailing 1."""
        W = getattr(self, kind)[mu]
        b = getattr(self, "b" + kind)
        b = W.new_zeros(self.d_emb) if b is None else b[mu]
        return torch.cat([W, b[:, None]], dim=1)

    def _head(self, mu: int, Z1: torch.Tensor, Zp1: torch.Tensor) -> torch.Tensor:
        W = attention_weights(
            Z1, Zp1, self._affine("Q", mu), self._affine("K", mu), self.gamma, weighting=self.weighting
        )
        if self.training and self.dropout > 0:
            W = F.dropout(W, self.dropout)
        return W @ (Zp1 @ self._affine("V", mu).T)

    def layer(self, Xbar: torch.Tensor, Cbar: torch.Tensor):
        """Eq. 4 on tokens, the plain way: (Xbar, Cbar) -> (Xbar', Cbar'), same shapes."""

        def one(Z):
            return torch.cat([Z, Z.new_ones(Z.shape[0], Z.shape[1], 1)], dim=2)

        X1, C1 = one(Xbar), one(Cbar)
        Xbar_next = Xbar + self._head(0, X1, C1) + self._head(1, X1, X1)
        Cbar_next = Cbar + self._head(2, C1, one(Xbar_next)) + self._head(3, C1, C1)
        return Xbar_next, Cbar_next

    # --- the fast path: the one fast layer of Eq. 4 (lloydlib.fast_layer), for one layer --------------
    def _fast_layer(self, X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
        """:func:`lloydlib.fast_layer.fast_layer` with this model's parameters as a stack of one:
        X (batch, n, d), C (batch, k, d) -> (batch, k, d)."""
        params = {name: p[None] for name, p in self.named_parameters()}
        out = fast_layer(
            params,
            X[None],
            C[None],
            self.codes,
            self.gamma,
            weighting=self.weighting,
            dropout=self.dropout,
            training=self.training,
        )
        return out[0]
