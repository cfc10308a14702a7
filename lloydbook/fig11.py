"""Figure 11's findings (Leaner paper, Fig. 11: Adam's initial learning rate), each stated once, at one d.

:func:`parts` states, on the runs ``G[(d, lr, embedding, loss)]`` (one run a seed), the paper's two findings (the
smallest rate is monotone but slow; the rates it calls large at that d are non-monotone and end worse) and, where the
paper names no rate at ``eta`` = 0.1, one beyond the paper. A run's monotonicity is read off
:func:`lloydbook.learning.largest_rise`; the runs of every embedding and regulariser are pooled, and two rates are
compared paired by (embedding, loss, seed): the same seeds see the same tasks at every rate.
"""

from __future__ import annotations

import numpy as np

from . import findings
from .claims.evidence import Judge, all_of
from .findings import Part, RecordedSweep, by_seed
from .learning import final, largest_rise

__all__ = [
    "DEFAULT_LR",
    "LARGE_LR",
    "MONOTONE",
    "NON_MONOTONE",
    "MARGIN",
    "SOURCES",
    "large_rates",
    "statements",
    "parts",
    "recorded_parts",
]

#: Adam's initial learning rate everywhere else in the paper, the reference of Fig. 11's comparisons
DEFAULT_LR = 0.01
#: Fig. 11: the smallest rate the paper calls large at each d ("eta >= 0.1 (at d=32) or eta=1 (at d=4) is
#: non-monotone and ends at worse minima")
LARGE_LR = {4: 1.0, 32: 0.1}
#: a run is monotone when its validation curve never rises by more than this between two evaluations, and
#: clearly non-monotone when its largest rise exceeds NON_MONOTONE (in units of one Lloyd step's loss)
MONOTONE, NON_MONOTONE = 0.01, 0.1
#: beyond the paper: how much worse than DEFAULT_LR a rate the paper does not name must end to count as large
MARGIN = 0.05

#: the paper's words on Fig. 11's large rates
LARGE_WORDS = '"eta >= 0.1 (at d=32) or eta=1 (at d=4) is non-monotone and ends at worse minima"'

#: where the paper states each finding
SOURCES = {
    "lr-small-monotone-slow": "Leaner paper, Fig. 11",
    "lr-large-nonmonotone-worse": "Leaner paper, Fig. 11",
    "lr-01-large": "beyond the paper (Fig. 11 at a rate it does not name at d=4)",
}


def _eta(rates) -> str:
    return f"eta={rates[0]:g}" if len(rates) == 1 else "eta in {" + ", ".join(f"{r:g}" for r in rates) + "}"


def large_rates(d: int, lrs, large: float | None = None) -> list:
    """The rates of ``lrs`` the paper calls large at ``d`` (at least ``large``, by default :data:`LARGE_LR` ``[d]``),
    after checking that ``lrs`` holds :data:`DEFAULT_LR`, a smaller rate and a large one above it."""
    if large is None:
        if d not in LARGE_LR:
            raise ValueError(f"large must be given at d={d}: the paper names its large rates at d in {list(LARGE_LR)}")
        large = LARGE_LR[d]
    lrs = sorted(lrs)
    hi = [lr for lr in lrs if lr >= large]
    if DEFAULT_LR not in lrs or lrs[0] >= DEFAULT_LR or not hi or hi[0] <= DEFAULT_LR:
        raise ValueError(
            f"lrs must hold a rate below {DEFAULT_LR:g}, {DEFAULT_LR:g} itself and, at d={d}, the large rates "
            f"(eta >= {large:g}) above it, got {lrs!r}"
        )
    return hi


def statements(d: int, lrs, large: float | None = None) -> dict[str, tuple[str, str]]:
    """Figure 11's findings at ``d`` over the rates ``lrs``: name -> (statement, the paper's value), the words of
    :func:`parts` (``lr-01-large`` only where 0.1 is trained and not a large rate)."""
    hi, lo, mid, q = large_rates(d, lrs, large), min(lrs), DEFAULT_LR, min(LARGE_LR.values())
    out = {
        "lr-small-monotone-slow": (
            f"The smallest learning rate (eta={lo:g}, d={d}) converges monotonically (the median run's largest rise "
            f"between evaluations is below {MONOTONE:g}) but slowly (it ends above eta={mid:g})",
            "monotone but slow",
        ),
        "lr-large-nonmonotone-worse": (
            f"A large learning rate ({_eta(hi)} at d={d}) is non-monotone (median largest rise above "
            f"{NON_MONOTONE:g}) and ends at a worse minimum than eta={mid:g}",
            LARGE_WORDS,
        ),
    }
    if q in lrs and q not in hi:  # 0.1, the smallest rate the paper calls large anywhere
        out["lr-01-large"] = (
            f"At d={d} the rate eta={q:g}, which the paper does not name there (it names only {_eta(hi)}), is already "
            f"a large one: its median largest rise is above {NON_MONOTONE:g}, and it ends more than {MARGIN:g} above "
            f"eta={mid:g}",
            f"names only {_eta(hi)} at d={d}: {LARGE_WORDS}",
        )
    return out


