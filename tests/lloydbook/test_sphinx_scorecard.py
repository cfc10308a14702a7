"""Tests of lloydbook.sphinx_scorecard, the book's Sphinx extension: its registration from _config.yml, the
Scorecard's "Total" row, and dropping sphinx-thebe's unused assets.

The Scorecard checks themselves need a full build with executed chapters; the strict build (``make book``,
``make test``) exercises them.
"""

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

from lloydbook import sphinx_scorecard

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def test_config_loads_the_extension_from_the_package():
    assert "lloydbook.sphinx_scorecard" in CONFIG["sphinx"]["extra_extensions"]
    assert "local_extensions" not in CONFIG["sphinx"]
    assert "lloydbook" in CONFIG["exclude_patterns"]


class FakeApp:
    def __init__(self, thebe=False):
        self.calls = []
        self.config = SimpleNamespace(html_theme_options={"launch_buttons": {"thebe": thebe}})

    def __getattr__(self, name):
        return lambda *args, **kwargs: self.calls.append((name, args))


def test_setup_registers_the_transforms_and_the_scorecard_page():
    app = FakeApp()
    meta = sphinx_scorecard.setup(app)
    assert meta["parallel_read_safe"] and meta["parallel_write_safe"]
    names = [c[0] for c in app.calls]
    assert ("add_config_value", ("scorecard_doc", "book/scorecard", "env")) in app.calls
    assert names.count("add_post_transform") == 2 and ("set_html_assets_policy", ("always",)) in app.calls
    assert ("connect", ("html-page-context", sphinx_scorecard._drop_thebe_assets)) in app.calls


def summary_table(rows, classes=("claims-summary",)):
    """A docutils table with a header and ``rows`` (lists of cell texts) in its body."""
    table = nodes.table(classes=list(classes))
    tgroup = nodes.tgroup(cols=len(rows[0]) if rows else 2)
    table += tgroup
    tbody = nodes.tbody()
    for cells in rows:
        row = nodes.row()
        for text in cells:
            entry = nodes.entry(classes=["text-right"])
            entry += nodes.paragraph(text, text)
            row += entry
        tbody += row
    tgroup += tbody
    doc = new_document("scorecard", get_default_settings(Parser))
    doc += table
    return doc, tbody


def test_scorecard_totals_appends_the_summed_row():
    doc, tbody = summary_table([["01_lloyd", "5", "0", "2"], ["02_construction", "7", "1", "0"]])
    sphinx_scorecard.ScorecardTotals(doc).run()
    rows = list(tbody.findall(nodes.row))
    assert len(rows) == 3
    assert [e.astext() for e in rows[-1].children] == ["Total", "12", "1", "2"]
    assert all(isinstance(e[0][0], nodes.strong) for e in rows[-1].children)
    assert rows[-1].children[1]["classes"] == ["text-right"]


def test_scorecard_totals_sums_every_verdict_column():
    from lloydbook.claims import VERDICTS

    ncol = len(VERDICTS) + 1  # one count per verdict, then the chapter's number of claims
    doc, tbody = summary_table([["01_lloyd"] + ["1"] * ncol, ["09_lemmas"] + [str(j) for j in range(ncol)]])
    sphinx_scorecard.ScorecardTotals(doc).run()
    last = list(tbody.findall(nodes.row))[-1]
    assert [e.astext() for e in last.children] == ["Total"] + [str(1 + j) for j in range(ncol)]


def test_scorecard_totals_leaves_other_tables_alone():
    doc, tbody = summary_table([["a", "1"]], classes=())
    sphinx_scorecard.ScorecardTotals(doc).run()
    assert len(list(tbody.findall(nodes.row))) == 1


@pytest.mark.parametrize(
    "asset, kept",
    [
        (SimpleNamespace(filename="_static/sphinx-thebe.js", attributes={}), False),
        (SimpleNamespace(filename=None, attributes={"body": "const THEBE_JS_URL = 1"}), False),
        (SimpleNamespace(filename="_static/lloydlib.css", attributes={}), True),
        ("_static/pygments.css", True),
    ],
)
def test_thebe_assets_are_dropped_when_thebe_is_off(asset, kept):
    context = {"script_files": [asset], "css_files": [asset]}
    sphinx_scorecard._drop_thebe_assets(FakeApp(thebe=False), "page", "page.html", context, None)
    assert context == (
        {"script_files": [asset], "css_files": [asset]} if kept else {"script_files": [], "css_files": []}
    )
    context = {"script_files": [asset]}
    sphinx_scorecard._drop_thebe_assets(FakeApp(thebe=True), "page", "page.html", context, None)
    assert context == {"script_files": [asset]}
