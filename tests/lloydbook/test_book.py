"""Tests of lloydbook.book: a chapter's settings at the active scale, the device, the seeds and ``setup``.

``setup`` sets ``$LLOYD_CACHE``; every test that calls it sets the variable through ``monkeypatch`` first, so
the test leaves the environment as it found it.
"""

import os

import numpy as np
import pytest
import torch

from lloydbook import book, claims, results
from lloydbook.glue import glue
from lloydbook.scales import SCALES


@pytest.fixture
def cache_env(monkeypatch, tmp_path):
    """A temporary $LLOYD_CACHE, restored after the test (setup writes the variable)."""
    monkeypatch.setenv("LLOYD_CACHE", str(tmp_path / "cache"))
    yield tmp_path / "cache"
    claims.start("lloyd")


def test_params_reads_the_scale(monkeypatch):
    for s in book.SCALE_NAMES:
        monkeypatch.setenv("LLOYD_SCALE", s)
        p = book.params("lloyd")
        assert p.scale == s and p["scale"] == s
        assert dict(p) == {**SCALES["lloyd"][s], "scale": s}


def test_unknown_scale_raises(monkeypatch, cache_env):
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
    for change in (lambda: p.update(n=3), lambda: p.pop("n"), lambda: p.clear(), lambda: p.setdefault("x", 1)):
        with pytest.raises(TypeError, match="read-only"):
            change()
    with pytest.raises(AttributeError, match="chapter settings have no"):
        p.no_such_setting  # noqa: B018


def test_setup_prints_scale_and_device_and_seeds(capsys, monkeypatch, cache_env):
    monkeypatch.setenv("LLOYD_SCALE", "ci")
    p = book.setup("construction", seed_value=3)
    assert p == book.params("construction", "ci")
    out = capsys.readouterr().out
    assert "scale=ci" in out and f"device={book.device()}" in out and "seed=3" in out
    a = torch.rand(3)
    b = np.random.rand(2)
    book.setup("construction", seed_value=3)
    assert torch.equal(a, torch.rand(3)) and np.array_equal(b, np.random.rand(2))
    assert claims.chapter() == "construction"


def test_setup_points_the_library_at_the_chapters_cache(monkeypatch, cache_env):
    book.setup("lloyd")
    assert os.environ["LLOYD_CACHE"] == str(cache_env)
    # without $LLOYD_CACHE, setup sets it to the checkout's shared cache (undone by monkeypatch)
    monkeypatch.delenv("LLOYD_CACHE")
    book.setup("lloyd")
    assert os.environ["LLOYD_CACHE"] == str(results.cache_dir())


def test_device_and_seed():
    assert book.device().type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert book.seed(5) == 5
    with pytest.raises((TypeError, ValueError)):
        book.seed(-1)
    with pytest.raises(TypeError, match="value must be an integer"):
        book.seed(1.5)


def test_book_reexports_glue():
    assert book.glue is glue
