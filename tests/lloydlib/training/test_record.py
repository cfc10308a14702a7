"""lloydlib.training.record: runs trained under a time budget, in chunks and in priority order, resumed where it
stopped, added to a recorded store without losing a run, with its progress and an estimate of what is left."""

import json

import numpy as np
import pytest

from lloydlib import training
from lloydlib.training import TrainConfig, record
from lloydlib.training.fingerprint import fingerprint

BASE = TrainConfig(d=2, k=3, n=12, steps=30, batch=4, val_tasks=8, eval_every=5, device="cpu", dtype="float64")


@pytest.fixture
def configs():
    return [BASE.replace(seed=s, tau=t) for s in (0, 1) for t in (0.1, 1.0)] + [BASE.replace(n=10, seed=3)]


class Clock:
    """A fake clock: each reading advances it by ``tick`` seconds."""

    def __init__(self, tick):
        self.t, self.tick = 0.0, tick

    def __call__(self):
        self.t += self.tick
        return self.t


class Chunks(record.Budget):
    """A budget that allows ``n`` more chunk (or stack) starts, whatever the time."""

    def __init__(self, n):
        super().__init__(3600)
        self.n = n

    def allows(self, estimate=None):
        self.n -= 1
        return self.n >= 0


def alone(c):
    (run,) = training.train_stack([c], compile=False)  # a stack of one, no cache
    return run


def quiet(*args):
    pass


@pytest.fixture
def trained(monkeypatch):
    """The configs each training call got, in order (``record.train_stack`` spied on)."""
    calls, real = [], training.train_stack

    def spy(configs, **kw):
        calls.append([(c.seed, c.tau, c.n) for c in configs])
        return real(configs, **kw)

    monkeypatch.setattr(record, "train_stack", spy)
    return calls


def test_a_large_budget_trains_everything_into_a_store(tmp_path, configs):
    out = tmp_path / "out"
    rec = record.record(configs, out, record.Budget(3600), chunk=10, group="tiny", log=quiet)
    assert rec["finished"] == len(configs) and rec["unfinished"] == 0 and rec["stacks"] == 2
    assert [c["to_step"] for c in rec["chunks"]] == [10, 20, 30, 10, 20, 30]
    store = training.open_store(out)
    assert store.groups() == {"tiny": len(configs)} and "TF32 off" in store.manifest["note"]
    for c in configs:
        s, a = store.get(c), alone(c)
        assert s.status == a.status and np.allclose(s.train_losses, a.train_losses, rtol=1e-9, atol=0)
        assert s.info["hardware"] in store.manifest["note"] and s.info["device"] == "cpu"
    assert json.loads((out / "record.json").read_text())["tf32"] is False
    assert not list((out / "checkpoints" / "runs").glob("*/*.pt"))  # finished runs leave nothing to commit


def test_a_short_budget_stops_at_a_chunk_and_a_later_call_resumes(tmp_path, configs, trained):
    out = tmp_path / "out"
    # every clock reading is 1 s: a chunk measures 1 s, so with SAFETY 1.5 a chunk needs 1.5 s left
    rec = record.record(configs, out, record.Budget(8.0, clock=Clock(1.0)), chunk=10, log=quiet)
    assert 0 < len(rec["chunks"]) < 6 and rec["finished"] < len(configs) and rec["unfinished"] > 0
    left = list((out / "checkpoints" / "runs").glob("*/checkpoint.pt"))
    assert left and not list((out / "checkpoints" / "runs").glob("*/result.pt"))
    reached = rec["chunks"][-1]["to_step"]
    trained.clear()
    again = record.record(configs, out, record.Budget(3600), chunk=10, log=quiet)
    assert again["finished"] == len(configs) and again["unfinished"] == 0
    assert again["chunks"][0]["to_step"] == reached + 10  # resumed from the checkpoints, not from step 0
    assert not list((out / "checkpoints" / "runs").glob("*/*.pt"))
    store = training.open_store(out)
    for c in configs:
        assert np.allclose(store.get(c).train_losses, alone(c).train_losses, rtol=1e-9, atol=0)


