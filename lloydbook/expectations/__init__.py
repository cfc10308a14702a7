"""The expected verdicts of the learning chapters' claims, one module per chapter, stated before the runs.

Each module holds ``EXPECT``: claim name (without the chapter prefix) -> :class:`Expectation` (see
:mod:`lloydbook.claims.expectations`). :data:`EXPECTATIONS` maps full claim ids to them.
"""

from __future__ import annotations

from ..claims.expectations import PAPER_VERDICT, Expectation
from . import families, landscapes, learning, many_steps, shapes

__all__ = ["Expectation", "PAPER_VERDICT", "EXPECTATIONS", "CHAPTERS", "expected", "post_hoc"]

#: chapter key -> its module's EXPECT
CHAPTERS = {
    "learning": learning.EXPECT,
    "shapes": shapes.EXPECT,
    "many-steps": many_steps.EXPECT,
    "families": families.EXPECT,
    "landscapes": landscapes.EXPECT,
}
#: full claim id -> its expectation
EXPECTATIONS = {f"{key}-{name}": e for key, table in CHAPTERS.items() for name, e in table.items()}


def _entry(claim_id: str) -> Expectation:
    if claim_id not in EXPECTATIONS:
        raise ValueError(
            f"no expectation is stated for claim {claim_id!r}: add it to lloydbook.expectations before computing"
        )
    return EXPECTATIONS[claim_id]


def expected(claim_id: str, paper_setting: bool) -> str:
    """The verdict the claim ``claim_id`` expects at the paper's setting (``paper_setting``) or elsewhere; a
    ValueError naming the claim when it has no entry."""
    return _entry(claim_id).at(paper_setting)


def post_hoc(claim_id: str, paper_setting: bool) -> bool:
    """Whether the verdict :func:`expected` gives there was set after reading the claim's own runs or models."""
    return _entry(claim_id).post_hoc_at(paper_setting)
