"""Figures 14, 11 and 13 (Leaner paper, Sec. 4 and Figs. 11, 13, 14) at paper scale: dimension, learning rate, points.

The statements are those chapter 05 (``book/05_shapes.ipynb``) decides on its own runs, over every panel
of the paper's figure: Fig. 14 at each of its temperatures, Fig. 11 at each of its dimensions (11a: d=4,
11b: d=32), Fig. 13 at each of its ``n``. Runs of different ``d`` or ``n`` see different tasks, so those
comparisons are unpaired; settings that differ only in embedding, regulariser or learning rate share their
seeds' tasks and are paired by seed.
"""

from __future__ import annotations

import numpy as np

from ..claims.evidence import above, all_of, below, lower, within
from ..learning import auc, final, final_train, largest_rise
from .common import Recorder, by_seed, check_groups, check_seeds, check_values, complete, nan_as_inf

__all__ = [
    "oh_bn_gap",
    "ne_l2_gap",
    "DEFAULT_LR",
    "LARGE_LR",
    "MONOTONE",
    "NON_MONOTONE",
    "N_TOL",
    "fig14_claims",
    "fig11_claims",
    "fig13_claims",
]

#: Adam's initial learning rate everywhere else in the paper, the reference of Fig. 11's comparisons
DEFAULT_LR = 0.01
#: Fig. 11: the smallest rate the paper calls large at each d ("eta >= 0.1 (at d=32) or eta=1 (at d=4) is
#: non-monotone and ends at worse minima")
LARGE_LR = {4: 1.0, 32: 0.1}
#: a run is monotone when its validation curve never rises by more than this between two evaluations, and
#: clearly non-monotone when its largest rise exceeds NON_MONOTONE (in units of one Lloyd step's loss)
MONOTONE, NON_MONOTONE = 0.01, 0.1
#: Fig. 13's "little difference": medians of the final relative loss within this of the reference n's
N_TOL = 0.05


def oh_bn_gap(G: dict, d: int, tau: float) -> np.ndarray:
    """Fig. 14's convergence gap between OH and BN at (d, tau): per seed ``|auc(BN) - auc(OH)|`` with L2
    (:func:`lloydbook.learning.auc`; OH and BN of one seed paired), shape ``(seeds,)``; +inf where a run
    diverged. ``G`` maps ``(d, tau, embedding, loss)`` to runs, one per seed."""
    oh, bn = by_seed(G[(d, tau, "OH", "L2")], G[(d, tau, "BN", "L2")])
    with np.errstate(invalid="ignore"):  # both diverged: inf - inf, read as +inf below
        return nan_as_inf(np.abs(auc(bn) - auc(oh)))


def ne_l2_gap(G: dict, d: int, tau: float) -> np.ndarray:
    """Fig. 14's gap between the regularisers at (d, tau): per (embedding, seed), OH then BN,
    ``(T_NE - T_L2) / T_L2`` of the final training loss T (NE and L2 of one seed paired), shape
    ``(2 * seeds,)``; +inf where a run diverged. ``G`` as for :func:`oh_bn_gap`."""
    gaps = []
    for e in ("OH", "BN"):
        ne, l2 = (final_train(r) for r in by_seed(G[(d, tau, e, "NE")], G[(d, tau, e, "L2")]))
        with np.errstate(invalid="ignore"):
            gaps.append((ne - l2) / l2)
    return nan_as_inf(np.concatenate(gaps))


