"""The Colab bootstrap: one setting in _config.yml feeds it, and it installs the book's packages as Colab would.

The end-to-end test builds what a Colab runtime looks like: a fresh virtual environment in which lloydlib and
lloydbook cannot be imported (the other packages, torch and the notebook tools, come from this environment
through a ``.pth`` file, as Colab preinstalls them), a chapter notebook alone in an empty folder (no
checkout), and ``LLOYDLIB_SOURCE`` pointing at a copy of this repository. The chapter then runs under nbval
at ``LLOYD_SCALE=ci``: its bootstrap cell must install the packages from the copy, and every cell must run.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv

from _support import ROOT, load_script

sync = load_script("sync_bootstrap")
CHAPTER = "01_lloyd.ipynb"  # the quickest chapter at ci scale


def test_every_chapter_bootstrap_matches_the_config():
    assert sync.out_of_sync() == [], "run python scripts/sync_bootstrap.py --write"


def test_bootstrap_uses_the_configured_url_and_the_override(tmp_path):
    (tmp_path / "_config.yml").write_text("repository:\n  url: https://example.org/me/fork/\n")
    src = sync.bootstrap_source(sync.repository_url(tmp_path))
    assert 'os.environ.get("LLOYDLIB_SOURCE", "git+https://example.org/me/fork")' in src
    assert "%pip install -q {source}" in src and 'find_spec("lloydbook") is None' in src


def test_a_bad_url_names_the_setting(tmp_path):
    (tmp_path / "_config.yml").write_text("repository:\n  url: lloydlib\n")
    try:
        sync.repository_url(tmp_path)
    except ValueError as e:
        assert "repository.url" in str(e) and "'lloydlib'" in str(e)
    else:
        raise AssertionError("a non-https repository.url must raise")


def test_write_rewrites_only_the_bootstrap(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "_config.yml").write_text("repository:\n  url: https://example.org/x\n")
    nb = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# T"]},
            {
                "cell_type": "code",
                "metadata": {},
                "source": ["import lloydlib"],
                "outputs": [],
                "execution_count": None,
            },
            {"cell_type": "code", "metadata": {}, "source": ["x = 1"], "outputs": [], "execution_count": None},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "book" / "a.ipynb").write_text(json.dumps(nb))
    assert sync.out_of_sync(tmp_path) == ["a.ipynb"]
    assert sync.write(tmp_path) == ["a.ipynb"]
    assert sync.out_of_sync(tmp_path) == [] and sync.write(tmp_path) == []
    cells = json.loads((tmp_path / "book" / "a.ipynb").read_text())["cells"]
    assert "remove-cell" in cells[1]["metadata"]["tags"] and "".join(cells[2]["source"]) == "x = 1"


def _copy_of_the_repository(dest):
    """The files of this checkout that git tracks or would track (a clone would miss uncommitted work)."""
    try:
        files = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        files = [str(p.relative_to(ROOT)) for d in ("lloydlib", "lloydbook") for p in (ROOT / d).rglob("*.py")]
        files += ["pyproject.toml", "README.md"]
    for name in files:
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)


def test_a_chapter_runs_on_a_colab_like_runtime(tmp_path):
    source, env_dir, colab = tmp_path / "source", tmp_path / "venv", tmp_path / "colab"
    for d in (source, colab):
        d.mkdir()
    _copy_of_the_repository(source)
    shutil.copy2(ROOT / "book" / CHAPTER, colab / CHAPTER)
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    fresh_site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # what Colab preinstalls (torch, numpy, matplotlib, jupyter...): this environment's packages, as plain paths
    # (their .pth files are not processed, so this checkout's editable lloydlib is not visible)
    with open(os.path.join(fresh_site, "preinstalled.pth"), "w") as f:
        f.write("\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(LLOYDLIB_SOURCE=str(source), LLOYD_SCALE="ci", LLOYD_CACHE=str(tmp_path / "cache"), HOME=str(tmp_path))
    probe = "import importlib.util as u; print(u.find_spec('lloydlib') is None and u.find_spec('lloydbook') is None)"
    before = subprocess.run([python, "-c", probe], capture_output=True, text=True, env=env, cwd=colab)
    assert before.stdout.strip() == "True", f"lloydlib must not be importable before the bootstrap: {before}"

    run = subprocess.run(
        [python, "-m", "pytest", CHAPTER, "--nbval-lax", "--nbval-current-env", "-q", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        env=env,
        cwd=colab,
        timeout=900,
    )
    assert run.returncode == 0, (
        f"the chapter failed on the Colab-like runtime:\n{run.stdout[-4000:]}\n{run.stderr[-2000:]}"
    )
    where = subprocess.run(
        [python, "-c", "import lloydbook, lloydlib; print(lloydlib.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=colab,
        check=True,
    ).stdout.strip()
    assert where.startswith(str(env_dir)), f"lloydlib should be installed in the fresh environment, got {where}"
    assert sys.executable != str(python)
