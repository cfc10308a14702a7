"""S layers of Eq. 4 as one: parameters with a leading "model" dimension, a functional forward and losses.

A stack of S runs of one shape (d, k, embedding, bias) keeps all its learned numbers in one flat tensor
``theta`` of shape (S, P): per run the twelve matrices Q, K, V (4, d_emb, d_emb) and, with ``bias``, the
biases bQ, bK, bV (4, d_emb), in that order (the order of :class:`lloydlib.model.LearnableTransformer` 's
parameters). Run s sees tasks X[s] (B, n, d), C[s] (B, k, d); the forward is the one fast layer of Eq. 4,
:func:`lloydlib.fast_layer.fast_layer`, which :class:`lloydlib.model.LearnableTransformer` runs too:

    X (S, B, n, d), C (S, B, k, d)  ->  F(X[s], C[s]; Theta_s)  (S, B, k, d).

The losses are those of :mod:`lloydlib.losses`, per run: the smoothed loss of Eq. 6 (Eqs. 24-29, with
softmax for "NE" and sparsemax for "L2") at a per-run temperature tau, and the k-means loss of Eq. 5.
The training loss takes r = ||x||^2 + ||c||^2 - 2 x.c (clamped at 0), as
:func:`lloydlib.losses.training_loss` does: the subtracted form's (S, B, n, k, d) difference tensor and its
gradient were most of a step at d=32, k=25. Sparsemax is :func:`lloydlib.fast_layer.sparsemax`.
"""

from __future__ import annotations

import math

import torch

from ..distances import sqdist
from ..embeddings import cluster_codes, embedding_dim
from ..fast_layer import fast_layer, sparsemax
from ..model import LearnableTransformer

__all__ = ["StackShape", "stacked_forward", "smoothed_losses", "kmeans_objective_unchecked"]

_NAMES = ("Q", "K", "V", "bQ", "bK", "bV")


class StackShape:
    """The layout of ``theta`` (S, P) for one (d, k, embedding, bias): :meth:`split`, :meth:`flatten`, :meth:`unflatten`."""

    def __init__(self, d: int, k: int, embedding: str, bias: bool, gamma: float):
        self.d, self.k, self.embedding, self.bias, self.gamma = d, k, embedding, bias, gamma
        self.D = D = embedding_dim(d, k, embedding)
        self.names = _NAMES if bias else _NAMES[:3]
        self.shapes = [(4, D, D)] * 3 + ([(4, D)] * 3 if bias else [])
        self.sizes = [math.prod(s) for s in self.shapes]
        self.P = sum(self.sizes)

    def codes(self, dtype, device) -> torch.Tensor:
        """The cluster codes of the center tokens (k, d_emb - d)."""
        return cluster_codes(self.k, self.embedding, dtype=dtype, device=device)

    def split(self, theta: torch.Tensor) -> dict:
        """Views of ``theta`` (S, P): name -> (S, 4, D, D) or (S, 4, D)."""
        S = theta.shape[0]
        parts = theta.split(self.sizes, dim=1)
        return {name: p.reshape(S, *shape) for name, p, shape in zip(self.names, parts, self.shapes)}

    def flatten(self, state: dict) -> torch.Tensor:
        """One run's ``state_dict`` -> its row of ``theta`` (P,)."""
        return torch.cat([state[name].reshape(-1) for name in self.names])

    def unflatten(self, row: torch.Tensor) -> dict:
        """A row of ``theta`` (P,) -> a ``state_dict`` of :class:`LearnableTransformer` (cloned, on the CPU)."""
        return {k: v[0].detach().to("cpu").clone() for k, v in self.split(row[None]).items()}

    def model(self, row: torch.Tensor, *, dropout=0.0, weighting="softmax", fast=True) -> LearnableTransformer:
        """A :class:`LearnableTransformer` holding the weights of one row of ``theta``."""
        m = LearnableTransformer(
            self.d,
            self.k,
            self.embedding,
            gamma=self.gamma,
            bias=self.bias,
            dropout=dropout,
            weighting=weighting,
            fast=fast,
            dtype=row.dtype,
        )
        m.load_state_dict(self.unflatten(row))
        return m


def stacked_forward(
    shape: StackShape, theta: torch.Tensor, X: torch.Tensor, C: torch.Tensor, codes, **options
) -> torch.Tensor:
    """Eq. 4 for every run of the stack: theta (S, P), X (S, B, n, d), C (S, B, k, d) -> (S, B, k, d).

    :func:`lloydlib.fast_layer.fast_layer` on the parameters :meth:`StackShape.split` reads from ``theta``;
    ``codes`` (k, d_emb - d) are the center tokens' codes; ``options`` are ``fast_layer``'s (``weighting``,
    ``dropout``, ``training``).
    """
    return fast_layer(shape.split(theta), X, C, codes, shape.gamma, **options)


def _sqdist(X: torch.Tensor, C: torch.Tensor, expand: bool) -> torch.Tensor:
    """r = ||x_i - c_j||^2 by :func:`lloydlib.distances.sqdist` over any leading dimensions:
    X (..., n, d), C (..., k, d) -> (..., n, k); subtracted (exact) or, ``expand``, expanded."""
    r = sqdist(X.flatten(0, -3), C.flatten(0, -3), expand=expand)
    return r.view(*X.shape[:-1], C.shape[-2])


def smoothed_losses(X: torch.Tensor, C: torch.Tensor, tau: torch.Tensor, regularizer: str) -> torch.Tensor:
    """Eq. 6 per run: the batch mean of the smoothed loss (Eqs. 24-29). X (S, B, n, d), C (S, B, k, d),
    tau (S,) -> (S,)."""
    r = _sqdist(X, C, expand=True)
    z = -r / tau[:, None, None, None]
    P = torch.softmax(z, dim=-1) if regularizer == "NE" else sparsemax(z)
    return (P * r).sum(dim=(2, 3)).mean(dim=1)


def kmeans_objective_unchecked(X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """The k-means objective of Eq. 5 per task, as :func:`lloydlib.kmeans_objective` but over any leading
    dimensions and without input checks (for compiled and stacked code): X (..., n, d), C (..., k, d) -> (...)."""
    return _sqdist(X, C, expand=False).amin(-1).sum(-1)
