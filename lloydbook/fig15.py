"""Figure 15's findings (Leaner paper, Fig. 15 and Thm. 3.1: the number of clusters k), each stated once.

The paper trains k in {6, 10, 16, 25} at (d, tau) in {4, 32} x {1, 0.1} (Figs. 15a-d) and reports (in the words of
our brief of the paper, ../shared/papers/leaner-transformers-brief.md, Sec. 2.7): "BN degrades as k grows at small d
(at d=4, tau=0.1 it even falls below NA for large k), because of its sqrt(d+ceil(log2 k)) dependence. OH is
insensitive to k. At d=32, k=25, 3/10 OH runs hit numerical instability (d_emb=57); BN with d_emb=37 is fine.
Gradient clipping fixes the OH runs."

:func:`parts` states each finding at the panels given where the paper makes it. Different k, different tasks:
unpaired; settings at one k that differ only in the embedding share their seeds' tasks: paired by seed.
"""

from __future__ import annotations

import numpy as np

from . import findings
from .claims.evidence import Evidence, Judge, all_of
from .findings import Part, RecordedSweep, by_seed
from .learning import final, largest_rise

__all__ = [
    "SMALL_D",
    "BN_NA_CASE",
    "UNSTABLE_AT",
    "K_TOL",
    "UNSTABLE_RISE",
    "SOURCES",
    "OH_UNSTABLE",
    "unstable",
    "statements",
    "parts",
    "recorded_parts",
]

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

#: where the paper states each finding
SOURCES = {
    "k-bn-degrades": "Leaner paper, Fig. 15 and Thm. 3.1",
    "k-oh-insensitive": "Leaner paper, Fig. 15",
    "k-bn-below-na": "Leaner paper, Fig. 15b",
    "k-oh-unstable": "Leaner paper, Fig. 15c, d",
}

#: the instability finding's statement and the paper's words (the same wherever it is decided or left open)
OH_UNSTABLE = (
    f"Without gradient clipping some OH runs at d={UNSTABLE_AT[0]}, k={UNSTABLE_AT[1]} are numerically unstable "
    f"(diverged, a non-finite loss recorded, or a jump of the relative validation loss above {UNSTABLE_RISE:g} between "
    "evaluations), and BN's are not: at least one OH run and at most half of any setting's, fewer for BN (every tau "
    "and regulariser pooled)",
    '"At d=32, k=25, 3/10 OH runs hit numerical instability (d_emb=57); BN with d_emb=37 is fine"',
)


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


def _cases(cases) -> str:
    if len(cases) == 1:
        return f"d={cases[0][0]}, tau={cases[0][1]:g}"
    return "(d, tau) in {" + ", ".join(f"({d}, {t:g})" for d, t in cases) + "}"


def _instability(G, cases, k, losses) -> list[Evidence]:
    """The two parts of the instability finding at ``k`` over the ``cases`` (tau and loss pooled)."""
    runs = {e: {(t, l): G[(d, t, k, e, l)] for d, t in cases for l in losses} for e in ("OH", "BN")}
    counts = {e: {key: sum(map(unstable, rs)) for key, rs in by.items()} for e, by in runs.items()}
    total = {e: sum(c.values()) for e, c in counts.items()}
    every = sum(len(rs) for rs in runs["OH"].values())
    seeds = max(len(rs) for rs in runs["OH"].values())
    oh_ok = total["OH"] >= 1 and all(c <= len(runs["OH"][key]) / 2 for key, c in counts["OH"].items())

    def each(e):
        return ", ".join(f"tau={t:g} {l}: {c}" for (t, l), c in counts[e].items())

    return [
        Evidence(
            "OH: some runs unstable, never most",
            "holds" if oh_ok else "fails",
            f"OH unstable in {total['OH']} of {every} runs ({each('OH')} of {seeds} each); accepted: at least 1 in "
            f"all, at most {seeds // 2} of any setting's {seeds}",
        ),
        Evidence(
            "BN fine: fewer unstable runs than OH",
            "holds" if total["BN"] < total["OH"] else "fails",
            f"BN unstable in {total['BN']} of {every} runs ({each('BN')}) against OH's {total['OH']}",
        ),
    ]


def statements(cases, ks, embeddings, *, n: int) -> dict[str, tuple[str, str]]:
    """Figure 15's findings on L2 at the panels ``cases`` ``[(d, tau)]`` over the ``ks`` read, with ``embeddings``, at
    ``n`` points per task: name -> (statement, the paper's value), for the findings whose panels are given (the
    instability finding is :data:`OH_UNSTABLE`)."""
    cases, ks = [tuple(c) for c in cases], sorted(ks)
    kmin, kmax = ks[0], ks[-1]
    ppc = f"{n / kmax:g} points per cluster at k={kmax}"
    out = {}
    small = [(d, t) for d, t in cases if d == SMALL_D]
    if small:
        out["k-bn-degrades"] = (
            f"BN degrades as k grows at small d (final relative loss, {_cases(small)}, L2; {ppc})",
            "BN worse at larger k",
        )
    out["k-oh-insensitive"] = (
        f"OH is insensitive to k (median final relative loss of its stable runs within {K_TOL:g} of k={kmin}'s at "
        f"every k; {_cases(cases)}, L2; {ppc})",
        "insensitive to k",
    )
    if BN_NA_CASE in cases and "NA" in embeddings:
        d, t = BN_NA_CASE
        out["k-bn-below-na"] = (
            f"At d={d}, tau={t:g} BN falls below NA for large k (NA's final relative loss lower than BN's at "
            f"k={kmax}, L2; {ppc})",
            '"BN degrades as k grows at small d (at d=4, tau=0.1 it even falls below NA for large k)"',
        )
    return out


