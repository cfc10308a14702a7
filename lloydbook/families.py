"""Chapter 07, *Distribution families and task dissimilarity* (``book/07_families.ipynb``): its tasks, evaluations,
statistics, tables and figures (the Leaner paper's Figs. 4, 8, 9, 16, 18 and 19).

Every draw comes from a seed the chapter names (``ch.seed``), never near the 63-bit training seeds
(:func:`lloydlib.training.derive_seed`); :data:`PILOT_SEED` and :data:`EVAL_SEED` only record the pilot's and the
earlier builds' test tasks. A *cell* of the transfer grid is ``(train family, test family)``; its values are arrays
over the training seeds, ``(seeds,)``, +inf marking a run that diverged in training or whose centers were not finite
on some test task.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.colors import LogNorm
from scipy.stats import spearmanr

from lloydlib import losses, sample_tasks, training
from lloydlib.checks import check_int
from lloydlib.generalisation.dissimilarity import block_summary, emd_matrix, task_to_blocks
from lloydlib.generalisation.multistep import lloyd_objectives, model_objectives

from .claims.evidence import q3
from .tables import Table

__all__ = [
    "EVAL_SEED",
    "PILOT_SEED",
    "family_tasks",
    "squeeze_ratio",
    "emd_draws",
    "isolated_fraction",
    "block_row",
    "test_tasks",
    "lloyd_baselines",
    "transfer",
    "cell_medians",
    "bound_terms",
    "transfer_correlation",
    "band_outcome",
    "squeeze_numbers",
    "same_family_numbers",
    "transfer_numbers",
    "squeeze_table",
    "same_family_table",
    "same_family_figure",
    "grid_figure",
    "emd_figure",
    "squeeze_figure",
    "correlation_figure",
]

EVAL_SEED, PILOT_SEED = 10_000, 90_000  # records: the earlier builds' test tasks, the pilot's (no draw uses them)


# ----------------------------------------------------------------------------------------- tasks
def test_tasks(count: int, n: int, d: int, k: int, families, seed: int, dtype=torch.float32) -> dict:
    """``{family: (X, C0)}``, ``count`` test tasks per family of ``dtype`` (family ``i`` from ``seed + i``)."""
    return {f: sample_tasks(count, n, d, k, family=f, seed=seed + i, dtype=dtype) for i, f in enumerate(families)}


def family_tasks(per_family: int, n: int, d: int, k: int, families, seed: int):
    """``per_family`` float64 tasks of each family (:func:`test_tasks`) in the order of ``families`` (the block order
    of Fig. 9): ``(X, C0, labels)`` with X (F * per_family, n, d), C0 (F * per_family, k, d) and one family name per
    task."""
    per_family = check_int("per_family", per_family, 1)
    tasks = test_tasks(per_family, n, d, k, families, check_int("seed", seed, 0), dtype=torch.float64)
    X, C0 = (torch.cat(parts) for parts in zip(*tasks.values()))
    return X, C0, [f for f in families for _ in range(per_family)]


def squeeze_ratio(per_family: int, n: int, d: int, k: int, seed: int) -> float:
    """How much min-max scaling squeezes cauchy tasks: the median bulk width of ``per_family`` cauchy tasks
    over that of ``per_family`` normal tasks (:func:`family_tasks` from ``seed``, normal first). A task's bulk
    width is the inter-quartile range of each coordinate over its points, averaged over the coordinates."""
    X, _, _ = family_tasks(per_family, n, d, k, ["normal", "cauchy"], seed=seed)
    width = (X.quantile(0.75, dim=1) - X.quantile(0.25, dim=1)).mean(-1)  # (tasks,)
    return float(width[per_family:].median() / width[:per_family].median())


def emd_draws(draws: int, per_family: int, n: int, d: int, k: int, families, seed: int) -> list:
    """``draws`` independent EMD matrices (Fig. 9): ``[(M, labels)]`` with ``M`` (F * per_family,) * 2,
    draw ``r`` from the seeds ``seed + 100 * r + i``."""
    tasks = (family_tasks(per_family, n, d, k, families, seed + 100 * r) for r in range(check_int("draws", draws, 1)))
    return [(emd_matrix(X, C0), labels) for X, C0, labels in tasks]


def isolated_fraction(M, labels, family: str = "cauchy") -> float:
    """The fraction of ``family``'s tasks whose median EMD to the other tasks of ``family`` is below their
    median EMD to the tasks of every other family (Fig. 9: "similar only to other cauchy tasks")."""
    groups, T = task_to_blocks(M, labels, "median")
    own = groups.index(family)
    rows = T[np.asarray(labels) == family]
    return float(np.mean((rows[:, [own]] < np.delete(rows, own, axis=1)).all(axis=1)))


def block_row(M, labels, family: str = "cauchy") -> dict:
    """Mean EMD between ``family``'s tasks and each family's (itself included, the diagonal left out)."""
    groups, S = block_summary(M, labels, "mean")
    return dict(zip(groups, S[groups.index(family)]))


# ----------------------------------------------------------------------------------------- transfer
def _mean_if_finite(values: torch.Tensor) -> float:
    return float(values.mean()) if bool(torch.isfinite(values).all()) else math.inf


def _run_transfer(run, X, C0, lloyd: torch.Tensor, steps: int) -> tuple[float, float, float]:
    """One run's ``(one, many, grow)`` on the tasks ``(X, C0)`` (see :func:`transfer`)."""
    if run.status == "diverged":
        return math.inf, math.inf, math.inf
    obj = model_objectives(run.model, X, C0, steps)
    return (
        _mean_if_finite(obj[:, 1] / lloyd[:, 1]),
        _mean_if_finite(obj[:, steps] / lloyd[:, steps]),
        _mean_if_finite(torch.log(obj[:, steps] / obj[:, 0])),
    )