def test_a_second_call_adds_to_the_store_and_a_third_trains_nothing(tmp_path, configs, trained):
    out = tmp_path / "out"
    record.record(configs[:2], out, record.Budget(3600), chunk=30, group="first", log=quiet)
    record.record(configs[2:], out, record.Budget(3600), chunk=30, group="second", log=quiet)
    store = training.open_store(out)
    assert len(store) == len(configs) and store.groups() == {"first": 2, "second": len(configs) - 2}
    first, second = store.manifest["rebuild"].split("; ")  # a store of two sweeps: both commands
    assert first.startswith("lloydlib.training.record.record(<the first configs>") and second.startswith(
        "lloydlib.training.record.record(<the second configs>"
    )
    merged = record.merge(out, [alone(BASE.replace(seed=9))], "third", "cmd c")
    again = record.merge(out, [alone(BASE.replace(seed=8))], "third", "cmd c")
    assert len(again) == len(merged) + 1 == len(configs) + 2  # each sweep's command once, in the order first recorded
    assert training.RunStore(out).manifest["rebuild"] == f"{store.manifest['rebuild']}; cmd c"
    trained.clear()
    rec = record.record(configs[:5], out, record.Budget(3600), chunk=30, group="first", log=quiet)
    assert trained == [] and rec["finished"] == 5 and rec["stacks"] == 0
    assert len(training.open_store(out)) == len(configs) + 2  # the runs this call did not ask for are kept


def test_adding_runs_keeps_the_stores_record_of_its_recertifications(tmp_path, configs):
    out = tmp_path / "out"
    history = [{"when": "2026-12-05", "to": "abc", "sample": {"seed": 1}}]
    training.write_store(
        out, {"first": [alone(configs[0])]}, rebuild="the command", recertify="the re-certify", recertified=history
    )
    record.record(configs[1:2], out, record.Budget(3600), chunk=30, group="first", log=quiet)
    manifest = training.RunStore(out).manifest
    assert len(manifest["runs"]) == 2
    assert manifest["recertified"] == history and manifest["recertify"] == "the re-certify"
    with pytest.raises(TypeError, match="recertified must be a list of dicts"):
        training.write_store(out, {"first": [alone(configs[0])]}, rebuild="c", recertified={"when": 1})


def test_a_finished_run_left_in_the_checkpoints_is_stored_without_training(tmp_path, configs, trained):
    out = tmp_path / "out"
    training.train_stack(configs[:1], cache_dir=out / "checkpoints")  # a call stopped before storing it
    trained.clear()
    rec = record.record(configs[:1], out, Chunks(0), log=quiet)
    assert trained == [] and rec["finished"] == 1 and configs[0] in training.open_store(out)
    assert not (out / "checkpoints" / "runs" / configs[0].key()).exists()


def test_a_store_of_other_code_is_refused_not_restamped(tmp_path, configs):
    out = tmp_path / "out"
    fp = fingerprint()
    other = dict(fp, modules={**fp["modules"], "lloydlib/model.py": "0" * 16})
    training.write_store(out, {"old": [alone(configs[0])]}, rebuild="the old command", fingerprint=other)
    with pytest.raises(training.StaleStoreError, match="model.py.*move it aside"):
        record.record(configs[1:2], out, record.Budget(3600), chunk=30, log=quiet)
    assert training.RunStore(out, check_code=False).keys() == [configs[0].key()]


def test_a_store_another_recorder_holds_is_refused_at_once(tmp_path, configs, trained):
    out = tmp_path / "out"
    with record.sole_recorder(out):  # another recorder, as far as the lock can tell
        with pytest.raises(ValueError, match=r"out '.*out' is being recorded into by another process .*\.record\.lock"):
            record.record(configs[:1], out, record.Budget(3600), chunk=30, log=quiet)
    assert trained == []
    record.record(configs[:1], out, record.Budget(3600), chunk=30, log=quiet)  # free again once it has ended
    assert trained == [[(0, 0.1, 12)]]


def test_tiers_train_in_priority_order(tmp_path, trained):
    first = [BASE.replace(seed=s) for s in (5, 6)]
    then = [BASE.replace(seed=s) for s in (0, 1)]  # one stack key: without tiers they would share a stack
    rec = record.record([first, then], tmp_path / "out", record.Budget(3600), chunk=15, log=quiet)
    assert rec["stacks"] == 2 and [sorted(s for s, _, _ in call) for call in trained] == [[5, 6]] * 2 + [[0, 1]] * 2
    trained.clear()
    # a budget for one stack start and its two chunks: the first tier is done, the second not begun
    rec = record.record([first, then], tmp_path / "short", Chunks(3), chunk=15, log=quiet)
    assert rec["finished"] == 2 and set(training.open_store(tmp_path / "short").configs()) == set(first)
    with pytest.raises(TypeError, match="configs"):
        record.record([first, "x"], tmp_path / "bad", record.Budget(1), log=quiet)


