"""The book pipeline: configuration, lloydlib.book helpers, and the site checker (scripts/check_site.py).

The checker is tested on small hand-made sites, including broken ones, so that a check that could never
fail would be caught here. The browser tests skip when no Chromium is installed.
"""
import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from lloydlib import book, claims
from lloydlib.scales import SCALES

ROOT = Path(__file__).resolve().parents[1]


def load_script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


check_site = load_script("check_site")
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------------------- configuration
def test_builds_execute_strictly():
    ex = CONFIG["execute"]
    assert ex["execute_notebooks"] == "force"
    assert ex["raise_on_error"] is True and ex["allow_errors"] is False
    assert ex["timeout"] >= 600
    assert CONFIG["only_build_toc_files"] is True
    for path in (".venv", "_build", "lloydlib", "tests", "scripts"):
        assert path in CONFIG["exclude_patterns"]


def test_mathjax_is_local_and_macros_defined():
    sphinx = CONFIG["sphinx"]
    assert "sphinx-mathjax-offline" in sphinx["extra_extensions"]
    assert "mathjax_path" not in sphinx["config"], "sphinx-mathjax-offline sets mathjax_path itself"
    macros = sphinx["config"]["mathjax3_config"]["tex"]["macros"]
    for name in ("R", "dEmb", "argmin", "argmax", "Lt"):
        assert name in macros
    assert macros["dEmb"] == r"d_{\mathsf{emb}}" and macros["Lt"] == r"\tilde{\mathcal{L}}"


def test_no_remote_assets_configured():
    assert CONFIG["launch_buttons"]["thebe"] is False
    assert not CONFIG["html"]["analytics"]["google_analytics_id"]
    assert not CONFIG["html"]["analytics"]["plausible_analytics_domain"]
    assert "intersphinx_mapping" not in CONFIG["sphinx"]["config"]
    assert CONFIG["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert CONFIG["repository"]["url"] == "https://github.com/lloydlib/transformers-that-cluster"


def test_every_cited_key_is_in_the_bibliography():
    bib = (ROOT / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"@\w+\{([^,\s]+),", bib))
    for needed in ("park2026leaner", "clarkson2026clustering", "maulen2025attention", "lloyd1982least",
                   "arthur2007kmeanspp", "gonzalez1985clustering", "martins2016sparsemax", "hardt2016train",
                   "li2023transformers", "blondel2020learning"):
        assert needed in keys
    cited = set()
    for path in list((ROOT / "book").glob("*.md")) + list((ROOT / "book").glob("*.ipynb")):
        for group in re.findall(r"\{cite(?::[pt])?\}`([^`]+)`", path.read_text(encoding="utf-8")):
            cited.update(k.strip() for k in group.split(","))
    assert cited - keys == set(), f"cited but not in references.bib: {sorted(cited - keys)}"


def test_makefile_has_the_two_commands():
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^book:", text, re.M) and re.search(r"^test:", text, re.M)
    assert "LLOYD_SCALE=ci" in text and "--nbval-lax" in text and "--nbval-current-env" in text
    assert "check_site.py" in text and "-W" in text


# ------------------------------------------------------------------------------------- lloydlib.book
def test_params_reads_the_scale(monkeypatch):
    for s in book.SCALE_NAMES:
        monkeypatch.setenv("LLOYD_SCALE", s)
        p = book.params("lloyd")
        assert p.scale == s and p["scale"] == s
        assert dict(p) == {**SCALES["lloyd"][s], "scale": s}


def test_unknown_scale_raises(monkeypatch):
    monkeypatch.setenv("LLOYD_SCALE", "huge")
    with pytest.raises(ValueError, match="LLOYD_SCALE.*'huge'"):
        book.params("lloyd")
    with pytest.raises(ValueError, match="LLOYD_SCALE"):
        book.setup("lloyd")


def test_default_scale_is_default(monkeypatch):
    monkeypatch.delenv("LLOYD_SCALE", raising=False)
    assert book.scale() == "default"


def test_params_bad_chapter_and_readonly():
    with pytest.raises(ValueError, match="chapter"):
        book.params("no-such-chapter")
    with pytest.raises(ValueError, match="scale_name"):
        book.params("lloyd", "big")
    p = book.params("lloyd", "ci")
    with pytest.raises(TypeError, match="read-only"):
        p["n"] = 3
    with pytest.raises(AttributeError, match="chapter settings have no"):
        p.no_such_setting


