"""The book's Sphinx extension (loaded from _config.yml: ``sphinx.extra_extensions``).

1. The Scorecard. ``{scorecard}`` in ``book/scorecard.md`` becomes, once every chapter is read, a summary
   of every chapter's rows (one column per verdict of :data:`lloydbook.claims.VERDICTS` for the claims whose
   expectation was stated blind, one for the post-hoc claims whatever their verdict, the number of claims, the
   open rows; a last row "Total" summed from them) and every chapter's table, in the order of
   the documents, built from the rows each chapter glued as JSON (``claims-<key>-rows``, written by
   :func:`lloydbook.claims.table`). A claim id used by two chapters, a chapter table that does not read as
   rows, or a Scorecard with no chapter is a warning, which the strict build (``-W``) turns into an error.
2. MathJax on every page: the claims tables are raw HTML that may hold math, and Sphinx would load
   MathJax only on pages with math nodes.
3. sphinx-thebe's scripts are dropped when thebe is off (``launch_buttons.thebe: false``): they are
   unused, and Jupyter Book registers its inline config twice, which throws in the browser.
"""

from __future__ import annotations

import ast
import html
import json
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

from .registry import OPEN, POST_HOC, VERDICTS, counts, slug
from .render import ClaimsTable

logger = logging.getLogger(__name__)

CLAIMS_KEY = re.compile(r"^claims-([a-z0-9]+(?:-[a-z0-9]+)*)$")
#: the summary's columns after "Chapter": the verdicts of the claims stated blind, the post-hoc claims (whatever their
#: verdict), the number of claims, the open rows
SUMMARY_COLUMNS = (*VERDICTS, POST_HOC, "claims", OPEN)


class scorecard_node(nodes.General, nodes.Element):
    """Where the Scorecard goes; replaced by :class:`BuildScorecard`."""


class ScorecardDirective(Directive):
    """``{scorecard}``: the summary and every chapter's claims table, built when the chapters are read."""

    has_content = False

    def run(self):
        return [scorecard_node()]


def chapter_tables(env) -> list[tuple[str, ClaimsTable]]:
    """(docname, table) of every document that glued a claims table, in document order."""
    folder = Path(env.mystnb_config.output_folder)
    out = []
    for doc, data in sorted(NbMetadataCollector.get_doc_data(env).items()):
        glue = data.get("glue", [])
        keys = [k for k in glue if CLAIMS_KEY.match(k) and f"{k}-n" in glue and f"{k}-rows" in glue]
        if not keys or doc not in env.found_docs:
            continue
        glued = json.loads(folder.joinpath(*doc.split("/")).with_suffix(".glue.json").read_text(encoding="utf-8"))
        for key in keys:
            text = glued.get(f"{key}-rows", {}).get("data", {}).get("text/plain", "")
            try:  # a glued str is kept as its repr
                out.append((doc, ClaimsTable.from_json(ast.literal_eval(text))))
            except (SyntaxError, TypeError, ValueError) as e:
                logger.warning(f"{doc}: the glued claims table {key!r} does not read as rows ({e})")
    return out


def summary_html(tables, link) -> str:
    """The summary table: one row per chapter (``link(doc)`` gives its link) and a last row, "Total"."""
    head = "<th>Chapter</th>" + "".join(f"<th>{c}</th>" for c in SUMMARY_COLUMNS)
    body, totals = [], dict.fromkeys(SUMMARY_COLUMNS, 0)
    for doc, table in tables:
        n = counts(table.rows)
        n["claims"] = sum(n[v] for v in (*VERDICTS, POST_HOC))
        for c in SUMMARY_COLUMNS:
            totals[c] += n[c]
        cells = "".join(f'<td class="count">{n[c]}</td>' for c in SUMMARY_COLUMNS)
        body.append(f"<tr><td>{link(doc)}</td>{cells}</tr>")
    cells = "".join(f'<td class="count"><strong>{totals[c]}</strong></td>' for c in SUMMARY_COLUMNS)
    body.append(f'<tr class="total"><td><strong>Total</strong></td>{cells}</tr>')
    return f'<table class="claims-summary"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


class BuildScorecard(SphinxPostTransform):
    """Replace ``{scorecard}`` by the summary and the chapters' tables; warn on a claim id used twice."""

    default_priority = 200

    def run(self, **kwargs):
        placeholders = list(self.document.findall(scorecard_node))
        if not placeholders:
            return
        tables = chapter_tables(self.env)
        if not tables:
            logger.warning("the Scorecard has no chapter: no document glued a claims table", location=self.document)
        seen: dict[str, str] = {}
        for doc, table in tables:
            for r in table.rows:
                if r.id in seen and seen[r.id] != doc:
                    logger.warning(
                        f"claim id {r.id!r} is used in both {seen[r.id]} and {doc}; ids must be unique in the book",
                        location=self.document,
                    )
                seen[r.id] = doc
        here = self.env.docname

        def link(doc):
            uri = self.app.builder.get_relative_uri(here, doc)
            title = self.env.titles[doc].astext() if doc in self.env.titles else doc
            return f'<a class="reference internal" href="{html.escape(uri)}">{html.escape(title)}</a>'

        parts = [summary_html(tables, link)]
        for doc, table in tables:
            parts.append(f'<h3 class="scorecard-chapter">{link(doc)}</h3>')
            parts.append(table._repr_html_())
        for node in placeholders:
            node.replace_self(nodes.raw("", "\n".join(parts), format="html"))


def _drop_thebe_assets(app, pagename, templatename, context, doctree):
    if app.config.html_theme_options.get("launch_buttons", {}).get("thebe"):
        return

    def keep(asset) -> bool:
        name = str(getattr(asset, "filename", asset) or "")
        body = getattr(asset, "attributes", {}).get("body", "")
        return "sphinx-thebe" not in name and "THEBE_JS_URL" not in body

    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [a for a in context[key] if keep(a)]


def setup(app):
    app.add_node(scorecard_node)
    app.add_directive("scorecard", ScorecardDirective)
    app.add_post_transform(BuildScorecard)
    app.set_html_assets_policy("always")
    app.connect("html-page-context", _drop_thebe_assets)
    return {"version": "0.2", "parallel_read_safe": True, "parallel_write_safe": True}


__all__ = ["SUMMARY_COLUMNS", "BuildScorecard", "ScorecardDirective", "chapter_tables", "summary_html", "setup", "slug"]
