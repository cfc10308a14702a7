"""The book's claims, in one place: what a chapter checks, and how the Scorecard shows it all.

A chapter (``ch = lloydbook.book.setup(key)``) records each paper statement it covers as a row of its own
:class:`~lloydbook.claims.seeds.SeededRows` (``ch.rows``, :mod:`~lloydbook.claims.registry`, which also own the
chapter's seed): a **claim** (``ch.record`` / ``ch.decide``) with its statement, source, the paper's value, ours, the
verdict stated beforehand, the ``setting`` where it was decided and the check that asserts the verdict, judged in stated
parts (:mod:`~lloydbook.claims.evidence`, by the chapter's ``ch.judge``); or an **open row** (``ch.open``) for a
statement the build does not decide, with the setting and command that would (never an assertion, never a verdict). The
chapter's last cell, ``ch.table()`` (:func:`table`, :mod:`~lloydbook.claims.render`), shows its rows and glues them:
``claims-<key>`` the HTML table, ``claims-<key>-rows`` the rows as JSON, and the counts (:func:`glue_keys`). The Sphinx
extension :mod:`lloydbook.claims.sphinx` builds the Scorecard page from those JSON rows.

The verdicts (defined for readers in book/intro.md): "reproduced", "partly", "not reproduced", "beyond the paper" (a
result the papers do not claim, which the book proves or measures) and "background" (a known result from outside
the two papers that the book relies on, checked like the rest). Statements and values may hold inline math as
``$...$`` and code in backticks.
"""

from .registry import OPEN, POST_HOC, VERDICTS, Row, Rows, counts
from .render import ClaimsTable, glue_keys, table

__all__ = [
    "VERDICTS",
    "OPEN",
    "POST_HOC",
    "Row",
    "Rows",
    "ClaimsTable",
    "counts",
    "glue_keys",
    "table",
]