def fig14_claims(G: dict, *, ds, taus, embeddings, losses, seeds: int, machine: str) -> list[str]:
    """Decide Figure 14's statements (Leaner paper, Figs. 2b and 14; Thm. 3.1) on the GPU runs ``G`` when
    every (d, tau, embedding, loss) setting has ``seeds`` runs; returns the ids recorded ([] for a partial
    sweep). ``G`` maps ``(d, tau, embedding, loss)`` to runs, one per seed.

    At each tau, between the smallest and the largest d: the OH-BN gap (:func:`oh_bn_gap`) is smaller at the largest d
    (``shapes-d-oh-bn-gap-shrinks-gpu-<machine>``), and so is the NE-L2 gap, per seed
    ``(T_NE - T_L2) / T_L2`` of the final training loss T (OH and BN pooled;
    ``shapes-d-ne-l2-gap-shrinks-gpu-<machine>``). Different d, different tasks: unpaired."""
    G, seeds = check_groups(G), check_seeds(seeds)
    ds, taus = check_values("ds", ds, minimum=2), check_values("taus", taus)
    embeddings = check_values("embeddings", embeddings, ("OH", "BN"))
    losses = check_values("losses", losses, ("NE", "L2"))
    record = Recorder(machine, "Leaner paper, Figs. 2b and 14 and Thm. 3.1")
    if not complete(G, [(d, t, e, l) for d in ds for t in taus for e in embeddings for l in losses], seeds):
        return []
    dmin, dmax = min(ds), max(ds)

    def oh_bn(d, t):
        return oh_bn_gap(G, d, t)

    def ne_l2(d, t):
        return ne_l2_gap(G, d, t)

    where = f"{machine}, paper scale, d from {dmin} to {dmax}, tau={', '.join(f'{t:g}' for t in taus)}"
    for name, gap, pair, what in (
        (
            "shapes-d-oh-bn-gap-shrinks",
            oh_bn,
            "OH and BN",
            "|BN - OH| in mean relative validation loss over training, L2",
        ),
        (
            "shapes-d-ne-l2-gap-shrinks",
            ne_l2,
            "NE and L2",
            "(NE - L2) / L2 in final training loss, OH and BN pooled",
        ),
    ):
        record(
            name,
            statement=f"The gap between {pair} shrinks as d grows ({what}; {where})",
            paper="gap shrinks with d",
            evidence=[
                lower(
                    f"smaller at d={dmax} than at d={dmin}, tau={t:g}",
                    gap(dmax, t),
                    gap(dmin, t),
                    f"d={dmax}",
                    f"d={dmin}",
                    paired=False,
                )
                for t in taus
            ],
        )
    return record.ids


def fig11_claims(
    G: dict, *, ds, lrs, embeddings, losses, seeds: int, machine: str, large: dict | None = None
) -> list[str]:
    """Decide Figure 11's statements (Leaner paper, Fig. 11) on the GPU runs ``G`` when every (d, lr,
    embedding, loss) setting has ``seeds`` runs; returns the ids recorded ([] for a partial sweep). ``G``
    maps ``(d, lr, embedding, loss)`` to runs, one per seed; ``large`` maps each d to the smallest rate the
    paper calls large there (default :data:`LARGE_LR`: 1 at d=4, 0.1 at d=32).

    At every d, the runs of all embeddings and regularisers pooled (paired across rates by (embedding,
    loss, seed): the same seeds see the same tasks at every rate), a run's monotonicity read off
    :func:`lloydbook.learning.largest_rise`: the smallest rate is monotone (median largest rise below
    :data:`MONOTONE`) but slow (its final relative loss above :data:`DEFAULT_LR`'s;
    ``shapes-lr-small-monotone-slow-gpu-<machine>``); every large rate is non-monotone (median largest
    rise above :data:`NON_MONOTONE`) and ends worse than :data:`DEFAULT_LR`
    (``shapes-lr-large-nonmonotone-worse-gpu-<machine>``)."""
    G, seeds = check_groups(G), check_seeds(seeds)
    ds, lrs = check_values("ds", ds), check_values("lrs", lrs, (DEFAULT_LR,), minimum=3)
    embeddings, losses = check_values("embeddings", embeddings), check_values("losses", losses)
    large = LARGE_LR if large is None else large
    if not isinstance(large, dict) or any(d not in large for d in ds):
        raise ValueError(f"large must map every d of ds={ds} to the smallest large rate there, got {large!r}")
    hi = {d: [lr for lr in lrs if lr >= large[d]] for d in ds}
    lo = min(lrs)
    if lo >= DEFAULT_LR or any(not hi[d] or min(hi[d]) <= DEFAULT_LR for d in ds):
        raise ValueError(
            f"lrs must hold a rate below {DEFAULT_LR:g} and, at every d, the large rates {large!r} above it, got {lrs!r}"
        )
    record = Recorder(machine, "Leaner paper, Fig. 11")
    if not complete(G, [(d, lr, e, l) for d in ds for lr in lrs for e in embeddings for l in losses], seeds):
        return []
    pooled = {(d, lr): [r for e in embeddings for l in losses for r in G[(d, lr, e, l)]] for d in ds for lr in lrs}
    rise = {key: np.array([largest_rise(r) for r in runs]) for key, runs in pooled.items()}

    def worse(d, lr, part):  # final relative loss above DEFAULT_LR's, paired by (embedding, loss, seed)
        mid, other = by_seed(pooled[(d, DEFAULT_LR)], pooled[(d, lr)])
        return lower(part, final(mid), final(other), f"eta={DEFAULT_LR:g}", f"eta={lr:g}", paired=True)

    where = (
        f"{machine}, paper scale, d={', '.join(map(str, ds))}, {', '.join(embeddings)} with {', '.join(losses)} pooled"
    )
    record(
        "shapes-lr-small-monotone-slow",
        statement=f"The smallest learning rate (eta={lo:g}) converges monotonically (the median run's largest rise between evaluations is below {MONOTONE:g}) but slowly (it ends above eta={DEFAULT_LR:g}) ({where})",
        paper="monotone but slow",
        evidence=[
            all_of(
                f"monotone at eta={lo:g}",
                [below(f"d={d}", rise[(d, lo)], MONOTONE, "largest rise per run") for d in ds],
            ),
            all_of(f"slower than eta={DEFAULT_LR:g}", [worse(d, lo, f"d={d}") for d in ds]),
        ],
    )
    record(
        "shapes-lr-large-nonmonotone-worse",
        statement=f"A large learning rate ({'; '.join(f'eta >= {large[d]:g} at d={d}' for d in ds)}) is non-monotone (median largest rise above {NON_MONOTONE:g}) and ends at a worse minimum than eta={DEFAULT_LR:g} ({where})",
        paper="non-monotone, worse minima (eta >= 0.1 at d=32, eta = 1 at d=4)",
        evidence=[
            all_of(
                "non-monotone",
                [above(f"d={d}, eta={lr:g}", rise[(d, lr)], NON_MONOTONE, "largest rise") for d in ds for lr in hi[d]],
            ),
            all_of(f"worse than eta={DEFAULT_LR:g}", [worse(d, lr, f"d={d}, eta={lr:g}") for d in ds for lr in hi[d]]),
        ],
    )
    return record.ids


