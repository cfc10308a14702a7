"""Helpers of the chapter "Lloyd's algorithm inside a transformer" (``book/02_construction.ipynb``):
Theorem B.1 of the Leaner paper checked against Lloyd's algorithm, the error at a finite inverse temperature
gamma (Eq. 3), the tasks on which the theorem's assumptions fail, the float32 limit of the scalar code SC,
and the chapter's tables and figures. The constructions are :mod:`lloydlib.construction`; points ``X`` are
(batch, n, d), centers ``C`` (batch, k, d), tokens as rows.
"""

from __future__ import annotations

import math
import warnings

import matplotlib.pyplot as plt
import numpy as np
import torch

import lloydlib as L
from lloydlib.construction import param_count
from lloydlib.embeddings import code_margin

from .tables import Table

__all__ = [
    "lloyd_trajectory",
    "exactness",
    "code_head_errors",
    "exponential_fit",
    "assignment_head_errors",
    "one_d",
    "run_case",
    "largest_intact_k",
    "gamma_table",
    "cases_table",
    "norms_table",
    "plot_tokens",
    "plot_weights",
    "plot_center_paths",
    "plot_param_reduction",
    "plot_code_head_errors",
    "plot_assignment_errors",
    "plot_code_margins",
    "plot_soft_curves",
]


def lloyd_trajectory(X: torch.Tensor, C: torch.Tensor, steps: int, empty: str = "keep") -> torch.Tensor:
    """Lloyd's centers at steps 0..steps: ``X`` (batch, n, d), ``C`` (batch, k, d) -> (batch, steps + 1, k, d);
    ``empty`` is :func:`lloydlib.lloyd_step`'s rule for a cluster without points."""
    out = [C]
    for _ in range(steps):
        C = L.lloyd_step(X, C, empty=empty)
        out.append(C)
    return torch.stack(out, 1)


def exactness(embeddings, dks, tasks: int, n: int, steps: int, seed0: int, **kw):
    """Compare the looped Theorem B.1 layer (gamma = inf, float64) with Lloyd's algorithm at every step.

    For each shape ``(d, k)`` of ``dks`` (the s-th drawn with seed ``seed0 + s``) it draws ``tasks`` tasks of
    ``n`` points and runs :func:`lloydlib.exact_transformer` ``(d, k, embedding, **kw)`` for every embedding of
    ``embeddings``. Tasks with an empty cluster within ``steps`` steps or a tie are not counted. Returns
    ``(worst, checked, total)``: per embedding the largest absolute deviation of a center coordinate and the
    number of counted tasks, and the number of tasks drawn.
    """
    worst = {e: 0.0 for e in embeddings}
    checked = {e: 0 for e in embeddings}
    total = 0
    for s, (d, k) in enumerate(dks):
        X, C = L.sample_tasks(tasks, n, d, k, seed=seed0 + s, dtype=torch.float64)
        _, _, empty = L.lloyd(X, C, steps, return_empty=True)
        total += X.shape[0]
        no_empty = ~empty.any(-1).any(-1)  # outside the theorem otherwise
        X, C = X[no_empty], C[no_empty]
        ref = lloyd_trajectory(X, C, steps)
        for emb in embeddings:
            T = L.exact_transformer(d, k, emb, **kw)
            _, traj, rep = T.run(X, C, steps, return_trajectory=True, return_report=True, warn=False)
            ok = rep["ties"].sum(1) == 0
            err = (traj - ref).abs().amax((1, 2, 3))
            if bool(ok.any()):
                worst[emb] = max(worst[emb], float(err[ok].max()))
            checked[emb] += int(ok.sum())
    return worst, checked, total


def code_head_errors(X: torch.Tensor, C: torch.Tensor, ref: torch.Tensor, embedding: str, ts) -> np.ndarray:
    """Error of one layer whose center-update heads 3-4 run at gamma = t sqrt(d_emb) / mu for each t of ``ts``
    (mu the code margin: 2 OH, 1 BN and SC), heads 1-2 exact. ``ref`` (batch, k, d) is Lloyd's step from
    ``C``. Returns the largest absolute center error over all tasks for each t, shape (len(ts),)."""
    d, k = X.shape[2], C.shape[1]
    D, mu = L.embedding_dim(d, k, embedding), code_margin(k, embedding)
    err = []
    for t in ts:
        g = t * math.sqrt(D) / mu
        T = L.exact_transformer(d, k, embedding, gamma=(math.inf, math.inf, g, g))
        err.append(float((T(X, C) - ref).abs().max()))
    return np.array(err)


