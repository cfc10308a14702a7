"""lloydlib: transformers that run, and learn, Lloyd's k-means algorithm.

The library behind the book "Transformers That Cluster". Modules are named after what they hold:
tasks, lloyd, embeddings, attention, construction (exact transformers), and, for the book, book,
model, losses, training, theory, quantization and bench.
"""
from ._validate import AssumptionWarning
from .attention import attention_weights, distance_attention
from .construction import (ExactTransformer, KeepTransformer, exact_transformer, keep_transformer,
                           soft_kmeans_transformer, theorem_weights)
from .embeddings import EMBEDDINGS, cluster_codes, code_dim, embed_centers, embed_points, embedding_dim
from .lloyd import assign, kmeans_objective, lloyd, lloyd_step, soft_kmeans_step, sqdist
from .tasks import FAMILIES, INITS, init_centers, minmax_scale, sample_tasks

__version__ = "0.1.0"

__all__ = [
    "AssumptionWarning", "attention_weights", "distance_attention", "ExactTransformer", "exact_transformer",
    "soft_kmeans_transformer", "theorem_weights", "KeepTransformer", "keep_transformer", "EMBEDDINGS", "cluster_codes", "code_dim", "embed_centers",
    "embed_points", "embedding_dim", "assign", "kmeans_objective", "lloyd", "lloyd_step", "soft_kmeans_step",
    "sqdist", "FAMILIES", "INITS", "init_centers", "minmax_scale", "sample_tasks", "__version__",
]
