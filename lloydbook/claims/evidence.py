"""The one vocabulary in which the book's measured claims are judged: stated parts, each with an outcome.

A claim about runs or timings is stated as parts (:meth:`Judge.lower`, :meth:`~Judge.below`, :meth:`~Judge.above`,
:meth:`~Judge.within`, :func:`cheaper`, :func:`all_of`), each an :class:`Evidence` whose outcome is "holds" (its
interval supports the part), "fails" (it contradicts the part by the stated margin) or "undetermined" (it covers
both), decided on intervals at :data:`LEVEL`. :func:`decide` records the claim, asserting that the parts support
exactly the verdict stated beforehand (:func:`verdict_of`); an undetermined part never passes a check.

The bootstrap parts are decided by a :class:`Judge`, which owns the seed of each part's resampling: a chapter's
(``ch.judge``) draws part ``p`` from the chapter's seed for the draw ``"bootstrap: p"``. A function that states parts
takes the judge as an argument.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lloydlib import training
from lloydlib.bench import timing

from .registry import VERDICTS, Rows
from .seeds import named_seed

__all__ = ["LEVEL", "OUTCOMES", "Evidence", "q3", "pooled_median", "Judge", "cheaper", "all_of", "verdict_of", "decide"]


def q3(values) -> str:
    """``'median [q25, q75]'`` of per-seed values, three decimals each (numpy's linear quantiles)."""
    a, m, b = training.quartiles(values)
    return f"{m:.3f} [{a:.3f}, {b:.3f}]"


def pooled_median(values) -> float:
    """The median of several settings' per-seed values pooled (an iterable of arrays of shape (seeds,))."""
    values = [np.ravel(np.asarray(v, dtype=float)) for v in values]
    if not values:
        raise ValueError("values must hold at least one array of per-seed values, got none")
    return float(np.median(np.concatenate(values)))


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


def _interval(m) -> str:
    return f"{m.estimate:+.3f}, {m.level:.0%} interval [{m.low:+.3f}, {m.high:+.3f}]"


def _outcome(low: float, high: float, boundary: float) -> str:
    """The outcome of the interval [low, high] against ``boundary``: "holds" above it, "fails" below it, else
    "undetermined"."""
    return "holds" if low > boundary else "fails" if high < boundary else "undetermined"


@dataclass(frozen=True)
class Judge:
    """Decides stated parts on per-seed values by a bootstrap at :data:`LEVEL`; ``seed_of(part)`` is the seed of the
    resampling that decides the part named ``part`` (an integer >= 0). ``ch.judge`` of a chapter
    (:class:`lloydbook.book.Chapter`) draws it from the chapter's seed; :meth:`at` makes one for a seed value and a
    chapter key without a chapter (tests, scripts)."""

    seed_of: Callable[[str], int]

    def __post_init__(self):
        if not callable(self.seed_of):
            raise TypeError(f"seed_of must be a function of a part's name to a seed, got {self.seed_of!r}")

    @classmethod
    def at(cls, seed_value: int, chapter_key: str) -> Judge:
        """The judge of a chapter keyed ``chapter_key`` at seed value ``seed_value``: part ``p`` resampled from
        :func:`lloydbook.claims.seeds.named_seed` of the draw ``"bootstrap: p"``, as that chapter's would be."""
        return cls(lambda part: named_seed(seed_value, chapter_key, f"bootstrap: {part}"))

    def _difference(self, part: str, a, b, paired: bool):
        """:func:`lloydlib.training.median_difference` of ``b - a`` at :data:`LEVEL`, resampled from the part's seed."""
        if not isinstance(part, str) or not part.strip():
            raise ValueError(f"part must be the non-empty name of a stated part, got {part!r}")
        return training.median_difference(a, b, paired=paired, level=LEVEL, seed=self.seed_of(part))

    def lower(self, part: str, a, b, a_name: str, b_name: str, *, paired: bool, margin: float = 0.0) -> Evidence:
        """The part 'median of ``a`` < median of ``b``' (by more than ``margin``) over per-seed values.

        Decided on the bootstrap interval of median(b) - median(a) (``paired``: of the median of b_i - a_i,
        for runs of one seed that saw the same tasks): holds when the interval lies above ``margin``, fails
        when it lies below it.
        """
        m = self._difference(part, a, b, paired)
        # runs, not seeds: a pooled part (two embeddings' runs of every seed) holds more runs than seeds
        how = f"paired by seed, {len(a)} pairs" if paired else f"unpaired, {len(a)} and {len(b)} runs"
        against = f", margin {margin:.4g}" if margin else ""  # the boundary the interval is read against, when not 0
        text = f"{a_name} {q3(a)} vs {b_name} {q3(b)}; {b_name} - {a_name} {_interval(m)}{against} ({how})"
        return Evidence(part, _outcome(m.low, m.high, margin), text)

    def _against(self, part: str, a, threshold: float, a_name: str, below: bool) -> Evidence:
        flat = np.full(len(a), float(threshold))
        m = self._difference(part, a, flat, True) if below else self._difference(part, flat, a, True)
        difference = f"{threshold:g} - median" if below else f"median - {threshold:g}"
        text = f"{a_name} {q3(a)}; {difference} {_interval(m)} ({len(a)} runs)"
        return Evidence(part, _outcome(m.low, m.high, 0), text)

    def below(self, part: str, a, threshold: float, a_name: str) -> Evidence:
        """The part 'median of ``a`` < ``threshold``': holds when the interval of the median lies below it,
        fails when it lies above it."""
        return self._against(part, a, threshold, a_name, below=True)

    def above(self, part: str, a, threshold: float, a_name: str) -> Evidence:
        """The part 'median of ``a`` > ``threshold``' (see :meth:`below`)."""
        return self._against(part, a, threshold, a_name, below=False)

    def within(self, part: str, a, b, a_name: str, b_name: str, tol: float, *, paired: bool) -> Evidence:
        """The part 'the medians of ``a`` and ``b`` differ by less than ``tol``' (an equivalence test): holds
        when the whole interval of the difference lies inside (-tol, tol), fails when it lies outside."""
        m = self._difference(part, a, b, paired)
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
    text = (
        f"{a_name} {q3(a_ms)} vs {b_name} {q3(b_ms)}; {b_name} / {a_name} {np.median(ratios):.3f}, "
        f"{LEVEL:.0%} interval [{low:.3f}, {high:.3f}] ({len(ratios)} interleaved repetitions)"
    )
    return Evidence(part, _outcome(low, high, 1), text)


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
    into: Rows,
    setting: str = "",
    post_hoc: bool = False,
) -> list:
    """Record a claim whose verdict ``expected`` was stated before the runs were read (``post_hoc``: set after its
    own runs or models were read, and marked so), in the chapter rows ``into`` (``ch.rows``).

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
    if not isinstance(into, Rows):
        raise TypeError(f"into must be a chapter's Rows (ch.rows), got {type(into).__name__}")
    into.record(
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