def parts(G: dict, cases, ks, embeddings, losses, *, n: int, judge: Judge) -> dict[str, Part]:
    """Figure 15's findings on the runs ``G`` (``(d, tau, k, embedding, loss)`` -> runs, one per seed, trained
    without gradient clipping) at the panels ``cases`` ``[(d, tau)]`` over the ``ks`` read, at ``n`` points per task:
    name -> :class:`Part`, for the findings whose panels are given, as :func:`statements` and :data:`OH_UNSTABLE`
    word them (``k-oh-insensitive`` reads OH's stable runs, see :func:`unstable`: the paper reran its unstable ones
    with clipping)."""
    cases, ks = [tuple(c) for c in cases], sorted(ks)
    if len(ks) < 2 or "L2" not in losses or not {"OH", "BN"} <= set(embeddings):
        raise ValueError(f"need two k, OH and BN and L2; got ks {ks}, {list(embeddings)}, {list(losses)}")
    kmin, kmax = ks[0], ks[-1]
    say = statements(cases, ks, embeddings, n=n)

    def at(d, t, among):  # a part's label names its panel when there are several
        return f", d={d}, tau={t:g}" if len(among) > 1 else ""

    out = {}
    small = [(d, t) for d, t in cases if d == SMALL_D]
    if small:
        bn = {(d, t, k): G[(d, t, k, "BN", "L2")] for d, t in small for k in ks}
        out["k-bn-degrades"] = Part(
            *say["k-bn-degrades"],
            [r for runs in bn.values() for r in runs],
            [
                judge.lower(
                    f"BN lower at k={kmin} than at k={kmax}" + at(d, t, small),
                    final(bn[(d, t, kmin)]),
                    final(bn[(d, t, kmax)]),
                    f"k={kmin}",
                    f"k={kmax}",
                    paired=False,
                )
                for d, t in small
            ],
        )

    def oh_within(d, t, k):  # OH's stable runs at k against those at kmin
        every = [G[(d, t, kk, "OH", "L2")] for kk in (kmin, k)]
        a, b = ([r for r in runs if not unstable(r)] for runs in every)
        label = f"k={k}" if len(a) + len(b) == sum(map(len, every)) else f"k={k} ({len(a)} and {len(b)} stable runs)"
        if min(len(a), len(b)) < 2:  # too few stable runs to compare: not insensitive
            return Evidence(label, "fails", f"{len(a)} and {len(b)} stable runs at k={kmin} and k={k}")
        return judge.within(label, final(a), final(b), f"k={kmin}", f"k={k}", K_TOL, paired=False)

    out["k-oh-insensitive"] = Part(
        *say["k-oh-insensitive"],
        [r for d, t in cases for k in ks for r in G[(d, t, k, "OH", "L2")]],
        [
            all_of(f"OH within {K_TOL:g} across k" + at(d, t, cases), [oh_within(d, t, k) for k in ks[1:]])
            for d, t in cases
        ],
    )
    if BN_NA_CASE in cases and "NA" in embeddings:
        d, t = BN_NA_CASE
        na, bn = by_seed(G[(d, t, kmax, "NA", "L2")], G[(d, t, kmax, "BN", "L2")])  # same k and seeds: paired
        out["k-bn-below-na"] = Part(
            *say["k-bn-below-na"],
            na + bn,
            [judge.lower(f"NA lower than BN at k={kmax}", final(na), final(bn), "NA", "BN", paired=True)],
        )
    d32 = [(d, t) for d, t in cases if d == UNSTABLE_AT[0]]
    if d32 and UNSTABLE_AT[1] in ks:
        at_k = {(t, e, l): G[(d, t, UNSTABLE_AT[1], e, l)] for d, t in d32 for e in embeddings for l in losses}
        clipped = [
            r for rs in at_k.values() for r in rs if getattr(getattr(r, "config", None), "clip", None) is not None
        ]
        if clipped:
            raise ValueError(
                f"G's runs at d, k = {UNSTABLE_AT} must train without gradient clipping (the paper's instability is "
                f"without it), got {len(clipped)} clipped runs"
            )
        runs = [r for (_, e, _), rs in at_k.items() if e in ("OH", "BN") for r in rs]
        out["k-oh-unstable"] = Part(*OH_UNSTABLE, runs, _instability(G, d32, UNSTABLE_AT[1], losses))
    return out


def recorded_parts(sweep: RecordedSweep, *, judge: Judge) -> dict[str, Part]:
    """Figure 15's findings on the recorded ``sweep`` of its L2 runs at one panel ``(d, tau)`` and one n, over its
    ks and embeddings: name -> :class:`Part`. A finding reads the smallest and the largest k (every k for
    ``k-oh-insensitive``) on the largest seed set complete at both, else it is an open row naming the runs missing."""
    d, t, n, ks, embeddings = *(sweep.fixed(f) for f in ("d", "tau", "n")), sweep.values("k"), sweep.values("embedding")
    if sweep.values("loss") != ["L2"]:
        raise ValueError(f"sweep must hold L2 runs only, got losses {sweep.values('loss')}")
    kmin, kmax = min(ks), max(ks)

    def parts_of(G, k_read):
        return parts(G, [(d, t)], k_read, embeddings, ["L2"], n=n, judge=judge)

    reads = {  # the configs each finding reads (see parts)
        "k-bn-degrades": lambda c: c.embedding == "BN" and c.k in (kmin, kmax),
        "k-oh-insensitive": lambda c: c.embedding == "OH",
        "k-bn-below-na": lambda c: c.embedding in ("NA", "BN") and c.k == kmax,
    }
    key, say = ("d", "tau", "k", "embedding", "loss"), statements([(d, t)], ks, embeddings, n=n)
    return findings.recorded_parts(sweep, "k", key, parts_of, say, every={"k-oh-insensitive"}, reads=reads)
