"""lloydlib.training.store and .pack: runs kept as data, read back whole, refused when stale or damaged."""

import hashlib
import json
import multiprocessing as mp
import time

import numpy as np
import pytest
import torch

from lloydlib import training
from lloydlib.training import TrainConfig, fingerprint, store


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Five finished runs: two shapes, a float64 run and a diverged one."""
    root = tmp_path_factory.mktemp("cache")
    tiny = dict(d=2, k=3, n=12, steps=12, batch=4, val_tasks=8, eval_every=5, device="cpu")
    configs = [
        TrainConfig(**tiny, seed=0),
        TrainConfig(**tiny, seed=1),
        TrainConfig(**tiny, embedding="OH", seed=0),
        TrainConfig(**tiny, dtype="float64", seed=2),
        TrainConfig(**tiny, lr=1e6, plateau=False, seed=3),  # diverges
    ]
    return training.train_many(configs, cache_dir=root, progress=False)


def same(a, b) -> bool:
    sa, sb = a.model.state_dict(), b.model.state_dict()
    return (
        a.config == b.config
        and a.status == b.status
        and np.array_equal(a.train_losses, b.train_losses)
        and all(np.array_equal(a.history[h], b.history[h], equal_nan=True) for h in store.HISTORY)
        and sa.keys() == sb.keys()
        and all(np.array_equal(sa[k].numpy(), sb[k].numpy(), equal_nan=True) for k in sa)
    )


def test_a_store_gives_back_every_run_bit_for_bit(runs, tmp_path):
    assert runs[-1].status == "diverged"
    manifest = training.write_store(tmp_path / "s", {"a": runs[:2], "b": runs[2:]}, rebuild="make runs")
    s = training.RunStore(tmp_path / "s")
    assert len(s) == 5 and s.groups() == {"a": 2, "b": 3} and len(manifest["files"]) == 2
    for r in runs:
        got = s.get(r.config)
        assert same(got, r) and got.info["cached"] and got.info["store"] == str(tmp_path / "s")
        assert got.model.Q.dtype == (torch.float64 if r.config.dtype == "float64" else torch.float32)
    assert s.get(runs[0].config.replace(seed=9)) is None and runs[0].config in s
    assert [r.key for r in s.runs("a")] == [r.key for r in runs[:2]]
    assert s.size_bytes() == sum(p.stat().st_size for p in (tmp_path / "s").iterdir() if p.name != ".lock")


def test_a_run_in_two_groups_is_stored_once(runs, tmp_path):
    m = training.write_store(tmp_path, {"a": runs[:2], "b": runs[1:3]}, rebuild="x")
    assert sum(f["runs"] for f in m["files"].values()) == 3
    assert m["runs"][runs[1].key]["groups"] == ["a", "b"]
    assert training.RunStore(tmp_path).groups() == {"a": 2, "b": 2}


def test_lookup_and_train_many_read_stores_before_caches(runs, tmp_path):
    training.write_store(tmp_path / "s", {"a": runs[:2]}, rebuild="x")
    assert same(training.lookup(runs[0].config, [tmp_path / "s"]), runs[0])
    assert training.lookup(runs[2].config, [tmp_path / "s", tmp_path / "empty"]) is None
    got = training.train_many([runs[1].config], cache_dir=tmp_path / "c", stores=[tmp_path / "s"], progress=False)
    assert same(got[0], runs[1]) and not (tmp_path / "c" / "runs").exists()  # read, not trained
    assert [r.key for r in training.load_runs(tmp_path / "s")] == [r.key for r in runs[:2]]
    (tmp_path / "gpu" / "m1").mkdir(parents=True)
    training.write_store(tmp_path / "gpu" / "m2", {"a": runs[:1]}, rebuild="x")
    assert [p.name for p in training.gpu_results(tmp_path / "gpu")] == ["m2"]


def test_the_fingerprint_is_recorded_and_a_code_change_makes_the_store_stale(runs, tmp_path, monkeypatch):
    training.write_store(tmp_path, {"a": runs[:1]}, rebuild="make runs")
    m = json.loads((tmp_path / store.MANIFEST).read_text())
    ((fid, fp),) = m["fingerprints"].items()
    assert fp == fingerprint.fingerprint() and m["runs"][runs[0].key]["fingerprint"] == fid
    other = dict(fp, modules=dict(fp["modules"], **{"lloydlib/losses.py": "0" * 16}))
    monkeypatch.setattr(fingerprint, "fingerprint", lambda root=None: other)
    with pytest.raises(training.StaleStoreError) as info:
        training.RunStore(tmp_path)
    msg = str(info.value)
    assert "lloydlib/losses.py changed" in msg and "make runs" in msg and str(tmp_path / "store.json") in msg
    assert info.value.changes == ["lloydlib/losses.py changed"]
    with pytest.raises(training.StaleStoreError):
        training.lookup(runs[0].config, [tmp_path])  # nothing reads a stale run


def test_another_torch_warns_when_read_and_fails_the_check(runs, tmp_path):
    fp = dict(fingerprint.fingerprint(), torch="1.0.0")
    training.write_store(tmp_path, {"a": runs[:1]}, rebuild="make runs", fingerprint=fp)
    with pytest.warns(store.StoreTorchWarning, match="torch 1.0.0"):
        s = training.RunStore(tmp_path)
    assert s.changes(torch_version=False) == [] and s.changes() == [f"torch 1.0.0 -> {torch.__version__}"]
    with pytest.raises(training.StaleStoreError, match="torch 1.0.0"):
        s.check()


@pytest.mark.parametrize("damage", ["truncate", "edit", "foreign", "delete", "manifest", "not json"])
def test_a_damaged_store_names_the_file_and_the_rebuild_command(runs, tmp_path, damage):
    training.write_store(tmp_path, {"a": runs[:2]}, rebuild="make runs")
    (npz,) = tmp_path.glob("*.npz")
    manifest = tmp_path / store.MANIFEST
    if damage == "truncate":
        npz.write_bytes(npz.read_bytes()[:1000])
    elif damage == "edit":
        blob = bytearray(npz.read_bytes())
        blob[len(blob) // 2] ^= 1
        npz.write_bytes(bytes(blob))
    elif damage == "foreign":
        np.savez(npz, x=np.zeros(3))
    elif damage == "delete":
        npz.unlink()
    elif damage == "manifest":
        m = json.loads(manifest.read_text())
        m["format"] = "something-else/9"
        manifest.write_text(json.dumps(m))
    else:
        manifest.write_text("{ not json")
    bad = manifest if damage in ("manifest", "not json") else npz
    with pytest.raises(training.StoreError) as info:
        training.RunStore(tmp_path, rebuild="make runs")
    assert str(bad) in str(info.value) and "make runs" in str(info.value)


def test_a_file_with_consistent_hash_but_foreign_arrays_is_refused(runs, tmp_path):
    training.write_store(tmp_path, {"a": runs[:2]}, rebuild="make runs")
    (npz,) = tmp_path.glob("*.npz")
    np.savez(npz, meta=np.array("{}"))
    m = json.loads((tmp_path / store.MANIFEST).read_text())
    m["files"][npz.name]["sha256"] = hashlib.sha256(npz.read_bytes()).hexdigest()
    (tmp_path / store.MANIFEST).write_text(json.dumps(m))
    with pytest.raises(training.StoreError, match="not a run store file"):
        training.RunStore(tmp_path)


def test_write_store_refuses_bad_input(runs, tmp_path):
    with pytest.raises(TypeError, match="groups"):
        training.write_store(tmp_path, [], rebuild="x")
    with pytest.raises(ValueError, match="rebuild"):
        training.write_store(tmp_path, {"a": runs}, rebuild="")
    with pytest.raises(ValueError, match="group names"):
        training.write_store(tmp_path, {"a.b": runs}, rebuild="x")
    with pytest.raises(TypeError, match=r"groups\['a'\]\[0\] must be a Run"):
        training.write_store(tmp_path, {"a": ["run"]}, rebuild="x")
    partial = training.train(runs[0].config.replace(seed=7), cache_dir=tmp_path / "c", progress=False, stop_at=3)
    with pytest.raises(ValueError, match="not finished"):
        training.write_store(tmp_path, {"a": [partial]}, rebuild="x")
    with pytest.raises(training.StoreError, match="missing"):
        training.open_store(tmp_path / "nowhere")


def _reader(root, ready, stop, out, count):
    seen, reads = set(), 0
    ready.release()
    while not stop.is_set():
        seen.add(tuple(sorted(training.RunStore(root).keys())))
        reads += 1
        with count.get_lock():
            count.value += 1
    out.put((sorted(seen), reads))


def test_readers_see_the_old_store_or_the_new_one_while_it_is_rewritten(runs, tmp_path):
    old, new = {"a": runs[:2]}, {"a": runs[2:4], "b": runs[4:]}
    training.write_store(tmp_path, old, rebuild="x")
    ctx = mp.get_context("spawn")
    out, ready, stop, count = ctx.Queue(), ctx.Semaphore(0), ctx.Event(), ctx.Value("i", 0)
    readers = [ctx.Process(target=_reader, args=(tmp_path, ready, stop, out, count)) for _ in range(2)]
    for p in readers:
        p.start()
    for _ in readers:
        assert ready.acquire(timeout=120)
    writes, t0 = 0, time.monotonic()
    # rewrite the store back and forth while both read it: for 3 s, and on a busy machine until each side
    # has passed 10 (reads and writes interleave many times), at most 120 s
    while time.monotonic() - t0 < 3 or (min(writes, count.value) <= 10 and time.monotonic() - t0 < 120):
        training.write_store(tmp_path, new if writes % 2 == 0 else old, rebuild="x")
        writes += 1
    stop.set()
    seen, reads = set(), 0
    for p in readers:
        got, n = out.get(timeout=120)
        seen.update(map(tuple, got))
        reads += n
        p.join(timeout=60)
    allowed = {tuple(sorted(r.key for g in v.values() for r in g)) for v in (old, new)}
    assert writes > 10 and reads > 10 and seen <= allowed
    assert sorted(p.name for p in tmp_path.glob("*.npz")) == sorted(training.RunStore(tmp_path).manifest["files"])
