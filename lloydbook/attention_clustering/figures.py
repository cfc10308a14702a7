"""The figures of the chapter "Attention-based clustering"."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp
import torch

from lloydlib import attention_clustering as ac

from .summaries import SEED_PLATEAU, _setting

__all__ = [
    "plot_in_context",
    "plot_plugin_excess",
    "plot_population_pgd",
    "plot_sgd",
    "plot_noise_floor",
    "plot_rotation",
    "plot_penalty_scan",
    "plot_clouds",
    "plot_three_heads",
    "plot_comparison",
]


def _show(fig, legend_ax=None, suptitle: str | None = None, **legend) -> None:
    """Lay out and show ``fig``, with a small legend on ``legend_ax`` and a ``suptitle`` when given."""
    if legend_ax is not None:
        legend_ax.legend(fontsize=7, **legend)
    if suptitle:
        fig.suptitle(suptitle, fontsize=10)
    fig.tight_layout()
    plt.show()


def _style(ax, title: str, **props) -> None:
    """Set ``props`` on ``ax`` (scales, labels, limits: ``Axes.set``) and a small ``title``."""
    ax.set(**props)
    ax.set_title(title, fontsize=9)


def plot_in_context(grid: dict, P, ident, orac) -> None:
    """Risk / sigma^2 d against L, one panel per (sigma, d): exact curves, Monte Carlo dots, baselines."""
    S = ac.symbols()
    n_rows, n_cols = len(P.ic_sigma), len(P.ic_d)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(3.6 * n_cols, 3.0 * n_rows), sharex=True, squeeze=False)
    Ls = np.unique(np.round(np.logspace(np.log10(4), np.log10(max(P.ic_L) * 2), 60)))
    for i, sigma in enumerate(P.ic_sigma):
        for j, d in enumerate(P.ic_d):
            ax, ref = axes[i, j], sigma**2 * d
            mc = {k: np.array([grid[d, sigma, L][0][k] for L in P.ic_L]) / ref for k in ("ident", "oracle", "pca")}
            for key, cf, col, lab in (("ident", ident, "C0", "identity QKV"), ("oracle", orac, "C1", "oracle heads")):
                f = sp.lambdify(S.L, cf.risk_L_opt.subs({S.d: d, S.sigma: sigma}) / ref)
                ax.plot(Ls, [f(float(L)) for L in Ls], color=col, label=f"{lab} (exact)")
                ax.axhline(ac.numeric(cf.ratio_inf, d=d, sigma=sigma), color=col, ls=":", lw=1)
                ax.errorbar(P.ic_L, mc[key][:, 0], yerr=2 * mc[key][:, 1], fmt="o", color=col, ms=4)
            ax.plot(P.ic_L, mc["pca"][:, 0], "s--", color="C2", ms=4, label="PCA (MC)")
            ax.axhline(ac.nearest_centroid_risk(d, sigma) / ref, color="C3", ls="--", lw=1, label="nearest centroid")
            ax.axhline(1.0, color="k", lw=1, label="$T^*$")
            _style(ax, f"d={d}, σ={sigma}", xscale="log")
            if j == 0:
                ax.set_ylabel("risk / $\\sigma^2 d$")
            if i == n_rows - 1:
                ax.set_xlabel("prompt length L")
    title = "In-context risks relative to the optimal quantizer (dots: Monte Carlo ± 2 s.e.; dotted: L = ∞)"
    _show(fig, axes[0, 0], title)


def plot_plugin_excess(excess: dict, bound: float) -> None:
    """|relative excess risk| of the plug-in scale against L, one line per (d, sigma); ``excess[d, sigma, L] =
    (e, se, worst)`` from :func:`.summaries.plugin_excess`; a 1/L guide and the stated ``bound``."""
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    cells = sorted({(d, s) for d, s, _ in excess})
    Ls = sorted({L for _, _, L in excess})
    for i, (d, s) in enumerate(cells):
        e = [excess[d, s, L] for L in Ls]
        ax.errorbar(
            Ls, [-v[0] for v in e], yerr=[2 * v[1] for v in e], fmt="o-", ms=4, color=f"C{i}", label=f"d={d}, σ={s}"
        )
    top = max(-v[0] for v in excess.values())
    ax.plot(Ls, [top * Ls[0] / L for L in Ls], "k:", lw=1, label="∝ 1/L")
    ax.hlines(bound, Ls[-1] / 3, Ls[-1] * 1.3, color="k", ls="--", lw=1, label=f"bound at L={Ls[-1]}")
    title = "Plug-in scale against the best fixed scale (Monte Carlo ± 2 s.e., paired)"
    ylabel = "$(R_L(c^*_L) - R(\\hat c))\\,/\\,R_L(c^*_L)$"
    _style(ax, title, xscale="log", yscale="log", xlabel="prompt length L", ylabel=ylabel)
    _show(fig, ax, ncol=2)


def plot_population_pgd(pop: dict, rate: dict, P) -> None:
    """Median distance to the centroids along exact PGD, with the predicted linear rate (dotted)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), sharey=True)
    for ax, sigma in zip(axes, (0.3, 1.0)):
        for form, col in zip(ac.FORMS, ("C0", "C1")):
            for init, ls in (("manifold", "-"), ("sphere", "--")):
                res = pop[sigma, form, init]
                dist = res.distance.median(0).values.clamp_min(1e-17)
                ax.plot(res.steps, dist, ls, color=col, label=f"{form}, init on {init}")
            t = np.arange(0, P.pgd_steps)
            ax.plot(t, 1.0 * rate[form, sigma] ** t, ":", color=col, lw=1)
        title = f"σ = {sigma}: exact population PGD (dotted: predicted rate)"
        _style(ax, title, yscale="log", ylim=(1e-17, 10), xlabel="iteration")
    axes[0].set_ylabel("distance to centroids")
    _show(fig, axes[0])


