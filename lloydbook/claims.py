"""The book's claims: each chapter records the papers' claims it checks, and the scorecard shows them all.

A claim is one row: an id, the statement, where the paper makes it, the paper's value, our value and a
verdict. :func:`record` asserts the check behind the verdict (a failed check stops the chapter with an
``AssertionError`` that names the claim) and keeps the row; :func:`table`, the chapter's last code cell,
shows the chapter's rows and glues them for the Scorecard page::

    from lloydbook import book, claims
    P = book.setup("lloyd")              # starts the chapter's claim list
    claims.record("lloyd-monotone",
                  statement="Lloyd's algorithm never increases the k-means objective",
                  source="Leaner paper, Alg. 2", paper="monotone decrease",
                  ours=f"max increase {inc:.1e}", verdict="reproduced", check=bool(inc <= 0))
    claims.table()

Glue keys written by :func:`table` for chapter ``c`` (see :func:`glue_keys`): ``claims-c`` (the table, as
HTML), ``claims-c-n`` (the number of claims) and one count per verdict: ``claims-c-reproduced``,
``claims-c-partly``, ``claims-c-not-reproduced``, ``claims-c-beyond-the-paper``,
``claims-c-background``.

The verdicts (defined for readers in book/intro.md): "reproduced", "partly", "not reproduced",
"beyond the paper" (a result the papers do not claim, which the book proves or measures) and
"background" (a known result from outside the two papers that the book relies on, checked like the rest
but not a claim of theirs: k-means++'s guarantee, for example).

Statements and values may hold inline math as ``$...$`` (the table writes it as ``\\(...\\)`` for MathJax)
and code in backticks (shown as code).
"""

from __future__ import annotations

import html
import math
import numbers
import re
from dataclasses import dataclass

import numpy as np

from .glue import glue

__all__ = ["VERDICTS", "Claim", "ClaimsTable", "start", "chapter", "record", "claims", "counts", "glue_keys", "table"]

VERDICTS = ("reproduced", "partly", "not reproduced", "beyond the paper", "background")

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_CODE = re.compile(r"`([^`]+)`")
_INLINE_MATH = re.compile(r"(?<!\\)\$(?!\$)(.+?)(?<!\\)\$")


@dataclass(frozen=True)
class Claim:
    """One checked claim; ``paper`` and ``ours`` are already formatted as text."""

    id: str
    statement: str
    source: str
    paper: str
    ours: str
    verdict: str


_chapter: str | None = None
_rows: dict[str, Claim] = {}


def _slug(text: str) -> str:
    return text.replace(" ", "-")


def _check_key(name: str, value) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} {value!r}")
    if not _ID.match(value):
        raise ValueError(
            f"{name} must be lowercase letters and digits joined by single hyphens "
            f"(like 'lloyd-monotone'), got {value!r}"
        )
    return value


def _check_text(name: str, value) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} {value!r}")
    if not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return value.strip()


def _format_value(name: str, value) -> str:
    """A claim's value as text: strings as given, integers exactly, other reals with 4 significant digits."""
    if isinstance(value, str):
        return _check_text(name, value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a str or a real number (int, float), got {type(value).__name__} "
            f"{value!r}; for a tensor or array pass float(x) or a formatted string"
        )
    if isinstance(value, numbers.Integral):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}; a claim cannot rest on NaN or infinity")
    return f"{value:.4g}"


def start(chapter_key: str) -> str:
    """Begin a chapter's claim list (called by :func:`lloydbook.book.setup`); forgets earlier rows."""
    global _chapter
    _chapter = _check_key("chapter", chapter_key)
    _rows.clear()
    return _chapter


def chapter() -> str:
    """The key of the chapter being run; raises if no chapter was started."""
    if _chapter is None:
        raise RuntimeError("no chapter started: call lloydbook.book.setup(chapter) before recording claims")
    return _chapter