def test_stacks_an_earlier_call_checkpointed_train_first():
    a, b, c = ([BASE.replace(seed=s, lr=lr) for s in (0, 1)] for lr in (0.01, 0.02, 0.03))
    reached = {x.key(): 0 for x in a + b + c} | {b[0].key(): 15, c[0].key(): 15, c[1].key(): 30}
    assert record.resumed_first([a, b, c], reached) == [c, b, a]
    assert record.resumed_first([a, b], {x.key(): 0 for x in a + b}) == [a, b]  # none begun: the plan's order
    with pytest.raises(ValueError, match="reached must map every config of stacks to its step, missing 2"):
        record.resumed_first([a, b], {x.key(): 0 for x in a})


def test_progress_and_estimate_are_printed_and_recorded(tmp_path, configs):
    out, lines = tmp_path / "out", []
    rec = record.record(configs[:2], out, Chunks(2), chunk=10, group="tiny", log=lines.append)
    assert lines[0].startswith("record tiny: 2 runs, 1 stack(s) to train on ") and "1 worker(s)" in lines[0]
    assert lines[1] == "0 of 2 runs done (0 this call), 0 partly trained; 60 run-steps left (no rate measured yet)"
    assert lines[2].startswith("stack 1/1 (BN:L2 d=2 k=3 n=12, 2 runs, tau 0.1,1, seeds 0): step 10 in ")
    assert "40 run-steps left: about " in lines[2] and "core-ms per run-step (measured this call)" in lines[2]
    assert rec["partial"] == 2 and rec["estimate"]["run_steps_left"] == 40 and rec["estimate"]["core_s_left"] >= 0
    assert rec["core_s_total"] >= 0 and len(rec["calls"]) == 1 and rec["calls"][0]["finished_runs"] == 0
    lines.clear()
    rec = record.record(configs[:2], out, Chunks(0), chunk=10, group="tiny", log=lines.append)
    assert "40 run-steps left: about" in lines[1] and "(measured an earlier call)" in lines[1]
    rec = record.record(configs[:2], out, record.Budget(3600), chunk=10, group="tiny", log=lines.append)
    assert lines[-1].startswith("record tiny ends: 2 of 2 runs done (2 this call), 0 partly trained; 0 run-steps left")
    assert len(rec["calls"]) == 3 and rec["calls"][-1]["finished_runs"] == 2 and rec["unfinished"] == 0


def test_workers_spread_the_stacks_over_processes(tmp_path, configs, capsys):
    out = tmp_path / "out"
    rec = record.record(configs, out, record.Budget(3600), chunk=15, workers=2, log=print)
    assert rec["finished"] == len(configs) and rec["workers"] == 2 and len(rec["chunks"]) == 2 * rec["stacks"]
    assert "2 worker(s) of 1 thread(s)" in capsys.readouterr().out
    store = training.open_store(out)
    for c in configs:
        assert np.allclose(store.get(c).train_losses, alone(c).train_losses, rtol=1e-9, atol=0)


def test_machine_names():
    assert record.machine_name({"gpu": "NVIDIA H200", "cpu": "x"}) == "h200"
    assert record.machine_name({"cpu": "AMD EPYC"}) == "cpu-amd-epyc"
    assert record.machine_name({"cpu": "AMD EPYC 7B13 64-Core Processor"}) == "cpu-amd-epyc-7b13"
    assert (
        record.machine_name({"cpu": "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"}) == "cpu-intel-xeon-platinum-8375c"
    )
    assert record.machine_name().startswith("cpu-")
    with pytest.raises(ValueError, match="info"):
        record.machine_name({"disk": 1})


def test_bad_arguments_are_named(tmp_path, configs, capsys):
    b = record.Budget(10, clock=Clock(1.0))
    assert b.allows() and b.left() < 10
    b.took(20)
    assert not b.allows()
    with pytest.raises(ValueError, match="seconds"):
        record.Budget(0)
    for kw, name in ((dict(chunk=0), "chunk"), (dict(workers=0), "workers"), (dict(threads=0), "threads"),
                     (dict(device="tpu"), "device"), (dict(group="a b"), "group")):  # fmt: skip
        with pytest.raises(ValueError, match=name):
            record.record(configs, tmp_path / "x", record.Budget(1), log=quiet, **kw)
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="out must be a folder"):
        record.record(configs, tmp_path / "file", record.Budget(1), log=quiet)
    with pytest.raises(TypeError, match="budget"):
        record.record(configs, tmp_path / "x", 60, log=quiet)