def parts(G: dict, d: int, lrs, embeddings, losses, *, large: float | None = None, judge: Judge) -> dict[str, Part]:
    """Figure 11's findings at ``d`` on the runs ``G`` (``(d, lr, embedding, loss)`` -> runs, one per seed) over the
    rates ``lrs``, the ``embeddings`` and ``losses`` pooled: name -> :class:`Part`, one per finding of
    :func:`statements`. Every comparison of two rates is paired by (embedding, loss, seed)."""
    hi = large_rates(d, lrs, large)
    lrs, mid = sorted(lrs), DEFAULT_LR
    pooled = {lr: [r for e in embeddings for l in losses for r in G[(d, lr, e, l)]] for lr in lrs}
    rise = {lr: np.array([largest_rise(r) for r in runs]) for lr, runs in pooled.items()}

    def worse(lr, part, margin=0.0):  # ends above DEFAULT_LR, paired by (embedding, loss, seed)
        a, b = (final(r) for r in by_seed(pooled[mid], pooled[lr]))
        return judge.lower(part, a, b, f"eta={mid:g}", f"eta={lr:g}", paired=True, margin=margin)

    lo, say = lrs[0], statements(d, lrs, large)
    out = {
        "lr-small-monotone-slow": Part(
            *say["lr-small-monotone-slow"],
            pooled[lo] + pooled[mid],
            [
                judge.below(f"monotone at eta={lo:g}", rise[lo], MONOTONE, "largest rise per run"),
                worse(lo, f"slower than eta={mid:g}"),
            ],
        ),
        "lr-large-nonmonotone-worse": Part(
            *say["lr-large-nonmonotone-worse"],
            [r for lr in [*hi, mid] for r in pooled[lr]],
            [
                all_of(
                    "non-monotone", [judge.above(f"eta={lr:g}", rise[lr], NON_MONOTONE, "largest rise") for lr in hi]
                ),
                all_of(f"worse than eta={mid:g}", [worse(lr, f"eta={lr:g}") for lr in hi]),
            ],
        ),
    }
    q = min(LARGE_LR.values())
    if "lr-01-large" in say:
        out["lr-01-large"] = Part(
            *say["lr-01-large"],
            pooled[q] + pooled[mid],
            [
                judge.above(f"non-monotone at eta={q:g}", rise[q], NON_MONOTONE, "largest rise per run"),
                worse(q, f"worse than eta={mid:g} by {MARGIN:g}", MARGIN),
            ],
        )
    return out


def recorded_parts(sweep: RecordedSweep, *, judge: Judge) -> dict[str, Part]:
    """Figure 11's findings on the recorded ``sweep`` (at its one d, over its rates, embeddings and losses): name ->
    :class:`Part` (:func:`lloydbook.findings.recorded_parts`). Each finding reads its two or more rates (the smallest,
    or the large ones, or 0.1, each with :data:`DEFAULT_LR`) on the largest seed set complete at the smallest and
    largest rate; where those runs are not all recorded, it is an open row naming the runs still missing."""
    d, lrs, embeddings, losses = sweep.fixed("d"), *(sweep.values(f) for f in ("lr", "embedding", "loss"))
    hi, q = large_rates(d, lrs), min(LARGE_LR.values())

    def parts_of(G, rates):
        return parts(G, d, rates, embeddings, losses, judge=judge)

    reads = {  # the rates each finding reads (see parts)
        "lr-small-monotone-slow": lambda c: c.lr in (lrs[0], DEFAULT_LR),
        "lr-large-nonmonotone-worse": lambda c: c.lr in (*hi, DEFAULT_LR),
        "lr-01-large": lambda c: c.lr in (q, DEFAULT_LR),
    }
    key, needs = ("d", "lr", "embedding", "loss"), {lrs[0], DEFAULT_LR, *hi}
    return findings.recorded_parts(sweep, "lr", key, parts_of, statements(d, lrs), needs=needs, reads=reads)
