"""What a cluster code costs: margins, norms and parameter counts of the OH, BN and SC embeddings.

The exact construction (Theorem B.1 of the Leaner paper) needs only that distinct cluster codes are at
a positive squared distance; how far apart they are (the *margin*), how long they are (the token
norms that enter the Lipschitz bounds of Appendix I) and how wide the tokens are (the parameter count)
is the price of a code. This module computes those quantities; the book's chapter "Lloyd's algorithm
inside a transformer" puts them side by side.

=========  ==========  ========================  ==============================
code       margin mu   d_E (Lemma I.1)           d_emb
=========  ==========  ========================  ==============================
OH         2           d + 1                     d + k
BN         1           d + ceil(log2 k)          d + ceil(log2 k)
SC         1           d + (k - 1)^2             d + 1
=========  ==========  ========================  ==============================

d_E bounds the squared norm of a center token [c; code] with c in [0,1]^d; for SC the code of cluster k
is the scalar k - 1, so d_E grows as k^2 (our extension of Lemma I.1, which covers OH and BN).
"""
from __future__ import annotations

import math

import torch

from ._validate import check_centers, check_choice, check_int, check_float_dtype, check_points
from .embeddings import EMBEDDINGS, cluster_codes, code_dim, embedding_dim
from .lloyd import sqdist

__all__ = ["FORMULAS", "CONSTRUCTIONS", "code_sqdists", "code_margin", "assignment_gaps", "embedding_norms",
           "param_count", "keep_price"]

FORMULAS = ("direct", "expanded")
CONSTRUCTIONS = ("theorem", "keep")
_CODED = tuple(e for e in EMBEDDINGS if e != "NA")


def _check_coded(embedding: str) -> str:
    check_choice("embedding", embedding, EMBEDDINGS)
    if embedding == "NA":
        raise ValueError(f"embedding must carry a cluster code (one of {list(_CODED)}), got 'NA'")
    return embedding


def code_sqdists(k: int, embedding: str, *, dtype: torch.dtype = torch.float64,
                 formula: str = "direct") -> torch.Tensor:
    """Squared distances between the k cluster codes, (k, k), computed in ``dtype``.

    ``formula="direct"`` subtracts, sum_b (u_b - v_b)^2; ``"expanded"`` uses ||u||^2 + ||v||^2 - 2 u.v,
    the form of dot-product kernels (and of ``torch.cdist`` on large inputs), whose rounding grows with
    the code norms.
    """
    k = check_int("k", k, 1)
    _check_coded(embedding)
    check_choice("formula", formula, FORMULAS)
    check_float_dtype("dtype", dtype)
    c = cluster_codes(k, embedding, dtype=torch.float64).to(dtype)
    if formula == "direct":
        return ((c[:, None, :] - c[None, :, :]) ** 2).sum(-1)
    n2 = (c * c).sum(-1)
    return n2[:, None] + n2[None, :] - 2 * (c @ c.T)


def code_margin(k: int, embedding: str, *, dtype: torch.dtype = torch.float64, formula: str = "direct",
                chunk: int = 1024) -> float:
    """The smallest gap, over clusters j, between the nearest *other* code and code j itself.

    Exact values: 2 (OH), 1 (BN, SC). A hardmax over code distances picks exactly the cluster's own
    code while this is positive; computed in low precision with ``formula="expanded"`` it shrinks as the
    code norms grow (and turns negative for SC at large k). NaN when the distances overflow the dtype.
    Rows are processed ``chunk`` at a time, so large k needs O(chunk k) memory.
    """
    k = check_int("k", k, 2)
    chunk = check_int("chunk", chunk, 1)
    _check_coded(embedding)
    check_choice("formula", formula, FORMULAS)
    check_float_dtype("dtype", dtype)
    c = cluster_codes(k, embedding, dtype=torch.float64).to(dtype)
    n2 = (c * c).sum(-1)
    worst = math.inf
    for start in range(0, k, chunk):
        rows = c[start:start + chunk]
        if formula == "direct":
            D = ((rows[:, None, :] - c[None, :, :]) ** 2).sum(-1)
        else:
            D = n2[start:start + chunk, None] + n2[None, :] - 2 * (rows @ c.T)
        D = D.double()
        if not bool(torch.isfinite(D).all()):
            return math.nan
        own = D[torch.arange(D.shape[0]), torch.arange(start, start + D.shape[0])]
        D[torch.arange(D.shape[0]), torch.arange(start, start + D.shape[0])] = math.inf
        worst = min(worst, float((D.amin(1) - own).min()))
    return worst


