"""Attention-based clustering: linear attention heads as centroid estimators, and in-context quantization.

The model of "Attention-based clustering" (Maulen-Soto, Marion, Boyer; arXiv 2505.13112, NeurIPS 2025),
as reconstructed in the project's brief (``attention-based-clustering-brief.md``; the paper's full text
was not available). Equation numbers below are the brief's sections (``brief 4.2`` etc.); every formula
tagged [RECON] there is a reconstruction, not a quotation of the paper.

Layout (as everywhere in lloydlib): tokens are rows, batch first. A prompt is X (batch, L, d); the K
centroids are the rows of mu (K, d) or (batch, K, d); head vectors are the rows of Lam (H, d) (one set for
all prompts) or (batch, H, d) (one set per prompt).

Data (brief 4.1)
    x_l = mu_{Z_l} + sigma xi_l,  Z_l ~ Unif{1..K},  xi_l ~ N(0, I_d),  mu_1..mu_K orthonormal.
    sigma = 0 is the Dirac mixture. Second moment (raw, not centred):
    M = E[x x^T] = (1/K) sum_i mu_i mu_i^T + sigma^2 I, eigenvalues a = 1/K + sigma^2 (K times) and
    b = sigma^2 (d - K times).

Layers (brief 4.2), with Mhat = (1/L) sum_k x_k x_k^T the in-context second moment, query token included:
    R1 (tied key = query = lambda_h, shared identity value):
        T(X)_l = (c/L) sum_h sum_k <lambda_h, x_l> <lambda_h, x_k> x_k = c Mhat G x_l,  G = sum_h lambda_h lambda_h^T
    R2 (head-specific value lambda_h lambda_h^T):
        T(X)_l = c sum_h <lambda_h, x_l> (lambda_h^T Mhat lambda_h) lambda_h
    identity-QKV layer (R1 with d orthonormal heads, G = I):
        T_I(X)_l = (c/L) sum_k <x_l, x_k> x_k = c Mhat x_l

Risk (brief 4.3): R(T) = E ||x_l - T(X)_l||^2 over prompts, at any fixed position l (unsupervised).
Population (L = inf) risk of a layer whose output is c B x: tr M - 2c tr(BM) + c^2 tr(B^T B M) (brief 5.2).

Baselines (brief 4.4): the optimal quantizer T*(X)_l = mu_{Z_l} (it knows the labels; risk sigma^2 d),
nearest-centroid quantization with the true centroids, and PCA: projection on the top-K eigenvectors of Mhat.

Training (brief 4.5): Riemannian projected gradient descent on the sphere for each head,
    lambda_h <- normalize(lambda_h - eta (I - lambda_h lambda_h^T) g_h),
with an optional orthogonality penalty gamma sum_{h<h'} <lambda_h, lambda_h'>^2 (form [RECON]), from
initialisations on the manifold M = {lambda_h perp mu_h', lambda_h perp lambda_h' for h != h'} or
uniformly on the sphere. Distance to the centroids: min over permutations pi and signs eps of
(sum_h ||lambda_h - eps_h mu_pi(h)||^2)^(1/2).

The second half of the module derives the closed forms in sympy (population and finite-L risks,
optimal and unbiased scales, conditional variances); see :class:`ClosedForms`.
"""
from __future__ import annotations

import functools
import itertools
import math
import numbers
from typing import NamedTuple

import torch

from ._validate import check_choice, check_int, check_points, check_positive, check_tensor
from .tasks import _generator

__all__ = [
    "FORMS", "UPDATES", "CENTROIDS", "Mixture", "orthonormal_centroids", "sample_mixture", "second_moment",
    "linear_attention", "attention_layer", "identity_layer", "reconstruction_error", "mean_and_se", "layer_risk",
    "population_risk", "optimal_quantizer", "nearest_centroid_quantizer", "pca_quantizer", "adaptive_scale",
    "denoising_error", "plane_rotation_heads",
    "orthogonality_penalty", "sphere_step", "init_on_manifold", "init_on_sphere", "manifold_violation",
    "centroid_distance", "subspace_distance", "TrainResult", "train_heads", "nearest_centroid_risk",
    "ClosedForms", "symbols", "numeric", "manifold_profile",
]

FORMS = ("R1", "R2")
UPDATES = ("riemannian", "projected", "euclidean")
CENTROIDS = ("fixed", "random", "basis")


# ----------------------------------------------------------------------------------------------------
# validation helpers local to this module
# ----------------------------------------------------------------------------------------------------

