"""Figure 15 (Leaner paper, Fig. 15 and Thm. 3.1) at paper scale: the number of clusters k.

The paper trains k in {6, 10, 16, 25} at (d, tau) in {4, 32} x {1, 0.1} (Figs. 15a-d) and reports (on Fig. 15, in the words of
our brief of the paper, ../shared/papers/leaner-transformers-brief.md, Sec. 2.7): "BN degrades as k grows at small d (at d=4, tau=0.1 it even falls below NA for
large k), because of its sqrt(d+ceil(log2 k)) dependence. OH is insensitive to k. At d=32, k=25, 3/10 OH
runs hit numerical instability (d_emb=57); BN with d_emb=37 is fine. Gradient clipping fixes the OH runs."
Each statement is decided at the panels where the paper makes it. Different k, different tasks: unpaired;
settings at one k that differ only in the embedding share their seeds' tasks: paired by seed.
"""

from __future__ import annotations

import numpy as np

from ..claims.evidence import Evidence, all_of, lower, within
from ..learning import final, largest_rise
from .common import Recorder, by_seed, check_groups, check_seeds, check_values, complete

__all__ = ["SMALL_D", "BN_NA_CASE", "UNSTABLE_AT", "K_TOL", "UNSTABLE_RISE", "unstable", "fig15_claims"]

#: the paper's "small d" (Figs. 15a and b), where BN degrades with k
SMALL_D = 4
#: (d, tau) where "it even falls below NA for large k" (Fig. 15b)
BN_NA_CASE = (4, 0.1)
#: (d, k) where "3/10 OH runs hit numerical instability" without gradient clipping (Figs. 15c and d)
UNSTABLE_AT = (32, 25)
#: "insensitive to k": medians of the final relative loss within this of the smallest k's
K_TOL = 0.05
#: a rise of the relative validation loss between two evaluations above this (one Lloyd step's loss) is a
#: blow-up, not the noise of stochastic training (a monotone run rises by less than 0.01, Fig. 11)
UNSTABLE_RISE = 1.0


def unstable(run, rise: float = UNSTABLE_RISE) -> bool:
    """Whether a run was numerically unstable, from what it records: ``run.status == "diverged"`` (a
    non-finite loss stopped it), or a non-finite training or relative validation loss in ``run.history``
    after step 0, or a jump of the relative validation loss by more than ``rise`` between consecutive
    evaluations (:func:`lloydbook.learning.largest_rise`: a blow-up that stayed finite)."""
    if run.status == "diverged":
        return True
    h = run.history
    tail = np.concatenate(
        [np.asarray(h["val_rel_loss"][1:], dtype=float), np.asarray(h["train_loss"][1:], dtype=float)]
    )
    return bool(not np.isfinite(tail).all() or largest_rise(run) > rise)


def _instability(G, cases, k, losses, seeds) -> list[Evidence]:
    """The two parts of the instability claim at ``k`` over the ``cases`` (tau, loss pooled)."""
    counts = {
        e: {(t, l): sum(map(unstable, G[(d, t, k, e, l)])) for d, t in cases for l in losses} for e in ("OH", "BN")
    }
    total = {e: sum(c.values()) for e, c in counts.items()}
    runs = len(counts["OH"]) * seeds
    each = ", ".join(f"tau={t:g} {l}: {c}" for (t, l), c in counts["OH"].items())
    oh_ok = total["OH"] >= 1 and max(counts["OH"].values()) <= seeds / 2
    bn_each = ", ".join(f"tau={t:g} {l}: {c}" for (t, l), c in counts["BN"].items())
    return [
        Evidence(
            "OH: some runs unstable, never most",
            "holds" if oh_ok else "fails",
            f"OH unstable in {total['OH']} of {runs} runs ({each} of {seeds} each); accepted: at least 1 in all, "
            f"at most {seeds // 2} of any setting's {seeds}",
        ),
        Evidence(
            "BN fine: fewer unstable runs than OH",
            "holds" if total["BN"] < total["OH"] else "fails",
            f"BN unstable in {total['BN']} of {runs} runs ({bn_each}) against OH's {total['OH']}",
        ),
    ]


