"""The data of "Attention-based clustering": balanced mixtures of K orthonormal centroids, and prompts.

    x_l = mu_{Z_l} + sigma xi_l,  Z_l ~ Unif{1..K},  xi_l ~ N(0, I_d),  mu_1..mu_K orthonormal,

the paper's "synthetic Gaussian mixture" (summary, "Experimental setup"); sigma = 0 is its "Dirac
mixture". The orthonormal, balanced form is reconstructed (book appendix "How the model is reconstructed",
section "The data"). Second moment (raw, not centred): M = E[x x^T] = (1/K) sum_i mu_i mu_i^T + sigma^2 I,
with eigenvalues a = 1/K + sigma^2 (K times) and b = sigma^2 (d - K times).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from .. import _random
from .._validate import check_choice, check_int, check_nonneg
from ._checks import check_centroids

__all__ = ["CENTROIDS", "Mixture", "orthonormal_centroids", "sample_mixture", "second_moment"]

CENTROIDS = ("fixed", "random", "basis")


class Mixture(NamedTuple):
    """A batch of prompts: tokens X (batch, L, d), centroids mu (batch, K, d), components Z (batch, L)."""

    X: torch.Tensor
    mu: torch.Tensor
    Z: torch.Tensor


def orthonormal_centroids(
    k: int,
    d: int,
    *,
    batch: int | None = None,
    basis: bool = False,
    seed=None,
    generator: torch.Generator | None = None,
    dtype=torch.float64,
) -> torch.Tensor:
    """K orthonormal centroids as rows: (k, d), or (batch, k, d) with an independent draw per prompt.

    A draw is Haar-random (QR of a Gaussian matrix with the signs of R's diagonal fixed); ``basis=True``
    gives the first k standard basis vectors instead.
    """
    k = check_int("k", k, 1)
    d = check_int("d", d, 1)
    if k > d:
        raise ValueError(f"k orthonormal centroids need k <= d, got k={k} and d={d}")
    shape = (1 if batch is None else check_int("batch", batch, 1), d, k)
    if basis:
        mu = torch.eye(d, dtype=torch.float64)[:k].expand(shape[0], k, d).clone()
    else:
        g = generator if generator is not None else _random.generator(seed)
        A = torch.randn(shape, generator=g, dtype=torch.float64)
        Q, R = torch.linalg.qr(A)  # Q (batch, d, k)
        Q = Q * torch.sign(torch.diagonal(R, dim1=-2, dim2=-1))[:, None, :]
        mu = Q.transpose(1, 2)
    mu = mu.to(dtype)
    return mu[0] if batch is None else mu


def sample_mixture(
    batch: int,
    L: int,
    d: int,
    k: int = 2,
    sigma: float = 0.3,
    *,
    centroids="fixed",
    seed=None,
    generator: torch.Generator | None = None,
    dtype=torch.float64,
    device=None,
) -> Mixture:
    """Sample ``batch`` prompts of L tokens from the balanced K-component mixture of this module's docstring.

    ``centroids``: "fixed" (one Haar-random orthonormal set, the same for every prompt), "random" (a
    fresh set per prompt: the in-context setting), "basis" (e_1..e_K), or a tensor (K, d) or (batch, K, d)
    of orthonormal rows. ``sigma = 0`` gives the Dirac mixture. All draws come from one generator
    (``generator``, or one seeded by ``seed``) in float64 on the CPU, then cast.

    Returns ``Mixture(X (batch, L, d), mu (batch, K, d), Z (batch, L) long, 0-based components)``.
    """
    batch = check_int("batch", batch, 1)
    L = check_int("L", L, 1)
    d = check_int("d", d, 1)
    k = check_int("k", k, 1)
    sigma = check_nonneg("sigma", sigma)
    if k > d:
        raise ValueError(f"k orthonormal centroids need k <= d, got k={k} and d={d}")
    g = generator if generator is not None else _random.generator(seed)
    if isinstance(centroids, torch.Tensor):
        mu = check_centroids(centroids, "centroids", d=d).detach().to("cpu", torch.float64)
        if mu.shape[-2] != k:
            raise ValueError(f"centroids must hold k={k} rows, got shape {tuple(mu.shape)}")
        gram = mu @ mu.transpose(-1, -2)
        if not torch.allclose(gram, torch.eye(k, dtype=torch.float64).expand_as(gram), atol=1e-8):
            raise ValueError(
                "centroids must be orthonormal rows (mu mu^T = I); orthonormalise them first, "
                "e.g. with orthonormal_centroids"
            )
        mu = mu.expand(batch, k, d) if mu.dim() == 2 else mu
        if mu.shape[0] != batch:
            raise ValueError(f"centroids of shape (batch, K, d) must have batch={batch}, got {tuple(mu.shape)}")
    else:
        check_choice("centroids", centroids, CENTROIDS)
        if centroids == "random":
            mu = orthonormal_centroids(k, d, batch=batch, generator=g)
        else:
            mu = orthonormal_centroids(k, d, basis=centroids == "basis", generator=g).expand(batch, k, d)
    X, Z = draw_tokens(mu, L, sigma, g, torch.float64)
    return Mixture(X.to(device=device, dtype=dtype), mu.contiguous().to(device=device, dtype=dtype), Z.to(device))


def draw_tokens(mu: torch.Tensor, L: int, sigma: float, g: torch.Generator, noise_dtype):
    """Tokens (batch, L, d) float64 and components (batch, L) for centroids mu (batch, K, d) float64.

    Training draws its noise in float32 (about five times faster on CPU) and computes in float64.
    """
    means, xi, Z = draw_parts(mu, L, g, noise_dtype)
    return means + sigma * xi, Z


def draw_parts(mu: torch.Tensor, L: int, g: torch.Generator, noise_dtype):
    """The draws behind :func:`draw_tokens`, before sigma scales the noise: the tokens' centroids
    mu_{Z_l} (batch, L, d) float64, the noise xi (batch, L, d) float64 (drawn in ``noise_dtype``) and the
    components Z (batch, L). Tokens at any sigma are ``means + sigma * xi`` (the same draws for every sigma).
    """
    batch, k, d = mu.shape
    Z = torch.randint(k, (batch, L), generator=g)
    xi = torch.randn(batch, L, d, generator=g, dtype=noise_dtype).to(torch.float64)
    return torch.gather(mu, 1, Z[..., None].expand(-1, -1, d)), xi, Z


def second_moment(mu: torch.Tensor, sigma: float) -> torch.Tensor:
    """M = E[x x^T] = (1/K) sum_i mu_i mu_i^T + sigma^2 I: (d, d) or (batch, d, d)."""
    mu = check_centroids(mu)
    sigma = check_nonneg("sigma", sigma)
    k, d = mu.shape[-2:]
    eye = torch.eye(d, dtype=mu.dtype, device=mu.device)
    return mu.transpose(-1, -2) @ mu / k + sigma**2 * eye
