"""The two forms of one layer that ``bench`` compares, and their NE losses.

The reference form (:class:`ReferenceTransformer`, :func:`reference_loss`) is how the authors' code
computes (``kmt.py``): an ``nn.Linear`` per projection, squared distances as ``torch.cdist(...) ** 2``,
the softmax as its own operation on the materialised n x n score matrix, attention dropout as
``nn.Dropout`` on the weights, and the NE loss with ``cdist`` too. It is the baseline of ``bench`` and is
used nowhere else in the library. lloydlib's form is :class:`lloydlib.model.LearnableTransformer` with
``fast=True`` and :func:`lloydlib_loss`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .._validate import check_choice
from ..distances import sqdist
from ..embeddings import cluster_codes, embedding_dim
from ..losses import regularized_argmax
from ..model import LearnableTransformer

__all__ = ["IMPLEMENTATIONS", "ReferenceTransformer", "reference_loss", "lloydlib_loss", "make_model"]

IMPLEMENTATIONS = ("lloydlib", "reference")


class _ReferenceHead(nn.Module):
    """One distance-attention head of Eq. 3 the straightforward way (as ``kmt.py`` computes it)."""

    def __init__(self, d_emb: int, gamma: float, bias: bool, dropout: float):
        super().__init__()
        self.q = nn.Linear(d_emb, d_emb, bias=bias)
        self.k = nn.Linear(d_emb, d_emb, bias=bias)
        self.v = nn.Linear(d_emb, d_emb, bias=bias)
        self.gamma, self.d_emb = gamma, d_emb
        self.drop = nn.Dropout(dropout)

    def forward(self, Z: torch.Tensor, Zp: torch.Tensor) -> torch.Tensor:
        """Tokens Z (batch, m, d_emb) attend to Zp (batch, m', d_emb); returns (batch, m, d_emb)."""
        scores = -self.gamma * torch.cdist(self.q(Z), self.k(Zp)) ** 2 / math.sqrt(self.d_emb)
        return self.drop(torch.softmax(scores, dim=-1)) @ self.v(Zp)


class ReferenceTransformer(nn.Module):
    """Eq. 4 with four :class:`_ReferenceHead` s: the baseline of ``bench``; same signature as
    :class:`lloydlib.model.LearnableTransformer` (``model(X, C) -> (batch, k, d)``), no input checks."""

    def __init__(
        self,
        d: int,
        k: int,
        embedding: str = "BN",
        *,
        gamma: float = 1.0,
        bias: bool = True,
        dropout: float = 0.0,
        dtype=torch.float32,
        device=None,
    ):
        super().__init__()
        self.d, self.k, self.embedding = d, k, embedding
        self.d_emb = embedding_dim(d, k, embedding)
        self.heads = nn.ModuleList(_ReferenceHead(self.d_emb, gamma, bias, dropout) for _ in range(4))
        self.register_buffer("codes", cluster_codes(k, embedding, dtype=dtype, device=device), persistent=False)
        self.to(device=device, dtype=dtype)

    @torch.no_grad()
    def load_from(self, model: LearnableTransformer) -> ReferenceTransformer:
        """Copy a :class:`LearnableTransformer` 's weights, so both compute the same function."""
        for mu, head in enumerate(self.heads):
            for kind in "QKV":
                lin = getattr(head, kind.lower())
                lin.weight.copy_(getattr(model, kind)[mu])
                if lin.bias is not None:
                    lin.bias.copy_(getattr(model, "b" + kind)[mu])
        return self

    def forward(self, X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
        """Points X (batch, n, d), centers C (batch, k, d) -> updated centers (batch, k, d)."""
        m = self.d_emb - self.d
        Xbar = torch.cat([X, X.new_zeros(X.shape[0], X.shape[1], m)], dim=2)
        Cbar = torch.cat([C, self.codes.expand(C.shape[0], -1, -1)], dim=2)
        h = self.heads
        Xbar1 = Xbar + h[0](Xbar, Cbar) + h[1](Xbar, Xbar)
        Cbar1 = Cbar + h[2](Cbar, Xbar1) + h[3](Cbar, Cbar)
        return Cbar1[..., : self.d]


def reference_loss(X: torch.Tensor, C: torch.Tensor, tau: float = 0.1, regularizer: str = "NE") -> torch.Tensor:
    """The smoothed k-means loss (Eq. 6 with the softmax, Eq. 26, or with "L2" the sparsemax, Eq. 29) the
    reference way: ``cdist`` squared, batch mean of the per-task sum. X (batch, n, d), C (batch, k, d) -> a
    scalar."""
    r = torch.cdist(X, C) ** 2
    return (regularized_argmax(-r / tau, regularizer, dim=-1) * r).sum(dim=(1, 2)).mean()


def lloydlib_loss(X: torch.Tensor, C: torch.Tensor, tau: float = 0.1, regularizer: str = "NE") -> torch.Tensor:
    """lloydlib's training loss (``regularizer`` "NE" or "L2"), :func:`lloydlib.losses.training_loss` without its input checks.

    The same arithmetic (:func:`lloydlib.distances.sqdist` in its expanded form, then
    :func:`lloydlib.losses.regularized_argmax`),
    so that under ``torch.compile`` the model and the loss form one graph: a value check such as
    "all entries finite" reads a tensor into Python and would cut the graph in pieces.
    """
    r = sqdist(X, C, expand=True)
    return (regularized_argmax(-r / tau, regularizer, dim=2) * r).sum(dim=(1, 2)).mean()


def make_model(
    impl: str,
    d: int,
    k: int,
    embedding: str,
    *,
    dropout: float = 0.0,
    gamma: float = 1.0,
    bias: bool = True,
    dtype=torch.float32,
    device=None,
) -> nn.Module:
    """A model of implementation ``impl`` ("lloydlib": the fast :class:`LearnableTransformer`, or "reference")."""
    check_choice("impl", impl, IMPLEMENTATIONS)
    kwargs = dict(gamma=gamma, bias=bias, dropout=dropout, dtype=dtype, device=device)
    if impl == "lloydlib":
        return LearnableTransformer(d, k, embedding, fast=True, **kwargs)
    return ReferenceTransformer(d, k, embedding, **kwargs)