def assignment_gaps(X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """Per point, the second-nearest minus the nearest squared center distance: (batch, n), >= 0.

    This is the margin of the assignment head (head 1): at inverse temperature gamma its softmax puts
    weight at most (k - 1) exp(-gamma gap / sqrt(d_emb)) off the nearest center.
    """
    X = check_points(X)
    C = check_centers(C, X, min_k=2)
    D = sqdist(X, C).topk(2, dim=2, largest=False).values
    return D[..., 1] - D[..., 0]


def embedding_norms(d: int, k: int, embedding: str) -> dict[str, float]:
    """The quantities of Lemma I.1 and Theorem 3.1 for one embedding (c in [0,1]^d).

    Returns ``d_emb``; ``d_E`` as Lemma I.1 states it (OH d + 1, BN d + ceil(log2 k); SC d + (k-1)^2 by
    the same argument); ``d_E_exact`` = d + the largest squared code norm (attained by the corner
    c = 1_d); ``max_token_norm`` = sqrt(d_E_exact); and ``exponent`` = d_E / sqrt(d_emb), the factor of
    gamma in Theorem 3.1's exp(gamma d_E / sqrt(d_emb)).
    """
    d = check_int("d", d, 1)
    k = check_int("k", k, 2)
    _check_coded(embedding)
    codes = cluster_codes(k, embedding, dtype=torch.float64)
    d_emb = embedding_dim(d, k, embedding)
    d_E = {"OH": d + 1, "BN": d + code_dim(k, "BN"), "SC": d + (k - 1) ** 2}[embedding]
    d_E_exact = d + float((codes ** 2).sum(-1).max())
    return {"d_emb": float(d_emb), "d_E": float(d_E), "d_E_exact": d_E_exact,
            "max_token_norm": math.sqrt(d_E_exact), "exponent": d_E / math.sqrt(d_emb)}


def param_count(d: int, k: int, embedding: str, *, construction: str = "theorem", biases: bool = False) -> int:
    """Parameters of one Eq.-4 layer: 12 matrices (Q, K, V for 4 heads) of size d_emb x d_emb.

    ``construction="keep"`` uses the width 2d + m + 2 of :class:`lloydlib.construction.KeepTransformer`;
    ``biases`` adds the 12 bias vectors of the authors' learned model.
    """
    d = check_int("d", d, 1)
    k = check_int("k", k, 1)
    _check_coded(embedding)
    check_choice("construction", construction, CONSTRUCTIONS)
    D = embedding_dim(d, k, embedding) if construction == "theorem" else 2 * d + code_dim(k, embedding) + 2
    return 12 * D * D + (12 * D if biases else 0)


def keep_price(d: int, k: int, embedding: str) -> dict[str, int]:
    """What the keep construction adds to Theorem B.1: token width and extra tokens per stream."""
    d = check_int("d", d, 1)
    k = check_int("k", k, 1)
    _check_coded(embedding)
    base = embedding_dim(d, k, embedding)
    keep = 2 * d + code_dim(k, embedding) + 2
    return {"d_emb": base, "d_emb_keep": keep, "extra_dims": keep - base,
            "extra_point_tokens": k + 1, "extra_center_tokens": 1}
