"""lloydlib.training.run_state: a run's task draws, history, generator state and checkpointed shell."""

import math

import numpy as np
import torch

from lloydlib import training
from lloydlib.tasks import sample_tasks
from lloydlib.training import TrainConfig
from lloydlib.training.run_state import HISTORY, History, Shell, rng_state, sample, set_rng_state
from lloydlib.training.stacked_model import StackShape


def test_sample_draws_the_configs_distribution(tiny):
    c = TrainConfig(**dict(tiny, family="cauchy", init="kmeans++"))
    X, C0 = sample(c, 3, 7, "cpu", torch.float64)
    x, c0 = sample_tasks(3, c.n, c.d, c.k, seed=7, dtype=torch.float64, family="cauchy", init="kmeans++", scale=c.scale)
    assert torch.equal(X, x) and torch.equal(C0, c0)


def test_history_round_trips_and_becomes_arrays():
    h = History()
    h.step, h.train_losses, h.wall = 2, [1.0, 0.5], 0.1
    h.rows = [dict(step=0, train_loss=math.nan, val_rel_loss=2.0, val_loss=3.0, lr=0.1, wall_time=0.0)]
    again = History()
    again.load(h.to_dict())
    assert again.resumed_from == 2 and again.train_losses == [1.0, 0.5]
    arrays = again.arrays()
    assert set(arrays) == set(HISTORY) and arrays["step"].dtype == np.int64 and math.isnan(arrays["train_loss"][0])


def test_generator_state_round_trips():
    state = rng_state(torch.device("cpu"))
    a = torch.rand(3)
    set_rng_state(state, torch.device("cpu"))
    assert torch.equal(torch.rand(3), a)


def test_a_shell_writes_and_reads_its_checkpoint(tmp_path, tiny):
    c = TrainConfig(**dict(tiny, dtype="float64"))
    path = tmp_path / "checkpoint.pt"
    shell = Shell(c, torch.float64, path)
    shape = StackShape(c.d, c.k, c.embedding, c.bias, c.gamma)
    theta = shape.flatten(shell.model.state_dict()) + 1.0
    m, v = torch.full_like(theta, 0.1), torch.full_like(theta, 0.2)
    shell.store(shape, theta, m, v, 3.0)
    shell.run.step = 3
    shell.checkpoint(torch.device("cpu"))
    back = Shell(c, torch.float64, path)
    assert back.run.step == 3 and back.rng is not None
    assert torch.equal(shape.flatten(back.model.state_dict()), theta)
    m2, v2, t2 = back.moments(shape)
    assert torch.equal(m2, m) and torch.equal(v2, v) and t2 == 3.0
    fresh = Shell(c, torch.float64, None)  # the initial weights come from the run's seed
    assert torch.equal(
        shape.flatten(fresh.model.state_dict()), shape.flatten(Shell(c, torch.float64, None).model.state_dict())
    )
    assert training.derive_seed(c.seed, "init") != training.derive_seed(c.seed, "dropout")