def fig15_claims(G: dict, *, cases, ks, embeddings, losses, seeds: int, machine: str) -> list[str]:
    """Decide Figure 15's statements (Leaner paper, Fig. 15 and Thm. 3.1) on the GPU runs ``G`` when every
    (d, tau, k, embedding, loss) setting of the ``cases`` ``[(d, tau)]`` has ``seeds`` runs; returns the ids
    recorded ([] for a partial sweep). ``G`` maps ``(d, tau, k, embedding, loss)`` to runs, one per seed
    (trained without gradient clipping, as ``lloydbook.sweeps.paper_sweeps`` trains them).

    On the final relative loss (Eq. 20) with L2, between the smallest and largest k:
    ``shapes-k-bn-degrades-gpu-<machine>``: at each case with d = :data:`SMALL_D`, BN ends lower at the
    smallest k than at the largest; ``shapes-k-oh-insensitive-gpu-<machine>``: at every case, OH's median
    at every k is within :data:`K_TOL` of the smallest k's (on its stable runs, see :func:`unstable`: the
    paper reran its unstable ones with clipping); ``shapes-k-bn-below-na-gpu-<machine>``: at
    :data:`BN_NA_CASE`, NA ends lower than BN at the largest k (paired by seed);
    ``shapes-k-oh-unstable-gpu-<machine>``: at :data:`UNSTABLE_AT`, every tau and regulariser pooled, OH
    has at least one unstable run and no setting more than half, and BN fewer unstable runs than OH. A
    statement whose panels are not among ``cases`` and ``ks`` is not recorded."""
    G, seeds = check_groups(G), check_seeds(seeds)
    cases, ks = check_values("cases", cases), check_values("ks", ks, minimum=2)
    embeddings = check_values("embeddings", embeddings, ("OH", "BN"))
    losses = check_values("losses", losses, ("L2",))
    record = Recorder(machine, "Leaner paper, Fig. 15 and Thm. 3.1")
    if not complete(G, [(d, t, k, e, l) for d, t in cases for k in ks for e in embeddings for l in losses], seeds):
        return []
    kmin, kmax = min(ks), max(ks)
    where = f"{machine}, paper scale, L2, k from {kmin} to {kmax}"
    small = [(d, t) for d, t in cases if d == SMALL_D]
    if small:
        record(
            "shapes-k-bn-degrades",
            statement=f"BN degrades as k grows at small d (final relative loss at d={SMALL_D}, tau={', '.join(f'{t:g}' for _, t in small)}; {where})",
            paper="BN worse at larger k (small d)",
            evidence=[
                lower(
                    f"BN lower at k={kmin} than at k={kmax}, d={d}, tau={t:g}",
                    final(G[(d, t, kmin, "BN", "L2")]),
                    final(G[(d, t, kmax, "BN", "L2")]),
                    f"k={kmin}",
                    f"k={kmax}",
                    paired=False,
                )
                for d, t in small
            ],
        )

    def oh_within(d, t, k):
        a, b = ([r for r in G[(d, t, kk, "OH", "L2")] if not unstable(r)] for kk in (kmin, k))
        if min(len(a), len(b)) < 2:  # too few stable runs to compare: not insensitive
            return Evidence(f"k={k}", "fails", f"{len(a)} and {len(b)} stable runs of {seeds} at k={kmin} and k={k}")
        return within(f"k={k} ({len(b)} stable runs)", final(a), final(b), f"k={kmin}", f"k={k}", K_TOL, paired=False)

    record(
        "shapes-k-oh-insensitive",
        statement=f"OH is insensitive to k (median final relative loss within {K_TOL:g} of k={kmin}'s at every k, stable runs, at every (d, tau) of {', '.join(f'({d}, {t:g})' for d, t in cases)}; {where})",
        paper="insensitive to k",
        source="Leaner paper, Fig. 15",
        evidence=[all_of(f"d={d}, tau={t:g}", [oh_within(d, t, k) for k in ks if k != kmin]) for d, t in cases],
    )
    if BN_NA_CASE in cases and "NA" in embeddings:
        d, t = BN_NA_CASE
        na, bn = by_seed(G[(d, t, kmax, "NA", "L2")], G[(d, t, kmax, "BN", "L2")])  # same k and seeds: paired
        record(
            "shapes-k-bn-below-na",
            statement=f"At d={d}, tau={t:g} BN falls below NA for large k (NA's final relative loss lower than BN's at k={kmax}; {where})",
            paper="BN below NA at large k (d=4, tau=0.1)",
            evidence=[lower(f"NA lower than BN at k={kmax}", final(na), final(bn), "NA", "BN", paired=True)],
        )
    d32 = [(d, t) for d, t in cases if d == UNSTABLE_AT[0]]
    if d32 and UNSTABLE_AT[1] in ks:
        clipped = [
            r
            for d, t in d32
            for e in embeddings
            for l in losses
            for r in G[(d, t, UNSTABLE_AT[1], e, l)]
            if getattr(getattr(r, "config", None), "clip", None) is not None
        ]
        if clipped:
            raise ValueError(
                f"G's runs at d, k = {UNSTABLE_AT} must train without gradient clipping (the paper's instability is without it), got {len(clipped)} clipped runs"
            )
        record(
            "shapes-k-oh-unstable",
            statement=(
                f"Without gradient clipping some OH runs at d={UNSTABLE_AT[0]}, k={UNSTABLE_AT[1]} are numerically unstable (diverged, a non-finite loss recorded, "
                f"or a jump of the relative validation loss above {UNSTABLE_RISE:g} between evaluations) and BN's are not: at least one OH run and at most half of any setting's, "
                f"fewer for BN (tau={', '.join(f'{t:g}' for _, t in d32)} and {', '.join(losses)} pooled; {machine}, paper scale)"
            ),
            paper="3 of 10 OH runs unstable (d_emb=57); BN (d_emb=37) fine",
            source='Leaner paper, Fig. 15 ("3/10 OH runs hit numerical instability")',
            evidence=_instability(G, d32, UNSTABLE_AT[1], losses, seeds),
        )
    return record.ids