def _check_nonneg(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def _check_heads(Lam, X: torch.Tensor | None = None, name: str = "Lam") -> torch.Tensor:
    """Head vectors (H, d) shared by every prompt, or (batch, H, d) one set per prompt."""
    Lam = check_tensor(name, Lam)
    if Lam.dim() not in (2, 3):
        raise ValueError(f"{name} must have shape (H, d) or (batch, H, d), got shape {tuple(Lam.shape)}")
    if X is not None:
        if Lam.shape[-1] != X.shape[-1]:
            raise ValueError(f"{name} must have the tokens' dimension d={X.shape[-1]}, got shape "
                             f"{tuple(Lam.shape)}")
        if Lam.dim() == 3 and Lam.shape[0] != X.shape[0]:
            raise ValueError(f"{name} of shape (batch, H, d) must have X's batch size {X.shape[0]}, got "
                             f"shape {tuple(Lam.shape)}")
        if Lam.dtype != X.dtype:
            raise TypeError(f"{name} and X must have the same dtype, got {Lam.dtype} and {X.dtype}")
    return Lam


def _check_centroids(mu, name: str = "mu", *, d: int | None = None) -> torch.Tensor:
    mu = check_tensor(name, mu)
    if mu.dim() not in (2, 3):
        raise ValueError(f"{name} must have shape (K, d) or (batch, K, d), got shape {tuple(mu.shape)}")
    if d is not None and mu.shape[-1] != d:
        raise ValueError(f"{name} must have dimension d={d}, got shape {tuple(mu.shape)}")
    if mu.shape[-2] > mu.shape[-1]:
        raise ValueError(f"{name} holds K={mu.shape[-2]} centroids in d={mu.shape[-1]}; orthonormal "
                         f"centroids need K <= d")
    return mu


def _check_scale(c) -> float:
    return check_positive("c", c)


# ----------------------------------------------------------------------------------------------------
# data (brief 4.1)
# ----------------------------------------------------------------------------------------------------

class Mixture(NamedTuple):
    """A batch of prompts: tokens X (batch, L, d), centroids mu (batch, K, d), components Z (batch, L)."""

    X: torch.Tensor
    mu: torch.Tensor
    Z: torch.Tensor


def orthonormal_centroids(k: int, d: int, *, batch: int | None = None, basis: bool = False, seed=None,
                          generator: torch.Generator | None = None, dtype=torch.float64) -> torch.Tensor:
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
        g = generator if generator is not None else _generator(seed)
        A = torch.randn(shape, generator=g, dtype=torch.float64)
        Q, R = torch.linalg.qr(A)                                     # Q (batch, d, k)
        Q = Q * torch.sign(torch.diagonal(R, dim1=-2, dim2=-1))[:, None, :]
        mu = Q.transpose(1, 2)
    mu = mu.to(dtype)
    return mu[0] if batch is None else mu


def sample_mixture(batch: int, L: int, d: int, k: int = 2, sigma: float = 0.3, *, centroids="fixed",
                   seed=None, generator: torch.Generator | None = None, dtype=torch.float64,
                   device=None) -> Mixture:
    """Sample ``batch`` prompts of L tokens from the balanced K-component mixture of brief 4.1.

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
    sigma = _check_nonneg("sigma", sigma)
    if k > d:
        raise ValueError(f"k orthonormal centroids need k <= d, got k={k} and d={d}")
    g = generator if generator is not None else _generator(seed)
    if isinstance(centroids, torch.Tensor):
        mu = _check_centroids(centroids, "centroids", d=d).detach().to("cpu", torch.float64)
        if mu.shape[-2] != k:
            raise ValueError(f"centroids must hold k={k} rows, got shape {tuple(mu.shape)}")
        gram = mu @ mu.transpose(-1, -2)
        if not torch.allclose(gram, torch.eye(k, dtype=torch.float64).expand_as(gram), atol=1e-8):
            raise ValueError("centroids must be orthonormal rows (mu mu^T = I); orthonormalise them first, "
                             "e.g. with orthonormal_centroids")
        mu = mu.expand(batch, k, d) if mu.dim() == 2 else mu
        if mu.shape[0] != batch:
            raise ValueError(f"centroids of shape (batch, K, d) must have batch={batch}, got {tuple(mu.shape)}")
    else:
        check_choice("centroids", centroids, CENTROIDS)
        if centroids == "random":
            mu = orthonormal_centroids(k, d, batch=batch, generator=g)
        else:
            mu = orthonormal_centroids(k, d, basis=centroids == "basis", generator=g).expand(batch, k, d)
    X, Z = _draw_tokens(mu, L, sigma, g, torch.float64)
    return Mixture(X.to(device=device, dtype=dtype), mu.contiguous().to(device=device, dtype=dtype), Z.to(device))


def _draw_tokens(mu: torch.Tensor, L: int, sigma: float, g: torch.Generator, noise_dtype):
    """Tokens (batch, L, d) float64 and components (batch, L) for centroids mu (batch, K, d) float64.

    Training draws its noise in float32 (about five times faster on CPU) and computes in float64.
    """
    batch, k, d = mu.shape
    Z = torch.randint(k, (batch, L), generator=g)
    xi = torch.randn(batch, L, d, generator=g, dtype=noise_dtype).to(torch.float64)
    return torch.gather(mu, 1, Z[..., None].expand(-1, -1, d)) + sigma * xi, Z


def second_moment(mu: torch.Tensor, sigma: float) -> torch.Tensor:
    """M = E[x x^T] = (1/K) sum_i mu_i mu_i^T + sigma^2 I (brief 4.1): (d, d) or (batch, d, d)."""
    mu = _check_centroids(mu)
    sigma = _check_nonneg("sigma", sigma)
    k, d = mu.shape[-2:]
    eye = torch.eye(d, dtype=mu.dtype, device=mu.device)
    return mu.transpose(-1, -2) @ mu / k + sigma ** 2 * eye


# ----------------------------------------------------------------------------------------------------
# layers (brief 4.2)
# ----------------------------------------------------------------------------------------------------

def linear_attention(X: torch.Tensor, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, c: float) -> torch.Tensor:
    """Softmax-free multi-head attention, heads summed: the reference form of every layer here.

        T(X)_l = (c/L) sum_h sum_k <Q_h x_l, K_h x_k> V_h x_k

    X (batch, L, d); Q, K (H, p, d); V (H, d, d). Returns (batch, L, d). The query token is among the
    L keys (brief 4.2). R1 is Q_h = K_h = lambda_h^T, V_h = I; R2 has V_h = lambda_h lambda_h^T; the
    identity-QKV layer is H = 1, Q = K = V = I.
    """
    X = check_points(X)
    c = _check_scale(c)
    d = X.shape[2]
    Q, K, V = (check_tensor(n, W, 3) for n, W in (("Q", Q), ("K", K), ("V", V)))
    if Q.shape != K.shape or Q.shape[2] != d:
        raise ValueError(f"Q and K must have the same shape (H, p, d={d}), got {tuple(Q.shape)} and "
                         f"{tuple(K.shape)}")
    if V.shape != (Q.shape[0], d, d):
        raise ValueError(f"V must have shape (H={Q.shape[0]}, d={d}, d={d}), got {tuple(V.shape)}")
    q = torch.einsum("bld,hpd->bhlp", X, Q)
    kk = torch.einsum("bld,hpd->bhlp", X, K)
    v = torch.einsum("bld,hed->bhle", X, V)
    scores = q @ kk.transpose(-1, -2)                                # (batch, H, L, L)
    return c / X.shape[1] * (scores @ v).sum(1)


def attention_layer(X: torch.Tensor, Lam: torch.Tensor, c: float, form: str = "R1") -> torch.Tensor:
    """The H-head layer of brief 4.2 on every token: X (batch, L, d), Lam (H, d) or (batch, H, d) -> (batch, L, d).

    ``form="R1"``: T_l = c Mhat G x_l with G = Lam^T Lam (tied key/query, identity value).
    ``form="R2"``: T_l = c sum_h <lambda_h, x_l> (lambda_h^T Mhat lambda_h) lambda_h (value lambda_h lambda_h^T).
    Both equal :func:`linear_attention` with the weights named there (tested). Head vectors need not
    be unit vectors here (training keeps them on the sphere).
    """
    X = check_points(X)
    Lam = _check_heads(Lam, X)
    c = _check_scale(c)
    check_choice("form", form, FORMS)
    L = X.shape[1]
    if form == "R1":
        Mhat = X.transpose(1, 2) @ X / L                             # (batch, d, d)
        G = Lam.transpose(-1, -2) @ Lam                              # (d, d) or (batch, d, d)
        return c * X @ G @ Mhat                                      # row l: (Mhat G x_l)^T
    S = X @ Lam.transpose(-1, -2)                                    # (batch, L, H): <lambda_h, x_k>
    s = (S ** 2).mean(1, keepdim=True)                               # (batch, 1, H): lambda_h^T Mhat lambda_h
    return c * (S * s) @ Lam


def identity_layer(X: torch.Tensor, c) -> torch.Tensor:
    """Identity-QKV attention T_I(X)_l = (c/L) sum_k <x_l, x_k> x_k = c Mhat x_l: (batch, L, d) -> (batch, L, d).

    ``c`` is a positive number or a tensor (batch,) of per-prompt scales (e.g. :func:`adaptive_scale`).
    """
    X = check_points(X)
    if isinstance(c, torch.Tensor):
        c = check_tensor("c", c, 1)
        if c.shape[0] != X.shape[0] or not bool((c > 0).all()):
            raise ValueError(f"c must be a positive number or a positive tensor of shape (batch={X.shape[0]},), "
                             f"got shape {tuple(c.shape)}")
        c = c.to(X.dtype)[:, None, None]
    else:
        c = _check_scale(c)
    return c * X @ (X.transpose(1, 2) @ X) / X.shape[1]


def adaptive_scale(X: torch.Tensor) -> torch.Tensor:
    """An in-context scale for :func:`identity_layer`: c = 1 / lambda_max(Mhat), per prompt (batch,).

    At L = inf, lambda_max(M) = a, so this is the unbiased scale 1/a without knowing sigma (beyond the
    paper, which takes c as given).
    """
    X = check_points(X)
    Mhat = X.transpose(1, 2) @ X / X.shape[1]
    return 1 / torch.linalg.eigvalsh(Mhat)[:, -1]


# ----------------------------------------------------------------------------------------------------
# risks
# ----------------------------------------------------------------------------------------------------

def reconstruction_error(X: torch.Tensor, T: torch.Tensor, *, positions: str = "all") -> torch.Tensor:
    """Per-prompt squared reconstruction error, shape (batch,) (the summand of brief 4.3's risk).

    ``positions="all"`` averages ||x_l - T_l||^2 over the L tokens of each prompt (the same expectation
    as one fixed position, by exchangeability, with less variance); ``"first"`` uses l = 1 only.
    Prompts are independent, so :func:`mean_and_se` of the result is a valid Monte Carlo estimate.
    """
    X = check_points(X)
    T = check_points(T, "T")
    if T.shape != X.shape:
        raise ValueError(f"T must have X's shape {tuple(X.shape)}, got {tuple(T.shape)}")
    check_choice("positions", positions, ("all", "first"))
    err = ((X - T) ** 2).sum(-1)
    return err.mean(1) if positions == "all" else err[:, 0]


def mean_and_se(values: torch.Tensor) -> tuple[float, float]:
    """Monte Carlo mean and standard error of i.i.d. values (n,) with n >= 2."""
    values = check_tensor("values", values, 1)
    if values.numel() < 2:
        raise ValueError(f"values must hold at least 2 samples for a standard error, got {values.numel()}")
    return float(values.mean()), float(values.std(unbiased=True) / math.sqrt(values.numel()))


def layer_risk(X: torch.Tensor, Lam: torch.Tensor, c: float, form: str = "R1") -> torch.Tensor:
    """Per-prompt risk of :func:`attention_layer` averaged over all L positions, from Mhat alone: (batch,).

    Equal to ``reconstruction_error(X, attention_layer(X, Lam, c, form))`` (tested) but computed from the
    prompt's Mhat, which is all the average over positions depends on:
        R1: tr Mhat - 2c tr(G Mhat^2) + c^2 tr(G Mhat^2 G Mhat)
        R2: tr Mhat - 2c sum_h s_h^2 + c^2 sum_{h,h'} s_h s_h' <lambda_h, lambda_h'> lambda_h^T Mhat lambda_h',
            with s_h = lambda_h^T Mhat lambda_h.
    X (batch, L, d); Lam (H, d) or (batch, H, d). Differentiable in Lam; this is the training loss.
    """
    X = check_points(X)
    Lam = _check_heads(Lam, X)
    c = _check_scale(c)
    check_choice("form", form, FORMS)
    return _mhat_risk(X.transpose(1, 2) @ X / X.shape[1], Lam, c, form)


def _mhat_risk(Mhat: torch.Tensor, Lam: torch.Tensor, c: float, form: str) -> torch.Tensor:
    """:func:`layer_risk` from Mhat (…, d, d) and Lam (…, H, d) broadcasting against it: (…)."""
    Y = Lam @ Mhat                                                   # (…, H, d): rows lambda_h^T Mhat
    LML = Y @ Lam.transpose(-1, -2)                                  # (…, H, H): Lam Mhat Lam^T
    trM = torch.diagonal(Mhat, dim1=-2, dim2=-1).sum(-1)
    if form == "R1":
        LM2L = Y @ Y.transpose(-1, -2)                               # Lam Mhat^2 Lam^T
        return trM - 2 * c * torch.diagonal(LM2L, dim1=-2, dim2=-1).sum(-1) + c ** 2 * (LM2L * LML).sum((-1, -2))
    s = torch.diagonal(LML, dim1=-2, dim2=-1)                        # (…, H)
    gram = Lam @ Lam.transpose(-1, -2)
    return trM - 2 * c * (s ** 2).sum(-1) + c ** 2 * (s[..., :, None] * s[..., None, :] * gram * LML).sum((-1, -2))


def population_risk(Lam: torch.Tensor, M: torch.Tensor, c: float, form: str = "R1") -> torch.Tensor:
    """L = inf risk of the H-head layer (brief 5.2): Lam (H, d) or (runs, H, d), M (d, d) -> () or (runs,).

    As L -> inf, Mhat -> M, so the layer's output is c B x with B = M G (R1) or
    B = sum_h (lambda_h^T M lambda_h) lambda_h lambda_h^T (R2), and
    E ||x - c B x||^2 = tr M - 2c tr(B M) + c^2 tr(B^T B M). Differentiable in Lam.
    """
    Lam = _check_heads(Lam)
    M = check_tensor("M", M, 2)
    if M.shape != (Lam.shape[-1], Lam.shape[-1]):
        raise ValueError(f"M must have shape (d, d) = {(Lam.shape[-1],) * 2}, got {tuple(M.shape)}")
    c = _check_scale(c)
    check_choice("form", form, FORMS)
    if form == "R1":
        B = M @ Lam.transpose(-1, -2) @ Lam
    else:
        m = ((Lam @ M) * Lam).sum(-1)                                # (…, H): lambda_h^T M lambda_h
        B = Lam.transpose(-1, -2) @ (m[..., None] * Lam)
    tr = lambda A: torch.diagonal(A, dim1=-2, dim2=-1).sum(-1)      # noqa: E731
    return tr(M) - 2 * c * tr(B @ M) + c ** 2 * tr(B.transpose(-1, -2) @ B @ M)


# ----------------------------------------------------------------------------------------------------
# baselines (brief 4.4)
# ----------------------------------------------------------------------------------------------------

def optimal_quantizer(mu: torch.Tensor, Z: torch.Tensor) -> torch.Tensor:
    """T*(X)_l = mu_{Z_l}: the oracle quantizer that knows each token's component. mu (batch, K, d), Z (batch, L)."""
    mu = check_tensor("mu", mu, 3)
    if not isinstance(Z, torch.Tensor) or Z.dtype != torch.long or Z.dim() != 2 or Z.shape[0] != mu.shape[0]:
        raise TypeError(f"Z must be a long tensor of shape (batch={mu.shape[0]}, L), got "
                        f"{type(Z).__name__} {getattr(Z, 'shape', '')} {getattr(Z, 'dtype', '')}")
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
    """PCA estimator: project each token on the top-k eigenvectors of the prompt's Mhat (brief 4.4, [RECON]).

    X (batch, L, d) -> (batch, L, d). Mhat is the raw (uncentred) second moment, like the layers'.
    """
    X = check_points(X)
    k = check_int("k", k, 1)
    if k > X.shape[2]:
        raise ValueError(f"k must be <= d={X.shape[2]}, got k={k}")
    Mhat = X.transpose(1, 2) @ X / X.shape[1]
    U = torch.linalg.eigh(Mhat).eigenvectors[..., -k:]               # eigh sorts eigenvalues ascending
    return X @ U @ U.transpose(1, 2)


def denoising_error(mu: torch.Tensor, Z: torch.Tensor, T: torch.Tensor) -> torch.Tensor:
    """Per-prompt mean ||mu_{Z_l} - T_l||^2 over positions, shape (batch,): how far each token's image lands
    from its true centroid (the risk relative to the oracle quantizer T*; beyond the paper)."""
    T = check_points(T, "T")
    target = optimal_quantizer(mu, Z)
    if target.shape != T.shape:
        raise ValueError(f"T must have shape {tuple(target.shape)} (mu's batch and d, Z's L), got {tuple(T.shape)}")
    return ((target - T) ** 2).sum(-1).mean(1)


def plane_rotation_heads(mu: torch.Tensor, phi) -> torch.Tensor:
    """Two orthonormal heads in span(mu_1, mu_2), rotated by ``phi`` from the centroids:
    lambda_1 = cos(phi) mu_1 + sin(phi) mu_2, lambda_2 = -sin(phi) mu_1 + cos(phi) mu_2.

    mu (2, d); phi a number -> (2, d), or a 1-D tensor (n,) -> (n, 2, d). Under R1 every phi gives the
    same layer (G = P); the distance to the centroids is 2 sqrt(2) |sin(phi/2)| for |phi| <= pi/4.
    """
    mu = _check_centroids(mu)
    if mu.dim() != 2 or mu.shape[0] != 2:
        raise ValueError(f"mu must have shape (2, d), got {tuple(mu.shape)}")
    scalar = not isinstance(phi, torch.Tensor)
    phi = torch.as_tensor(phi, dtype=mu.dtype).reshape(-1)
    cs, sn = torch.cos(phi)[:, None], torch.sin(phi)[:, None]
    heads = torch.stack([cs * mu[0] + sn * mu[1], -sn * mu[0] + cs * mu[1]], 1)
    return heads[0] if scalar else heads


def nearest_centroid_risk(d: int, sigma: float) -> float:
    """Exact risk of nearest-centroid quantization for K = 2 orthonormal centroids.

    Misassignment of a token of component 1 happens when s = <xi, (mu_2 - mu_1)/sqrt 2> > t = 1/(sigma sqrt 2);
    it then changes the error by 2 - 2 sqrt(2) sigma s. Taking expectations,
    R_NC = sigma^2 d - 2 sqrt(2) sigma [phi(t) - t Q(t)], with phi the normal density and Q its tail.
    """
    d = check_int("d", d, 2)
    sigma = _check_nonneg("sigma", sigma)
    if sigma == 0:
        return 0.0
    t = 1 / (sigma * math.sqrt(2))
    phi = math.exp(-t * t / 2) / math.sqrt(2 * math.pi)
    tail = 0.5 * math.erfc(t / math.sqrt(2))
    return sigma ** 2 * d - 2 * math.sqrt(2) * sigma * (phi - t * tail)


# ----------------------------------------------------------------------------------------------------
# optimisation on the sphere (brief 4.5)
# ----------------------------------------------------------------------------------------------------

def orthogonality_penalty(Lam: torch.Tensor) -> torch.Tensor:
    """sum_{h<h'} <lambda_h, lambda_h'>^2 for Lam (H, d) -> () or (runs, H, d) -> (runs,) (form [RECON])."""
    Lam = _check_heads(Lam)
    gram = Lam @ Lam.transpose(-1, -2)
    return torch.triu(gram, diagonal=1).pow(2).sum((-1, -2))


def sphere_step(Lam: torch.Tensor, grad: torch.Tensor, lr: float, update: str = "riemannian") -> torch.Tensor:
    """One step for every head (rows of Lam, shape (…, H, d)), given the Euclidean gradient ``grad``.

    "riemannian": lambda <- normalize(lambda - lr (I - lambda lambda^T) g)  (brief 4.5; PGD on the sphere)
    "projected":  lambda <- normalize(lambda - lr g)   (plain projected gradient: no tangent projection)
    "euclidean":  lambda <- lambda - lr g              (no projection at all: heads leave the sphere)
    """
    Lam = _check_heads(Lam)
    grad = check_tensor("grad", grad)
    if grad.shape != Lam.shape:
        raise ValueError(f"grad must have Lam's shape {tuple(Lam.shape)}, got {tuple(grad.shape)}")
    lr = check_positive("lr", lr)
    check_choice("update", update, UPDATES)
    if update == "riemannian":
        grad = grad - (grad * Lam).sum(-1, keepdim=True) * Lam
    new = Lam - lr * grad
    if update == "euclidean":
        return new
    return new / new.norm(dim=-1, keepdim=True)


def init_on_sphere(h: int, d: int, *, runs: int | None = None, seed=None, generator=None,
                   dtype=torch.float64) -> torch.Tensor:
    """H heads uniform on the sphere S^{d-1}, independent: (H, d), or (runs, H, d)."""
    h = check_int("h", h, 1)
    d = check_int("d", d, 1)
    g = generator if generator is not None else _generator(seed)
    n = 1 if runs is None else check_int("runs", runs, 1)
    Lam = torch.randn(n, h, d, generator=g, dtype=torch.float64)
    Lam = (Lam / Lam.norm(dim=-1, keepdim=True)).to(dtype)
    return Lam[0] if runs is None else Lam


def init_on_manifold(mu: torch.Tensor, *, runs: int | None = None, seed=None, generator=None) -> torch.Tensor:
    """Random heads on M = {lambda_h perp mu_h', lambda_h perp lambda_h' for h != h'} (brief 4.5), one per centroid.

    mu (K, d) orthonormal -> Lam (K, d), or (runs, K, d). Head h is a Gaussian vector projected on the
    orthogonal complement of {mu_h' : h' != h} and of the earlier heads, then normalised; so it keeps
    a component along its own centroid mu_h and one outside the centroid span. Needs d >= K + 1.
    """
    mu = _check_centroids(mu)
    if mu.dim() != 2:
        raise ValueError(f"mu must have shape (K, d), got {tuple(mu.shape)}")
    k, d = mu.shape
    if d < k + 1:
        raise ValueError(f"initialising on M needs d >= K + 1, got K={k} and d={d}")
    g = generator if generator is not None else _generator(seed)
    n = 1 if runs is None else check_int("runs", runs, 1)
    mu64 = mu.detach().to("cpu", torch.float64)
    out = torch.empty(n, k, d, dtype=torch.float64)
    for r in range(n):
        heads = []
        for h in range(k):
            basis = torch.cat([mu64[[i for i in range(k) if i != h]], *(x[None] for x in heads)], 0)
            v = torch.randn(d, generator=g, dtype=torch.float64)
            if basis.shape[0]:
                Q = torch.linalg.qr(basis.T).Q                        # (d, rank) orthonormal columns
                v = v - Q @ (Q.T @ v)
            heads.append(v / v.norm())
        out[r] = torch.stack(heads)
    out = out.to(device=mu.device, dtype=mu.dtype)
    return out[0] if runs is None else out


def manifold_violation(Lam: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
    """Largest |<lambda_h, mu_h'>| or |<lambda_h, lambda_h'>| over h != h' (0 on M): () or (runs,)."""
    Lam = _check_heads(Lam)
    mu = _check_centroids(mu, d=Lam.shape[-1])
    if mu.dim() != 2 or mu.shape[0] != Lam.shape[-2]:
        raise ValueError(f"mu must have shape (H={Lam.shape[-2]}, d), got {tuple(mu.shape)}")
    off = ~torch.eye(mu.shape[0], dtype=torch.bool, device=Lam.device)
    a = (Lam @ mu.T).abs()[..., off]
    b = (Lam @ Lam.transpose(-1, -2)).abs()[..., off]
    return torch.maximum(a.amax(-1), b.amax(-1))


def centroid_distance(Lam: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
    """min over permutations pi and signs eps of (sum_h ||lambda_h - eps_h mu_pi(h)||^2)^(1/2) (brief 4.5).

    Lam (H, d) or (runs, H, d); mu (H, d) -> () or (runs,). The differences are formed explicitly (not
    via 2 - 2|cos|), so distances near machine precision are resolved.
    """
    Lam = _check_heads(Lam)
    mu = _check_centroids(mu, d=Lam.shape[-1])
    if mu.dim() != 2 or mu.shape[0] != Lam.shape[-2]:
        raise ValueError(f"mu must have shape (H={Lam.shape[-2]}, d), got {tuple(mu.shape)}")
    h = mu.shape[0]
    plus = ((Lam[..., :, None, :] - mu) ** 2).sum(-1)               # (…, H, K)
    minus = ((Lam[..., :, None, :] + mu) ** 2).sum(-1)
    cost = torch.minimum(plus, minus)
    best = None
    for perm in itertools.permutations(range(h)):
        total = cost[..., list(range(h)), list(perm)].sum(-1)
        best = total if best is None else torch.minimum(best, total)
    return best.sqrt()


def subspace_distance(Lam: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
    """Frobenius distance between G = Lam^T Lam and the projector P on span(mu): 0 iff the heads are an
    orthonormal basis of the centroid span. Lam (…, H, d), mu (K, d) -> (…)."""
    Lam = _check_heads(Lam)
    mu = _check_centroids(mu, d=Lam.shape[-1])
    G = Lam.transpose(-1, -2) @ Lam
    P = mu.transpose(-1, -2) @ mu
    return (G - P).flatten(-2).norm(dim=-1)


class TrainResult(NamedTuple):
    """Output of :func:`train_heads`: final heads (runs, H, d) and histories (runs, T) at ``steps`` (T,).

    distance: :func:`centroid_distance`; risk: :func:`population_risk` (no penalty); violation:
    :func:`manifold_violation`; subspace: :func:`subspace_distance`; overlap: the largest
    |<lambda_h, lambda_h'>| over pairs of heads (1 when two heads coincide up to sign).
    """

    Lam: torch.Tensor
    steps: torch.Tensor
    distance: torch.Tensor
    risk: torch.Tensor
    violation: torch.Tensor
    subspace: torch.Tensor
    overlap: torch.Tensor


def train_heads(mu: torch.Tensor, sigma: float, c: float, *, form: str = "R1", L: int | None = None,
                init="manifold", penalty: float = 0.0, lr: float = 0.1, steps: int = 1000, batch: int = 1000,
                update: str = "riemannian", runs: int = 1, record_every: int = 1, seed=0) -> TrainResult:
    """Train H = K heads by gradient steps on the sphere (brief 4.5), several independent runs at once.

    mu (K, d) orthonormal centroids (fixed across prompts). ``L=None`` minimises the exact population
    risk (:func:`population_risk`, L = inf: deterministic PGD); an integer L runs stochastic PGD on
    ``batch`` fresh prompts of L tokens per step and run, minimising their mean :func:`layer_risk`.
    The loss adds ``penalty`` * :func:`orthogonality_penalty`. ``init``: "manifold"
    (:func:`init_on_manifold`), "sphere" (:func:`init_on_sphere`) or a tensor (runs, K, d). ``update``:
    see :func:`sphere_step`. The initial heads come from ``seed`` and the prompts from ``seed + 1``, so
    two calls that differ only in ``init`` see the same prompts.

    Histories are recorded every ``record_every`` steps (and at the end); ``risk`` is the population
    risk (L = inf) of the current heads without the penalty, so runs at different L are comparable.
    """
    mu = _check_centroids(mu)
    if mu.dim() != 2:
        raise ValueError(f"mu must have shape (K, d), got {tuple(mu.shape)}")
    sigma = _check_nonneg("sigma", sigma)
    c = _check_scale(c)
    check_choice("form", form, FORMS)
    if L is not None:
        L = check_int("L", L, 1)
        batch = check_int("batch", batch, 1)
    penalty = _check_nonneg("penalty", penalty)
    lr = check_positive("lr", lr)
    steps = check_int("steps", steps, 0)
    check_choice("update", update, UPDATES)
    runs = check_int("runs", runs, 1)
    record_every = check_int("record_every", record_every, 1)
    seed = check_int("seed", seed, 0)
    k, d = mu.shape
    mu = mu.detach().to("cpu", torch.float64)
    g_init, g_data = _generator(seed), _generator(seed + 1)
    if isinstance(init, torch.Tensor):
        Lam = _check_heads(init, name="init").detach().to("cpu", torch.float64).clone()
        if Lam.shape != (runs, k, d):
            raise ValueError(f"init must have shape (runs={runs}, K={k}, d={d}), got {tuple(Lam.shape)}")
    else:
        check_choice("init", init, ("manifold", "sphere"))
        Lam = init_on_manifold(mu, runs=runs, generator=g_init) if init == "manifold" else \
            init_on_sphere(k, d, runs=runs, generator=g_init)
    M = second_moment(mu, sigma)
    hist = {"steps": [], "distance": [], "risk": [], "violation": [], "subspace": [], "overlap": []}
    off = ~torch.eye(k, dtype=torch.bool)

    def record(t):
        hist["steps"].append(t)
        hist["distance"].append(centroid_distance(Lam, mu))
        hist["risk"].append(population_risk(Lam, M, c, form))
        hist["violation"].append(manifold_violation(Lam, mu) if d > k else torch.zeros(runs, dtype=Lam.dtype))
        hist["subspace"].append(subspace_distance(Lam, mu))
        gram = (Lam @ Lam.transpose(-1, -2)).abs()
        hist["overlap"].append(gram[:, off].amax(-1) if k > 1 else torch.zeros(runs, dtype=Lam.dtype))

    threads = torch.get_num_threads()
    torch.set_num_threads(1)   # small tensors: extra threads only add overhead (10x slower on a busy 2-core CPU)
    try:
        with torch.no_grad():
            record(0)
        for t in range(1, steps + 1):
            if L is None:
                Lam.requires_grad_(True)
                loss = population_risk(Lam, M, c, form)
            else:
                X, _ = _draw_tokens(mu.expand(runs * batch, k, d), L, sigma, g_data, torch.float32)
                Mhat = (X.transpose(1, 2) @ X / L).view(runs, batch, d, d)
                Lam.requires_grad_(True)
                loss = _mhat_risk(Mhat, Lam[:, None], c, form).mean(1)
            if penalty > 0:
                loss = loss + penalty * orthogonality_penalty(Lam)
            (grad,) = torch.autograd.grad(loss.sum(), Lam)
            with torch.no_grad():
                Lam = sphere_step(Lam.detach(), grad, lr, update)
                if t % record_every == 0 or t == steps:
                    record(t)
    finally:
        torch.set_num_threads(threads)
    return TrainResult(Lam.detach(), torch.tensor(hist["steps"]),
                       *(torch.stack(hist[key], 1) for key in ("distance", "risk", "violation", "subspace", "overlap")))


# ----------------------------------------------------------------------------------------------------
# closed forms (sympy): derived here from the model, not typed from the brief
# ----------------------------------------------------------------------------------------------------

class _Symbols(NamedTuple):
    d: object
    sigma: object
    L: object
    c: object
    K: object
    u: object


def symbols() -> _Symbols:
    """The sympy symbols of the closed forms: d, sigma, L, c (positive), K (positive integer), u in [0, 1]."""
    import sympy as sp
    return _Symbols(sp.Symbol("d", positive=True), sp.Symbol("sigma", positive=True),
                    sp.Symbol("L", positive=True), sp.Symbol("c", positive=True),
                    sp.Symbol("K", positive=True, integer=True), sp.Symbol("u", nonnegative=True))


class _Diag(NamedTuple):
    """A d x d matrix diagonal in the basis (mu_1..mu_K, then any basis of the complement):
    p[j] on mu_j, q on the whole complement. Every matrix in the finite-L derivation has this form."""

    p: tuple
    q: object

    def __matmul__(self, other: "_Diag") -> "_Diag":
        return _Diag(tuple(x * y for x, y in zip(self.p, other.p)), self.q * other.q)


def numeric(expr, **values) -> float:
    """Evaluate a closed form at numbers, e.g. ``numeric(cf.risk_inf_opt, d=10, sigma=0.3)``.

    Keyword names are those of :func:`symbols` (d, sigma, L, c, K, u); a missing one raises.
    """
    import sympy as sp
    S = symbols()._asdict()
    unknown = set(values) - set(S)
    if unknown:
        raise ValueError(f"values must be among {sorted(S)}, got {sorted(unknown)}")
    out = sp.sympify(expr).subs({S[k]: sp.nsimplify(v) if isinstance(v, int) else v for k, v in values.items()})
    free = out.free_symbols
    if free:
        raise ValueError(f"the expression still depends on {sorted(map(str, free))}; give their values")
    return float(out)


class ClosedForms:
    """Closed forms for the layer T(X)_l = (c/L) sum_k x_k x_k^T A x_l (query token among the L keys).

    ``heads`` picks A: "identity" (A = I: the identity-QKV layer, R1 with d orthonormal heads),
    "oracle" (A = P, the projector on span(mu): R1 with the K heads on the centroids) or a pair
    (alpha, beta) for A = alpha P + beta (I - P). ``k`` is the number of centroids: an int, or "K" for
    a symbolic K (only the L = inf members then).

    Derivations (all on the mixture of brief 4.1; a = 1/K + sigma^2 and b = sigma^2 are M's eigenvalues
    on span(mu) and on its complement):

    * L = inf (``*_inf``): Mhat -> M, so T -> c M A x; in M's eigenbasis every matrix is diagonal, so
      E||x - T||^2 = tr((I - cMA)^T (I - cMA) M) is K times its value on span(mu) plus (d - K) times its
      value on the complement. The optimal c solves dR/dc = 0.
    * finite L (``*_L``, int k only): expand ||x_l - T_l||^2 and sort the sums over k, k' by which indices
      coincide (with l and with each other); independent tokens contribute M, N = E[||x||^2 x x^T] or
      their single-token moments (see :meth:`_finite`). Single-token moments reduce to expectations over
      g ~ N(0, I_K) (coordinates on span(mu)), S ~ chi^2_{d-K} (the squared noise norm off span(mu))
      and the component Z, using E g^(2m) = (2m-1)!! and E S^m = prod_{t<m} (d - K + 2t).
    """

    def __init__(self, k=2, heads="identity"):
        import sympy as sp
        self._sp = sp
        self.s = symbols()
        if isinstance(k, str):
            if k != "K":
                raise ValueError(f"k must be a positive integer or 'K' (symbolic), got {k!r}")
            self.k = self.s.K
        else:
            self.k = check_int("k", k, 1)
        if isinstance(heads, str):
            check_choice("heads", heads, ("identity", "oracle"))
            self.alpha, self.beta = (1, 1) if heads == "identity" else (1, 0)
        else:
            if not (isinstance(heads, tuple) and len(heads) == 2):
                raise TypeError(f"heads must be 'identity', 'oracle' or a pair (alpha, beta), got {heads!r}")
            self.alpha, self.beta = map(sp.sympify, heads)
        self.heads = heads
        K, s = self.k, self.s.sigma
        self.a = 1 / sp.sympify(K) + s ** 2
        self.b = s ** 2

    def _require_int_k(self):
        if not isinstance(self.k, int):
            raise ValueError("finite-L closed forms need an integer k; build ClosedForms(k=2) or k=3")

    # ------------------------------------------------------------------ L = inf
    def _blocks(self, plane, comp):
        """Trace of a matrix that is ``plane`` on span(mu) (K dims) and ``comp`` off it (d - K dims)."""
        return self.k * plane + (self.s.d - self.k) * comp

    @functools.cached_property
    def risk_inf(self):
        """R_inf(c) = E||x - c M A x||^2 (brief 5.2), in (d, sigma, c[, K])."""
        c, a, b = self.s.c, self.a, self.b
        plane = (1 - c * a * self.alpha) ** 2 * a          # eigenvalue of (I - cMA)^T (I - cMA) M on span(mu)
        comp = (1 - c * b * self.beta) ** 2 * b
        return self._sp.expand(self._blocks(plane, comp))

    @functools.cached_property
    def scale_inf(self):
        """The optimal scale c* = argmin_c R_inf(c)."""
        sp = self._sp
        (cstar,) = sp.solve(sp.diff(self.risk_inf, self.s.c), self.s.c)
        return sp.factor(cstar)

    @functools.cached_property
    def risk_inf_opt(self):
        """R_inf(c*)."""
        return self._sp.factor(self._sp.simplify(self.risk_inf.subs(self.s.c, self.scale_inf)))

    @functools.cached_property
    def optimal_quantizer_risk(self):
        """R(T*) = E||x - mu_Z||^2 = E||sigma xi||^2 = sigma^2 d."""
        return self.s.sigma ** 2 * self.s.d

    @functools.cached_property
    def ratio_inf(self):
        """R_inf(c*) / R(T*)."""
        return self._sp.factor(self._sp.simplify(self.risk_inf_opt / self.optimal_quantizer_risk))

    @functools.cached_property
    def mean_coef_inf(self):
        """E[T | Z = i] = m mu_i at L = inf: m = c a alpha (T = c M A x and M A mu_i = a alpha mu_i)."""
        return self.s.c * self.a * self.alpha

    @functools.cached_property
    def unbiased_scale_inf(self):
        """The c making the layer unbiased at L = inf (m = 1)."""
        (cu,) = self._sp.solve(self.mean_coef_inf - 1, self.s.c)
        return self._sp.factor(cu)

    @functools.cached_property
    def cond_var_inf(self):
        """tr Cov(T | Z) at L = inf, a function of c: Cov = c^2 M A (sigma^2 I) A M."""
        c, s = self.s.c, self.s.sigma
        return self._sp.expand(c ** 2 * s ** 2 * self._blocks(self.a ** 2 * self.alpha ** 2,
                                                                self.b ** 2 * self.beta ** 2))

    @functools.cached_property
    def input_cond_var(self):
        """tr Cov(x | Z) = sigma^2 d."""
        return self.s.sigma ** 2 * self.s.d

    # ------------------------------------------------------------------ finite L
    def _E(self, f, z=None):
        """E over one token of a polynomial ``f(u, S)``; u: its coordinates on mu_1..mu_K, S: chi^2_{d-K}.

        ``z`` fixes the token's component (0-based); ``None`` averages over the K components.
        """
        sp, sig = self._sp, self.s.sigma
        if z is None:
            return sp.expand(sum(self._E(f, j) for j in range(self.k)) / self.k)
        g = sp.symbols(f"g1:{self.k + 1}")
        S = sp.Symbol("S", nonnegative=True)
        u = [(1 if j == z else 0) + sig * g[j] for j in range(self.k)]
        poly = sp.Poly(sp.expand(f(u, S)), *g, S)
        n = self.s.d - self.k

        def gauss(p):
            return 0 if p % 2 else sp.factorial2(p - 1)

        total = 0
        for powers, coef in poly.terms():
            *gp, sp_ = powers
            term = coef
            for p in gp:
                term *= gauss(p)
            for t in range(sp_):
                term *= n + 2 * t
            total += term
        return sp.expand(total)

    def _quad(self, B: _Diag):
        """x^T B x as a function of (u, S): sum_j B.p[j] u_j^2 + B.q sigma^2 S."""
        sig = self.s.sigma
        return lambda u, S: sum(p * uj ** 2 for p, uj in zip(B.p, u)) + B.q * sig ** 2 * S

    @functools.cached_property
    def _mats(self):
        self._require_int_k()
        sp, k, sig = self._sp, self.k, self.s.sigma
        ident = _Diag((1,) * k, 1)
        A = _Diag((self.alpha,) * k, self.beta)
        M = _Diag(tuple(self._E(lambda u, S, j=j: u[j] ** 2) for j in range(k)),
                  sp.cancel(self._E(lambda u, S: sig ** 2 * S) / (self.s.d - k)))
        norm2 = self._quad(ident)
        N = _Diag(tuple(self._E(lambda u, S, j=j: norm2(u, S) * u[j] ** 2) for j in range(k)),
                  sp.cancel(self._E(lambda u, S: norm2(u, S) * sig ** 2 * S) / (self.s.d - k)))
        return ident, A, M, N

    def _finite(self, z=None):
        """(R0, B1, B2) with E||x_l - T_l||^2 = R0 - 2c B1 + c^2 B2, conditional on Z_l = z (or averaged).

        Expanding T_l = (c/L) sum_k x_k (x_k^T A x_l):
          E<x_l, T_l>  = (c/L)  sum_k E[(x_l^T x_k)(x_k^T A x_l)]
                         k != l  (L-1 terms): E_l[x_l^T M A x_l]
                         k == l  (1 term):    E[||x||^2 x^T A x]
          E||T_l||^2   = (c/L)^2 sum_{k,k'} E[(x_l^T A x_k)(x_k^T x_k')(x_k'^T A x_l)]
                         k, k', l distinct     ((L-1)(L-2)): E_l[x_l^T A M M A x_l]
                         k == k' != l          (L-1):        E_l[x_l^T A N A x_l]
                         k == l != k' or k' == l != k (2(L-1)): E[(x^T A x)(x^T M A x)]
                         k == k' == l          (1):          E[(x^T A x)^2 ||x||^2]
        """
        ident, A, M, N = self._mats
        L, E, q = self.s.L, (lambda f: self._E(f, z)), self._quad
        R0 = E(q(ident))
        B1 = ((L - 1) * E(q(M @ A)) + E(lambda u, S: q(ident)(u, S) * q(A)(u, S))) / L
        B2 = ((L - 1) * (L - 2) * E(q(A @ M @ M @ A)) + (L - 1) * E(q(A @ N @ A))
              + 2 * (L - 1) * E(lambda u, S: q(A)(u, S) * q(M @ A)(u, S))
              + E(lambda u, S: q(A)(u, S) ** 2 * q(ident)(u, S))) / L ** 2
        return R0, B1, B2

    @functools.cached_property
    def risk_L(self):
        """R_L(c) = E||x_l - T(X)_l||^2 at finite L, in (d, sigma, L, c)."""
        R0, B1, B2 = self._finite()
        c = self.s.c
        return self._sp.expand(R0 - 2 * c * B1 + c ** 2 * B2)

    @functools.cached_property
    def scale_L(self):
        """The finite-L optimal scale c*_L = B1 / B2."""
        _, B1, B2 = self._finite()
        return self._sp.factor(B1 / B2)

    @functools.cached_property
    def risk_L_opt(self):
        """R_L(c*_L) = R0 - B1^2 / B2."""
        R0, B1, B2 = self._finite()
        return self._sp.factor(self._sp.together(R0 - B1 ** 2 / B2))

    @functools.cached_property
    def first_order_L(self):
        """r_1 in R_L(c*_L) = R_inf(c*) + r_1 / L + O(1/L^2)."""
        sp = self._sp
        eps = sp.Symbol("epsilon", positive=True)
        series = sp.series(self.risk_L_opt.subs(self.s.L, 1 / eps), eps, 0, 2).removeO()
        return sp.factor(sp.simplify(series.coeff(eps, 1)))

    @functools.cached_property
    def mean_coef_L(self):
        """E[T_l | Z_l = 1] = m_L mu_1 at finite L, a function of (c, L): the components on the other
        centroids and off span(mu) vanish (odd moments), checked here."""
        sp = self._sp
        ident, A, M, _ = self._mats
        L, c, q = self.s.L, self.s.c, self._quad
        coefs = []
        for j in range(self.k):   # j-th coordinate on span(mu) of E[T | Z = 0]
            own = self._E(lambda u, S: u[j] * q(A)(u, S), 0)     # E[x_j (x^T A x) | Z = 0]
            ctx = (M @ A).p[j] * (1 if j == 0 else 0)            # (M A E[x | Z = 0])_j
            coefs.append(sp.expand(c / L * ((L - 1) * ctx + own)))
        assert all(sp.simplify(x) == 0 for x in coefs[1:]), coefs
        return sp.factor(coefs[0])

    @functools.cached_property
    def unbiased_scale_L(self):
        """The c making the finite-L layer unbiased (m_L = 1)."""
        (cu,) = self._sp.solve(self.mean_coef_L - 1, self.s.c)
        return self._sp.factor(cu)

    @functools.cached_property
    def cond_var_L(self):
        """tr Cov(T_l | Z_l = 1) at finite L, a function of (c, L): E[||T||^2 | Z] - ||E[T | Z]||^2."""
        _, _, B2 = self._finite(0)
        return self._sp.factor(self._sp.expand(self.s.c ** 2 * B2 - self.mean_coef_L ** 2))



@functools.lru_cache(maxsize=None)
def manifold_profile(k: int = 2, form: str = "R1"):
    """The population (L = inf) risk on the manifold M: returns (f(u), c_max) as sympy expressions in (u, sigma, c).

    With lambda_h = cos(theta_h) mu_h + sin(theta_h) w_h (w_h orthonormal and off span(mu): a point of M),
    the risk is tr M + sum_h f(u_h) with u_h = cos^2 theta_h, for R1 and R2 alike (the decoupling into a
    sum over heads is checked here, not assumed). Derived from tr M - 2c tr(BM) + c^2 tr(B^T B M) with
    explicit head vectors in the 2K-dim span of (mu_h, w_h), where M = diag(a, ..., a, b, ..., b) and
    B = M G (R1) or sum_h (lambda_h^T M lambda_h) lambda_h lambda_h^T (R2).

    f' <= 0 on [0, 1] (so the centroids, u = 1, are the minimisers on M and PGD on M goes there) iff
    c <= c_max, the root of f'(1) = 0: for R1 because f is convex in u; for R2 because
    f'(u) = c (a - b) m (3 c m - 4) with m = b + (a - b) u <= a. Near u = 1, one Riemannian step of size
    eta multiplies each head's angle to its centroid by 1 + 2 eta f'(1): the linear rate.
    """
    import sympy as sp
    k = check_int("k", k, 1)
    check_choice("form", form, FORMS)
    S = symbols()
    c, u = S.c, S.u
    a, b = 1 / sp.Integer(k) + S.sigma ** 2, S.sigma ** 2
    us = sp.symbols(f"u1:{k + 1}", nonnegative=True)                   # u_h = cos^2 theta_h
    Msub = sp.diag(*([a] * k + [b] * k))                                # M on span(mu_1..mu_K, w_1..w_K)
    heads = [sp.Matrix([sp.sqrt(us[h]) if i == h else sp.sqrt(1 - us[h]) if i == k + h else 0
                        for i in range(2 * k)]) for h in range(k)]
    if form == "R1":
        B = Msub * sum((v * v.T for v in heads), sp.zeros(2 * k))
    else:
        B = sum(((v.T * Msub * v)[0, 0] * v * v.T for v in heads), sp.zeros(2 * k))
    excess = sp.expand(-2 * c * (B * Msub).trace() + c ** 2 * (B.T * B * Msub).trace())
    zero = {x: 0 for x in us}
    f = sp.expand(excess.subs({**zero, us[0]: u}) - (k - 1) * excess.subs(zero) / k)
    check = sp.expand(excess - sum(f.subs(u, x) for x in us))
    assert check == 0, check
    (cmax,) = [r for r in sp.solve(sp.diff(f, u).subs(u, 1), c) if r != 0]
    return f, sp.factor(cmax)