def exponential_fit(ts, err, *, lo: float = 1e-13, hi: float = 1e-3, target: float = 1e-8):
    """Slope of log(err) against t over the points with ``lo < err < hi`` (above float64 rounding, below the
    saturated start; at least three, else ValueError), and t_star, the t at which err reaches ``target``
    (interpolated in log(err)). ``ts`` and ``err`` have shape (m,), ``err`` decreasing in t."""
    ts, err = np.asarray(ts, dtype=float), np.asarray(err, dtype=float)
    tail = (err > lo) & (err < hi)
    if tail.sum() < 3:
        raise ValueError(f"too few points in the exponential regime ({lo:g} < err < {hi:g}): {err}")
    slope = float(np.polyfit(ts[tail], np.log(err[tail]), 1)[0])
    t_star = float(np.interp(np.log(target), np.log(err[::-1]), ts[::-1]))
    return slope, t_star


def assignment_head_errors(X, C, ref, embedding: str, gammas, gap_min):
    """Error of one layer with all four heads at each gamma of ``gammas``, per task; ``gap_min`` (batch,) is
    each task's smallest assignment gap. Returns two arrays of shape (len(gammas) * batch,): gamma gap_min /
    sqrt(d_emb) and the largest absolute center error of the task."""
    d, k = X.shape[2], C.shape[1]
    D = L.embedding_dim(d, k, embedding)
    xs, ys = [], []
    for g in gammas:
        xs.append(g * gap_min / math.sqrt(D))
        ys.append((L.exact_transformer(d, k, embedding, gamma=g)(X, C) - ref).abs().amax((1, 2)))
    return torch.cat(xs).numpy(), torch.cat(ys).numpy()


def one_d(values) -> torch.Tensor:
    """A one-dimensional task in the library's layout: a list of m numbers -> (1, m, 1), float64."""
    return torch.tensor(values, dtype=torch.float64).reshape(1, -1, 1)


def run_case(X: torch.Tensor, C: torch.Tensor):
    """One BN layer of Theorem B.1 and one Lloyd step on a single task ``X`` (1, n, d), ``C`` (1, k, d).

    Returns ``(transformer, lloyd, report, caught)``: the first coordinate of the k centers after each
    (lists of floats), :meth:`lloydlib.ExactTransformer.run`'s assumption report, and the warnings it
    issued as ``"Category: message"`` strings.
    """
    T = L.exact_transformer(X.shape[2], C.shape[1], "BN")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        C_trf, rep = T.run(X, C, 1, return_report=True)
    C_ll = L.lloyd_step(X, C)
    msgs = [f"{type(w.message).__name__}: {w.message}" for w in caught]
    return C_trf[0, :, 0].tolist(), C_ll[0, :, 0].tolist(), rep, msgs


def largest_intact_k(ks) -> int:
    """The largest k at which SC's code margin, computed in float32 as ||u||^2 + ||v||^2 - 2 u.v, is still
    exactly 1, by bisection from k = 2 (intact) and the largest k of ``ks`` at which it is broken; assumes
    the margin, once broken, stays broken as k grows."""

    def intact(k):
        return code_margin(k, "SC", dtype=torch.float32, formula="expanded") == 1.0

    lo_k, hi_k = 2, max(k for k in ks if not intact(k))  # intact at lo_k, broken at hi_k
    while hi_k - lo_k > 1:
        mid = (lo_k + hi_k) // 2
        lo_k, hi_k = (mid, hi_k) if intact(mid) else (lo_k, mid)
    return lo_k


# --- tables ------------------------------------------------------------------------------------------


def gamma_table(fg: dict, ratio_rows) -> Table:
    """The gamma each code needs in heads 3-4 for an error of 1e-8, and BN's over OH's, one row per entry
    ``(d, k, measured, predicted)`` of ``ratio_rows`` (prediction :math:`2\\sqrt{d+m}/\\sqrt{d+k}`);
    ``fg[d, k, emb]["gamma_star"]`` for each of OH, BN and SC."""
    rows = []
    for d, k, measured, predicted in ratio_rows:
        g = [f"{fg[d, k, emb]['gamma_star']:.1f}" for emb in ("OH", "BN", "SC")]
        rows.append((d, k, *g, f"{measured:.2f}", f"{predicted:.2f}"))
    header = ("d", "k", r"\(\gamma\) OH", r"\(\gamma\) BN", r"\(\gamma\) SC", "BN / OH")
    return Table((*header, r"predicted \(2\sqrt{d+m}/\sqrt{d+k}\)"), rows)


