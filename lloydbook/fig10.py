"""Figure 10's findings (Leaner paper, Figs. 2a and 10), each stated once, on the runs of one d.

:func:`parts` states them on the runs ``G[(d, tau, embedding, loss)]`` (one run a seed); chapter 04 decides them on
this build's runs at d=4 (Fig. 10a) and d=32 (Fig. 10b), on the recorded sweep ``fig10a-paper``
(:func:`recorded_parts`) and on the paper-scale sweep. Every comparison of two settings is paired by seed: the runs of
one seed see the same tasks.
"""

from __future__ import annotations

import numpy as np

from . import findings
from .claims.evidence import Evidence, Judge, all_of
from .findings import SEED_SETS, Part, Recorded, RecordedSweep
from .learning import auc, final, final_train, steps_to_settle

__all__ = [
    "SOURCE",
    "statements",
    "parts",
    "recorded_groups",
    "recorded_parts",
    "COLLAPSE_SOURCE",
    "collapse",
]

#: where Figure 10's findings are stated
SOURCE = "Leaner paper, Fig. 2a and Fig. 10"


def _best(runs) -> np.ndarray:
    return np.array([np.min(r.history["val_rel_loss"][1:]) for r in runs])


def _pooled(G, d, t, embeddings) -> list:
    return [r for e in embeddings for r in G[(d, t, e, "L2")]]


def statements(taus) -> dict[str, tuple[str, str]]:
    """Figure 10's findings over the temperatures ``taus``: name -> (statement, the paper's value), the words
    of every row that decides them (:func:`parts`) or leaves them open."""
    taus = sorted(taus)
    tmin, tmax = taus[0], taus[-1]
    return {
        "l2-lower-train-loss": (
            "L2 (sparsemax) gives a lower training loss than NE (softmax), for every embedding and temperature",
            "L2 always lower",
        ),
        "ne-tau1-fails": (
            f"With NE at tau={tmax:g} the validation loss gets worse during training (it ends more than 10% above "
            "the best it reached) and stays above one Lloyd step, for every embedding",
            "validation worsens during training",
        ),
        "tau01-beats-lloyd": (
            f"At the smallest tau ({tmin:g}) OH and BN, with NE or L2, beat one Lloyd step on validation tasks; NA "
            "does not",
            "OH, BN < 1 (clearly); NA > 1",
        ),
        "larger-tau-faster-worse": (
            f"A larger tau converges faster (fewer steps until the training loss stays within 5% of its final "
            f"value), but to a worse solution (tau={tmax:g} against {tmin:g}; L2, OH and BN pooled)",
            "faster and worse at larger tau",
        ),
        "larger-tau-ordered": (
            f"Each larger tau of the grid {{{', '.join(f'{t:g}' for t in taus)}}} converges faster and to a worse "
            "solution than the next smaller one (L2, OH and BN pooled)",
            "faster and worse at larger tau (Fig. 10's four temperatures)",
        ),
        "oh-faster-than-bn": (
            f"OH converges faster than BN (mean relative validation loss over training, L2, tau={tmin:g})",
            "OH faster",
        ),
        "oh-bn-similar-final": (
            f"OH and BN reach similar final losses (medians within 0.05 of each other, in units of one Lloyd step's "
            f"loss; L2, tau={tmin:g})",
            "similar final losses",
        ),
    }


