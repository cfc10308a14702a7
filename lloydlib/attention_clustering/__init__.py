"""Attention-based clustering: linear attention heads as centroid estimators, and in-context quantization.

The model of "Attention-based clustering" (Maulen-Soto, Marion, Boyer; arXiv 2505.13112, NeurIPS 2025).
The paper's full text was not available: what its summary gives ("Approach", "Key results",
"Measured effects") is quoted, and what is reconstructed from it (the data model, the two readings R1
and R2 of the two-head layer, the risk, the manifold M, the penalty) is set out, with its
uncertainties, in the book's appendix "How the model is reconstructed" (``book/10a_reconstruction.md``).

Layout (as everywhere in lloydlib): tokens are rows, batch first. A prompt is X (batch, L, d); the K
centroids are the rows of mu (K, d) or (batch, K, d); head vectors are the rows of Lam (H, d) (one set for
all prompts) or (batch, H, d) (one set per prompt).

Modules, named after what they hold:

* :mod:`.data`: the balanced mixture of K orthonormal centroids, x_l = mu_{Z_l} + sigma xi_l, and its
  raw second moment M = (1/K) sum_i mu_i mu_i^T + sigma^2 I (eigenvalues a = 1/K + sigma^2 on span(mu),
  b = sigma^2 off it);
* :mod:`.heads`: the H-head linear attention layer in its two readings R1 (tied key = query = lambda_h,
  identity value: T_l = c Mhat G x_l, G = sum_h lambda_h lambda_h^T) and R2 (value lambda_h lambda_h^T),
  with Mhat = (1/L) sum_k x_k x_k^T the in-context second moment, and their reconstruction risks
  E||x_l - T(X)_l||^2 at finite L and at L = inf;
* :mod:`.quantizer`: the parameter-free identity-QKV layer T_I(X)_l = c Mhat x_l (the summary's
  "in-context quantization") and the baselines: the optimal quantizer T* = mu_Z, nearest-centroid
  quantization, PCA; and two scales read off the prompt, 1/lambda_max(Mhat) and the plug-in optimal scale
  tr(Mhat^2)/tr(Mhat^3);
* :mod:`.sphere`: Riemannian projected gradient descent on the sphere for each head, initialisations on
  the manifold M = {lambda_h perp mu_h', lambda_h perp lambda_h' for h != h'} or on the sphere, and the
  distance to the centroids up to sign and permutation;
* :mod:`.closed_forms`: the population and finite-L risks, optimal and unbiased scales and conditional
  variances, derived in sympy from the model (not typed from the summary).
"""

from .closed_forms import ClosedForms, manifold_profile, numeric, symbols
from .data import CENTROIDS, Mixture, orthonormal_centroids, sample_mixture, second_moment
from .heads import (
    FORMS,
    attention_layer,
    layer_risk,
    linear_attention,
    mean_and_se,
    plane_rotation_heads,
    population_risk,
    reconstruction_error,
)
from .quantizer import (
    adaptive_scale,
    denoising_error,
    identity_layer,
    nearest_centroid_quantizer,
    nearest_centroid_risk,
    optimal_quantizer,
    pca_quantizer,
    plugin_scale,
)
from .sphere import (
    UPDATES,
    TrainResult,
    centroid_distance,
    init_on_manifold,
    init_on_sphere,
    manifold_violation,
    orthogonality_penalty,
    sphere_step,
    subspace_distance,
    train_heads,
    train_heads_shared,
)

__all__ = [
    "FORMS",
    "UPDATES",
    "CENTROIDS",
    "Mixture",
    "orthonormal_centroids",
    "sample_mixture",
    "second_moment",
    "linear_attention",
    "attention_layer",
    "identity_layer",
    "reconstruction_error",
    "mean_and_se",
    "layer_risk",
    "population_risk",
    "optimal_quantizer",
    "nearest_centroid_quantizer",
    "pca_quantizer",
    "adaptive_scale",
    "plugin_scale",
    "denoising_error",
    "plane_rotation_heads",
    "orthogonality_penalty",
    "sphere_step",
    "init_on_manifold",
    "init_on_sphere",
    "manifold_violation",
    "centroid_distance",
    "subspace_distance",
    "TrainResult",
    "train_heads",
    "train_heads_shared",
    "nearest_centroid_risk",
    "ClosedForms",
    "symbols",
    "numeric",
    "manifold_profile",
]
