"""What a construction costs: parameters of one Eq.-4 layer and the price of the keep construction."""

from __future__ import annotations

from .._validate import check_choice, check_int
from ..embeddings import check_coded, code_dim, embedding_dim

__all__ = ["CONSTRUCTIONS", "param_count", "keep_price"]

CONSTRUCTIONS = ("theorem", "keep")


def param_count(d: int, k: int, embedding: str, *, construction: str = "theorem", biases: bool = False) -> int:
    """Parameters of one Eq.-4 layer: 12 matrices (Q, K, V for 4 heads) of size d_emb x d_emb.

    ``construction="keep"`` uses the width 2d + m + 2 of :class:`lloydlib.construction.KeepTransformer`;
    ``biases`` adds the 12 bias vectors of the authors' learned model.
    """
    d = check_int("d", d, 1)
    k = check_int("k", k, 1)
    check_coded(embedding)
    check_choice("construction", construction, CONSTRUCTIONS)
    D = embedding_dim(d, k, embedding) if construction == "theorem" else 2 * d + code_dim(k, embedding) + 2
    return 12 * D * D + (12 * D if biases else 0)


def keep_price(d: int, k: int, embedding: str) -> dict[str, int]:
    """What the keep construction adds to Theorem B.1: token width and extra tokens per stream."""
    d = check_int("d", d, 1)
    k = check_int("k", k, 1)
    check_coded(embedding)
    base = embedding_dim(d, k, embedding)
    keep = 2 * d + code_dim(k, embedding) + 2
    return {
        "d_emb": base,
        "d_emb_keep": keep,
        "extra_dims": keep - base,
        "extra_point_tokens": k + 1,
        "extra_center_tokens": 1,
    }
