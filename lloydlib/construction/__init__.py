"""Exact transformers that run Lloyd's algorithm (Eq. 4 of the Leaner paper with fixed weights).

- :mod:`~lloydlib.construction.theorem`: the weights of Theorem B.1 (Theorem 2.1), the looped
  :class:`ExactTransformer`, the older paper's linear center update and soft k-means;
- :mod:`~lloydlib.construction.keep`: beyond the paper, a construction that stays exact with empty clusters;
- :mod:`~lloydlib.construction.costs`: parameter counts and what the keep construction adds.
"""

from .costs import CONSTRUCTIONS, keep_price, param_count
from .keep import KEEP_EPS, KeepTransformer, keep_layout, keep_transformer, keep_weights
from .theorem import CENTER_UPDATES, ExactTransformer, exact_transformer, soft_kmeans_transformer, theorem_weights

__all__ = [
    "theorem_weights",
    "ExactTransformer",
    "exact_transformer",
    "soft_kmeans_transformer",
    "CENTER_UPDATES",
    "KEEP_EPS",
    "keep_layout",
    "keep_weights",
    "KeepTransformer",
    "keep_transformer",
    "CONSTRUCTIONS",
    "param_count",
    "keep_price",
]
