"""Paper-scale verdicts on runs trained on a GPU and committed under ``results/gpu/<machine>/``.

The learning chapters decide their claims on this build's runs. When a GPU has recorded a complete
paper-scale sweep (every setting with all its seeds), the same statements are decided again on those runs,
with the paper's own verdict as the expectation (there is no pilot at that scale: the book expects the
paper's figure), each as its own claim ``<claim>-gpu-<machine>`` beside this build's. A partial sweep is
shown by the chapter but judges nothing: a setting with missing seeds cannot be compared fairly.

Shapes: ``G`` maps ``(d, tau, embedding, loss)`` to the runs of that setting, one per seed, as
``lloydlib.training.group(runs, "d", "tau", "embedding", "loss")`` returns them.
"""

from __future__ import annotations

import re

import numpy as np

from .learning import above, all_of, auc, below, decide, final, lower, steps_to_settle, within

__all__ = ["claim_suffix", "complete", "fig10_claims"]


def claim_suffix(machine: str) -> str:
    """``-gpu-<machine>`` in claim-id form (lower case, runs of other characters as one hyphen)."""
    slug = re.sub(r"[^a-z0-9]+", "-", str(machine).lower()).strip("-")
    if not slug:
        raise ValueError(f"machine must name the GPU machine with at least one letter or digit, got {machine!r}")
    return f"-gpu-{slug}"


def complete(G: dict, keys, seeds: int) -> bool:
    """Whether every setting in ``keys`` has at least ``seeds`` runs in ``G``."""
    return all(len(G.get(key, ())) >= seeds for key in keys)


def fig10_claims(G: dict, *, d: int, taus, embeddings, losses, seeds: int, machine: str) -> list[str]:
    """Decide Figure 10's statements (Leaner paper, Figs. 2a and 10) on the GPU runs ``G`` at ``d``, when
    every (tau, embedding, loss) setting has ``seeds`` runs; returns the ids recorded ([] for a partial
    sweep). The statements are those of chapter 04's claims at its smallest and largest tau: OH and BN
    beat one Lloyd step and NA does not; a larger tau settles sooner but ends worse (L2, OH and BN pooled);
    OH converges faster than BN (area under the validation curve); their final losses are within 0.05.
    Every comparison of two settings is paired by seed (runs of one seed see the same tasks)."""
    keys = [(d, t, e, l) for t in taus for e in embeddings for l in losses]
    if not complete(G, keys, seeds):
        return []
    suffix, tmin, tmax = claim_suffix(machine), min(taus), max(taus)
    coded = [e for e in embeddings if e != "NA"]
    src = "Leaner paper, Fig. 2a and Fig. 10"
    where = f"{machine}, paper scale, d={d}"
    ids = []

    def record(name, **kw):
        decide(f"{name}{suffix}", source=src, expected="reproduced", **kw)
        ids.append(f"{name}{suffix}")

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
        "learning-tau01-beats-lloyd",
        statement=f"At the smallest tau OH and BN, with NE or L2, beat one Lloyd step on validation tasks; NA does not ({where})",
        paper="OH, BN < 1 (clearly); NA > 1",
        evidence=beats,
    )
    settle = {t: np.array([steps_to_settle(r) for e in coded for r in G[(d, t, e, "L2")]]) for t in (tmin, tmax)}
    worse = {t: np.concatenate([final(G[(d, t, e, "L2")]) for e in coded]) for t in (tmin, tmax)}
    record(
        "learning-larger-tau-faster-worse",
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
    oh, bn = G[(d, tmin, "OH", "L2")], G[(d, tmin, "BN", "L2")]
    record(
        "learning-oh-faster-than-bn",
        statement=f"OH converges faster than BN (mean relative validation loss over training, L2, smallest tau; {where})",
        paper="OH faster",
        evidence=[lower("OH's area below BN's", auc(oh), auc(bn), "OH", "BN", paired=True)],
    )
    record(
        "learning-oh-bn-similar-final",
        statement=f"OH and BN reach similar final losses (medians within 0.05, in units of one Lloyd step's loss; L2, smallest tau; {where})",
        paper="similar final losses",
        evidence=[within("OH and BN within 0.05", final(oh), final(bn), "OH", "BN", 0.05, paired=True)],
    )
    return ids
