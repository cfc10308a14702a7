"""lloydlib.training.cache: the cache root, atomic writes, finding and loading finished runs."""

import json
import shutil
import threading
import time

import pytest
import torch

from lloydlib import training
from lloydlib.training import TrainConfig, cache, fingerprint, store
from lloydlib.training import cache as cache_module


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
    assert training.lookup(cfg) is None and not training.cache.has(cfg)
    first = training.train(cfg, progress=False)
    assert training.cache.has(cfg) and training.cache.has(cfg, [cache.parent / "other", cache])
    again = training.lookup(cfg)
    assert again.info["cached"] is True and states_equal(first.model, again.model)
    assert training.lookup(cfg, cache) is not None and training.lookup(cfg, [cache.parent / "other", cache])
    assert training.lookup(cfg.replace(seed=1)) is None
    assert [r.key for r in training.load_runs(cache)] == [cfg.key()]
    assert "status=done" in repr(again) and again.final_train() == pytest.approx(again.train_losses[-5:].mean())
    with pytest.raises(TypeError, match="config must be a TrainConfig"):
        training.lookup({"d": 2})
    with pytest.raises(TypeError, match="config must be a TrainConfig"):
        training.cache.has({"d": 2})
    with pytest.raises(ValueError, match="root must be an existing store or cache root"):
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


def test_write_result_stores_a_run_as_train_does(cache, tiny):
    cfg = TrainConfig(**tiny)
    run = training.train(cfg, cache_dir=cache.parent / "trained", progress=False)
    folder = training.write_result(cache, run)
    assert folder == cache / "runs" / cfg.key()
    trained = cache.parent / "trained" / "runs" / cfg.key()
    assert (folder / "result.json").read_text() == (trained / "result.json").read_text()
    a, b = (torch.load(p / "result.pt", weights_only=True) for p in (folder, trained))
    assert a.keys() == b.keys() and all(a[k] == b[k] for k in a if k != "model")
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
    assert "cached" not in a["info"] and "path" not in a["info"]
    again = training.lookup(cfg)
    assert states_equal(again.model, run.model) and again.info["cached"] is True
    with pytest.raises(TypeError, match="run must be a Run"):
        training.write_result(cache, {"config": cfg})
    partial = training.train(cfg.replace(seed=3), cache_dir=cache.parent / "p", progress=False, stop_at=10)
    with pytest.raises(ValueError, match="status 'done' or 'diverged'"):
        training.write_result(cache, partial)


