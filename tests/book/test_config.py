"""The book's and the repository's configuration: _config.yml (strict, offline builds), the bibliography, the
Makefile's two commands and the README's example."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------------------- configuration
def test_builds_execute_strictly():
    ex = CONFIG["execute"]
    assert ex["execute_notebooks"] == "force"
    # a cell error is a warning with its traceback, and every build runs with -W --keep-going: every
    # chapter runs, and any error fails the build (test_makefile_has_the_two_commands)
    assert ex["raise_on_error"] is False and ex["allow_errors"] is False
    assert CONFIG["sphinx"]["config"]["nb_execution_show_tb"] is True
    assert ex["timeout"] >= 600
    assert CONFIG["only_build_toc_files"] is True
    for path in (".venv", "_build", "lloydlib", "lloydbook", "tests", "scripts"):
        assert path in CONFIG["exclude_patterns"]


def test_mathjax_is_local_and_macros_defined():
    sphinx = CONFIG["sphinx"]
    assert "sphinx-mathjax-offline" in sphinx["extra_extensions"]
    assert "lloydbook.claims.sphinx" in sphinx["extra_extensions"]
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
    for needed in (
        "park2026leaner",
        "clarkson2026clustering",
        "maulen2025attention",
        "lloyd1982least",
        "arthur2007kmeanspp",
        "gonzalez1985clustering",
        "martins2016sparsemax",
        "hardt2016train",
        "li2023transformers",
        "blondel2020learning",
    ):
        assert needed in keys
    cited = set()
    for path in list((ROOT / "book").glob("*.md")) + list((ROOT / "book").glob("*.ipynb")):
        for group in re.findall(r"\{cite(?::[pt])?\}`([^`]+)`", path.read_text(encoding="utf-8")):
            cited.update(k.strip() for k in group.split(","))
    assert cited - keys == set(), f"cited but not in references.bib: {sorted(cited - keys)}"


def test_makefile_has_the_two_commands():
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^book:", text, re.M) and re.search(r"^test:", text, re.M)
    assert "LLOYD_SCALE=ci" in text and "-W" in text and "--keep-going" in text and "check_site.py" in text
    assert "$(BIN)/python -m lloydbook.runs train-missing" in text  # the book trains what the store lacks
    assert "$(BIN)/python -m lloydbook.runs check" in text and "$(BIN)/python -m lloydbook.runs verify" in text
    assert "--nbval-lax" in text and "-p lloydbook.nbval_keep" in text  # nbval runs every chapter
    assert re.search(r"^runs:", text, re.M) and "$(BIN)/python -m lloydbook.runs build" in text


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