def record(id: str, *, statement: str, source: str, paper, ours, verdict: str, check) -> Claim:
    """Assert a claim's check and keep its row for the chapter's table.

    ``id`` is unique in the book and starts with the chapter key (``"lloyd-monotone"`` in chapter
    ``lloyd``). ``paper`` and ``ours`` are strings or real numbers (floats are shown with 4 significant
    digits). ``verdict`` is one of :data:`VERDICTS`. ``check`` is a bool: the test of that verdict
    (for "not reproduced", that our measurement contradicts the paper's value by a stated margin).

    Re-running the cell that records a claim replaces its row; a second, different claim with the same
    id raises ``ValueError``. A failed check raises ``AssertionError`` naming the claim and both values.
    """
    key = chapter()
    id = _check_key("id", id)
    if not id.startswith(key + "-"):
        raise ValueError(f"id must start with the chapter key and a hyphen ({key + '-'!r}), got {id!r}")
    row = Claim(
        id=id,
        statement=_check_text("statement", statement),
        source=_check_text("source", source),
        paper=_format_value("paper", paper),
        ours=_format_value("ours", ours),
        verdict=_check_verdict(verdict),
    )
    if not isinstance(check, (bool, np.bool_)):
        raise TypeError(
            f"check must be a bool (the test of the verdict), got {type(check).__name__} "
            f"{check!r}; write check=bool(...)"
        )
    old = _rows.get(id)
    if old is not None and (old.statement, old.source) != (row.statement, row.source):
        raise ValueError(
            f"claim id {id!r} is already used in chapter {key!r} by another claim "
            f"({old.statement!r}, {old.source}); ids must be unique"
        )
    if not check:
        raise AssertionError(
            f"claim {id!r} failed its check (verdict stated: {row.verdict!r}): "
            f"{row.statement} [{row.source}]; paper: {row.paper}; ours: {row.ours}"
        )
    _rows[id] = row
    return row


def _check_verdict(verdict) -> str:
    if not isinstance(verdict, str) or verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {list(VERDICTS)}, got {verdict!r}")
    return verdict


def claims() -> list[Claim]:
    """The current chapter's recorded claims, in recording order."""
    chapter()
    return list(_rows.values())


def counts() -> dict[str, int]:
    """Number of the current chapter's claims per verdict (every verdict present, zeros included)."""
    rows = claims()
    return {v: sum(r.verdict == v for r in rows) for v in VERDICTS}


def glue_keys(chapter_key: str) -> dict[str, str]:
    """The glue keys :func:`table` writes for a chapter: ``"table"``, ``"n"`` and one per verdict."""
    chapter_key = _check_key("chapter", chapter_key)
    keys = {"table": f"claims-{chapter_key}", "n": f"claims-{chapter_key}-n"}
    keys.update({v: f"claims-{chapter_key}-{_slug(v)}" for v in VERDICTS})
    return keys


def _html_text(text: str) -> str:
    """Escape for HTML; a backticked span becomes <code>, ``$...$`` MathJax's inline math ``\\(...\\)``."""
    out = []
    for i, part in enumerate(_CODE.split(text)):  # even indices: prose, odd: code spans
        part = html.escape(part, quote=False)
        if i % 2:
            out.append(f"<code>{part}</code>")
        else:
            out.append(_INLINE_MATH.sub(lambda m: r"\(" + m.group(1) + r"\)", part))
    return "".join(out)


class ClaimsTable:
    """A chapter's claims as an HTML table (the book, Jupyter) with a plain-text fallback."""

    COLUMNS = ("Claim", "Statement", "Source", "Paper", "Ours", "Verdict")

    def __init__(self, chapter_key: str, rows: list[Claim]):
        self.chapter = chapter_key
        self.rows = list(rows)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{c}</th>" for c in self.COLUMNS)
        body = []
        for r in self.rows:
            cells = [f"<td><code>{html.escape(r.id)}</code></td>"]
            cells += [f"<td>{_html_text(t)}</td>" for t in (r.statement, r.source, r.paper, r.ours)]
            cells.append(f'<td><span class="claim-verdict verdict-{_slug(r.verdict)}">{r.verdict}</span></td>')
            body.append(f'<tr id="claim-{r.id}" class="verdict-{_slug(r.verdict)}">{"".join(cells)}</tr>')
        return (
            f'<table class="claims-table mathjax_process" data-chapter="{html.escape(self.chapter)}">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        )

    def __repr__(self) -> str:
        lines = [" | ".join(self.COLUMNS)]
        lines += [" | ".join((r.id, r.statement, r.source, r.paper, r.ours, r.verdict)) for r in self.rows]
        return "\n".join(lines)


def table() -> None:
    """Show the chapter's claims and glue them (the table and the counts) for the Scorecard page.

    Call it in the chapter's last code cell. It displays the table itself and returns None, so the
    table is not shown twice.
    """
    key = chapter()
    rows = claims()
    if not rows:
        raise ValueError(f"chapter {key!r} recorded no claims; call claims.record(...) before claims.table()")
    keys = glue_keys(key)
    tab = ClaimsTable(key, rows)
    glue(keys["table"], tab, display=True)
    glue(keys["n"], len(rows), display=False)
    for verdict, n in counts().items():
        glue(keys[verdict], n, display=False)