def lloyd_baselines(tasks: dict, steps: int) -> dict:
    """Lloyd's objectives from each test family's initial centers, ``{test family: (tasks, steps + 1)}``
    (``multistep.lloyd_objectives``), for ``tasks`` ``{test family: (X, C0)}``: :func:`transfer`'s baseline, to
    compute once for the tasks that several calls of it share."""
    steps = check_int("steps", steps, 1)
    return {f: lloyd_objectives(X, C0, steps) for f, (X, C0) in tasks.items()}


def transfer(runs_by_family: dict, tasks: dict, steps: int, *, lloyd: dict | None = None) -> tuple[dict, dict, dict]:
    """Evaluate every training family's runs on every test family's tasks (Figs. 8 and 18).

    ``runs_by_family``: ``{train family: [Run per seed]}``; ``tasks``: ``{test family: (X, C0)}`` (from
    :func:`test_tasks`); ``steps`` T re-embedding steps (Appendix C, ``multistep.model_objectives``); ``lloyd``:
    :func:`lloyd_baselines` of those tasks and steps, where already computed (default: computed here).
    Returns ``(one, many, grow)``, each ``{(train, test): array (seeds,)}``, per run a mean over the test tasks:
    ``one``, the k-means loss after one step over that of one Lloyd step (Eq. 20); ``many``, after T steps over
    T Lloyd steps from the same centers; ``grow``, log(L(C_T) / L(C_0)), the model's own objective after T steps
    against the initial one (above 0: it made the clustering worse). +inf for a diverged run or one whose
    centers stop being finite.
    """
    steps = check_int("steps", steps, 1)
    lloyd = lloyd_baselines(tasks, steps) if lloyd is None else lloyd
    wrong = [f for f, (X, _) in tasks.items() if f not in lloyd or lloyd[f].shape != (X.shape[0], steps + 1)]
    if wrong:
        raise ValueError(f"lloyd must hold each test family's (tasks, steps + 1) = (., {steps + 1}) baseline: {wrong}")
    one, many, grow = {}, {}, {}
    for a, runs in runs_by_family.items():
        for b, (X, C0) in tasks.items():
            o1, oT, g = zip(*(_run_transfer(run, X, C0, lloyd[b], steps) for run in runs))
            one[(a, b)], many[(a, b)], grow[(a, b)] = np.array(o1), np.array(oT), np.array(g)
    return one, many, grow