def plot_sgd(sgd: dict, settings, P) -> None:
    """Median and quartiles over runs of the distance along stochastic PGD, per (sigma, form)."""
    fig, axes = plt.subplots(2, 2, figsize=(10, 6), sharex=True)
    for i, sigma in enumerate((0.3, 1.0)):
        for j, form in enumerate(ac.FORMS):
            ax = axes[i, j]
            for (init, pen), col in zip(settings, ("C0", "C1", "C2")):
                res = sgd[sigma, form, init, pen]
                lo, med, hi = (res.distance.quantile(p, dim=0) for p in (0.25, 0.5, 0.75))
                ax.plot(res.steps, med, color=col, label="init on " + _setting(init, pen))
                ax.fill_between(res.steps, lo, hi, color=col, alpha=0.2)
            ax.axhline(SEED_PLATEAU[sigma], color="k", ls=":", label="seed summary's value")
            _style(ax, f"{form}, σ = {sigma}", yscale="log")
            if i == 1:
                ax.set_xlabel("iteration")
            if j == 0:
                ax.set_ylabel("distance to centroids")
    _show(fig, axes[0, 0], "Stochastic PGD on prompts (median and quartiles over runs)")


def plot_noise_floor(floor: dict, P) -> None:
    """The plateau (median distance over the last third) against the step size, log-log."""
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    for (form, sigma), col in zip([(f, s) for f in ac.FORMS for s in (0.3, 1.0)], ("C0", "C1", "C2", "C3")):
        ax.plot(P.lr_scan, [floor[form, sigma, lr] for lr in P.lr_scan], "o-", color=col, label=f"{form}, σ={sigma}")
    for v in SEED_PLATEAU.values():
        ax.axhline(v, color="k", ls=":", lw=1)
    title = f"The plateau is a noise floor (batch {P.sgd_batch}; dotted: seed's values)"
    _style(ax, title, xscale="log", yscale="log", xlabel="step size η", ylabel="plateau (median distance, last third)")
    _show(fig, ax)