def cases_table(outcome: dict) -> Table:
    """One row per task ``outcome[name]`` (what :func:`run_case` returns): the first coordinate of every
    center after one layer and after one Lloyd step, the counts of the assumption report and the
    categories of the warnings the layer issued."""
    rows = []
    for name, (c_trf, c_ll, rep, caught) in outcome.items():
        counts = [int(rep[key].sum()) for key in ("ties", "duplicates", "empty")]
        centers = [", ".join(f"{c:.4g}" for c in cs) for cs in (c_trf, c_ll)]
        warned = sorted({msg.split(":", 1)[0] for msg in caught})
        rows.append((name, *centers, *counts, ", ".join(warned) or "none"))
    return Table(("task", "transformer", "Lloyd", "ties", "duplicates", "empty", "warning"), rows)


def norms_table(rows, d: int) -> Table:
    """Token sizes of each code at dimension ``d``: rows ``(k, code, d_emb, d_E, measured, exponent)``,
    ``d_E`` the bound on a center token's squared norm (Lemma I.1), ``measured`` the largest squared norm
    of an embedded center token and ``exponent`` = d_E / sqrt(d_emb), Theorem 3.1's exponent per unit gamma.
    """
    header = (f"k (d = {d})", "code", r"\(d_{emb}\)", r"\(d_E\)", r"largest \(\|token\|^2\)", r"\(d_E/\sqrt{d_{emb}}\)")
    body = [(k, emb, int(De), f"{dE:.0f}", f"{meas:.0f}", f"{ex:.3g}") for k, emb, De, dE, meas, ex in rows]
    return Table(header, body)


# --- figures -----------------------------------------------------------------------------------------


def plot_tokens(X: torch.Tensor, C: torch.Tensor):
    """Heatmaps of one task's tokens (X (1, n, d), C (1, k, d)) before and after heads 1-2, OH and BN."""
    d, k = X.shape[2], C.shape[1]
    titles = (r"$\bar X^{(0)}$ (points)", r"$\bar X^{(1)}$ (points after heads 1-2)", r"$\bar C^{(0)}$ (centers)")
    fig, axes = plt.subplots(2, 3, figsize=(14, 5.5), gridspec_kw={"width_ratios": [8, 8, 6]})
    for row, emb in enumerate(("OH", "BN")):
        T = L.exact_transformer(d, k, emb)
        Xbar, Cbar = T.embed(X, C)
        Xbar1, _ = T.layer(Xbar, Cbar)
        for ax, Z, title in zip(axes[row], (Xbar, Xbar1, Cbar), titles):
            M = Z[0].T.numpy()  # the paper's layout: one column per token
            ax.imshow(M, cmap="viridis", vmin=0, vmax=max(1.0, float(M.max())), aspect="auto")
            ax.axhline(d - 0.5, color="w", lw=2)  # data rows above, code rows below
            rows = [f"x{r + 1}" for r in range(d)] + [f"y{r + 1}" for r in range(M.shape[0] - d)]
            ax.set(yticks=range(M.shape[0]), yticklabels=rows, xticks=range(M.shape[1]))
            ax.set_title(f"{emb}: {title}, $d_{{emb}}={T.d_emb}$", fontsize=10)
    fig.tight_layout()
    return fig


def plot_weights(Q, K, V, title: str):
    """The twelve weight matrices of a layer, each (d_emb, d_emb), in a 3 x 4 grid (red +, blue -)."""
    fig, axes = plt.subplots(3, 4, figsize=(10, 7.2))
    for mu in range(4):
        for r, (name, W) in enumerate((("Q", Q), ("K", K), ("V", V))):
            ax = axes[r, mu]
            lim = float(W[mu].abs().max()) or 1.0
            ax.imshow(W[mu].numpy(), cmap="RdBu_r", vmin=-lim, vmax=lim)
            ax.set_title(f"${name}_{mu + 1}$", fontsize=10)
            ax.set(xticks=[], yticks=[])
    fig.suptitle(title, y=1.0)
    fig.tight_layout()
    return fig


def plot_center_paths(X: torch.Tensor, ref: torch.Tensor, trf: torch.Tensor, title: str):
    """Center paths of one 2-d task: ``X`` (n, 2), Lloyd's ``ref`` and the transformer's ``trf`` (steps + 1, k, 2)."""
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.scatter(X[:, 0], X[:, 1], s=4, c="0.7")
    for j in range(ref.shape[1]):
        ax.plot(ref[:, j, 0], ref[:, j, 1], "-o", c=plt.get_cmap("tab10")(j), ms=7, mfc="none", lw=2)
        ax.plot(trf[:, j, 0], trf[:, j, 1], "x", c="k", ms=5)
    ax.set_title(title, fontsize=10)
    ax.set_aspect("equal")
    return fig