@torch.no_grad()
def bound_terms(runs, X, C0) -> dict:
    """Eqs. 7-9's terms for one family's ``runs``, arrays (seeds,): ``slack``, final smoothed training loss minus final
    k-means ``loss`` on the validation tasks (histories); ``gap``, C: the largest smoothing gap over held-out (X, C0)."""
    out = [(r.config, r.model(X, C0)) for r in runs]
    gap = [losses.smoothing_gap(X, c, f.tau, f.loss).max().item() if c.isfinite().all() else np.inf for f, c in out]
    loss, train = (training.final_values(runs, h) for h in ("val_loss", "train_loss"))
    return {"slack": train - loss, "loss": loss, "gap": np.array(gap)}


def cell_medians(values: dict, trains, tests) -> np.ndarray:
    """The grid of medians over seeds: (len(trains), len(tests)), +inf where the median run diverged."""
    return np.array([[float(np.median(values[(a, b)])) for b in tests] for a in trains])


def transfer_correlation(values: dict, emd_rows, families, *, resamples: int, seed: int) -> dict:
    """Does task dissimilarity predict transfer? Spearman's rank correlation (``scipy.stats.spearmanr``) over the
    ordered pairs (a, b) of different ``families`` whose cells (a, b) and (b, b) have finite medians, between the mean
    EMD of the two families' tasks and the degradation of the transfer, log(median(a -> b) / median(b -> b)) over
    seeds (0: a model trained on a does on b as well as one trained on b), with a 90% percentile bootstrap interval.

    ``values``: ``{(train, test): (seeds,)}`` from :func:`transfer`; ``emd_rows``: a list over EMD draws of block
    matrices (F, F) in the order ``families`` (``block_summary(M, labels)[1]``). Each resample draws the training
    seeds (one draw for every family, with replacement) and the EMD draws (from ``seed``), and recomputes both
    sides. Returns ``{"rho", "low", "high", "emd", "deg", "pairs"}`` (``pairs``: how many).
    """
    med = cell_medians(values, families, families)
    pairs = [
        (a, b)
        for i, a in enumerate(families)
        for j, b in enumerate(families)
        if i != j and np.isfinite(med[i, j]) and np.isfinite(med[j, j])
    ]
    pos = {f: i for i, f in enumerate(families)}
    blocks = np.asarray(emd_rows, dtype=np.float64)
    seeds = len(next(iter(values.values())))

    def rho(seed_idx, draw_idx):
        S = blocks[draw_idx].mean(axis=0)
        emd = [S[pos[a], pos[b]] for a, b in pairs]
        median = {key: np.median(v[seed_idx]) for key, v in values.items()}
        deg = [float(np.log(median[(a, b)]) - np.log(median[(b, b)])) for a, b in pairs]
        return float(spearmanr(emd, deg).statistic), emd, deg

    est, emd, deg = rho(np.arange(seeds), np.arange(len(blocks)))
    rng = np.random.default_rng(check_int("seed", seed, 0))
    boot = [rho(rng.integers(0, seeds, seeds), rng.integers(0, len(blocks), len(blocks)))[0] for _ in range(resamples)]
    boot = np.nan_to_num(np.asarray(boot), nan=0.0)  # a resample with tied ranks throughout: no correlation
    level = 0.9
    low = float(np.quantile(boot, (1 - level) / 2, method="lower"))
    high = float(np.quantile(boot, (1 + level) / 2, method="higher"))
    return {"rho": est, "low": low, "high": high, "emd": np.array(emd), "deg": np.array(deg), "pairs": len(pairs)}


