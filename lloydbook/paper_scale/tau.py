"""Figure 10 (Leaner paper, Figs. 2a and 10) at paper scale: the temperature tau, at one d."""

from __future__ import annotations

import numpy as np

from ..claims.evidence import above, all_of, below, lower, within
from ..learning import auc, final, steps_to_settle
from .common import Recorder, by_seed, check_groups, check_seeds, check_values, complete

__all__ = ["fig10_claims"]


def fig10_claims(G: dict, *, d: int, taus, embeddings, losses, seeds: int, machine: str) -> list[str]:
    """Decide Figure 10's statements (Leaner paper, Figs. 2a and 10) on the GPU runs ``G`` at ``d``, when
    every (tau, embedding, loss) setting has ``seeds`` runs; returns the ids recorded ([] for a partial
    sweep). ``G`` maps ``(d, tau, embedding, loss)`` to the runs of that setting, one per seed.

    The statements are those of chapter 04's claims at its smallest and largest tau: OH and BN beat one
    Lloyd step and NA does not; a larger tau settles sooner but ends worse (L2, OH and BN pooled); OH
    converges faster than BN (area under the validation curve); their final losses are within 0.05. Each
    is recorded as ``<chapter id>-d<d>-gpu-<machine>`` (the d keeps Figs. 10a and 10b apart). Every
    comparison of two settings is paired by seed (runs of one seed see the same tasks)."""
    G, seeds = check_groups(G), check_seeds(seeds)
    taus = check_values("taus", taus, minimum=2)
    embeddings = check_values("embeddings", embeddings, ("OH", "BN"))
    losses = check_values("losses", losses, ("L2",))
    record = Recorder(machine, "Leaner paper, Fig. 2a and Fig. 10")
    keys = [(d, t, e, l) for t in taus for e in embeddings for l in losses]
    if not complete(G, keys, seeds):
        return []
    tmin, tmax = min(taus), max(taus)
    coded = [e for e in embeddings if e != "NA"]
    where = f"{machine}, paper scale, d={d}"

    beats = [
        all_of(
            f"OH and BN below 1 (tau={tmin:g})",
            [below(f"{e}:{l}", final(G[(d, tmin, e, l)]), 1.0, "final relative loss") for e in coded for l in losses],
        )
    ]
    if "NA" in embeddings:
        na = [above(f"NA:{l}", final(G[(d, tmin, "NA", l)]), 1.0, "final relative loss") for l in losses]
        beats.append(all_of("NA above 1", na))
    record(
        f"learning-tau01-beats-lloyd-d{d}",
        statement=f"At the smallest tau OH and BN, with NE or L2, beat one Lloyd step on validation tasks; NA does not ({where})",
        paper="OH, BN < 1 (clearly); NA > 1",
        evidence=beats,
    )
    # the same seeds at both temperatures: paired by (embedding, seed)
    settle = {t: np.array([steps_to_settle(r) for e in coded for r in G[(d, t, e, "L2")]]) for t in (tmin, tmax)}
    worse = {t: np.concatenate([final(G[(d, t, e, "L2")]) for e in coded]) for t in (tmin, tmax)}
    record(
        f"learning-larger-tau-faster-worse-d{d}",
        statement=f"A larger tau converges faster (fewer steps until the training loss stays within 5% of its final value), but to a worse solution ({where})",
        paper="faster and worse at larger tau",
        evidence=[
            lower(
                f"tau={tmax:g} settles sooner",
                settle[tmax],
                settle[tmin],
                f"tau={tmax:g}",
                f"tau={tmin:g}",
                paired=True,
            ),
            lower(f"tau={tmax:g} ends worse", worse[tmin], worse[tmax], f"tau={tmin:g}", f"tau={tmax:g}", paired=True),
        ],
    )
    oh, bn = by_seed(G[(d, tmin, "OH", "L2")], G[(d, tmin, "BN", "L2")])  # same seeds: paired
    record(
        f"learning-oh-faster-than-bn-d{d}",
        statement=f"OH converges faster than BN (mean relative validation loss over training, L2, smallest tau; {where})",
        paper="OH faster",
        evidence=[lower("OH's area below BN's", auc(oh), auc(bn), "OH", "BN", paired=True)],
    )
    record(
        f"learning-oh-bn-similar-final-d{d}",
        statement=f"OH and BN reach similar final losses (medians within 0.05, in units of one Lloyd step's loss; L2, smallest tau; {where})",
        paper="similar final losses",
        evidence=[within("OH and BN within 0.05", final(oh), final(bn), "OH", "BN", 0.05, paired=True)],
    )
    return record.ids
