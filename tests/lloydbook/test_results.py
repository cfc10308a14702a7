"""lloydbook.results: the checkout's folders (recorded results, the training cache) that the chapters use.

Every test that sets ``$LLOYD_CACHE`` goes through ``monkeypatch``, so the environment is restored
afterwards; nothing in lloydbook sets it.
"""

import json
import os
import shutil
from pathlib import Path

import pytest
import torch

from lloydbook import results


@pytest.fixture
def no_cache_env(monkeypatch):
    monkeypatch.delenv("LLOYD_CACHE", raising=False)


@pytest.fixture
def elsewhere(monkeypatch, tmp_path):
    """An installed copy of the book layer (as on Colab): no checkout around it."""
    monkeypatch.setattr(results, "ROOT", tmp_path / "site-packages")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert results.checkout() is None


def test_a_checkout_has_its_results_folder():
    root = results.checkout()
    assert root is not None and (root / "_toc.yml").exists() and (root / "lloydlib").is_dir()
    assert results.results_dir() == root / "results" and results.results_dir().is_dir()


def test_the_cache_is_the_environments_else_the_checkouts(monkeypatch, tmp_path, no_cache_env):
    root = results.checkout()
    if os.access(root, os.W_OK):
        assert results.cache_dir() == root / ".lloydlib-cache"
    monkeypatch.setenv("LLOYD_CACHE", str(tmp_path / "mine"))
    assert results.cache_dir() == tmp_path / "mine"


def test_cache_dir_writes_no_environment(no_cache_env):
    before = dict(os.environ)
    path = results.cache_dir()
    assert dict(os.environ) == before and "LLOYD_CACHE" not in os.environ
    assert path == results.checkout() / ".lloydlib-cache" or not os.access(results.checkout(), os.W_OK)
    assert results.RECORDED_STORE == "results/recorded/<machine>"


def test_outside_a_checkout_nothing_is_recorded(elsewhere, no_cache_env, tmp_path):
    assert results.results_dir() is None
    assert results.recorded("table1") == [] and results.recorded("grid", gpu_only=True) == []
    assert results.recorded_run_dirs() == []
    assert results.cache_dir() == tmp_path / "home" / ".cache" / "lloydlib"


def test_recorded_and_recorded_run_dirs_read_the_checkouts_results(monkeypatch, tmp_path):
    fake = tmp_path / "checkout"
    (fake / "lloydlib").mkdir(parents=True)
    (fake / "_toc.yml").write_text("")
    (fake / "results").mkdir()
    blob = {"benchmark": "train-step", "hardware": {"cpu": "x", "gpu": "NVIDIA H200"}}
    (fake / "results" / "step.json").write_text(json.dumps(blob))
    monkeypatch.setattr(results, "ROOT", fake)
    assert [r["file"] for r in results.recorded("train-step", gpu_only=True)] == ["step.json"]
    (fake / "results" / "repeats").mkdir()
    (fake / "results" / "repeats" / "seed-00.json").write_text(json.dumps(blob | {"benchmark": "table1"}))
    assert [r["file"] for r in results.recorded("table1", folder="repeats")] == ["seed-00.json"]
    assert results.recorded("table1") == [] and results.recorded("table1", folder="none") == []
    with pytest.raises(ValueError, match="folder must name a sub-folder of results/ .a relative path., got '/tmp'"):
        results.recorded("table1", folder="/tmp")
    assert results.recorded_run_dirs() == []
    run_dir = fake / "results" / "recorded" / "h200" / "runs" / "0123456789abcdef"
    run_dir.mkdir(parents=True)
    torch.save({}, run_dir / "result.pt")
    (fake / "results" / "recorded" / "cpu-amd-epyc" / "checkpoints").mkdir(parents=True)  # no finished run yet
    assert results.recorded_run_dirs() == [fake / "results" / "recorded" / "h200"]
    shutil.rmtree(fake / "results")
    assert results.recorded("train-step") == []


@pytest.mark.parametrize("benchmark", ["table1", "grid", "train-step"])
def test_committed_gpu_results_name_their_gpu(benchmark):
    for blob in results.recorded(benchmark, gpu_only=True):
        assert blob["hardware"]["gpu"] and blob["hardware"]["device"].startswith("cuda"), blob["file"]


def test_the_leanness_chapter_has_its_gpu_results():
    impls = {r["config"]["impl"] for r in results.recorded("table1", gpu_only=True)}
    assert impls == {"lloydlib", "reference"}
    assert results.recorded("grid", gpu_only=True) and results.recorded("train-step", gpu_only=True)
    assert all(isinstance(p, Path) for p in results.recorded_run_dirs())
