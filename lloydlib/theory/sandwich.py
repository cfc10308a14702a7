"""The sandwich: a proved Lipschitz constant L must lie above every observed ratio ||f(a) - f(a')|| / ||a - a'||.

This module holds what every search shares: :class:`SandwichResult` (the constant and the largest ratios
seen), the Adam ascent on the ratio (:func:`ascend`, float64, many restarts at once), the guard against
secants over steps so small that they measure rounding (:func:`quotient`), the projections onto the
hypotheses' balls (spectral norms of matrices, norms of tokens), the norm ||.||_{2,1} (:func:`norm21`)
and :func:`random_spectral`. The searches themselves are in :mod:`lloydlib.theory.head` (Lemmas
I.3-I.8 of the Leaner paper, Appendix I), :mod:`lloydlib.theory.layer` (Lemma I.1, Theorems I.1, I.2)
and :mod:`lloydlib.theory.loss` (Lemma I.2; Appendix H, Props. H.1, H.2).

Conventions: tokens are rows (see :mod:`lloydlib.tasks`); Q, K, V are the paper's (d_emb, d_emb)
matrices, applied as ``Z @ W.T``; ||.||_{2,1} is the sum of the token l2 norms; matrix norms are
spectral; ||Theta|| is the largest spectral norm of the twelve matrices.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import torch

from .._validate import check_int, check_nonneg, check_positive, check_tensor

__all__ = ["DTYPE", "SandwichResult", "norm21", "random_spectral"]

DTYPE = torch.float64
RTOL = 1e-7  # a ratio this close above a constant is rounding, not a counterexample
MIN_STEP = 1e-6  # pairs closer than this (relative to the argument's bound) are not counted


@dataclass
class SandwichResult:
    """The outcome of a sandwich: the proved constant and the largest ratios seen below it.

    ``random`` is the largest ratio over random pairs, ``ascent`` over gradient ascent (each
    re-evaluated with the library's operator); ``ratio`` the larger of the two; ``pair`` holds the
    tensors of the best pair (a counterexample when ``violated``); ``slack`` = bound / ratio.
    """

    name: str
    bound: float
    random: float
    ascent: float
    pair: dict = field(repr=False, default_factory=dict)

    @property
    def ratio(self) -> float:
        return max(self.random, self.ascent)

    @property
    def violated(self) -> bool:
        """ratio > bound by more than float64 rounding of a secant (steps >= 1e-6): 1e-7 relative."""
        return self.ratio > self.bound * (1 + RTOL)

    @property
    def slack(self) -> float:
        return self.bound / self.ratio if self.ratio > 0 else math.inf


def quotient(num, den, scale):
    """num / den where den >= MIN_STEP * scale, else 0: a secant over a smaller step measures the
    rounding of float64, not the function (an ascent would otherwise climb on rounding noise)."""
    ok = den >= MIN_STEP * scale
    return torch.where(ok, num / torch.where(ok, den, torch.ones_like(den)), torch.zeros_like(num))


def norm21(A: torch.Tensor) -> torch.Tensor:
    """||A||_{2,1}: the sum of the l2 norms of the tokens (rows of the last two dims); shape A.shape[:-2]."""
    A = check_tensor("A", A)
    if A.dim() < 2:
        raise ValueError(f"A must have at least 2 dimensions (tokens, width), got shape {tuple(A.shape)}")
    return A.norm(dim=-1).sum(-1)


def spec(W: torch.Tensor) -> torch.Tensor:
    """Spectral norms of the matrices in the last two dims of W: shape W.shape[:-2]."""
    return torch.linalg.matrix_norm(W, ord=2)


def random_spectral(shape, norm: float, *, generator: torch.Generator | None = None, dtype=DTYPE) -> torch.Tensor:
    """A Gaussian matrix (or batch of matrices) of shape ``shape`` rescaled to spectral norm ``norm`` >= 0."""
    norm = check_nonneg("norm", norm)
    if len(shape) < 2:
        raise ValueError(f"shape must have at least 2 dimensions, got {tuple(shape)}")
    G = torch.randn(*shape, generator=generator, dtype=dtype)
    return G * (norm / spec(G)[..., None, None])


def shrink_matrix(W, bound):
    """W scaled into the spectral ball of radius ``bound`` (unchanged inside it)."""
    s = spec(W)
    return W * torch.clamp(bound / s.clamp_min(1e-300), max=1.0)[..., None, None]


def shrink_tokens(Z, bound):
    """Every token (row) of Z scaled into the ball of radius ``bound`` (unchanged inside it)."""
    r = Z.norm(dim=-1, keepdim=True)
    return Z * torch.clamp(bound / r.clamp_min(1e-300), max=1.0)


def tokens(raw, bound, regime):
    """Tokens with norms <= bound; regime "box" also keeps every entry in [0, 1] (Assumption I.1)."""
    Z = torch.sigmoid(raw) if regime == "box" else raw
    return shrink_tokens(Z, bound)


def log_steps(n: int, g: torch.Generator) -> torch.Tensor:
    """log of ``n`` step sizes drawn log-uniformly in [1e-4, 1] (relative to an argument's bound)."""
    return math.log(1e-4) + (math.log(1.0) - math.log(1e-4)) * torch.rand(n, generator=g, dtype=DTYPE)


def step_size(log_h):
    """exp(log_h), clamped to [1e-6, 4]: the size of a perturbation relative to its bound."""
    return torch.exp(log_h.clamp(math.log(1e-6), math.log(4.0)))


def check_search(restarts, steps, lr, random_pairs) -> tuple[int, int, float, int]:
    """The effort of a search: ``restarts`` >= 1, ``steps`` >= 0, ``lr`` > 0, ``random_pairs`` >= 1."""
    return (
        check_int("restarts", restarts, 1),
        check_int("steps", steps, 0),
        check_positive("lr", lr),
        check_int("random_pairs", random_pairs, 1),
    )


def one_thread(f):
    """Run ``f`` on one intra-op thread (restored afterwards).

    The searches apply thousands of operations to tiny tensors; with several threads each of them pays
    a synchronisation far larger than the work (milliseconds instead of microseconds on a busy machine).
    """

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return f(*args, **kwargs)
        finally:
            torch.set_num_threads(before)

    return wrapper


def ascend(raw: dict, objective, steps: int, lr: float) -> dict:
    """Adam ascent of log ``objective(raw) -> (R,)``, per restart; returns the best raw values per restart.

    ``raw`` maps names to tensors whose first dimension indexes the R restarts; they become leaves that
    require grad. Non-finite values of the objective are skipped.
    """
    for t in raw.values():
        t.requires_grad_(True)
    opt = torch.optim.Adam(list(raw.values()), lr=lr)
    best = torch.full((next(iter(raw.values())).shape[0],), -math.inf, dtype=DTYPE)
    best_raw = {k: v.detach().clone() for k, v in raw.items()}
    for _ in range(steps + 1):
        value = objective(raw)
        with torch.no_grad():
            ok = torch.isfinite(value)
            better = ok & (value > best)
            best = torch.where(better, value, best)
            for key, v in raw.items():
                best_raw[key][better] = v.detach()[better]
        opt.zero_grad()
        (-torch.where(ok, torch.log(value.clamp_min(1e-300)), torch.zeros_like(value)).sum()).backward()
        opt.step()
    return best_raw


def select(raw: dict, i: int) -> dict:
    """Restart ``i`` of every tensor in ``raw``, keeping a batch dimension of 1."""
    return {k: v[i : i + 1] for k, v in raw.items()}