def test_setup_prints_scale_and_device_and_seeds(capsys, monkeypatch):
    monkeypatch.setenv("LLOYD_SCALE", "ci")
    book.setup("construction", seed_value=3)
    out = capsys.readouterr().out
    assert "scale=ci" in out and f"device={book.device()}" in out
    a = torch.rand(3)
    book.setup("construction", seed_value=3)
    assert torch.equal(a, torch.rand(3))
    assert claims.chapter() == "construction"
    claims.start("lloyd")


def test_device_seed_colab():
    assert book.device().type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert book.seed(5) == 5
    with pytest.raises((TypeError, ValueError)):
        book.seed(-1)
    assert book.on_colab() is ("google.colab" in sys.modules)


def test_glue_without_myst_nb(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "myst_nb", None)  # as on Colab: importing it fails
    assert book.glue("x", 1.25) == 1.25
    assert "1.25" in capsys.readouterr().out
    assert book.glue("y", 2.5, display=False) == 2.5
    assert capsys.readouterr().out == ""
    with pytest.raises(ValueError, match="name"):
        book.glue("", 1)
    with pytest.raises(TypeError, match="name"):
        book.glue(3, 1)


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
    site = write_site(tmp_path, {
        "index.html": page('<a href="https://github.com/lloydlib/transformers-that-cluster">repo</a>'
                           '<svg xmlns="http://www.w3.org/2000/svg"></svg><a href="#x">x</a>'),
        "book/01_x.html": page('<a href="https://colab.research.google.com/github/lloydlib/'
                               'transformers-that-cluster/blob/main/book/01_x.ipynb">colab</a>'),
    })
    assert check_site.static_scan(site, check_site.pages(site)) == []


@pytest.mark.parametrize("body, head, words", [
    ('<a href="https://example.com/new">new</a>', "", ["not in the allow-list", "example.com"]),
    ("", '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>', ["loads", "jsdelivr"]),
    ("", '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">', ["loads", "googleapis"]),
    ('<img src="//example.org/a.png">', "", ["loads", "example.org"]),
    ("", "<script>fetch('https://www.google-analytics.com/collect')</script>", ["not in the allow-list"]),
    ('<a href="https://github.com/lloydlib/transformers-that-cluster">ok</a>'
     '<script src="https://github.com/lloydlib/transformers-that-cluster/x.js"></script>', "", ["loads"]),
])
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


needs_chromium = pytest.mark.skipif(check_site.find_chromium() is None or mathjax_dir() is None,
                                    reason="no Chromium (apt-get install chromium) or sphinx-mathjax-offline")

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
@pytest.mark.parametrize("name, words", [
    ("undefined_macro.html", "MathJax errors"),
    ("raw_dollar.html", "raw math"),
    ("no_mathjax.html", "MathJax is absent"),
    ("console_error.html", "console error: boom"),
    ("exception.html", "uncaught exception"),
    ("missing.html", "HTTP 404"),
    ("external.html", "non-local host"),
])
def test_browser_catches(browser_site, name, words):
    found = browser_site.get(name, [])
    assert any(words in p for p in found), f"{name}: expected a problem with {words!r}, got {found}"


# ------------------------------------------------------------------------------------------ README
def test_readme_example_runs(capsys):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The library in ten lines", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "8 14"
    assert float(lines[-1]) < 1e-12


def test_readme_names_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make book" in text and "make test" in text and "LLOYD_SCALE" in text


def test_glue_passes_numpy_and_torch_scalars_as_python_numbers(monkeypatch):
    glued = {}
    fake = type(sys)("myst_nb")
    fake.glue = lambda name, obj, display=True: glued.__setitem__(name, obj)
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    book.glue("a", np.float64(0.25), display=False)
    book.glue("b", torch.tensor(3), display=False)
    book.glue("c", np.bool_(True), display=False)
    assert glued == {"a": 0.25, "b": 3, "c": True}
    assert [type(v) for v in glued.values()] == [float, int, bool]
    assert f"{glued['a']:.3f}" == "0.250" and repr(glued["a"]) == "0.25"   # numpy 2: 'np.float64(0.25)'
