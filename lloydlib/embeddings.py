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

What a code costs (its margin, norms and width) is computed by :func:`code_sqdists`, :func:`code_margin` and
:func:`embedding_norms`:

=========  ==========  ========================  ==============================
code       margin mu   d_E (Lemma I.1)           d_emb
=========  ==========  ========================  ==============================
OH         2           d + 1                     d + k
BN         1           d + ceil(log2 k)          d + ceil(log2 k)
SC         1           d + (k - 1)^2             d + 1
=========  ==========  ========================  ==============================

d_E bounds the squared norm of a center token [c; code] with c in [0,1]^d (Leaner paper, Appendix I,
Lemma I.1); for SC the code of cluster k is the scalar k - 1, so d_E grows as k^2 (our extension of
Lemma I.1, which covers OH and BN).
"""

from __future__ import annotations

import math

import torch

from ._validate import check_centers, check_choice, check_float_dtype, check_int, check_points

__all__ = [
    "EMBEDDINGS",
    "check_coded",
    "code_dim",
    "embedding_dim",
    "cluster_codes",
    "embed_points",
    "embed_centers",
    "FORMULAS",
    "code_sqdists",
    "code_margin",
    "embedding_norms",
]

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


FORMULAS = ("direct", "expanded")


def check_coded(embedding: str) -> str:
    """``embedding`` if it is one that carries a cluster code (not "NA"); a ValueError naming it otherwise."""
    check_choice("embedding", embedding, EMBEDDINGS)
    if embedding == "NA":
        raise ValueError(
            f"embedding must carry a cluster code (one of {[e for e in EMBEDDINGS if e != 'NA']}), got 'NA'"
        )
    return embedding


def code_sqdists(
    k: int, embedding: str, *, dtype: torch.dtype = torch.float64, formula: str = "direct"
) -> torch.Tensor:
    """Squared distances between the k cluster codes, (k, k), computed in ``dtype``.

    ``formula="direct"`` subtracts, sum_b (u_b - v_b)^2; ``"expanded"`` uses ||u||^2 + ||v||^2 - 2 u.v,
    the form of dot-product kernels (and of ``torch.cdist`` on large inputs), whose rounding grows with
    the code norms.
    """
    k = check_int("k", k, 1)
    check_coded(embedding)
    check_choice("formula", formula, FORMULAS)
    check_float_dtype("dtype", dtype)
    c = cluster_codes(k, embedding, dtype=torch.float64).to(dtype)
    if formula == "direct":
        return ((c[:, None, :] - c[None, :, :]) ** 2).sum(-1)
    n2 = (c * c).sum(-1)
    return n2[:, None] + n2[None, :] - 2 * (c @ c.T)


def code_margin(
    k: int, embedding: str, *, dtype: torch.dtype = torch.float64, formula: str = "direct", chunk: int = 1024
) -> float:
    """The smallest gap, over clusters j, between the nearest *other* code and code j itself.

    Exact values: 2 (OH), 1 (BN, SC). A hardmax over code distances picks exactly the cluster's own
    code while this is positive; computed in low precision with ``formula="expanded"`` it shrinks as the
    code norms grow (and turns negative for SC at large k). NaN when the distances overflow the dtype.
    Rows are processed ``chunk`` at a time, so large k needs O(chunk k) memory.
    """
    k = check_int("k", k, 2)
    chunk = check_int("chunk", chunk, 1)
    check_coded(embedding)
    check_choice("formula", formula, FORMULAS)
    check_float_dtype("dtype", dtype)
    c = cluster_codes(k, embedding, dtype=torch.float64).to(dtype)
    n2 = (c * c).sum(-1)
    worst = math.inf
    for start in range(0, k, chunk):
        rows = c[start : start + chunk]
        if formula == "direct":
            D = ((rows[:, None, :] - c[None, :, :]) ** 2).sum(-1)
        else:
            D = n2[start : start + chunk, None] + n2[None, :] - 2 * (rows @ c.T)
        D = D.double()
        if not bool(torch.isfinite(D).all()):
            return math.nan
        own = D[torch.arange(D.shape[0]), torch.arange(start, start + D.shape[0])]
        D[torch.arange(D.shape[0]), torch.arange(start, start + D.shape[0])] = math.inf
        worst = min(worst, float((D.amin(1) - own).min()))
    return worst


def embedding_norms(d: int, k: int, embedding: str) -> dict[str, float]:
    """The quantities of Lemma I.1 and Theorem 3.1 for one embedding (c in [0,1]^d).

    Returns ``d_emb``; ``d_E`` as Lemma I.1 states it (OH d + 1, BN d + ceil(log2 k); SC d + (k-1)^2 by
    the same argument); ``d_E_exact`` = d + the largest squared code norm (attained by the corner
    c = 1_d); ``max_token_norm`` = sqrt(d_E_exact); and ``exponent`` = d_E / sqrt(d_emb), the factor of
    gamma in Theorem 3.1's exp(gamma d_E / sqrt(d_emb)).
    """
    d = check_int("d", d, 1)
    k = check_int("k", k, 2)
    check_coded(embedding)
    codes = cluster_codes(k, embedding, dtype=torch.float64)
    d_emb = embedding_dim(d, k, embedding)
    d_E = {"OH": d + 1, "BN": d + code_dim(k, "BN"), "SC": d + (k - 1) ** 2}[embedding]
    d_E_exact = d + float((codes**2).sum(-1).max())
    return {
        "d_emb": float(d_emb),
        "d_E": float(d_E),
        "d_E_exact": d_E_exact,
        "max_token_norm": math.sqrt(d_E_exact),
        "exponent": d_E / math.sqrt(d_emb),
    }