def band_outcome(corr: dict, band: float) -> str:
    """Whether the interval of a rank correlation says "does not predict": "holds" when [low, high] lies
    inside (-band, band), "fails" when it lies beyond band on one side, else "undetermined"."""
    if -band < corr["low"] and corr["high"] < band:
        return "holds"
    return "fails" if corr["low"] > band or corr["high"] < -band else "undetermined"


# ----------------------------------------------------------------------------------------- prose numbers
def squeeze_numbers(squeeze: dict, squeeze_paper: float, on_cauchy: dict, embedding: str) -> dict:
    """The numbers the squeeze section's text quotes, ``{glue name (without the chapter prefix): value}``: the
    bulk-width ratios ``squeeze[n]`` (:func:`squeeze_ratio`) at the smallest and the largest n and at the paper's
    task size, and the median over seeds of ``on_cauchy[(embedding, n)]`` (the models trained on normal tasks,
    tested on cauchy tasks) at the largest n."""
    n_lo, n_hi = min(squeeze), max(squeeze)
    return {
        "sq-small": squeeze[n_lo],
        "sq-large": squeeze[n_hi],
        "sq-paper": squeeze_paper,
        "sq-on-cauchy": float(np.median(on_cauchy[(embedding, n_hi)])),
        "e0": embedding,
        "nlo": n_lo,
        "nhi": n_hi,
    }


def same_family_numbers(V: dict, embeddings, losses, others, t_hi: float, t_lo: float) -> dict:
    """The numbers the text of Figs. 4 and 16 quotes (as :func:`squeeze_numbers`): medians over seeds of the final
    relative validation losses ``V[(family, tau, embedding, loss)]`` (``(seeds,)`` each), and ``nseeds``."""

    def med(f, t, e, l):
        return float(np.median(V[(f, t, e, l)]))

    def over(fams, t, embs, ls):
        return [med(f, t, e, l) for f in fams for e in embs for l in ls]

    return {
        "cauchy-oh-l2": med("cauchy", t_lo, "OH", "L2"),
        "cauchy-t1-min": min(over(["cauchy"], t_hi, embeddings, losses)),
        "cauchy-plateau": int((V[("cauchy", t_lo, "OH", "NE")] > 1).sum()),
        "t1-l2-min": min(over(others, t_hi, embeddings, ["L2"])),
        "t1-ne-min": min(over(others, t_hi, embeddings, ["NE"])),
        "oh-t01-max": max(over(others, t_lo, ["OH"], losses)),
        "bn-t01-min": min(over(others, t_lo, ["BN"], losses)),
        "nseeds": len(next(iter(V.values()))),
    }


def transfer_numbers(many: dict, embeddings, others, block_mean: dict) -> dict:
    """The numbers the text of Figs. 8 and 18 quotes (as :func:`squeeze_numbers`): medians over seeds of the T-step
    ratios ``many[embedding][(train, test)]`` and of the per-seed 4x4 block means ``block_mean[embedding]``."""
    e0, e1 = embeddings[0], embeddings[-1]

    def med(e, a, b):
        return float(np.median(many[e][(a, b)]))

    block = [med(e, a, b) for e in embeddings for a in others for b in others]
    return {
        "tr-cauchy-min": min(med(e, "cauchy", b) for e in embeddings for b in others),
        "tr-to-cauchy-max": max(med(e0, a, "cauchy") for a in others),
        "tr-block-bn": float(np.median(block_mean[e1])),
        "tr-cc": med(e0, "cauchy", "cauchy"),
        "tr-block-min": min(block),
        "tr-block-oh": float(np.median(block_mean[e0])),
        "tr-block-max": max(block),
    }


