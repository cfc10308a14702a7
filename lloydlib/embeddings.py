"""Token embeddings E_X, E_C: data coordinates followed by a cluster-id code (Eq. OH, Eq. BN).

Tokens are rows (see :mod:`lloydlib.tasks`): a center token is [c_j ; code_j] and a point token is
[x_i ; 0]. The code block is the "scratch" space where the assignment is written.

=========  =====================================  =================  ==========================
name       code of cluster j (j = 1..k)            code size m        d_emb
=========  =====================================  =================  ==========================
``"OH"``   e_j, the j-th standard basis vector     k                  d + k     (older paper)
``"BN"``   bits of (j - 1), least significant      ceil(log2 k)       d + ceil(log2 k) (Def. 2.1)
           bit first, values in {0, 1}
``"NA"``   none (raw tokens)                       0                  d
``"SC"``   the scalar j - 1                        1                  d + 1  (beyond the paper)
=========  =====================================  =================  ==========================
"""
from __future__ import annotations

import math

import torch

from ._validate import check_centers, check_choice, check_int, check_points

__all__ = ["EMBEDDINGS", "code_dim", "embedding_dim", "cluster_codes", "embed_points", "embed_centers"]

EMBEDDINGS = ("OH", "BN", "NA", "SC")


def code_dim(k: int, embedding: str) -> int:
    """Size m of the cluster-id code: k (OH), ceil(log2 k) (BN), 0 (NA), 1 (SC)."""
    k = check_int("k", k, 1)
    check_choice("embedding", embedding, EMBEDDINGS)
    if embedding == "OH":
        return k
    if embedding == "BN":
        if k < 2:
            raise ValueError(f"k must be >= 2 for the BN embedding (ceil(log2 k) bits), got k={k}")
        return math.ceil(math.log2(k))
    return 0 if embedding == "NA" else 1


def embedding_dim(d: int, k: int, embedding: str) -> int:
    """Token width d_emb = d + code_dim(k, embedding)."""
    return check_int("d", d, 1) + code_dim(k, embedding)


def cluster_codes(k: int, embedding: str, *, dtype=torch.float32, device=None) -> torch.Tensor:
    """The codes of clusters 1..k as rows, shape (k, m); for BN, ``codes[j, b]`` is bit b of j."""
    m = code_dim(k, embedding)
    j = torch.arange(k, device=device)
    if embedding == "OH":
        return torch.eye(k, dtype=dtype, device=device)
    if embedding == "BN":
        return ((j[:, None] >> torch.arange(m, device=device)[None, :]) & 1).to(dtype)
    if embedding == "SC":
        return j[:, None].to(dtype)
    return torch.zeros(k, 0, dtype=dtype, device=device)


def embed_points(X: torch.Tensor, k: int, embedding: str) -> torch.Tensor:
    """E_X(X) = [X ; 0]: points (batch, n, d) -> tokens (batch, n, d + m) with an all-zero code block."""
    X = check_points(X)
    m = code_dim(k, embedding)
    return torch.cat([X, X.new_zeros(X.shape[0], X.shape[1], m)], dim=2)


def embed_centers(C: torch.Tensor, embedding: str) -> torch.Tensor:
    """E_C(C) = [C ; codes]: centers (batch, k, d) -> tokens (batch, k, d + m)."""
    C = check_centers(C)
    codes = cluster_codes(C.shape[1], embedding, dtype=C.dtype, device=C.device)
    return torch.cat([C, codes.expand(C.shape[0], -1, -1)], dim=2)
