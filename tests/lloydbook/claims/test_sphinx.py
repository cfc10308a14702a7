"""lloydbook.claims.sphinx, the book's Sphinx extension: its registration from _config.yml, the Scorecard built
from the chapters' rows (summary with its "Total" row, every chapter's table, ids unique), and dropping
sphinx-thebe's unused assets. The full path, from executed chapters to the page, runs in the strict build."""

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

from lloydbook.claims import VERDICTS, ClaimsTable, Row, sphinx

ROOT = Path(__file__).resolve().parents[3]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def test_config_loads_the_extension_and_the_page_uses_it():
    assert "lloydbook.claims.sphinx" in CONFIG["sphinx"]["extra_extensions"]
    assert "local_extensions" not in CONFIG["sphinx"]
    assert "lloydbook" in CONFIG["exclude_patterns"]
    assert "```{scorecard}" in (ROOT / "book" / "scorecard.md").read_text(encoding="utf-8")


class FakeApp:
    def __init__(self, thebe=False):
        self.calls = []
        self.config = SimpleNamespace(html_theme_options={"launch_buttons": {"thebe": thebe}})
        self.builder = SimpleNamespace(get_relative_uri=lambda here, doc: doc.split("/")[-1] + ".html")

    def __getattr__(self, name):
        return lambda *args, **kwargs: self.calls.append((name, args))


def test_setup_registers_the_directive_the_transform_and_the_assets_policy():
    app = FakeApp()
    meta = sphinx.setup(app)
    assert meta["parallel_read_safe"] and meta["parallel_write_safe"]
    assert ("add_directive", ("scorecard", sphinx.ScorecardDirective)) in app.calls
    assert ("add_post_transform", (sphinx.BuildScorecard,)) in app.calls
    assert ("set_html_assets_policy", ("always",)) in app.calls
    assert ("connect", ("html-page-context", sphinx._drop_thebe_assets)) in app.calls


def row(id, verdict="reproduced", kind="claim", post_hoc=False):
    return Row(id=id, statement="s", source="x", paper="p", ours="o", verdict=verdict, kind=kind, post_hoc=post_hoc)


TABLES = [
    ("book/01_lloyd", ClaimsTable("lloyd", [row("lloyd-a"), row("lloyd-b", "partly"), row("lloyd-c", "open", "open")])),
    ("book/09_lemmas", ClaimsTable("lemmas", [row("lemmas-a", "background"), row("lemmas-b")])),
    ("book/07_families", ClaimsTable("families", [row("families-a", "not reproduced", post_hoc=True)])),
]


def test_the_summary_counts_every_verdict_post_hoc_claims_and_open_rows_with_a_total():
    text = sphinx.summary_html(TABLES, lambda doc: doc)
    assert sphinx.SUMMARY_COLUMNS == (*VERDICTS, "post hoc", "claims", "open")
    rows = text.split("<tr")[2:]
    counts = lambda r: [c.split("<")[0].replace("<strong>", "") for c in r.split('class="count">')[1:]]  # noqa: E731
    assert counts(rows[0]) == ["1", "1", "0", "0", "0", "0", "2", "1"]
    assert counts(rows[1]) == ["1", "0", "0", "0", "1", "0", "2", "0"]
    assert counts(rows[2]) == ["0", "0", "0", "0", "0", "1", "1", "0"]  # a post-hoc claim counts apart
    total = [c.split("<")[0] for c in rows[3].replace("<strong>", "").split('class="count">')[1:]]
    assert "Total" in rows[3] and total == ["2", "1", "0", "0", "1", "1", "5", "1"]


def _run(tables, monkeypatch, warnings):
    monkeypatch.setattr(sphinx, "chapter_tables", lambda env: tables)
    monkeypatch.setattr(sphinx.logger, "warning", lambda msg, **kw: warnings.append(msg))
    doc = new_document("scorecard", get_default_settings(Parser))
    doc += sphinx.scorecard_node()
    transform = sphinx.BuildScorecard(doc)
    env = SimpleNamespace(docname="book/scorecard", titles={"book/01_lloyd": nodes.title("", "Lloyd's algorithm")})
    monkeypatch.setattr(sphinx.BuildScorecard, "env", property(lambda self: env))
    monkeypatch.setattr(sphinx.BuildScorecard, "app", property(lambda self: FakeApp()))
    transform.run()
    return doc


def test_the_placeholder_becomes_the_summary_and_every_table(monkeypatch):
    warnings = []
    doc = _run(TABLES, monkeypatch, warnings)
    (raw,) = list(doc.findall(nodes.raw))
    text = raw.astext()
    assert not list(doc.findall(sphinx.scorecard_node)) and not warnings
    assert text.index("claims-summary") < text.index('data-chapter="lloyd"') < text.index('data-chapter="lemmas"')
    assert '<a class="reference internal" href="01_lloyd.html">Lloyd&#x27;s algorithm</a>' in text


def test_an_id_used_twice_or_no_chapter_is_a_warning(monkeypatch):
    warnings = []
    _run(TABLES + [("book/10_x", ClaimsTable("x", [row("lloyd-a")]))], monkeypatch, warnings)
    assert any("lloyd-a" in w and "unique" in w for w in warnings)
    warnings.clear()
    _run([], monkeypatch, warnings)
    assert any("no chapter" in w for w in warnings)


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
    sphinx._drop_thebe_assets(FakeApp(thebe=False), "page", "page.html", context, None)
    assert context == (
        {"script_files": [asset], "css_files": [asset]} if kept else {"script_files": [], "css_files": []}
    )
    context = {"script_files": [asset]}
    sphinx._drop_thebe_assets(FakeApp(thebe=True), "page", "page.html", context, None)
    assert context == {"script_files": [asset]}
