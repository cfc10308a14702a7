"""The figures of the chapter "The Lipschitz and norm-bound lemmas" (book/09_lemmas.ipynb)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from lloydlib import theory as T

from .searches import attention_sweep

__all__ = ["plot_softmax", "plot_slack", "plot_phi", "plot_lipschitz", "plot_training"]


def _int_ticks(ax, values) -> None:
    """Label a log-scaled x axis with exactly these integers."""
    ax.set_xticks(list(values))
    ax.set_xticklabels([str(v) for v in values])
    ax.xaxis.set_minor_locator(plt.NullLocator())


def plot_softmax(sm, ms, deltas) -> None:
    """Lemma I.3: stated and sharp constants against the largest observed ratio, one panel per delta."""
    fig, axes = plt.subplots(1, len(deltas), figsize=(4.2 * len(deltas), 3.4), sharey=True)
    axes = np.atleast_1d(axes)
    ms = np.array(ms)
    for ax, dl in zip(axes, deltas):
        ax.loglog(ms, [T.softmax_bound(dl, m) for m in ms], "k-", label=r"stated $e^\delta/m$")
        ax.loglog(ms, [T.softmax_l1_sharp(dl, m) for m in ms], "C1--", label="sharp constant")
        ax.loglog(ms, [sm[(dl, m)]["stated"].ratio for m in ms], "C0o", label="largest observed ratio")
        ax.set_title(rf"$\delta = {dl:g}$")
        ax.set_xlabel("m (length of v)")
        _int_ticks(ax, ms.tolist())
    axes[0].set_ylabel(r"$\|\Delta\,\mathrm{softmax}\|_1 / \|\Delta v\|_1$")
    axes[0].legend(fontsize=8)
    fig.suptitle("Lemma I.3: the stated constant against the observed ratio and the sharp constant", y=1.02)
    plt.show()


def plot_slack(sweep, P, SW) -> None:
    """Slack of Lemmas I.5-I.8 over gamma (from ``sweep``), d_emb, m and m' (searched here, at gamma = 1)."""
    labels = {"gamma": r"$\gamma$", "d_emb": r"$d_{\mathsf{emb}}$", "m": "$m$", "m_p": "$m'$"}
    panels = zip(labels, (P.gammas, P.demb_s, P.m_s, P.mp_s))
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6), sharey=True)
    for ax, (vary, values) in zip(axes, panels):
        for c, lemma in enumerate(T.LEMMAS):
            runs = sweep[lemma] if vary == "gamma" else attention_sweep(lemma, vary, values, P.sweep_demb, SW, 30 + c)
            y = np.array([r.ratio / r.bound for r in runs])
            ax.loglog(values, np.where(y > 0, y, np.nan), "o-", color=f"C{c}", label=f"Lemma {lemma}")
            if vary == "gamma" and lemma in ("I.6", "I.7"):
                f = T.kappa3_sharpened if lemma == "I.6" else T.kappa4_sharpened
                sharp = [r.ratio / f(4, 1.0, 1.0, 1.0, 1.0, g_, P.sweep_demb) for g_, r in zip(values, runs)]
                ax.loglog(values, sharp, ":", color=f"C{c}")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xlabel(labels[vary])
        if vary != "gamma":
            _int_ticks(ax, values)
    axes[0].set_ylabel("largest observed ratio / constant")
    axes[0].legend(fontsize=8)
    fig.suptitle("Slack of Lemmas I.5-I.8 (dotted: against the sharpened κ3*, κ4 $e^{-\\delta}$); 1 = tight", y=1.03)
    plt.show()


def plot_phi(thm1, ce, d, k, n, gammas) -> None:
    """Theorem I.1 over gamma: phi as stated, in Eq. 170 form, phi_sum, the explicit pair and the ascent."""
    gs = np.logspace(-4, 1, 60)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    for ax, emb in zip(axes, ("OH", "BN")):
        d_E, D = T.dims(d, k, emb)
        ax.loglog(gs, [T.phi(n, k, d, d_E, D, 1.0, 1.0, g_) for g_ in gs], "k-", label=r"$\phi$ as stated")
        ax.loglog(gs, [T.phi_eq170(k, d_E, D, 1.0, 1.0, g_) for g_ in gs], "k:", label=r"$\phi$, Eq. 170 form")
        ax.loglog(gs, [T.phi_sum(n, k, d, d_E, D, 1.0, 1.0, g_) for g_ in gs], "C2--", label=r"$\phi_{\mathrm{sum}}$")
        ax.axhline(ce[emb], color="C3", label="explicit pair ($Q=K=0$)")
        obs = [(ga, thm1[(emb, 1.0, ga)][0].ratio) for ga in gammas]
        ax.loglog(*zip(*obs), "C0o", ms=7, label=r"gradient ascent ($\Gamma_1 = 1$)")
        ax.set_ylim(1, 1e6)
        ax.set_xlabel(r"$\gamma$ (with $\Gamma_1 = \Gamma_2 = 1$)")
        ax.set_title(f"{emb}: d={d}, k={k}, n={n}")
    axes[0].set_ylabel(r"$\|F(\Theta)-F(\Theta')\|_{2,1} / \|\Theta-\Theta'\|$")
    axes[0].legend(fontsize=8)
    fig.suptitle("Theorem I.1: the stated constant falls below real ratios when attention is weak", y=1.03)
    plt.show()


def plot_lipschitz(lip, meas, alpha_gap, bound_gap, ds) -> None:
    """Left: measured local constants (median, IQR) over d; right: BN/OH measured against alpha's gap."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    for emb, c in (("OH", "C0"), ("BN", "C1")):
        q = np.array([np.percentile(lip[(d, emb)], [25, 50, 75]) for d in ds])
        axes[0].fill_between(ds, q[:, 0], q[:, 2], color=c, alpha=0.25)
        axes[0].loglog(ds, q[:, 1], "o-", color=c, label=emb)
    axes[0].set_xlabel("d")
    axes[0].set_ylabel(r"$\sum_W \|\partial \tilde L / \partial W\|_*$")
    axes[0].set_title("measured local Lipschitz constant (median, IQR)")
    axes[0].legend()
    axes[1].semilogx(ds, np.log10(meas), "ko-", label="measured")
    axes[1].semilogx(ds, alpha_gap, "C2s--", label=r"$\alpha$ of Theorem 3.1")
    axes[1].set_xlabel("d")
    axes[1].set_ylabel(r"$\log_{10}$ (BN / OH)")
    axes[1].set_title(f"the BN/OH gap ($\\phi'$ predicts $10^{{{min(bound_gap):.0f}}}$ or more)")
    axes[1].legend()
    for ax in axes:
        _int_ticks(ax, ds)
    plt.show()


def plot_training(curves, seeds, auc, d, k) -> None:
    """Validation relative loss (Eq. 20) of the OH and BN runs, after the first evaluation."""
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for emb, c in (("OH", "C0"), ("BN", "C1")):
        for s in seeds:
            st, v = curves[(emb, s)]
            ax.plot(st[1:], v[1:], color=c, alpha=0.8, label=emb if s == seeds[0] else None)
    ax.set_xlabel("step")
    ax.set_ylabel("validation relative loss (Eq. 20)")
    ax.set_title(f"d={d}, k={k}: mean over the curve OH {auc['OH']:.3f}, BN {auc['BN']:.3f}")
    ax.legend()
    plt.show()
