"""The expected verdicts of the learning chapters' claims, one module per chapter, stated before the runs.

Each module holds ``EXPECT``: claim name (without the chapter prefix) -> :class:`Expectation`. At the
paper's setting every claim expects the paper's statement (:attr:`Expectation.paper`); a pilot's verdict,
with its basis, applies only at the CPU build's setting (see :mod:`lloydbook.claims.expectations`).
:data:`EXPECTATIONS` maps full claim ids to them; :func:`expected` reads it.
"""

from __future__ import annotations

from ..claims.expectations import PAPER_VERDICT, Expectation
from ..claims.expectations import expected as _expected
from ..claims.expectations import post_hoc as _post_hoc
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


def expected(claim_id: str, paper_setting: bool) -> str:
    """The verdict the claim ``claim_id`` expects at the paper's setting (``paper_setting``) or elsewhere."""
    return _expected(EXPECTATIONS, claim_id, paper_setting)


def post_hoc(claim_id: str, paper_setting: bool) -> bool:
    """Whether the verdict :func:`expected` gives there was set after reading the claim's own runs or models."""
    return _post_hoc(EXPECTATIONS, claim_id, paper_setting)
