"""Bookkeeping of the chapter "Attention-based clustering": Monte Carlo checks, summaries of training runs,
and the maps compared with Lloyd's algorithm."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch

from lloydlib import attention_clustering as ac
from lloydlib.lloyd import assign, lloyd_step
from lloydlib.tasks import init_centers

from ..tables import Table

__all__ = [
    "SEED_PLATEAU",
    "a_of",
    "positive",
    "MonteCarloChecks",
    "in_context_cell",
    "plugin_excess",
    "final",
    "plateau_level",
    "success",
    "success_at",
    "fitted_rate",
    "direction_distance",
    "yes",
    "pct",
    "comparison_maps",
    "comparison_numbers",
]


SEED_PLATEAU = {0.3: 1e-2, 1.0: 1e-1}  # the summary's distances after about 1e3 iterations ("Key results")


def a_of(sigma, k=2):
    """The eigenvalue of M on the centroid span, a = 1/K + sigma^2."""
    return 1 / k + sigma**2


def positive(expr) -> bool:
    """True if ``expr`` > 0 for every d > 2 and sigma > 0: with n = d - 2, its numerator and denominator
    are polynomials in (n, sigma) with positive coefficients (a sufficient condition)."""
    S = ac.symbols()
    n = sp.Symbol("n", positive=True)
    num, den = sp.fraction(sp.factor(sp.together(expr.subs(S.d, n + 2))))
    return all(c > 0 for part in (num, den) for c in sp.Poly(sp.expand(part), n, S.sigma).coeffs())


class MonteCarloChecks:
    """A list of closed forms checked against Monte Carlo: z = (mean - exact) / s.e. per row."""

    def __init__(self):
        self.rows, self.z = [], []

    def check(self, name: str, setting: str, exact: float, values: torch.Tensor) -> None:
        """Record one check of ``exact`` against i.i.d. ``values`` (n,)."""
        mean, se = ac.mean_and_se(values)
        z = (mean - exact) / se
        self.rows.append([name, setting, f"{exact:.4f}", f"{mean:.4f}", f"{se:.1e}", f"{z:+.2f}"])
        self.z.append(z)

    @property
    def max_z(self) -> float:
        return max(abs(z) for z in self.z)

    def table(self) -> Table:
        return Table(["closed form", "setting", "exact", "Monte Carlo", "s.e.", "z"], self.rows)


def in_context_cell(m, d, sigma, L, ident, orac):
    """Monte Carlo risks (mean, s.e.) of every quantizer on the prompts ``m``, and the layers' exact risks."""
    out = {
        "ident": ac.identity_layer(m.X, ac.numeric(ident.scale_L, d=d, sigma=sigma, L=L)),
        "oracle": ac.attention_layer(m.X, m.mu, ac.numeric(orac.scale_L, d=d, sigma=sigma, L=L), "R1"),
        "pca": ac.pca_quantizer(m.X, 2),
        "nc": ac.nearest_centroid_quantizer(m.X, m.mu),
        "tstar": ac.optimal_quantizer(m.mu, m.Z),
    }
    r = {k: ac.mean_and_se(ac.reconstruction_error(m.X, v)) for k, v in out.items()}
    ex = {k: ac.numeric(cf.risk_L_opt, d=d, sigma=sigma, L=L) for k, cf in (("ident", ident), ("oracle", orac))}
    return r, ex


def plugin_excess(m, d, sigma, L, ident) -> tuple[float, float, float]:
    """The identity layer at the plug-in scale ``ac.plugin_scale`` against its closed form at c*_L, paired.

    On the same prompts ``m``, diff = err(c_hat) - err(c*_L) per prompt; returns (e, se, worst) with
    e = mean(diff) / R_L(c*_L) the relative excess risk (E err(c*_L) = R_L(c*_L) exactly), se its standard
    error, and worst = max(diff), which is <= 0 up to rounding since c_hat minimises each prompt's error.
    """
    c_star = ac.numeric(ident.scale_L, d=d, sigma=sigma, L=L)
    diff = ac.reconstruction_error(m.X, ac.identity_layer(m.X, ac.plugin_scale(m.X))) - ac.reconstruction_error(
        m.X, ac.identity_layer(m.X, c_star)
    )
    exact = ac.numeric(ident.risk_L_opt, d=d, sigma=sigma, L=L)
    mean, se = ac.mean_and_se(diff)
    return mean / exact, se / exact, float(diff.max())


def final(res) -> torch.Tensor:
    """The runs' final distances to the centroids, (runs,)."""
    return res.distance[:, -1]


def plateau_level(res) -> float:
    """A run set's plateau: the median distance over its runs and over the records in the last third of its
    iterations (a level over iterations, less noisy than the final distances alone)."""
    start = (1 - 1 / 3) * float(res.steps[-1])  # not 2 / 3: a float that differs in its last digit
    return float(res.distance[:, res.steps >= start].median())


def success_at(res, i: int) -> float:
    """The fraction of runs within 0.1 of the centroids at record ``i``."""
    return float((res.distance[:, i] < 0.1).double().mean())


def success(res) -> float:
    """The fraction of runs that end within 0.1 of the centroids."""
    return success_at(res, -1)


def fitted_rate(res) -> float:
    """The per-step factor of the median distance, fitted where it is between 1e-12 and 1e-4 (linear regime)."""
    dist = res.distance.median(0).values
    w = (dist < 1e-4) & (dist > 1e-12)
    return math.exp(np.polyfit(res.steps[w].numpy(), np.log(dist[w].numpy()), 1)[0])