def fig13_claims(G: dict, *, ns, n0: int, embeddings, losses, seeds: int, machine: str) -> list[str]:
    """Decide Figure 13's statement (Leaner paper, Fig. 13: the training n "makes little difference") on the
    GPU runs ``G`` when every (n, embedding, loss) setting has ``seeds`` runs; returns the ids recorded ([]
    for a partial sweep). ``G`` maps ``(n, embedding, loss)`` to runs, one per seed; ``n0`` (one of ``ns``,
    the paper's default 512) is the reference.

    For every embedding and regulariser, the median final relative loss (Eq. 20, each setting validated at
    its own n) at every other n is within :data:`N_TOL` of n0's (``shapes-n-little-difference-gpu-<machine>``).
    Different n, different tasks: unpaired."""
    G, seeds = check_groups(G), check_seeds(seeds)
    ns = check_values("ns", ns, (n0,), minimum=2)
    embeddings, losses = check_values("embeddings", embeddings), check_values("losses", losses)
    record = Recorder(machine, "Leaner paper, Fig. 13")
    if not complete(G, [(n, e, l) for n in ns for e in embeddings for l in losses], seeds):
        return []
    record(
        "shapes-n-little-difference",
        statement=f"The number of points per training task makes little difference: at every n of {', '.join(map(str, ns))} the median final relative loss is within {N_TOL:g} of n={n0}'s, for every embedding and regulariser ({machine}, paper scale)",
        paper="little difference; train on small n",
        evidence=[
            all_of(
                f"{e}:{l} within {N_TOL:g} of n={n0}",
                [
                    within(
                        f"n={n}", final(G[(n0, e, l)]), final(G[(n, e, l)]), f"n={n0}", f"n={n}", N_TOL, paired=False
                    )
                    for n in ns
                    if n != n0
                ],
            )
            for e in embeddings
            for l in losses
        ],
    )
    return record.ids
