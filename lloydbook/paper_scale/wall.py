"""Figure 17 (Leaner paper, Fig. 17) at paper scale: OH against BN on the wall clock.

The paper trains OH and BN with L2 at tau = 1 and gradient clipping for (d, k) = (16, 16) and (32, 25) at
n in {256, 512, 1024}, plotting the curves "in terms of actual training time" (its caption), and reports
(on Fig. 17, in the words of our brief of the paper, Sec. 2.7): "At d=k=16 BN is clearly slower to converge in wall-clock terms. At d=32,
k=25 BN is initially faster."

A run records ``history["wall_time"]``, the seconds spent in training steps up to each evaluation
(validation excluded), beside ``history["val_rel_loss"]`` (Eq. 20). The comparison reads both runs of a
seed (OH and BN see the same tasks: paired by seed) at the same wall-clock times: :func:`wall_mean` is the
mean of a run's relative validation loss, interpolated linearly between its evaluations, at
:data:`POINTS` evenly spaced times of a window, the wall-clock analogue of :func:`lloydbook.learning.auc`.
"""

from __future__ import annotations

import math

import numpy as np

from ..claims.evidence import lower
from .common import Recorder, by_seed, check_groups, check_seeds, check_values, complete

__all__ = ["SLOWER_CASE", "FASTER_CASE", "CLEAR", "INITIAL", "POINTS", "wall_mean", "wall_means", "fig17_claims"]

#: (d, k) of "BN is clearly slower to converge in wall-clock terms" (Fig. 17a)
SLOWER_CASE = (16, 16)
#: (d, k) of "BN is initially faster" (Fig. 17b)
FASTER_CASE = (32, 25)
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


def fig17_claims(G: dict, *, cases, ns, seeds: int, machine: str) -> list[str]:
    """Decide Figure 17's statements (Leaner paper, Fig. 17) on the GPU runs ``G`` when every (d, k, n,
    embedding) setting of ``cases`` ``[(d, k)]``, ``ns`` and OH, BN has ``seeds`` runs; returns the ids
    recorded ([] for a partial sweep). ``G`` maps ``(d, k, n, embedding)`` to runs, one per seed.

    At every n, paired by seed (see :func:`wall_means`): ``learning-wallclock-bn-slower-gpu-<machine>``
    at :data:`SLOWER_CASE`: BN's mean relative validation loss over the common training time is above OH's
    by more than :data:`CLEAR`; ``learning-wallclock-bn-initially-faster-gpu-<machine>`` at
    :data:`FASTER_CASE`: over its first :data:`INITIAL`, BN's is below OH's. A statement whose case is not
    among ``cases`` is not recorded."""
    G, seeds = check_groups(G), check_seeds(seeds)
    cases, ns = check_values("cases", cases), check_values("ns", ns)
    if SLOWER_CASE not in cases and FASTER_CASE not in cases:
        raise ValueError(f"cases must include {SLOWER_CASE} or {FASTER_CASE} (the paper's Fig. 17), got {cases!r}")
    record = Recorder(machine, "Leaner paper, Fig. 17")
    if not complete(G, [(d, k, n, e) for d, k in cases for n in ns for e in ("OH", "BN")], seeds):
        return []
    where = f"{machine}, paper scale, L2, n={', '.join(map(str, ns))}"

    def part(case, n, what):
        oh, bn = G[(*case, n, "OH")], G[(*case, n, "BN")]
        return f"n={n}, {what} (ms per step OH {_ms(oh):.2f}, BN {_ms(bn):.2f})", oh, bn

    if SLOWER_CASE in cases:
        evidence = []
        for n in ns:
            label, oh, bn = part(SLOWER_CASE, n, "whole common time")
            a, b = wall_means(oh, bn)
            evidence.append(lower(label, a, b, "OH", "BN", paired=True, margin=CLEAR))
        record(
            "learning-wallclock-bn-slower",
            statement=f"At d=k={SLOWER_CASE[0]} BN is clearly slower to converge in wall-clock terms (its mean relative validation loss over the time both runs of a seed trained is above OH's by more than {CLEAR:g}; {where})",
            paper="BN clearly slower on the clock (d = k = 16)",
            evidence=evidence,
        )
    if FASTER_CASE in cases:
        evidence = []
        for n in ns:
            label, oh, bn = part(FASTER_CASE, n, f"first {INITIAL:.0%} of the common time")
            a, b = wall_means(oh, bn, INITIAL)
            evidence.append(lower(label, b, a, "BN", "OH", paired=True))
        record(
            "learning-wallclock-bn-initially-faster",
            statement=f"At d={FASTER_CASE[0]}, k={FASTER_CASE[1]} BN is initially faster (its mean relative validation loss over the first {INITIAL:.0%} of the time both runs of a seed trained is below OH's; {where})",
            paper="BN initially faster on the clock (d = 32, k = 25)",
            evidence=evidence,
        )
    return record.ids
