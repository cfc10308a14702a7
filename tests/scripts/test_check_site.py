"""Tests of scripts/check_site.py, the checker of the built site.

The checker is tested on small hand-made sites, including broken ones, so that a check that could never
fail would be caught here. The browser tests skip when no Chromium is installed.
"""

import os
import shutil
from pathlib import Path

import pytest
from _support import load_script

ROOT = Path(__file__).resolve().parents[2]


check_site = load_script("check_site")


# ------------------------------------------------------------------------- the site checker: static scan
def write_site(tmp_path, pages):
    for name, body in pages.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(body, encoding="utf-8")
    return tmp_path


def page(body="", head=""):
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title>{head}</head><body>{body}</body></html>"


def test_static_scan_allows_listed_links_only(tmp_path):
    site = write_site(
        tmp_path,
        {
            "index.html": page(
                '<a href="https://github.com/lloydlib/transformers-that-cluster">repo</a>'
                '<svg xmlns="http://www.w3.org/2000/svg"></svg><a href="#x">x</a>'
            ),
            "book/01_x.html": page(
                '<a href="https://colab.research.google.com/github/lloydlib/'
                'transformers-that-cluster/blob/main/book/01_x.ipynb">colab</a>'
            ),
        },
    )
    assert check_site.static_scan(site, check_site.pages(site)) == []


@pytest.mark.parametrize(
    "body, head, words",
    [
        ('<a href="https://example.com/new">new</a>', "", ["not in the allow-list", "example.com"]),
        ("", '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>', ["loads", "jsdelivr"]),
        ("", '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">', ["loads", "googleapis"]),
        ('<img src="//example.org/a.png">', "", ["loads", "example.org"]),
        ("", "<script>fetch('https://www.google-analytics.com/collect')</script>", ["not in the allow-list"]),
        (
            '<a href="https://github.com/lloydlib/transformers-that-cluster">ok</a>'
            '<script src="https://github.com/lloydlib/transformers-that-cluster/x.js"></script>',
            "",
            ["loads"],
        ),
    ],
)
def test_static_scan_flags_new_or_loaded_external_urls(tmp_path, body, head, words):
    site = write_site(tmp_path, {"index.html": page(body, head)})
    problems = check_site.static_scan(site, check_site.pages(site))
    assert len(problems) == 1
    for w in words:
        assert w in problems[0]


def test_doi_links_are_allowed_on_the_references_page_only(tmp_path):
    link = '<a href="https://doi.org/10.1109/TIT.1982.1056489">doi</a>'
    site = write_site(tmp_path, {"book/references.html": page(link), "book/intro.html": page(link)})
    problems = check_site.static_scan(site, check_site.pages(site))
    assert len(problems) == 1 and problems[0].startswith("book/intro.html")


def test_without_chromium_the_check_says_it_skipped(tmp_path, monkeypatch, capsys):
    site = write_site(tmp_path, {"index.html": page("<p>hello</p>")})
    monkeypatch.setattr(check_site, "find_chromium", lambda: None)
    assert check_site.main([str(site)]) == 0
    assert "SKIPPED the browser check" in capsys.readouterr().out


def test_missing_build_is_an_error(tmp_path):
    assert check_site.main([str(tmp_path)]) == 2


# --------------------------------------------------------------------------- the site checker: browser
def mathjax_dir():
    import importlib.util as iu

    spec = iu.find_spec("sphinx-mathjax-offline")
    return None if spec is None else Path(spec.origin).parent / "static" / "mathjax"


needs_chromium = pytest.mark.skipif(
    check_site.find_chromium() is None or mathjax_dir() is None,
    reason="no Chromium (apt-get install chromium) or sphinx-mathjax-offline",
)

MJ_HEAD = """<script>window.MathJax = {tex: {packages: {'[-]': ['noundefined', 'noerrors']}},
options: {processHtmlClass: 'math|mathjax_process', ignoreHtmlClass: 'document'}}</script>
<script defer src="mathjax/tex-chtml.js"></script>"""


@pytest.fixture(scope="module")
def browser_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    os.symlink(mathjax_dir(), site / "mathjax")
    shutil.copy(ROOT / "book" / "_static" / "favicon.ico", site / "favicon.ico")
    pages = {
        "index.html": page('<p>Math: <span class="math">\\(x_i \\in \\mathbb{R}^d\\)</span></p>', MJ_HEAD),
        "undefined_macro.html": page('<span class="math">\\(\\nosuchmacro x\\)</span>', MJ_HEAD),
        "raw_dollar.html": page("<p>The objective $L(X, C)$ was not typeset.</p>"),
        "no_mathjax.html": page('<span class="math">\\(x\\)</span>'),
        "console_error.html": page("<script>console.error('boom')</script>"),
        "exception.html": page("<script>null.x</script>"),
        "missing.html": page('<img src="missing.png">'),
        "external.html": page('<img src="http://example.com/a.png">'),
        "redirect.html": '<html><head><meta http-equiv="Refresh" content="0; url=index.html" /></head></html>',
    }
    write_site(site, pages)
    problems = check_site.browser_check(site, sorted(pages))
    by_page = {}
    for p in problems:
        name, _, text = p.partition(": ")
        by_page.setdefault(name, []).append(text)
    return by_page


@needs_chromium
def test_browser_passes_a_clean_page(browser_site):
    assert "index.html" not in browser_site and "redirect.html" not in browser_site


@needs_chromium
@pytest.mark.parametrize(
    "name, words",
    [
        ("undefined_macro.html", "MathJax errors"),
        ("raw_dollar.html", "raw math"),
        ("no_mathjax.html", "MathJax is absent"),
        ("console_error.html", "console error: boom"),
        ("exception.html", "uncaught exception"),
        ("missing.html", "HTTP 404"),
        ("external.html", "non-local host"),
    ],
)
def test_browser_catches(browser_site, name, words):
    found = browser_site.get(name, [])
    assert any(words in p for p in found), f"{name}: expected a problem with {words!r}, got {found}"


# ----------------------------------------------------------------------- the site checker: markup scan
def test_markup_scan_fails_on_a_role_or_directive_left_unrendered(tmp_path):
    root = write_site(
        tmp_path,
        {
            "index.html": page("<p>braces {like these} and a <code>dict {'a': 1}</code> are fine</p>"),
            "book/a.html": page("<p>shape <code>{glue:text}`shapes-scale`</code></p>"),
            "book/b.html": page("<p>see {cite}`park2026leaner`</p><pre>```{figure} x.png</pre>"),
            "book/c.html": page("<script>var s = '{glue:text}`x`';</script><p>clean</p>"),
        },
    )
    problems = check_site.unrendered_markup(root, check_site.pages(root))
    assert [p.split(":")[0] for p in problems] == ["book/a.html", "book/b.html", "book/b.html"]
    assert "{glue:text}`shapes-scale`" in problems[0]