def test_processes_writing_one_run_at_once_leave_one_whole_entry(cache, tiny, monkeypatch):
    """Writers take turns under the run's lock and keep the first result: the JSON and the weights come
    from one writer (each thread opens the lock file itself, so flock excludes them as it does processes).
    Writer i takes longer over its weights the smaller i is: unlocked, the last JSON and the last weights
    written would come from different writers."""
    fcntl = pytest.importorskip("fcntl")
    run = training.train(TrainConfig(**tiny), cache_dir=cache.parent / "src", progress=False)
    save_torch = training.cache.save_torch

    def slow_save_torch(path, blob):
        time.sleep(0.02 * (8 - blob["info"]["seconds"]))
        save_torch(path, blob)

    monkeypatch.setattr(training.cache, "save_torch", slow_save_torch)
    copies = [_with_info(run, seconds=float(i)) for i in range(8)]
    threads = [threading.Thread(target=training.write_result, args=(cache, r)) for r in copies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    folder = cache / "runs" / run.key
    blob = torch.load(folder / "result.pt", weights_only=True)
    assert json.loads((folder / "result.json").read_text())["info"] == blob["info"]
    assert sorted(p.name for p in folder.iterdir()) == [".lock", "result.json", "result.pt"]  # no temporaries
    with training.cache.run_lock(folder), open(folder / ".lock", "a+b") as other:
        with pytest.raises(BlockingIOError):  # held: another writer would wait
            fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    with open(folder / ".lock", "a+b") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # released on leaving


def _with_info(run, **info):
    return training.Run(run.config, run.model, run.history, run.train_losses, run.status, dict(run.info, **info))


@pytest.mark.parametrize(
    "content, words",
    [
        (lambda blob: blob[: len(blob) // 2], ["cannot be read"]),  # truncated
        (lambda blob: b'{"config": {}}', ["cannot be read"]),  # JSON where torch's file belongs
        (lambda blob: _torch_bytes([1, 2, 3]), ["not a lloydlib result", "list"]),  # a pickle of another shape
        (lambda blob: _torch_bytes({"config": {"d": 2}}), ["not a lloydlib result", "'model'"]),
    ],
)
def test_a_damaged_result_names_the_file_and_says_to_delete_it(cache, tiny, content, words):
    cfg = TrainConfig(**tiny)
    training.train(cfg, progress=False)
    path = cache / "runs" / cfg.key() / "result.pt"
    path.write_bytes(content(path.read_bytes()))
    with pytest.raises(training.CacheError) as info:
        training.lookup(cfg)
    message = str(info.value)
    for word in [str(path), "delete it", *words]:
        assert word in message
    with pytest.raises(training.CacheError, match="delete it"):
        training.train_many([cfg], progress=False)
    path.unlink()  # as the message says: then the run trains again
    assert training.train_many([cfg], progress=False)[0].status == "done"


def test_weights_of_another_shape_are_refused(cache, tiny):
    cfg = TrainConfig(**tiny)
    training.train(cfg, progress=False)
    path = cache / "runs" / cfg.key() / "result.pt"
    blob = torch.load(path, weights_only=True)
    blob["model"] = {k: torch.zeros(3, 3) for k in blob["model"]}
    torch.save(blob, path)
    with pytest.raises(training.CacheError, match="another shape"):
        training.lookup(cfg)


def test_write_result_replaces_an_unreadable_result(cache, tiny):
    cfg = TrainConfig(**tiny)
    run = training.train(cfg, cache_dir=cache.parent / "src", progress=False)
    folder = cache / "runs" / cfg.key()
    folder.mkdir(parents=True)
    (folder / "result.pt").write_bytes(b"not a torch file")
    training.write_result(cache, run)
    assert states_equal(training.lookup(cfg).model, run.model)


def test_a_checkpoint_that_is_damaged_or_of_another_run_is_refused(tmp_path, tiny):
    cfg = TrainConfig(**tiny)
    path = tmp_path / "checkpoint.pt"
    assert cache.read_checkpoint(path, cfg) is None
    good = dict(key=cfg.key(), model={}, optimizer={}, step=10)
    torch.save(good, path)
    assert cache.read_checkpoint(path, cfg)["step"] == 10
    torch.save(dict(good, key=cfg.replace(seed=9).key()), path)  # a checkpoint from another config
    with pytest.raises(training.CacheError, match="checkpoint of run") as info:
        cache.read_checkpoint(path, cfg)
    assert str(path) in str(info.value) and "delete it" in str(info.value)
    path.write_bytes(_torch_bytes(good)[:40])  # truncated
    with pytest.raises(training.CacheError, match="cannot be read as a lloydlib checkpoint"):
        cache.read_checkpoint(path, cfg)
    torch.save({"step": 3}, path)  # another shape
    with pytest.raises(training.CacheError, match="not a lloydlib checkpoint"):
        cache.read_checkpoint(path, cfg)


def _torch_bytes(obj) -> bytes:
    import io

    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


# ----------------------------------------------------------------------------------------- runs of other code
OTHER_CODE = {"fingerprint": "0123456789ab", "code_id": "ba9876543210"}


def _rewrite_info(folder, change):
    """Apply ``change`` to the ``info`` of the cached run in ``folder`` (its result.pt and result.json)."""
    blob = torch.load(folder / "result.pt", weights_only=True)
    change(blob["info"])
    torch.save(blob, folder / "result.pt")
    summary = json.loads((folder / "result.json").read_text())
    change(summary["info"])
    (folder / "result.json").write_text(json.dumps(summary))


def test_a_written_run_records_the_code_that_trained_it(cache, tiny):
    cfg = TrainConfig(**tiny)
    training.train(cfg, progress=False)
    fp = fingerprint.fingerprint()
    ids = cache_module.code_ids()
    assert ids == {"fingerprint": store.fingerprint_id(fp), "code_id": fingerprint.fingerprint_id(fp["modules"])}
    assert fingerprint.fingerprint_id(fp) == store.fingerprint_id(fp)  # the id a run store files it under
    folder = cache / "runs" / cfg.key()
    blob = torch.load(folder / "result.pt", weights_only=True)
    assert {k: blob["info"][k] for k in ids} == ids
    assert {k: json.loads((folder / "result.json").read_text())["info"][k] for k in ids} == ids
    assert cache_module.is_current(training.lookup(cfg).info) and not cache_module.is_current({})


@pytest.mark.parametrize(
    "change",
    [
        lambda info: info.update(OTHER_CODE),  # trained by other code
        lambda info: [info.pop(k) for k in OTHER_CODE],  # written before runs recorded their code
        lambda info: info.update(code_id=None),
    ],
)
def test_a_run_of_other_code_counts_as_missing_and_is_trained_again(cache, tiny, change):
    cfg = TrainConfig(**tiny)
    first = training.train(cfg, progress=False)
    folder = cache / "runs" / cfg.key()
    _rewrite_info(folder, change)
    assert training.lookup(cfg) is None and not training.cache.has(cfg) and training.lookup(cfg, [cache]) is None
    assert training.store.lookup(cfg, [cache]) is None
    (again,) = training.train_many([cfg], progress=False)  # trained again, and the stale entry replaced
    assert again.info["cached"] is True and cache_module.is_current(again.info)
    assert states_equal(again.model, first.model)  # the same code trains the same run
    assert training.cache.has(cfg) and cache_module.is_current(
        torch.load(folder / "result.pt", weights_only=True)["info"]
    )


def test_another_torch_alone_does_not_make_a_run_stale(cache, tiny):
    """As in a run store: the code's modules decide, the torch version (in ``fingerprint``) does not."""
    cfg = TrainConfig(**tiny)
    training.train(cfg, progress=False)
    _rewrite_info(cache / "runs" / cfg.key(), lambda info: info.update(fingerprint="0123456789ab"))
    assert training.lookup(cfg) is not None and training.cache.has(cfg)


def test_a_current_run_of_another_root_serves_when_the_first_is_stale(cache, tiny):
    cfg = TrainConfig(**tiny)
    training.train(cfg, cache_dir=cache.parent / "old", progress=False)
    training.train(cfg, progress=False)
    _rewrite_info(cache.parent / "old" / "runs" / cfg.key(), lambda info: info.update(OTHER_CODE))
    run = training.lookup(cfg, [cache.parent / "old", cache])
    assert run is not None and run.info["path"] == str(cache / "runs" / cfg.key())


def test_write_result_replaces_a_stale_result_and_keeps_a_current_one(cache, tiny, monkeypatch):
    cfg = TrainConfig(**tiny)
    run = training.train(cfg, cache_dir=cache.parent / "src", progress=False)
    with monkeypatch.context() as m:
        m.setattr(cache_module, "code_ids", lambda: OTHER_CODE)  # a writer running other code
        training.write_result(cache, run)
    folder = cache / "runs" / cfg.key()
    assert torch.load(folder / "result.pt", weights_only=True)["info"]["code_id"] == OTHER_CODE["code_id"]
    assert training.lookup(cfg) is None
    training.write_result(cache, _with_info(run, seconds=-1.0))
    assert (
        torch.load(folder / "result.pt", weights_only=True)["info"]["seconds"] == -1.0
        and training.lookup(cfg) is not None
    )
    training.write_result(cache, _with_info(run, seconds=-2.0))  # a current result is kept, as before
    assert torch.load(folder / "result.pt", weights_only=True)["info"]["seconds"] == -1.0


def test_a_loaded_run_is_not_stamped_with_this_code(cache, tiny):
    """Writing a run that was loaded (``info["cached"]``) never gives it this code's ids: a stale run stays
    stale wherever it is copied."""
    cfg = TrainConfig(**tiny)
    training.train(cfg, cache_dir=cache.parent / "src", progress=False)
    _rewrite_info(cache.parent / "src" / "runs" / cfg.key(), lambda info: [info.pop(k) for k in OTHER_CODE])
    (loaded,) = training.load_runs(cache.parent / "src")  # load_runs lists what a root holds, stale or not
    training.write_result(cache, loaded)
    assert training.lookup(cfg) is None