def direction_distance(res, mu: torch.Tensor) -> torch.Tensor:
    """Distance to the centroids of the heads' directions lambda / |lambda|, (runs,)."""
    return ac.centroid_distance(res.Lam / res.Lam.norm(dim=-1, keepdim=True), mu)


def yes(flag) -> str:
    return "yes" if flag else "no"


def pct(x: float) -> str:
    return f"{x:.0%}"


def _setting(init, pen) -> str:
    """A training setting as text: the initialisation, and the penalty weight when there is one."""
    return f"{init}" + (f", γ={pen}" if pen else "")


def _gather(C: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Each token's image: the row idx (batch, n) of its prompt's centers C (batch, k, d) -> (batch, n, d)."""
    return torch.gather(C, 1, idx[..., None].expand(-1, -1, C.shape[2]))


def _bn_map(T_bn, codes, X, C0):
    """One layer of the exact BN transformer; the map is read off its output tokens (codes and centers)."""
    d = X.shape[2]
    Xbar1, Cbar1 = T_bn.layer(*T_bn.embed(X, C0))
    idx = ((Xbar1[..., d:, None] - codes.T[None, None]) ** 2).sum(2).argmin(-1)  # the code each point carries
    return _gather(Cbar1[..., :d], idx), Cbar1[..., :d]


def comparison_maps(m, sigma, L, ident, T_bn, codes, lloyd_steps: int, seed: int):
    """Every map f_X of the comparison on the prompts ``m``, in display order, and three side measurements.

    Returns ``(maps, stats)``: maps name -> token images (batch, L, d); stats holds ``same_cluster``
    (init -> fraction of prompts whose two initial centers are nearest the same centroid), ``bn_gap``
    (largest difference between the BN layer and Lloyd's step) and ``separation`` (median distance between
    the two centers after ``lloyd_steps`` steps from farthest-first).
    """
    d = m.X.shape[2]
    scales = {
        "c_L (knows σ)": ac.numeric(ident.unbiased_scale_L, d=d, sigma=sigma, L=L),
        "c*_L (knows σ)": ac.numeric(ident.scale_L, d=d, sigma=sigma, L=L),
        "c = 1/λmax(M̂)": ac.adaptive_scale(m.X),
    }
    maps = {f"identity QKV, {name}": ac.identity_layer(m.X, c) for name, c in scales.items()}
    stats = {"same_cluster": {}, "bn_gap": 0.0}
    for init, tag in (("kmeans++", "k-means++"), ("gonzalez", "farthest-first")):
        C0 = init_centers(m.X, 2, init, seed=seed)
        near = ((C0[:, :, None, :] - m.mu[:, None]) ** 2).sum(-1).argmin(-1)  # nearest true centroid
        stats["same_cluster"][init] = float((near[:, 0] == near[:, 1]).double().mean())
        C1 = lloyd_step(m.X, C0)
        Y1 = maps[f"Lloyd, 1 step, {tag} init"] = _gather(C1, assign(m.X, C0))
        Y_bn, C_bn = _bn_map(T_bn, codes, m.X, C0)
        stats["bn_gap"] = max(stats["bn_gap"], float((C_bn - C1).abs().max()), float((Y_bn - Y1).abs().max()))
        if init == "gonzalez":
            maps[f"BN transformer, 1 layer, {tag} init"] = Y_bn
            C_prev = C0
            for _ in range(lloyd_steps - 1):
                C_prev = lloyd_step(m.X, C_prev)
            C_conv = lloyd_step(m.X, C_prev)
            maps[f"Lloyd, {lloyd_steps} steps, {tag} init"] = _gather(C_conv, assign(m.X, C_prev))
            stats["separation"] = float((C_conv[:, 0] - C_conv[:, 1]).norm(dim=-1).median())
    maps["nearest true centroid"] = ac.nearest_centroid_quantizer(m.X, m.mu)
    maps["T* (labels)"] = ac.optimal_quantizer(m.mu, m.Z)
    return maps, stats


def comparison_numbers(
    res_cmp: dict, separation: dict, same_cluster: dict, P, best: str, one_step: str, converged: str
):
    """What the prose says of the comparison with Lloyd's algorithm, keyed by the chapter's glue names.

    ``res_cmp[sigma, L, map]`` = (reconstruction, denoising, its s.e.), as fractions of sigma^2 d;
    ``separation[sigma, L]`` and ``same_cluster[sigma, L, init]`` come from :func:`comparison_maps`; ``best``
    (the best identity-layer map there), ``one_step`` (one BN layer) and ``converged`` (Lloyd run to convergence)
    name maps. Read at the noisiest, shortest setting (largest sigma, smallest L) and at the largest L (the
    separation at the largest sigma, the rest at the smallest sigma).
    """
    s_w, L_w, s_lo, L_hi = max(P.cmp_sigma), min(P.cmp_L), min(P.cmp_sigma), max(P.cmp_L)
    return {
        "cmp-sigma": s_w,
        "cmp-L": L_w,
        "cmp-id-den": res_cmp[s_w, L_w, best][1],
        "cmp-lloyd-den": res_cmp[s_w, L_w, one_step][1],
        "cmp-conv-den": res_cmp[s_w, L_w, converged][1],
        "cmp-separation": separation[s_w, L_hi],
        "cmp-sigma-lo": s_lo,
        "cmp-L-hi": L_hi,
        "cmp-same-kpp": same_cluster[s_lo, L_hi, "kmeans++"],
        "cmp-same-ff": same_cluster[s_lo, L_hi, "gonzalez"],
        "cmp-lo-one": res_cmp[s_lo, L_hi, one_step][1],
        "cmp-lo-conv": res_cmp[s_lo, L_hi, converged][1],
    }
