"""A small Sphinx extension for this book (loaded from _config.yml: ``sphinx.extra_extensions``).

1. The Scorecard must show every claim of the book. After the chapters have executed, every document
   that glued a claims table (``claims-<chapter>``, written by :func:`lloydbook.claims.table`) must have
   that table and its count ``claims-<chapter>-n`` pasted on the Scorecard page; claim ids must be unique
   across the book. Otherwise a warning, which the strict build (``-W``) turns into an error.
2. The Scorecard's summary table (a MyST ``{table}`` with ``:class: claims-summary``; one column per
   verdict of :data:`lloydbook.claims.VERDICTS`, then the number of claims, as
   ``scripts/update_scorecard.py`` writes it) gets a last row, "Total", summed column by column from the
   pasted counts, whatever their number: the book-wide numbers are computed, not typed.
3. MathJax on every page: the pasted claims tables are raw HTML that may hold math, and Sphinx would load
   MathJax only on pages with math nodes.
4. sphinx-thebe's scripts are dropped when thebe is off (``launch_buttons.thebe: false``): they are
   unused, and Jupyter Book registers its inline config twice, which throws in the browser.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

CLAIMS_KEY = re.compile(r"^claims-[a-z0-9]+(?:-[a-z0-9]+)*$")
CLAIM_ID = re.compile(r'<tr id="claim-([a-z0-9-]+)"')


def _glue_keys(env) -> dict[str, list[str]]:
    from myst_nb.sphinx_ import NbMetadataCollector

    return {doc: data.get("glue", []) for doc, data in NbMetadataCollector.get_doc_data(env).items()}


def _claims_tables(env) -> dict[str, list[str]]:
    """docname -> the claims-table glue keys it holds (a table key is one whose ``-n`` count exists)."""
    out = {}
    for doc, keys in _glue_keys(env).items():
        tables = [k for k in keys if CLAIMS_KEY.match(k) and f"{k}-n" in keys]
        if tables and doc in env.found_docs:
            out[doc] = tables
    return out


class CheckScorecard(SphinxPostTransform):
    """On the Scorecard: every chapter's claims table and count is pasted; claim ids are unique."""

    default_priority = 4  # before myst-nb replaces the pending cross-document glue references (5)

    def run(self, **kwargs):
        if self.env.docname != self.config.scorecard_doc:
            return
        from myst_nb.ext.glue.utils import PendingGlueReference

        pasted = {(n.refdoc, n.key) for n in self.document.findall(PendingGlueReference)}
        for doc, tables in sorted(_claims_tables(self.env).items()):
            for key in tables:
                for need in (key, f"{key}-n"):
                    if (doc, need) not in pasted:
                        logger.warning(
                            f"{doc} glues {need!r} but the Scorecard ({self.config.scorecard_doc}) "
                            f"does not paste it: add the chapter's row and table there",
                            location=self.document,
                        )
        self._check_unique_ids()

    def _check_unique_ids(self):
        folder = Path(self.env.mystnb_config.output_folder)
        seen: dict[str, str] = {}
        for doc, tables in _claims_tables(self.env).items():
            path = folder.joinpath(*doc.split("/")).with_suffix(".glue.json")
            if not path.exists():
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
            for key in tables:
                for cid in CLAIM_ID.findall(data.get(key, {}).get("data", {}).get("text/html", "")):
                    if cid in seen and seen[cid] != doc:
                        logger.warning(
                            f"claim id {cid!r} is used in both {seen[cid]} and {doc}; ids must be unique in the book",
                            location=self.document,
                        )
                    seen[cid] = doc


class ScorecardTotals(SphinxPostTransform):
    """Append a "Total" row to each table with class ``claims-summary``, summing its numeric columns."""

    default_priority = 6  # after myst-nb has pasted the glued counts (5)

    def run(self, **kwargs):
        for table in self.document.findall(nodes.table):
            if "claims-summary" not in table["classes"]:
                continue
            tgroup = next(iter(table.findall(nodes.tgroup)))
            tbody = next(iter(tgroup.findall(nodes.tbody)))
            rows = list(tbody.findall(nodes.row))
            if not rows:
                logger.warning("the claims summary table has no rows", location=table)
                continue
            ncols = len(rows[0].children)
            totals = [0] * ncols
            for row in rows:
                for j, entry in enumerate(row.children[1:], start=1):
                    text = entry.astext().strip()
                    if not text.isdigit():
                        logger.warning(f"claims summary: expected a pasted count, got {text!r}", location=table)
                        continue
                    totals[j] += int(text)
            total_row = nodes.row()
            for j in range(ncols):
                label = "Total" if j == 0 else str(totals[j])
                entry = nodes.entry(classes=rows[0].children[j]["classes"])
                entry += nodes.paragraph("", "", nodes.strong(label, label))
                total_row += entry
            tbody += total_row


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
    app.add_config_value("scorecard_doc", "book/scorecard", "env")
    app.add_post_transform(CheckScorecard)
    app.add_post_transform(ScorecardTotals)
    app.set_html_assets_policy("always")
    app.connect("html-page-context", _drop_thebe_assets)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