def parts(G: dict, d: int, taus, embeddings, losses, *, judge: Judge) -> dict[str, Part]:
    """Figure 10's findings on the runs ``G`` at ``d`` over the temperatures ``taus``: name -> :class:`Part`.

    The names are those of chapter 04's claims at d=4: ``l2-lower-train-loss`` (L2's final training loss below
    NE's in every (tau, embedding)), ``ne-tau1-fails`` (NE at the largest tau ends 10% above its best validation
    loss and above one Lloyd step), ``tau01-beats-lloyd`` (at the smallest tau OH and BN below 1, NA above),
    ``larger-tau-faster-worse`` (largest against smallest tau: settles sooner, ends worse; L2, OH and BN pooled),
    ``larger-tau-ordered`` (the same at each step of the tau grid), ``oh-faster-than-bn`` (area under the
    validation curve, L2, smallest tau) and ``oh-bn-similar-final`` (final losses within 0.05)."""
    taus = sorted(taus)
    if len(taus) < 2 or not {"OH", "BN"} <= set(embeddings) or "L2" not in losses:
        raise ValueError(f"need two taus, OH and BN and L2; got taus {taus}, {embeddings}, {losses}")
    tmin, tmax = taus[0], taus[-1]
    coded = [e for e in embeddings if e != "NA"]
    every = [r for t in taus for e in embeddings for l in losses for r in G[(d, t, e, l)]]
    say, out = statements(taus), {}
    out["l2-lower-train-loss"] = Part(
        *say["l2-lower-train-loss"],
        every,
        [
            all_of(
                f"L2 below NE in every (tau, embedding) at d={d}",
                [
                    judge.lower(
                        f"tau={t:g}, {e}",
                        final_train(G[(d, t, e, "L2")]),
                        final_train(G[(d, t, e, "NE")]),
                        "L2",
                        "NE",
                        paired=True,
                    )
                    for t in taus
                    for e in embeddings
                ],
            )
        ],
    )
    ne1 = {e: G[(d, tmax, e, "NE")] for e in embeddings}
    out["ne-tau1-fails"] = Part(
        *say["ne-tau1-fails"],
        [r for rs in ne1.values() for r in rs],
        [
            all_of(
                "ends 10% above its best",
                [judge.lower(e, 1.1 * _best(r), final(r), "1.1 x best", "final", paired=True) for e, r in ne1.items()],
            ),
            all_of("ends above one Lloyd step", [judge.above(e, final(r), 1.0, "final") for e, r in ne1.items()]),
        ],
    )
    beats = [all_of(
        f"OH and BN below 1 (tau={tmin:g})",
        [judge.below(f"{e}:{l}", final(G[(d, tmin, e, l)]), 1.0, "final relative loss") for e in coded for l in losses],
    )]  # fmt: skip
    if "NA" in embeddings:
        na = [judge.above(f"NA:{l}", final(G[(d, tmin, "NA", l)]), 1.0, "final relative loss") for l in losses]
        beats.append(all_of("NA above 1", na))
    out["tau01-beats-lloyd"] = Part(
        *say["tau01-beats-lloyd"],
        [r for e in embeddings for l in losses for r in G[(d, tmin, e, l)]],
        beats,
    )
    settle = {t: np.array([steps_to_settle(r) for r in _pooled(G, d, t, coded)]) for t in taus}
    worse = {t: final(_pooled(G, d, t, coded)) for t in taus}

    def pair(hi, lo) -> tuple[Evidence, Evidence]:
        return (
            judge.lower(f"tau={hi:g} settles sooner than {lo:g}", settle[hi], settle[lo], f"tau={hi:g}", f"tau={lo:g}", paired=True),
            judge.lower(f"tau={hi:g} ends worse than {lo:g}", worse[lo], worse[hi], f"tau={lo:g}", f"tau={hi:g}", paired=True),
        )  # fmt: skip

    out["larger-tau-faster-worse"] = Part(
        *say["larger-tau-faster-worse"],
        [r for t in (tmin, tmax) for r in _pooled(G, d, t, coded)],
        list(pair(tmax, tmin)),
    )
    steps = [pair(hi, lo) for lo, hi in zip(taus, taus[1:])]
    out["larger-tau-ordered"] = Part(
        *say["larger-tau-ordered"],
        [r for t in taus for r in _pooled(G, d, t, coded)],
        [
            all_of("each larger tau settles sooner", [s for s, _ in steps]),
            all_of("each larger tau ends worse", [w for _, w in steps]),
        ],
    )
    oh, bn = G[(d, tmin, "OH", "L2")], G[(d, tmin, "BN", "L2")]
    out["oh-faster-than-bn"] = Part(
        *say["oh-faster-than-bn"],
        oh + bn,
        [judge.lower("OH's area below BN's", auc(oh), auc(bn), "OH", "BN", paired=True)],
    )
    out["oh-bn-similar-final"] = Part(
        *say["oh-bn-similar-final"],
        oh + bn,
        [judge.within("OH and BN within 0.05", final(oh), final(bn), "OH", "BN", 0.05, paired=True)],
    )
    return out


def recorded_groups(runs, d: int, taus, embeddings, losses, seed_sets=SEED_SETS) -> Recorded:
    """The complete part of the recorded runs ``runs`` of Figure 10 at ``d``
    (:func:`lloydbook.findings.recorded_groups` over the temperatures ``taus``; its ``values`` are the temperatures
    decided)."""
    cells = {t: [(d, t, e, l) for e in embeddings for l in losses] for t in taus}
    return findings.recorded_groups(runs, ("d", "tau", "embedding", "loss"), cells, seed_sets)


def recorded_parts(sweep: RecordedSweep, *, judge: Judge) -> dict[str, Part]:
    """Figure 10's findings on the recorded ``sweep`` (at its one d, over its temperatures, embeddings and losses):
    name -> :class:`Part` (:func:`lloydbook.findings.recorded_parts`). A finding reads the smallest and largest tau
    (every tau for ``larger-tau-ordered``) on the largest complete seed set; where those runs are not all recorded, it
    is an open row naming the runs still missing."""
    d, embeddings, losses = sweep.fixed("d"), sweep.values("embedding"), sweep.values("loss")

    def parts_of(G, taus):
        return parts(G, d, taus, embeddings, losses, judge=judge)

    key, say = ("d", "tau", "embedding", "loss"), statements(sweep.values("tau"))
    return findings.recorded_parts(sweep, "tau", key, parts_of, say, every={"larger-tau-ordered"})


#: where the collapse finding comes from: none of the paper's (it explains Fig. 10's NE at tau=1)
COLLAPSE_SOURCE = "beyond the paper (explains Fig. 10)"


def collapse(spread: dict, runs: list, embeddings, *, judge: Judge) -> Part:
    """Why NE fails at the largest tau (beyond the paper): ``spread[(embedding, loss)]``, per seed, the spread of the
    learned layer's output centers relative to a Lloyd step's (:func:`lloydbook.learning.relative_spread`), read on
    ``runs``. Holds when, for every embedding, NE's spread is below 1/4 and below L2's (paired by seed)."""
    missing = [(e, l) for e in embeddings for l in ("NE", "L2") if (e, l) not in spread]
    if missing:
        raise ValueError(f"spread must hold every embedding's NE and L2 spreads; missing {missing}")
    nes = [spread[(e, "NE")] for e in embeddings]
    return Part(
        r"Why NE fails at $\tau = 1$: the learned layer pulls the centers together (spread of its output centers "
        r"below 1/4 of a Lloyd step's), and more than L2 at the same $\tau$, for every embedding",
        "not analysed",
        runs,
        [
            all_of("NE spread below 1/4", [judge.below(e, ne, 0.25, "NE spread") for e, ne in zip(embeddings, nes)]),
            all_of(
                "NE spread below L2's",
                [judge.lower(e, ne, spread[(e, "L2")], "NE", "L2", paired=True) for e, ne in zip(embeddings, nes)],
            ),
        ],
    )
