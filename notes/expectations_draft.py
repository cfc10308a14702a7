"""What each measured claim is expected to find, stated before the runs are read, setting by setting.

At the paper's own setting the expectation is the paper's statement, whatever any smaller build found; at any
other setting it is what a pilot at that very setting found, with the runs the pilot used named. A pilot's
expectation is never carried to another setting: a chapter built at a setting for which nothing is stated
stops with an error that says so. So a build at the paper's setting cannot contradict the paper by
construction (``tests/lloydbook/claims/test_expectations.py`` inspects the registry), and where it disagrees,
its check fails: that is the finding.

A chapter asks ``ch.expect(name, setting)`` (:meth:`lloydbook.book.Chapter.expect`) and passes the answer as
``expected`` to ``ch.decide``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .registry import VERDICTS

__all__ = ["Pilot", "Expectation", "EXPECTATIONS", "expected", "register"]


@dataclass(frozen=True)
class Pilot:
    """What a pilot found at ``setting`` (a :meth:`lloydbook.book.Chapter.setting` text): ``verdict``, and
    ``basis``: which runs it used (a pilot on the same trained models tests evaluation sampling, not
    training: it says so)."""

    setting: str
    verdict: str
    basis: str


@dataclass(frozen=True)
class Expectation:
    """A claim's expectations: ``paper`` at the paper's setting ``paper_setting`` (the paper's statement:
    "reproduced" for a claim of the paper, "beyond the paper" for one the paper does not make), and the
    ``pilots`` at other settings."""

    paper: str
    paper_setting: str
    pilots: tuple[Pilot, ...] = ()

    def __post_init__(self):
        for v in (self.paper, *(p.verdict for p in self.pilots)):
            if v not in VERDICTS[:4]:
                raise ValueError(f"an expected verdict must be one of {list(VERDICTS[:4])}, got {v!r}")
        for p in self.pilots:
            if p.setting == self.paper_setting:
                raise ValueError(f"a pilot cannot state the expectation at the paper's setting {p.setting!r}")


#: claim id -> its expectations (filled by the chapters' modules through :func:`register`)
EXPECTATIONS: dict[str, Expectation] = {}


def register(claim_id: str, expectation: Expectation) -> Expectation:
    """Add ``claim_id``'s expectations to :data:`EXPECTATIONS` (once: a second, different one raises)."""
    if not isinstance(expectation, Expectation):
        raise TypeError(f"expectation must be an Expectation, got {type(expectation).__name__}")
    old = EXPECTATIONS.get(claim_id)
    if old is not None and old != expectation:
        raise ValueError(f"claim {claim_id!r} already has other expectations")
    EXPECTATIONS[claim_id] = expectation
    return expectation


def expected(claim_id: str, setting: str) -> str:
    """The verdict stated for ``claim_id`` at ``setting``: the paper's at the paper's setting, a pilot's at the
    pilot's; a ValueError naming the claim and the settings that have one otherwise."""
    e = EXPECTATIONS.get(claim_id)
    if e is None:
        raise ValueError(f"no expectation is stated for claim {claim_id!r}: add it to lloydbook.claims.expectations")
    if setting == e.paper_setting:
        return e.paper
    for p in e.pilots:
        if p.setting == setting:
            return p.verdict
    known = [e.paper_setting, *(p.setting for p in e.pilots)]
    raise ValueError(
        f"no expectation is stated for claim {claim_id!r} at the setting {setting!r} (stated at: {known}); "
        "state one before computing: the paper's at its own setting, or a pilot's at this one"
    )
