"""lloydbook.gpu_record: a sweep trained under a time budget, in chunks, resumed where it stopped, stored."""

import json

import numpy as np
import pytest

from lloydbook import gpu_record
from lloydlib import training
from lloydlib.training import TrainConfig


@pytest.fixture
def configs():
    base = TrainConfig(d=2, k=3, n=12, steps=30, batch=4, val_tasks=8, eval_every=5, device="cpu", dtype="float64")
    return [base.replace(seed=s, tau=t) for s in (0, 1) for t in (0.1, 1.0)] + [base.replace(n=10, seed=3)]


class Clock:
    """A fake clock: each reading advances it by ``tick`` seconds."""

    def __init__(self, tick):
        self.t, self.tick = 0.0, tick

    def __call__(self):
        self.t += self.tick
        return self.t


def test_a_large_budget_trains_everything_into_a_store(tmp_path, configs):
    rec = gpu_record.record(configs, tmp_path / "out", gpu_record.Budget(3600), chunk=10, group="tiny")
    assert rec["finished"] == len(configs) and rec["unfinished"] == 0 and rec["stacks"] == 2
    assert [c["to_step"] for c in rec["chunks"]] == [10, 20, 30, 10, 20, 30]
    store = training.open_store(tmp_path / "out")
    alone = [training.train_stack([c], compile=False)[0] for c in configs]  # stacks of one
    for c, a in zip(configs, alone):
        s = store.get(c)
        assert s.status == a.status and np.allclose(s.train_losses, a.train_losses, rtol=1e-9, atol=0)
    assert json.loads((tmp_path / "out" / "record.json").read_text())["tf32"] is False


def test_a_short_budget_stops_at_a_chunk_and_a_later_call_resumes(tmp_path, configs):
    out = tmp_path / "out"
    # every clock reading is 1 s: a chunk measures 1 s, so with SAFETY 1.5 a chunk needs 1.5 s left
    rec = gpu_record.record(configs, out, gpu_record.Budget(4.0, clock=Clock(1.0)), chunk=10)
    assert 0 < len(rec["chunks"]) < 6 and rec["finished"] < len(configs) and rec["unfinished"] > 0
    assert list((out / "checkpoints" / "runs").glob("*/checkpoint.pt"))
    again = gpu_record.record(configs, out, gpu_record.Budget(3600), chunk=10)
    assert again["finished"] == len(configs) and again["unfinished"] == 0
    store = training.open_store(out)
    for c in configs:
        (a,) = training.train_stack([c], compile=False)
        assert np.allclose(store.get(c).train_losses, a.train_losses, rtol=1e-9, atol=0)


def test_budget_and_arguments_are_checked():
    b = gpu_record.Budget(10, clock=Clock(1.0))
    assert b.allows() and b.left() < 10
    b.took(20)
    assert not b.allows()
    with pytest.raises(ValueError, match="seconds"):
        gpu_record.Budget(0)
    with pytest.raises(ValueError, match="chunk"):
        gpu_record.record([], "x", gpu_record.Budget(1), chunk=0)
    assert gpu_record.main(["fig10", "--where", "bogus", "--budget", "1", "--out", "x"]) == 2
