"""Tensor checks shared by the attention-clustering modules: head vectors and orthonormal centroids."""

from __future__ import annotations

import torch

from .._validate import check_tensor

__all__ = ["check_heads", "check_centroids"]


def check_heads(Lam, X: torch.Tensor | None = None, name: str = "Lam") -> torch.Tensor:
    """Head vectors (H, d) shared by every prompt, or (batch, H, d) one set per prompt, fitting X when given."""
    Lam = check_tensor(name, Lam)
    if Lam.dim() not in (2, 3):
        raise ValueError(f"{name} must have shape (H, d) or (batch, H, d), got shape {tuple(Lam.shape)}")
    if X is not None:
        if Lam.shape[-1] != X.shape[-1]:
            raise ValueError(f"{name} must have the tokens' dimension d={X.shape[-1]}, got shape {tuple(Lam.shape)}")
        if Lam.dim() == 3 and Lam.shape[0] != X.shape[0]:
            raise ValueError(
                f"{name} of shape (batch, H, d) must have X's batch size {X.shape[0]}, got shape {tuple(Lam.shape)}"
            )
        if Lam.dtype != X.dtype:
            raise TypeError(f"{name} and X must have the same dtype, got {Lam.dtype} and {X.dtype}")
    return Lam


def check_centroids(mu, name: str = "mu", *, d: int | None = None) -> torch.Tensor:
    """Centroids as rows, (K, d) or (batch, K, d), with K <= d (and dimension ``d`` when given)."""
    mu = check_tensor(name, mu)
    if mu.dim() not in (2, 3):
        raise ValueError(f"{name} must have shape (K, d) or (batch, K, d), got shape {tuple(mu.shape)}")
    if d is not None and mu.shape[-1] != d:
        raise ValueError(f"{name} must have dimension d={d}, got shape {tuple(mu.shape)}")
    if mu.shape[-2] > mu.shape[-1]:
        raise ValueError(
            f"{name} holds K={mu.shape[-2]} centroids in d={mu.shape[-1]}; orthonormal centroids need K <= d"
        )
    return mu
