"""Figure 17's findings (Leaner paper, Fig. 17): OH against BN on the wall clock, each stated once.

The paper trains OH and BN with L2 at tau = 1 and gradient clipping for (d, k) = (16, 16) and (32, 25) at
n in {256, 512, 1024}, plotting the curves "in terms of actual training time", and reports: "At d=k=16 BN is clearly
slower to converge in wall-clock terms. At d=32, k=25 BN is initially faster."

The comparison reads both runs of a seed (OH and BN see the same tasks: paired by seed) at the same wall-clock times
of ``history["wall_time"]`` (seconds in training steps, validation excluded): :func:`wall_mean`, the wall-clock
analogue of :func:`lloydbook.learning.auc`. A case is decided only where, at every n, at least one embedding's median
final relative loss is below one Lloyd step's (1): else its Part says so (``unmet``) and it is an open row.
"""

from __future__ import annotations

import math

import numpy as np

from .claims.evidence import Judge
from .findings import Part, by_seed
from .learning import final

__all__ = [
    "SOURCE",
    "SLOWER_CASE",
    "FASTER_CASE",
    "CASES",
    "CLEAR",
    "INITIAL",
    "POINTS",
    "wall_mean",
    "wall_means",
    "statements",
    "parts",
]

SOURCE = "Leaner paper, Fig. 17"
#: (d, k) of "BN is clearly slower to converge in wall-clock terms" (Fig. 17a)
SLOWER_CASE = (16, 16)
#: (d, k) of "BN is initially faster" (Fig. 17b)
FASTER_CASE = (32, 25)
#: each finding's (d, k)
CASES = {"wallclock-bn-slower": SLOWER_CASE, "wallclock-bn-initially-faster": FASTER_CASE}
#: "clearly": BN's mean relative validation loss above OH's by more than this (a hundredth of one Lloyd
#: step's loss, averaged over the common time)
CLEAR = 0.01
#: "initially": the first quarter of the time both runs of a seed trained
INITIAL = 0.25
#: times per window at which the curves are read
POINTS = 100


def wall_mean(run, until: float) -> float:
    """Mean relative validation loss of ``run`` at :data:`POINTS` evenly spaced training times in
    ``(0, until]`` seconds (linear between evaluations, against ``history["wall_time"]``); +inf for a
    diverged run."""
    if run.status == "diverged":
        return math.inf
    t = np.linspace(0.0, until, POINTS + 1)[1:]
    h = run.history
    return float(np.mean(np.interp(t, np.asarray(h["wall_time"], float), np.asarray(h["val_rel_loss"], float))))


def wall_means(oh, bn, fraction: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Per seed, :func:`wall_mean` of the OH and the BN run over the first ``fraction`` of the time both
    trained (the shorter of their total training times; of the finished one if the other diverged); two
    arrays of shape ``(seeds,)``."""
    oh, bn = by_seed(oh, bn)
    out = []
    for a, b in zip(oh, bn):
        span = min((float(r.history["wall_time"][-1]) for r in (a, b) if r.status != "diverged"), default=0.0)
        out.append((wall_mean(a, fraction * span), wall_mean(b, fraction * span)))
    return np.array([o for o, _ in out]), np.array([b for _, b in out])


def _ms(runs) -> float:
    """Median milliseconds per training step, from ``history`` (training time over steps at the last evaluation)."""
    return float(np.median([1000 * r.history["wall_time"][-1] / r.history["step"][-1] for r in runs]))


def _unmet(G: dict, case, ns) -> str:
    """Why the case cannot be decided ("" when it can): every n needs an embedding whose runs left the plateau."""
    meds = {(n, e): float(np.median(final(G[(*case, n, e)]))) for n in ns for e in ("OH", "BN")}
    if all(min(meds[(n, "OH")], meds[(n, "BN")]) < 1.0 for n in ns):
        return ""
    worst = max(ns, key=lambda n: min(meds[(n, "OH")], meds[(n, "BN")]))
    return (
        f"the runs are still on the plateau above one Lloyd step, so neither has converged (at n={worst}, median "
        f"final relative loss OH {meds[(worst, 'OH')]:.2f}, BN {meds[(worst, 'BN')]:.2f})"
    )


def statements() -> dict[str, tuple[str, str]]:
    """Figure 17's findings: name -> (statement, the paper's value), the words of :func:`parts`."""
    return {
        "wallclock-bn-slower": (
            f"At d=k={SLOWER_CASE[0]} BN is clearly slower to converge in wall-clock terms (its mean relative "
            f"validation loss over the time both runs of a seed trained is above OH's by more than {CLEAR:g}; L2, "
            "tau=1, clipped)",
            '"At d=k=16 BN is clearly slower to converge in wall-clock terms"',
        ),
        "wallclock-bn-initially-faster": (
            f"At d={FASTER_CASE[0]}, k={FASTER_CASE[1]} BN is initially faster (its mean relative validation loss "
            f"over the first {INITIAL:.0%} of the time both runs of a seed trained is below OH's; L2, tau=1, clipped)",
            '"At d=32, k=25 BN is initially faster"',
        ),
    }


def parts(G: dict, cases, ns, *, judge: Judge) -> dict[str, Part]:
    """Figure 17's findings on the runs ``G[(d, k, n, embedding)]`` of the ``cases`` ``[(d, k)]`` among
    :data:`SLOWER_CASE` and :data:`FASTER_CASE` at every n of ``ns``, paired by seed (:func:`wall_means`): name ->
    :class:`Part`, one per finding of :func:`statements` whose case is among ``cases``."""
    cases, say = [tuple(c) for c in cases], statements()

    def one(name, what, fraction, bn_above):  # BN's mean above OH's by CLEAR, or below it
        evidence, runs = [], []
        for n in ns:
            oh, bn = G[(*CASES[name], n, "OH")], G[(*CASES[name], n, "BN")]
            a, b = wall_means(oh, bn, fraction)
            label = f"n={n}, {what} (ms per step OH {_ms(oh):.2f}, BN {_ms(bn):.2f})"
            margin = dict(margin=CLEAR) if bn_above else {}
            pair = (a, b, "OH", "BN") if bn_above else (b, a, "BN", "OH")
            evidence.append(judge.lower(label, *pair, paired=True, **margin))
            runs += oh + bn
        return Part(*say[name], runs, evidence, _unmet(G, CASES[name], ns))

    how = {
        "wallclock-bn-slower": ("whole common time", 1.0, True),
        "wallclock-bn-initially-faster": (f"first {INITIAL:.0%} of the common time", INITIAL, False),
    }
    return {name: one(name, *how[name]) for name, case in CASES.items() if case in cases}
