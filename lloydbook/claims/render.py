"""A chapter's rows as a table (HTML for the page, JSON for the Scorecard) and :func:`table`, which glues them."""

from __future__ import annotations

import html
import json
import re

from ..glue import glue
from .registry import OPEN, POST_HOC, VERDICTS, Row, Rows, _check_key, slug

__all__ = ["COLUMNS", "ClaimsTable", "glue_keys", "table", "html_text"]

#: the table's columns (an open row's "Verdict" cell reads "open", its "Ours" cell what would decide it)
COLUMNS = ("Claim", "Statement", "Source", "Setting", "Paper", "Ours", "Verdict")

_POST_HOC_TITLE = "its expected verdict was set after its own runs or models had been read: it records what they show"
_CODE = re.compile(r"`([^`]+)`")
_INLINE_MATH = re.compile(r"(?<!\\)\$(?!\$)(.+?)(?<!\\)\$")


def html_text(text: str) -> str:
    """Escape for HTML; a backticked span becomes <code>, ``$...$`` MathJax's inline math ``\\(...\\)``."""
    out = []
    for i, part in enumerate(_CODE.split(text)):  # even indices: prose, odd: code spans
        part = html.escape(part, quote=False)
        if i % 2:
            out.append(f"<code>{part}</code>")
        else:
            out.append(_INLINE_MATH.sub(lambda m: r"\(" + m.group(1) + r"\)", part))
    return "".join(out)


def _ours(r: Row) -> str:
    if r.kind != OPEN:
        return html_text(r.ours)
    return f"{html_text(r.ours)}<br><em>decided by:</em> {html_text(r.decides)}"


class ClaimsTable:
    """A chapter's rows as an HTML table (the book, Jupyter), as JSON (:meth:`to_json`: what the Scorecard
    reads, the rows as data) and as plain text."""

    COLUMNS = COLUMNS

    def __init__(self, chapter_key: str, rows: list[Row]):
        self.chapter = chapter_key
        self.rows = list(rows)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{c}</th>" for c in self.COLUMNS)
        body = []
        for r in self.rows:
            v = slug(r.verdict)
            cells = [f"<td><code>{html.escape(r.id)}</code></td>"]
            cells += [f"<td>{html_text(t)}</td>" for t in (r.statement, r.source, r.setting or "-", r.paper)]
            cells.append(f"<td>{_ours(r)}</td>")
            mark = f' <span class="claim-post-hoc" title="{_POST_HOC_TITLE}">(post hoc)</span>' if r.post_hoc else ""
            cells.append(f'<td><span class="claim-verdict verdict-{v}">{r.verdict}</span>{mark}</td>')
            kind = " post-hoc" if r.post_hoc else ""
            body.append(f'<tr id="claim-{r.id}" class="verdict-{v}{kind}">{"".join(cells)}</tr>')
        return (
            f'<table class="claims-table mathjax_process" data-chapter="{html.escape(self.chapter)}">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        )

    def to_json(self) -> str:
        """The rows as a JSON text: ``{"chapter": key, "rows": [row, ...]}`` (see :meth:`Row.to_dict`)."""
        return json.dumps({"chapter": self.chapter, "rows": [r.to_dict() for r in self.rows]}, ensure_ascii=False)

    @classmethod
    def from_json(cls, data) -> ClaimsTable:
        """The table of :meth:`to_json`'s text (or its dict): what the Scorecard reads back from a chapter's glue."""
        if isinstance(data, str):
            data = json.loads(data)
        if not isinstance(data, dict) or set(data) != {"chapter", "rows"} or not isinstance(data["rows"], list):
            raise ValueError(f"a claims table's JSON must be {{'chapter': key, 'rows': [...]}}, got {str(data)[:80]}")
        return cls(_check_key("chapter", data["chapter"]), [Row.from_dict(r) for r in data["rows"]])

    def __repr__(self) -> str:
        lines = [" | ".join(self.COLUMNS)]
        for r in self.rows:
            ours = r.ours if r.kind != OPEN else f"{r.ours}; decided by: {r.decides}"
            verdict = f"{r.verdict} (post hoc)" if r.post_hoc else r.verdict
            lines.append(" | ".join((r.id, r.statement, r.source, r.setting or "-", r.paper, ours, verdict)))
        return "\n".join(lines)


def glue_keys(chapter_key: str) -> dict[str, str]:
    """The glue keys :func:`table` writes for a chapter: ``"table"`` (HTML), ``"rows"`` (the rows as a JSON
    text), ``"n"`` (claims, open rows not counted), one per verdict (claims stated blind), ``"post hoc"`` and
    ``"open"`` (see :func:`lloydbook.claims.counts`)."""
    chapter_key = _check_key("chapter", chapter_key)
    keys = {"table": f"claims-{chapter_key}", "rows": f"claims-{chapter_key}-rows", "n": f"claims-{chapter_key}-n"}
    keys.update({v: f"claims-{chapter_key}-{slug(v)}" for v in (*VERDICTS, POST_HOC, OPEN)})
    return keys


def table(chapter_rows: Rows) -> None:
    """Show a chapter's rows (``chapter_rows``, ``ch.rows``) and glue them (the table, with its
    rows as JSON, and the counts) for the Scorecard page. Call it in the chapter's last code cell
    (``ch.table()``). It displays the table itself and returns None, so the table is not shown twice."""
    if not isinstance(chapter_rows, Rows):
        raise TypeError(f"chapter_rows must be a chapter's Rows (ch.rows), got {type(chapter_rows).__name__}")
    key, found = chapter_rows.chapter, chapter_rows.rows()
    if not any(r.kind == "claim" for r in found):
        raise ValueError(f"chapter {key!r} recorded no claims; record one (ch.record or ch.decide) before ch.table()")
    keys = glue_keys(key)
    table = ClaimsTable(key, found)
    glue(keys["table"], table, display=True)
    glue(keys["rows"], table.to_json(), display=False)
    n = chapter_rows.counts()
    glue(keys["n"], sum(n[v] for v in (*VERDICTS, POST_HOC)), display=False)
    for verdict, count in n.items():
        glue(keys[verdict], count, display=False)
