"""lloydlib: transformers that run, and learn, Lloyd's k-means algorithm.

The library behind the book "Transformers That Cluster" (the book layer, ``lloydbook``, is a separate
package; this one never imports it). Modules are named after what they hold:

- ``tasks`` (clustering tasks, Leaner paper Appendix D), ``lloyd`` (Algorithm 2, Eq. 5),
  ``distances`` (the squared-distance kernel), ``embeddings`` (OH, BN, NA, SC codes, Definition 2.1),
  ``attention`` (distance attention, Eq. 3), ``construction`` (exact transformers, Theorem B.1);
- ``model`` (the learnable one-layer transformer, Eq. 4), ``losses`` (Eq. 6 and its regularisers),
  ``training`` (config, cache, loop, sweeps), ``bench`` (the OH-vs-BN benchmarks, Table 1, Figure 1),
  ``hardware`` (what a result was measured on);
- ``theory`` (the constants and searches of the Leaner paper's Appendices H and I);
- ``attention_clustering`` (the second paper, "Attention-based clustering": mixtures, attention heads,
  Riemannian training, the in-context quantizer and its closed forms).
"""

from ._validate import AssumptionWarning
from .attention import attention_weights, distance_attention
from .construction import (
    ExactTransformer,
    KeepTransformer,
    exact_transformer,
    keep_transformer,
    soft_kmeans_transformer,
    theorem_weights,
)
from .embeddings import EMBEDDINGS, cluster_codes, code_dim, embed_centers, embed_points, embedding_dim
from .lloyd import assign, kmeans_objective, lloyd, lloyd_step, soft_kmeans_step, sqdist
from .tasks import FAMILIES, INITS, init_centers, minmax_scale, sample_tasks

__version__ = "0.1.0"

__all__ = [
    "AssumptionWarning",
    "attention_weights",
    "distance_attention",
    "ExactTransformer",
    "exact_transformer",
    "soft_kmeans_transformer",
    "theorem_weights",
    "KeepTransformer",
    "keep_transformer",
    "EMBEDDINGS",
    "cluster_codes",
    "code_dim",
    "embed_centers",
    "embed_points",
    "embedding_dim",
    "assign",
    "kmeans_objective",
    "lloyd",
    "lloyd_step",
    "soft_kmeans_step",
    "sqdist",
    "FAMILIES",
    "INITS",
    "init_centers",
    "minmax_scale",
    "sample_tasks",
    "__version__",
]
