"""lloydlib.training.cache: the cache root, atomic writes, finding and loading finished runs."""

import json
import shutil

import pytest
import torch

from lloydlib import training
from lloydlib.training import TrainConfig, cache


def states_equal(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_cache_dir_is_the_argument_then_the_environment_then_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("LLOYD_CACHE", str(tmp_path))
    assert training.cache_dir() == tmp_path
    assert training.cache_dir(tmp_path / "y") == tmp_path / "y"
    monkeypatch.delenv("LLOYD_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert training.cache_dir() == tmp_path / "home" / ".cache" / "lloydlib"  # never a checkout's folder


def test_files_are_written_atomically(tmp_path):
    target = tmp_path / "x" / "file.json"
    cache.save_json(target, {"a": 1})

    def half_then_crash(f):
        f.write(b'{"a": 2, "trunc')
        raise OSError("disk full")

    with pytest.raises(OSError):
        cache.atomic_write(target, half_then_crash)
    assert json.loads(target.read_text()) == {"a": 1}  # old content intact
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.json"]  # no temporary left behind


def test_a_finished_run_is_found_and_loaded(cache, tiny):
    cfg = TrainConfig(**tiny)
    assert training.lookup(cfg) is None
    first = training.train(cfg, progress=False)
    again = training.lookup(cfg)
    assert again.info["cached"] is True and states_equal(first.model, again.model)
    assert training.lookup(cfg, cache) is not None and training.lookup(cfg, [cache.parent / "other", cache])
    assert training.lookup(cfg.replace(seed=1)) is None
    assert [r.key for r in training.load_runs(cache)] == [cfg.key()]
    assert "status=done" in repr(again) and again.final_train() == pytest.approx(again.train_losses[-5:].mean())
    with pytest.raises(TypeError, match="config must be a TrainConfig"):
        training.lookup({"d": 2})
    with pytest.raises(ValueError, match="root must be an existing directory"):
        training.load_runs(cache.parent / "nowhere")


def test_an_entry_that_contradicts_its_key_is_refused(cache, tiny):
    cfg = TrainConfig(**tiny)
    training.train(cfg, progress=False)
    other = cfg.replace(seed=5)
    shutil.copytree(cache / "runs" / cfg.key(), cache / "runs" / other.key())
    with pytest.raises(RuntimeError, match="different configuration"):
        training.lookup(other)


def test_gpu_results_lists_the_folders_that_hold_runs(cache, tiny):
    training.train(TrainConfig(**tiny), progress=False)
    gpu = cache.parent / "gpu"
    assert training.gpu_results(gpu) == []  # no such folder
    (gpu / "empty").mkdir(parents=True)
    shutil.copytree(cache / "runs", gpu / "machine-a" / "runs")
    assert [p.name for p in training.gpu_results(gpu)] == ["machine-a"]
    with pytest.raises(TypeError):
        training.gpu_results()  # the folder is required: the library knows no checkout
