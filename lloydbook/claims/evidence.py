"""The one vocabulary in which the book's measured claims are judged: stated parts, each with an outcome.

A claim about runs or timings is stated as parts (``lower``: "median of a < median of b", ``below`` /
``above``: a median against a threshold, ``within``: two medians equal within a tolerance, ``cheaper``: a
cost ratio over interleaved repetitions, ``all_of``: several cells that must all hold). Each part is an
:class:`Evidence` whose outcome is "holds" (its interval supports the part), "fails" (it contradicts the part
by the stated margin) or "undetermined" (it covers both), decided on intervals at :data:`LEVEL`.
:func:`verdict_of` reads a verdict from the parts and :func:`decide` records the claim, asserting that the
parts support exactly the verdict stated beforehand; an undetermined part never passes a check.

The bootstrap behind ``lower``, ``below``, ``above`` and ``within`` resamples with :func:`bootstrap_seed`: the
active chapter's seed for the draw ``"bootstrap: <part>"`` (:func:`lloydbook.claims.seeds.active_seed`), so it
moves with ``LLOYD_SEED`` like every other draw of the chapter.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lloydlib import training
from lloydlib.bench import timing

from .registry import VERDICTS, Rows, active
from .seeds import active_seed

__all__ = [
    "LEVEL",
    "OUTCOMES",
    "Evidence",
    "q3",
    "bootstrap_seed",
    "lower",
    "below",
    "above",
    "within",
    "cheaper",
    "all_of",
    "verdict_of",
    "decide",
]


def q3(values) -> str:
    """``'median [q25, q75]'`` of per-seed values, three decimals each (numpy's linear quantiles)."""
    a, m, b = training.quartiles(values)
    return f"{m:.3f} [{a:.3f}, {b:.3f}]"


#: confidence of every interval a learning claim is decided on (two-sided bootstrap over seeds)
LEVEL = 0.9
OUTCOMES = ("holds", "fails", "undetermined")


@dataclass(frozen=True)
class Evidence:
    """One stated part of a claim and what the seeds say about it: ``outcome`` is "holds" (the
    interval supports the part), "fails" (it contradicts the part by the stated margin) or
    "undetermined" (it covers both); ``text`` gives the numbers."""

    part: str
    outcome: str
    text: str
    #: an :func:`all_of` part's cells, each an Evidence (empty for any other part)
    cells: tuple = ()


def bootstrap_seed(part: str) -> int:
    """The seed of the bootstrap that decides the part ``part``: the active chapter's seed for the draw
    ``"bootstrap: <part>"`` (:func:`lloydbook.claims.seeds.active_seed`)."""
    return active_seed(f"bootstrap: {part}")


def _median_difference(part: str, a, b, paired: bool):
    """:func:`lloydlib.training.median_difference` of ``b - a`` at :data:`LEVEL`, resampled from the part's
    :func:`bootstrap_seed`."""
    return training.median_difference(a, b, paired=paired, level=LEVEL, seed=bootstrap_seed(part))


def _interval(m) -> str:
    return f"{m.estimate:+.3f}, {m.level:.0%} interval [{m.low:+.3f}, {m.high:+.3f}]"


def lower(part: str, a, b, a_name: str, b_name: str, *, paired: bool, margin: float = 0.0) -> Evidence:
    """The part 'median of ``a`` < median of ``b``' (by more than ``margin``) over per-seed values.

    Decided on the bootstrap interval of median(b) - median(a) (``paired``: of the median of b_i - a_i,
    for runs of one seed that saw the same tasks): holds when the interval lies above ``margin``, fails
    when it lies below it.
    """
    m = _median_difference(part, a, b, paired)
    outcome = "holds" if m.low > margin else "fails" if m.high < margin else "undetermined"
    # runs, not seeds: a pooled part (two embeddings' runs of every seed) holds more runs than seeds
    how = f"paired by seed, {len(a)} pairs" if paired else f"unpaired, {len(a)} and {len(b)} runs"
    against = f", margin {margin:.4g}" if margin else ""  # the boundary the interval is read against, when not 0
    text = f"{a_name} {q3(a)} vs {b_name} {q3(b)}; {b_name} - {a_name} {_interval(m)}{against} ({how})"
    return Evidence(part, outcome, text)


def below(part: str, a, threshold: float, a_name: str) -> Evidence:
    """The part 'median of ``a`` < ``threshold``': holds when the interval of the median lies below it,
    fails when it lies above it."""
    m = _median_difference(part, a, np.full(len(a), float(threshold)), True)
    outcome = "holds" if m.low > 0 else "fails" if m.high < 0 else "undetermined"
    return Evidence(part, outcome, f"{a_name} {q3(a)}; {threshold:g} - median {_interval(m)} ({len(a)} runs)")


def above(part: str, a, threshold: float, a_name: str) -> Evidence:
    """The part 'median of ``a`` > ``threshold``' (see :func:`below`)."""
    m = _median_difference(part, np.full(len(a), float(threshold)), a, True)
    outcome = "holds" if m.low > 0 else "fails" if m.high < 0 else "undetermined"
    return Evidence(part, outcome, f"{a_name} {q3(a)}; median - {threshold:g} {_interval(m)} ({len(a)} runs)")


def within(part: str, a, b, a_name: str, b_name: str, tol: float, *, paired: bool) -> Evidence:
    """The part 'the medians of ``a`` and ``b`` differ by less than ``tol``' (an equivalence test): holds
    when the whole interval of the difference lies inside (-tol, tol), fails when it lies outside."""
    m = _median_difference(part, a, b, paired)
    inside, outside = -tol < m.low and m.high < tol, m.low > tol or m.high < -tol
    outcome = "holds" if inside else "fails" if outside else "undetermined"
    text = f"{a_name} {q3(a)} vs {b_name} {q3(b)}; {b_name} - {a_name} {_interval(m)}, tolerance {tol:g}"
    return Evidence(part, outcome, text)


def cheaper(part: str, a_ms, b_ms, a_name: str, b_name: str) -> Evidence:
    """The part '``a`` costs less time than ``b``' over interleaved repetitions (``a_ms[i]`` and ``b_ms[i]``
    timed back to back): decided on the distribution-free interval of the median of the per-repetition
    ratios b_i / a_i (:func:`lloydlib.bench.timing.median_interval`, the sign test, at :data:`LEVEL`);
    holds when the interval lies above 1, fails when it lies below 1."""
    ratios = timing.paired_ratios(b_ms, a_ms)
    low, high = timing.median_interval(ratios, 1 - LEVEL)
    outcome = "holds" if low > 1 else "fails" if high < 1 else "undetermined"
    text = (
        f"{a_name} {q3(a_ms)} vs {b_name} {q3(b_ms)}; {b_name} / {a_name} {np.median(ratios):.3f}, "
        f"{LEVEL:.0%} interval [{low:.3f}, {high:.3f}] ({len(ratios)} interleaved repetitions)"
    )
    return Evidence(part, outcome, text)


def all_of(part: str, evidence) -> Evidence:
    """One part made of several cells that must all hold ('L2 is lower in every setting'): fails when
    any cell fails, holds when every cell holds, else undetermined. The text counts the outcomes and
    quotes the cell closest to failing (the first undetermined or failing one, else the first)."""
    evidence = list(evidence)
    if not evidence:
        raise ValueError("evidence must hold at least one Evidence, got none")
    outcomes = [e.outcome for e in evidence]
    outcome = "fails" if "fails" in outcomes else "holds" if set(outcomes) == {"holds"} else "undetermined"
    worst = next((e for e in evidence if e.outcome != "holds"), evidence[0])
    counts = ", ".join(f"{outcomes.count(o)} {o}" for o in OUTCOMES if o in outcomes)
    return Evidence(part, outcome, f"{len(evidence)} cells: {counts}; e.g. {worst.part}: {worst.text}", tuple(evidence))


def verdict_of(evidence) -> str:
    """The verdict the parts support: every part holds -> "reproduced"; every part fails -> "not
    reproduced"; some hold and some fail -> "partly"; any undetermined -> "undetermined" (never a verdict:
    a check that meets it fails, so the scale must decide the claim)."""
    outcomes = [e.outcome for e in evidence]
    if not outcomes or "undetermined" in outcomes:
        return "undetermined"
    if all(o == "holds" for o in outcomes):
        return "reproduced"
    return "not reproduced" if all(o == "fails" for o in outcomes) else "partly"


def decide(
    claim_id,
    *,
    statement,
    source,
    paper,
    expected: str,
    evidence,
    setting: str = "",
    into: Rows | None = None,
    post_hoc: bool = False,
) -> list:
    """Record a claim whose verdict ``expected`` was stated before the runs were read (``post_hoc``: set after its
    own runs or models were read, and marked so), in the chapter rows ``into`` (default: the active chapter's,
    :func:`lloydbook.claims.active`).

    ``evidence`` is a list of :class:`Evidence` (one per stated part). The check: the parts support
    exactly the expected verdict (:func:`verdict_of`; "beyond the paper" when every part holds). The row
    shows each part's outcome and numbers, and ``setting`` (where it was decided). Returns ``evidence``.
    """
    evidence = list(evidence)
    if not evidence or not all(isinstance(e, Evidence) for e in evidence):
        raise TypeError("evidence must be a non-empty list of Evidence (from lower, below, above or within)")
    if expected not in VERDICTS[:4]:
        raise ValueError(f"expected must be one of {list(VERDICTS[:4])}, got {expected!r}")
    found = verdict_of(evidence)
    if expected == "beyond the paper":
        found = "beyond the paper" if found == "reproduced" else found
    (active() if into is None else into).record(
        claim_id,
        statement=statement,
        source=source,
        paper=paper,
        ours="; ".join(f"{e.part}: {e.outcome} ({e.text})" for e in evidence),
        verdict=expected,
        check=bool(found == expected),
        setting=setting,
        post_hoc=post_hoc,
    )
    return evidence