def plot_param_reduction(ds=(4, 32, 128, 1024)):
    """Parameter reduction of BN over OH, 1 - param_count(BN) / param_count(OH), against k for each d."""

    def reduction(d, k):
        return 100 * (1 - param_count(d, k, "BN") / param_count(d, k, "OH"))

    fig, ax = plt.subplots(figsize=(7, 3.6))
    ks = np.unique(np.logspace(0.4, 4, 60).astype(int))
    for dd in ds:
        ax.plot(ks, [reduction(dd, int(k)) for k in ks], label=f"d = {dd}")
        ax.plot([dd], [reduction(dd, dd)], "ko", ms=4)
    ax.axhline(75, color="k", ls=":", lw=1)
    ax.set(xscale="log", xlabel="k", ylabel="parameter reduction of BN over OH (%)")
    ax.set_title("Dots: k = d; dotted: the 75% limit", fontsize=10)
    ax.legend()
    return fig


def plot_code_head_errors(fg: dict, ts, dks):
    """One panel per (d, k): error against t = gamma mu / sqrt(d_emb) for each code; ``fg[d, k, emb]``
    holds ``err`` (len(ts),), ``slope``, ``D`` (d_emb) and ``mu`` (code margin)."""
    fig, axes = plt.subplots(1, len(dks), figsize=(5 * len(dks), 3.6), sharey=True, squeeze=False)
    for ax, (d, k) in zip(axes[0], dks):
        for emb in ("OH", "BN", "SC"):
            r = fg[d, k, emb]
            label = f"{emb} ($d_{{emb}}$={r['D']}, $\\mu$={r['mu']:g}): slope {r['slope']:.3f}"
            ax.semilogy(ts, r["err"], "o-", label=label)
        ax.axhline(1e-8, color="k", ls=":", lw=1)
        ax.set_xlabel(r"$t = \gamma\mu/\sqrt{d_{emb}}$")
        ax.set_title(f"heads 3-4 finite, d={d}, k={k}", fontsize=10)
        ax.legend(fontsize=8)
    axes[0, 0].set_ylabel("max center error after one layer")
    return fig


def plot_assignment_errors(points: dict, title: str):
    """Per-task error against gamma gap_min / sqrt(d_emb); ``points[emb] = (xs, ys)`` arrays."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for (emb, (xs, ys)), marker in zip(points.items(), "os^"):
        ax.loglog(xs, np.maximum(ys, 1e-17), marker, mfc="none", label=emb, alpha=0.7)
    ax.axvline(1, color="k", ls=":", lw=1)
    ax.set(xlabel=r"$\gamma\,\Delta_{\min}/\sqrt{d_{emb}}$ (per task)", ylabel="max center error after one layer")
    ax.set_title(title, fontsize=10)
    ax.legend()
    return fig


def plot_code_margins(margins: dict, pred: dict):
    """Computed code margin against k, one panel per float format: ``margins[fmt, emb]`` a list of
    (k, margin) pairs, ``pred[fmt]`` the bound k = 1 + 2^((p-1)/2)."""
    fig, axes = plt.subplots(1, len(pred), figsize=(15, 3.4), sharey=True, squeeze=False)
    for ax, name in zip(axes[0], pred):
        for emb in ("OH", "BN", "SC"):
            ks, ms = zip(*margins[name, emb])
            ax.semilogx(ks, [m if math.isfinite(m) else np.nan for m in ms], "o-", label=emb)
        ax.axvline(pred[name], color="k", ls=":", lw=1)
        ax.set(ylim=(-1.5, 2.5), xlabel="k")
        ax.set_title(f"{name}: dotted line $k = 1 + 2^{{(p-1)/2}}$", fontsize=10)
    axes[0, 0].set_ylabel("computed code margin")
    axes[0, 0].legend()
    return fig


def plot_soft_curves(betas, curves: dict):
    """Largest center deviation from Lloyd after 10 layers against beta; ``curves[name]`` has len(betas)."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for name, lst in curves.items():
        ax.loglog(betas, np.maximum(lst, 1e-17), "o-", label=name)
    ax.set(xlabel=r"$\beta = \gamma/\sqrt{d_{emb}}$", ylabel="max center deviation from Lloyd, 10 steps")
    ax.legend(fontsize=8)
    return fig
