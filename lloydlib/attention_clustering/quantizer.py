"""The parameter-free in-context quantizer of "Attention-based clustering", and the quantizers it is compared with.

The identity-QKV layer T_I(X)_l = (c/L) sum_k <x_l, x_k> x_k = c Mhat x_l is R1 with d orthonormal heads
(G = I), the summary's "parameter-free in-context attention layer (identity QKV, d heads with orthogonal
parameters)" ("Key results"). Baselines (summary, "Experimental setup"): the optimal quantizer
T*(X)_l = mu_{Z_l} (it knows the labels; risk sigma^2 d) and a PCA estimator, here the projection on the
top-K eigenvectors of Mhat (reconstructed: book appendix "How the model is reconstructed"); we add
nearest-centroid quantization with the true centroids, and two scales read off the prompt (beyond the
paper): :func:`adaptive_scale` (1/lambda_max(Mhat), unbiased at L = inf) and :func:`plugin_scale`
(tr(Mhat^2)/tr(Mhat^3), the per-prompt minimiser of the risk, -> c* as L -> inf).
"""

from __future__ import annotations

import math

import torch

from .._validate import check_int, check_nonneg, check_points, check_positive, check_tensor

__all__ = [
    "identity_layer",
    "adaptive_scale",
    "plugin_scale",
    "optimal_quantizer",
    "nearest_centroid_quantizer",
    "pca_quantizer",
    "denoising_error",
    "nearest_centroid_risk",
]


def identity_layer(X: torch.Tensor, c) -> torch.Tensor:
    """Identity-QKV attention T_I(X)_l = (c/L) sum_k <x_l, x_k> x_k = c Mhat x_l: (batch, L, d) -> (batch, L, d).

    ``c`` is a positive number or a tensor (batch,) of per-prompt scales (e.g. :func:`adaptive_scale`).
    """
    X = check_points(X)
    if isinstance(c, torch.Tensor):
        c = check_tensor("c", c, 1)
        if c.shape[0] != X.shape[0] or not bool((c > 0).all()):
            raise ValueError(
                f"c must be a positive number or a positive tensor of shape (batch={X.shape[0]},), "
                f"got shape {tuple(c.shape)}"
            )
        c = c.to(X.dtype)[:, None, None]
    else:
        c = check_positive("c", c)
    return c * X @ (X.transpose(1, 2) @ X) / X.shape[1]


def adaptive_scale(X: torch.Tensor) -> torch.Tensor:
    """An in-context scale for :func:`identity_layer`: c = 1 / lambda_max(Mhat), per prompt (batch,).

    At L = inf, lambda_max(M) = a, so this is the unbiased scale 1/a without knowing sigma (beyond the
    paper, which takes c as given).
    """
    X = check_points(X)
    Mhat = X.transpose(1, 2) @ X / X.shape[1]
    return 1 / torch.linalg.eigvalsh(Mhat)[:, -1]


def plugin_scale(X: torch.Tensor) -> torch.Tensor:
    """The plug-in optimal scale for :func:`identity_layer`, c_hat = tr(Mhat^2) / tr(Mhat^3), per prompt:
    X (batch, L, d) -> (batch,), with Mhat = X^T X / L (d, d) the prompt's second moment (beyond the paper).

    A prompt's reconstruction error averaged over its L positions is a quadratic in c,
    (1/L) sum_l ||x_l - c Mhat x_l||^2 = tr Mhat - 2c tr(Mhat^2) + c^2 tr(Mhat^3), and c_hat is its minimiser:
    on every prompt the layer at c_hat does at least as well as at any fixed c (c*_L included). As L -> inf,
    Mhat -> M and c_hat -> tr(M^2) / tr(M^3) = c*, the optimal scale of the L = inf risk. It needs neither
    sigma nor the centroids: the identity layer at c_hat has no parameter at all. A prompt of zero tokens
    only (Mhat = 0) has no such minimiser and raises.
    """
    X = check_points(X)
    Mhat = X.transpose(1, 2) @ X / X.shape[1]
    tr2 = (Mhat * Mhat).sum((1, 2))  # Mhat is symmetric: tr(Mhat^2) = ||Mhat||_F^2
    tr3 = (Mhat @ Mhat * Mhat).sum((1, 2))
    zero = torch.nonzero(tr3 <= 0).flatten()
    if zero.numel():
        raise ValueError(
            f"X must have a nonzero token in every prompt (tr(Mhat^3) > 0), got all-zero prompts at batch "
            f"indices {zero[:5].tolist()}"
        )
    return tr2 / tr3