# ----------------------------------------------------------------------------------------- tables
def squeeze_table(squeeze: dict, on_cauchy: dict, embeddings, paper_size, squeeze_paper: float) -> Table:
    """The squeeze section's numbers, one row per n: the bulk-width ratio ``squeeze[n]`` and, per embedding,
    ``on_cauchy[(embedding, n)]`` as median [q25, q75] over seeds; a last row gives the ratio ``squeeze_paper`` at
    the paper's task size ``paper_size`` ``(n, d)``."""
    header = ["n", "bulk width cauchy / normal", *(f"{e} trained on normal, on cauchy tasks" for e in embeddings)]
    rows = [[n, f"{r:.3f}", *(q3(on_cauchy[(e, n)]) for e in embeddings)] for n, r in squeeze.items()]
    n, d = paper_size
    rows.append([f"{n} (d={d}, the paper's task size)", f"{squeeze_paper:.3f}", *("" for _ in embeddings)])
    return Table(header, rows)


def same_family_table(V: dict, families, taus, embeddings, losses) -> Table:
    """Figs. 4 and 16 as numbers: per family and temperature (a row), per embedding and regulariser (a
    column) the final relative validation loss ``V[(family, tau, embedding, loss)]`` (seeds,) as median
    [q25, q75] over seeds, with the number of runs that diverged (+inf) where there are any."""

    def cell(v):
        diverged = int(np.isinf(v).sum())
        return q3(v) + (f", {diverged} diverged" if diverged else "")

    header = ["family", "tau", *(f"{e}:{l}" for e in embeddings for l in losses)]
    rows = [[f, f"{t:g}", *(cell(V[(f, t, e, l)]) for e in embeddings for l in losses)] for f in families for t in taus]
    return Table(header, rows)


# ----------------------------------------------------------------------------------------- figures
MARK = {"NE": "s", "L2": "o"}
SHIFT = {("OH", "NE"): -0.24, ("OH", "L2"): -0.08, ("BN", "NE"): 0.08, ("BN", "L2"): 0.24}


def same_family_figure(values: dict, families, taus, embeddings, losses):
    """Figs. 4 and 16: one panel per temperature; per family the median and IQR over seeds of the final
    relative validation loss (``values[(family, tau, embedding, loss)]``, (seeds,)), one marker per
    (embedding, loss), log scale shared by the panels; diverged medians are drawn at 10."""
    fig, axes = plt.subplots(1, len(taus), figsize=(5.2 * len(taus), 3.6), sharey=True, squeeze=False)
    for ax, t in zip(axes[0], taus):
        for e in embeddings:
            for l in losses:
                v = [values[(f, t, e, l)] for f in families]
                q = np.array([np.quantile(np.minimum(x, 10.0), [0.25, 0.5, 0.75]) for x in v]).T
                x = np.arange(len(families)) + SHIFT.get((e, l), 0.0)
                color = "C0" if e == "OH" else "C1"
                ax.errorbar(x, q[1], yerr=[q[1] - q[0], q[2] - q[1]], fmt=MARK[l], color=color, label=f"{e}:{l}")
        ax.axhline(1.0, color="k", ls=":", lw=1)
        ax.set_yscale("log")
        ax.set_xticks(range(len(families)), families, rotation=30)
        ax.set_title(f"tau={t:g}, train and test on one family", fontsize=10)
    axes[0, 0].set_ylabel("final relative validation loss (Eq. 20)")
    axes[0, -1].legend(fontsize=7)
    fig.tight_layout()
    plt.show()


def grid_figure(grids: dict, families, title: str):
    """Figs. 8 and 18: one heatmap per entry of ``grids`` ({panel title: (F, F) medians}), two per row, training
    family down, test family across, one shared log colour scale from 0.5 to 2 centred on 1 (Lloyd's), inf shown
    as "inf"."""
    lo, hi, ncols = 0.5, 2.0, 2
    nrows = math.ceil(len(grids) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.4 * ncols, 4.0 * nrows), squeeze=False)
    ticks = range(len(families))
    for ax, (name, G) in zip(axes.flat, grids.items()):
        G = np.clip(G, lo, np.inf)
        im = ax.imshow(np.where(np.isfinite(G), G, hi), cmap="RdBu_r", norm=LogNorm(lo, hi))
        for (i, j), g in np.ndenumerate(G):
            ax.text(j, i, f"{g:.2f}" if np.isfinite(g) else "inf", ha="center", va="center", fontsize=7)
        ax.set_xticks(ticks, families, rotation=30, fontsize=8)
        ax.set_yticks(ticks, families, fontsize=8)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("test family")
        ax.set_ylabel("training family")
    for ax in list(axes.flat)[len(grids) :]:
        ax.axis("off")
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.6, label="relative loss (below 1 beats Lloyd's)")
    fig.suptitle(title)
    plt.show()


