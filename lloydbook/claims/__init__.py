"""The book's claims, in one place: what a chapter checks, and how the Scorecard shows it all.

The protocol, from a chapter cell to the Scorecard page:

1. A chapter (``ch = lloydbook.book.setup(key)``) records each paper statement it covers as a **row** of its
   own :class:`Rows` (``ch.rows``; :mod:`~lloydbook.claims.registry`): a **claim** (``ch.record`` / ``ch.decide``) with
   its statement, source, the paper's value, ours, the verdict stated beforehand, the ``setting`` where it
   was decided (n, d, k, steps, seeds), and the check that asserts the verdict (a failed check stops the
   chapter), judged in one vocabulary of stated parts (:mod:`~lloydbook.claims.evidence`, by the chapter's
   :class:`~lloydbook.claims.evidence.Judge`, ``ch.judge``); or an **open row** (``ch.open``) for a statement the
   build does not decide,
   with the setting and the command that would. Open rows are never assertions and never verdicts. The rows
   own the chapter's seed (:class:`SeededRows`, :mod:`~lloydbook.claims.seeds`): the bootstrap that decides a
   claim's parts draws from it, as every other draw of the chapter does.
2. The chapter's last cell, :func:`table` (``ch.table()``), shows its rows and glues them
   (:mod:`~lloydbook.claims.render`): ``claims-<key>`` holds the table as HTML, ``claims-<key>-rows`` the rows as
   a JSON text, with counts ``claims-<key>-n`` (claims), ``claims-<key>-<verdict>`` (claims stated blind),
   ``claims-<key>-post-hoc`` (claims whose expectation was set after reading their own runs: any verdict) and
   ``claims-<key>-open``.
3. The Sphinx extension :mod:`lloydbook.claims.sphinx` builds the Scorecard page (``{scorecard}`` in
   ``book/scorecard.md``) from those JSON rows: a summary of every chapter's counts with a total, and every
   chapter's table; it fails the strict build when two chapters use one claim id.

The verdicts (defined for readers in book/intro.md): "reproduced", "partly", "not reproduced",
"beyond the paper" (a result the papers do not claim, which the book proves or measures) and
"background" (a known result from outside the two papers that the book relies on, checked like the rest
but not a claim of theirs). Statements and values may hold inline math as ``$...$`` and code in backticks.
"""

from . import evidence, seeds
from .registry import (
    KINDS,
    OPEN,
    POST_HOC,
    VERDICTS,
    Claim,
    Row,
    Rows,
    counts,
    slug,
)
from .render import COLUMNS, ClaimsTable, glue_keys, html_text, table
from .seeds import SeededRows, named_seed

__all__ = [
    "VERDICTS",
    "OPEN",
    "POST_HOC",
    "KINDS",
    "COLUMNS",
    "Row",
    "Claim",
    "Rows",
    "ClaimsTable",
    "counts",
    "glue_keys",
    "table",
    "html_text",
    "slug",
    "evidence",
    "seeds",
    "SeededRows",
    "named_seed",
]