def optimal_quantizer(mu: torch.Tensor, Z: torch.Tensor) -> torch.Tensor:
    """T*(X)_l = mu_{Z_l}: the oracle quantizer that knows each token's component. mu (batch, K, d), Z (batch, L)."""
    mu = check_tensor("mu", mu, 3)
    if not isinstance(Z, torch.Tensor) or Z.dtype != torch.long or Z.dim() != 2 or Z.shape[0] != mu.shape[0]:
        raise TypeError(
            f"Z must be a long tensor of shape (batch={mu.shape[0]}, L), got "
            f"{type(Z).__name__} {getattr(Z, 'shape', '')} {getattr(Z, 'dtype', '')}"
        )
    if bool((Z < 0).any()) or bool((Z >= mu.shape[1]).any()):
        raise ValueError(f"Z must hold component indices in 0..{mu.shape[1] - 1}")
    return torch.gather(mu, 1, Z[..., None].expand(-1, -1, mu.shape[2]))


def nearest_centroid_quantizer(X: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
    """Each token replaced by its nearest true centroid: X (batch, L, d), mu (batch, K, d) -> (batch, L, d)."""
    X = check_points(X)
    mu = check_tensor("mu", mu, 3)
    if mu.shape[0] != X.shape[0] or mu.shape[2] != X.shape[2]:
        raise ValueError(f"mu must have shape (batch={X.shape[0]}, K, d={X.shape[2]}), got {tuple(mu.shape)}")
    idx = ((X[:, :, None, :] - mu[:, None, :, :]) ** 2).sum(-1).argmin(-1)
    return optimal_quantizer(mu, idx)


def pca_quantizer(X: torch.Tensor, k: int) -> torch.Tensor:
    """PCA estimator: project each token on the top-k eigenvectors of the prompt's Mhat (reconstructed: the summary names "PCA estimator" only).

    X (batch, L, d) -> (batch, L, d). Mhat is the raw (uncentred) second moment, like the layers'.
    """
    X = check_points(X)
    k = check_int("k", k, 1)
    if k > X.shape[2]:
        raise ValueError(f"k must be <= d={X.shape[2]}, got k={k}")
    Mhat = X.transpose(1, 2) @ X / X.shape[1]
    U = torch.linalg.eigh(Mhat).eigenvectors[..., -k:]  # eigh sorts eigenvalues ascending
    return X @ U @ U.transpose(1, 2)


def denoising_error(mu: torch.Tensor, Z: torch.Tensor, T: torch.Tensor) -> torch.Tensor:
    """Per-prompt mean ||mu_{Z_l} - T_l||^2 over positions, shape (batch,): how far each token's image lands
    from its true centroid (the risk relative to the oracle quantizer T*; beyond the paper)."""
    T = check_points(T, "T")
    target = optimal_quantizer(mu, Z)
    if target.shape != T.shape:
        raise ValueError(f"T must have shape {tuple(target.shape)} (mu's batch and d, Z's L), got {tuple(T.shape)}")
    return ((target - T) ** 2).sum(-1).mean(1)


def nearest_centroid_risk(d: int, sigma: float) -> float:
    """Exact risk of nearest-centroid quantization for K = 2 orthonormal centroids.

    Misassignment of a token of component 1 happens when s = <xi, (mu_2 - mu_1)/sqrt 2> > t = 1/(sigma sqrt 2);
    it then changes the error by 2 - 2 sqrt(2) sigma s. Taking expectations,
    R_NC = sigma^2 d - 2 sqrt(2) sigma [phi(t) - t Q(t)], with phi the normal density and Q its tail.
    """
    d = check_int("d", d, 2)
    sigma = check_nonneg("sigma", sigma)
    if sigma == 0:
        return 0.0
    t = 1 / (sigma * math.sqrt(2))
    phi = math.exp(-t * t / 2) / math.sqrt(2 * math.pi)
    tail = 0.5 * math.erfc(t / math.sqrt(2))
    return sigma**2 * d - 2 * math.sqrt(2) * sigma * (phi - t * tail)
