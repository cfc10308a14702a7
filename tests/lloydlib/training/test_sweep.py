"""lloydlib.training.sweep: grids of configs, training many, and the command line of a grid."""

import pytest

from lloydlib import training
from lloydlib.training import TrainConfig


def test_grid_is_a_cartesian_product():
    cfgs = training.grid(TrainConfig(d=3), embedding=["OH", "BN"], seed=[0, 1, 2], tau=0.5)
    assert len(cfgs) == 6 and [c.seed for c in cfgs[:3]] == [0, 1, 2]
    assert all(c.d == 3 and c.tau == 0.5 for c in cfgs)
    assert training.grid() == [TrainConfig()]
    with pytest.raises(ValueError, match="axis 'seed'"):
        training.grid(seed=[])
    with pytest.raises(TypeError, match="no field"):
        training.grid(sede=[1])
    with pytest.raises(TypeError, match="base must be a TrainConfig"):
        training.grid({"d": 3})


def test_train_many_trains_the_missing_runs_once_in_order(cache, tiny):
    cfgs = training.grid(TrainConfig(**tiny), seed=[1, 0])
    runs = training.train_many(cfgs + cfgs[:1], progress=False)
    assert [r.config.seed for r in runs] == [1, 0, 1]
    assert len(list((cache / "runs").iterdir())) == 2
    assert all(r.info["cached"] for r in training.train_many(cfgs, progress=False))
    with pytest.raises(TypeError, match=r"configs\[1\]"):
        training.train_many([TrainConfig(**tiny), "x"])
    with pytest.raises(ValueError, match="workers must be >= 1"):
        training.train_many([], workers=0)


def test_command_writes_only_what_differs_from_the_defaults(tiny):
    base = TrainConfig(**dict(tiny, steps=10))
    line = training.command(base, embedding=["OH", "BN"], seed=[0, 1], clip=1.0, plateau=False)
    assert line.startswith("python -m lloydlib train ")
    assert "--embedding OH BN" in line and "--plateau false" in line and "--clip 1 " in line
    assert "--tau" not in line and "--seed 0 1" in line
    assert training.command() == "python -m lloydlib train"