def emd_figure(panels: dict, families):
    """Figs. 9 and 19: one EMD matrix per entry of ``panels`` ({title: (M, labels)}), blocks in the order
    ``families`` with their boundaries drawn; each panel its own colour scale (the settings differ)."""
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.2), squeeze=False)
    for ax, (name, (M, labels)) in zip(axes[0], panels.items()):
        im = ax.imshow(M, cmap="viridis")
        per = len(labels) // len(families)
        for b in range(1, len(families)):
            ax.axhline(b * per - 0.5, color="w", lw=0.6)
            ax.axvline(b * per - 0.5, color="w", lw=0.6)
        ticks = [per * i + (per - 1) / 2 for i in range(len(families))]
        ax.set_xticks(ticks, families, rotation=30, fontsize=8)
        ax.set_yticks(ticks, families, fontsize=8)
        ax.set_title(name, fontsize=10)
        fig.colorbar(im, ax=ax, shrink=0.8, label="EMD")
    fig.tight_layout()
    plt.show()


def squeeze_figure(tasks: dict, dists: dict):
    """What min-max scaling does to each family (chapter 01's cauchy puzzle): top, the first two coordinates
    of one task per family (``tasks[f] = (X, C0)``, first task); bottom, the distribution of the squared
    point-to-initial-center distances (``dists[f]``, one array per family) on a shared log axis."""
    fams = list(tasks)
    fig, axes = plt.subplots(2, len(fams), figsize=(2.6 * len(fams), 5.0), squeeze=False)
    bins = np.logspace(-6, 0.5, 40)
    for j, f in enumerate(fams):
        X, C0 = tasks[f]
        axes[0, j].scatter(X[0, :, 0], X[0, :, 1], s=4, color="0.4")
        axes[0, j].scatter(C0[0, :, 0], C0[0, :, 1], s=25, marker="x", color="C3")
        axes[0, j].set(xlim=(-0.05, 1.05), ylim=(-0.05, 1.05), title=f)
        axes[0, j].set_aspect("equal")
        axes[1, j].hist(np.clip(dists[f], 1e-6, None), bins=bins, color="C0")
        axes[1, j].set_xscale("log")
        axes[1, j].set_xlabel(r"$\|x_i - c_j\|^2$")
        axes[1, j].sharey(axes[1, 0])
    axes[1, 0].set_ylabel("count")
    fig.tight_layout()
    plt.show()


def correlation_figure(corr: dict):
    """The rank correlation of the last section: one panel per embedding (``corr[e]`` from
    :func:`transfer_correlation`), the family pairs' mean EMD against their transfer degradation, shared axes."""
    fig, axes = plt.subplots(1, len(corr), figsize=(4.2 * len(corr), 3.4), sharex=True, sharey=True, squeeze=False)
    for ax, (e, c) in zip(axes[0], corr.items()):
        ax.plot(c["emd"], c["deg"], "o", color="C0" if e == "OH" else "C1")
        ax.axhline(0.0, color="k", ls=":", lw=1)
        ax.set_title(f"{e}: Spearman {c['rho']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]", fontsize=10)
        ax.set_xlabel("mean EMD between the two families' tasks")
    axes[0, 0].set_ylabel("transfer degradation (log ratio)")
    fig.tight_layout()
    plt.show()