def plot_rotation(curves: dict, phis: torch.Tensor, P, sigma: float) -> None:
    """R(phi) - R(0) along in-plane rotations of the heads, scaled to max 1 (R1, flat, unscaled)."""
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for (form, c_rel), col in zip(curves, ("C0", "C1", "C3")):
        mean, se = np.array(curves[form, c_rel]).T
        top = abs(mean).max()
        scale = top if top > 1e-12 else 1.0
        ax.plot(phis, mean / scale, color=col, label=f"{form}, c = {c_rel}/a (max |ΔR| = {top:.1e})")
        ax.fill_between(phis, (mean - 2 * se) / scale, (mean + 2 * se) / scale, color=col, alpha=0.2)
    ax.set_xticks([0, math.pi / 8, math.pi / 4, 3 * math.pi / 8, math.pi / 2], ["0", "π/8", "π/4", "3π/8", "π/2"])
    title = f"Finite-L risk along in-plane rotations (L={P.L_train}, d={P.d_train}, σ={sigma})"
    xlabel = "rotation φ of the heads within the centroid plane"
    _style(ax, title, xlabel=xlabel, ylabel="R(φ) - R(0), scaled to max 1 (R1: unscaled)")
    _show(fig, ax)


def plot_penalty_scan(scan: dict, P) -> None:
    """The fraction of runs within 0.1 of the centroids along training, one curve per penalty weight."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for (pen, r), col in zip(scan.items(), ("C0", "C1", "C2", "C3", "C4", "C5", "C6")):
        ax.plot(r.steps, (r.distance < 0.1).double().mean(0), color=col, label=f"γ = {pen}")
    ax.axvline(P.reg_check_step, color="k", ls=":", lw=1)
    title = f"R2 from the sphere, σ = 0.3, {P.reg_runs} runs per γ"
    _style(ax, title, xlabel="iteration", ylabel="fraction of runs within 0.1")
    _show(fig, ax)


def plot_clouds(outs: dict, cloud, mu3: torch.Tensor) -> dict:
    """Each map's outputs on the plane ((mu_1 - mu_2)/sqrt 2, e_3); returns each one's spread along e_3."""
    u = (mu3[0] - mu3[1]) / math.sqrt(2)
    e3 = torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64)
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), sharex=True, sharey=True)
    spread = {}
    for ax, (name, Y) in zip(axes, outs.items()):
        for z, col in ((0, "C0"), (1, "C1")):
            sel = cloud.Z[0, :400] == z  # every token attends to all L; 400 are drawn
            ax.scatter(Y[:400][sel] @ u, Y[:400][sel] @ e3, s=6, color=col, alpha=0.6)
        ax.scatter(mu3 @ u, mu3 @ e3, marker="x", color="k", s=60)
        spread[name] = float((Y @ e3).std())
        _style(ax, f"{name}\nspread off the plane {spread[name]:.3f}", xlabel="along (μ1 − μ2)/√2")
    axes[0].set_ylabel("along the normal e3")
    _show(fig)
    return spread


def plot_three_heads(three: dict) -> None:
    """The median distance to the three centroids along stochastic PGD, per (form, init, penalty)."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for (key, r), col in zip(three.items(), ("C0", "C1", "C2", "C3")):
        ax.plot(r.steps, r.distance.median(0).values, color=col, label=f"{key[0]}, " + _setting(key[1], key[2]))
    title = "Three heads, three centroids (median over runs)"
    _style(ax, title, yscale="log", xlabel="iteration", ylabel="distance to the 3 centroids")
    _show(fig, ax)


def plot_comparison(res_cmp: dict, show, P, L_hi) -> None:
    """Both risks against sigma at L = ``L_hi`` for the maps in ``show``."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    titles = ("reconstruction risk (the paper's)", "denoising risk E|f(x) − μ_Z|²")
    for idx, (ax, title) in enumerate(zip(axes, titles)):
        for n, col, mk in zip(show, ("C0", "C2", "C3", "C4", "C5", "C7"), "os^Dvx"):
            risks = [res_cmp[s, L_hi, n][idx] for s in P.cmp_sigma]
            ax.plot(P.cmp_sigma, risks, "-", marker=mk, ms=5, color=col, label=n)
        _style(ax, f"{title}, L = {L_hi}", xlabel="σ", ylabel="÷ σ²d", yscale="log")
    _show(fig, axes[1], loc="center left", bbox_to_anchor=(1.02, 0.5))
