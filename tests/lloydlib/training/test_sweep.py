"""lloydlib.training.sweep: grids of configs, training many, and the command line of a grid."""

import sys

import pytest
from _support import assert_raises_naming

from lloydlib import training
from lloydlib.training import TrainConfig, sweep
from lloydlib.training.stacked import stack_key


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


def test_grid_names_the_field_of_a_bad_value_even_where_the_product_would_not_reach_it():
    assert_raises_naming(lambda: training.grid(seed=[0, "1"]), TypeError, ["seed must be an integer", "'1'"])
    assert_raises_naming(lambda: training.grid(tau=[0.1, [1.0]]), TypeError, ["tau must be a single value"])


def test_plan_stacks_runs_that_share_a_stack_key_in_bounded_pieces(tiny):
    cfgs = training.grid(TrainConfig(**tiny), embedding=["OH", "BN"], seed=list(range(5)))
    stacks = sweep.plan(cfgs)
    assert sorted(len(s) for s in stacks) == [5, 5]  # one stack per embedding
    assert all(len({stack_key(c) for c in s}) == 1 for s in stacks)
    assert [c.seed for c in stacks[1]] == list(range(5))  # in the order given
    split = sweep.plan(cfgs, workers=4)  # at least 4 pieces for 4 workers
    assert len(split) >= 4 and sorted(c.key() for s in split for c in s) == sorted(c.key() for c in cfgs)
    assert sweep.plan(cfgs, workers=4) == split  # the same configs and workers stack the same way
    big = TrainConfig(n=4096, batch=64)  # 64 x 4096 x 4102 x 4 bytes x 4 = 17 GB a run: one a stack
    assert sweep.stack_limit(big) == 1 and len(sweep.plan(training.grid(big, seed=[0, 1, 2]))) == 3
    assert sweep.stack_limit(TrainConfig(**tiny)) == sweep.MAX_STACK
    many = training.grid(TrainConfig(**tiny), seed=list(range(sweep.MAX_STACK + 1)))
    assert sorted(len(s) for s in sweep.plan(many)) == [32, 33]
    mixed = training.grid(TrainConfig(**tiny), steps=[2, 4], seed=[0, 1, 2])  # one key, two lengths
    assert sorted([c.steps for c in s] for s in sweep.plan(mixed)) == [[2, 2, 2], [4, 4, 4]]


def test_train_many_checks_the_executor_and_its_address(cache, tiny):
    cfgs = [TrainConfig(**tiny)]
    assert_raises_naming(lambda: training.train_many(cfgs, executor="dask"), ValueError, ["executor", "'dask'"])
    assert_raises_naming(
        lambda: training.train_many(cfgs, address="auto"), ValueError, ["address", "'ray' only", "'local'"]
    )
    assert_raises_naming(lambda: training.train_many(cfgs, progress="yes"), TypeError, ["progress must be a bool"])


def test_the_ray_executor_without_ray_names_the_extra(cache, tiny, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as where it is not installed
    assert_raises_naming(
        lambda: training.train_many([TrainConfig(**tiny)], executor="ray", progress=False),
        ImportError,
        ["executor 'ray'", "lloydlib[distributed]"],
    )


def test_plan_never_starts_two_stacks_of_one_compiled_step_side_by_side(tiny):
    # two groups of 8 runs, each cut in two pieces of 4 for 4 workers: sorted by cost alone the two
    # pieces of a group would be neighbours, and two workers would compile the same step at once
    cfgs = training.grid(TrainConfig(**tiny), embedding=["OH", "BN"], seed=list(range(8)))
    for workers in (2, 3, 4):
        stacks = sweep.plan(cfgs, workers=workers)
        graphs = [stack_key(s[0]) for s in stacks]
        window = min(workers, len(set(graphs)))
        assert all(len(set(graphs[i : i + window])) == window for i in range(len(graphs) - window + 1)), graphs
        assert sorted(c.key() for s in stacks for c in s) == sorted(c.key() for c in cfgs)
    one = sweep.plan(cfgs, workers=1)  # one worker: longest first, nothing to stagger
    costs = [len(s) * sweep._cost(s[0]) for s in one]
    assert costs == sorted(costs, reverse=True)


def test_on_a_gpu_stacks_are_sized_by_its_free_memory():
    """Fig. 10a at the paper's n=512: 36 CPU-sized stacks, 6 on an H200's 139 GiB (one per embedding and
    loss: a stack never mixes them), more when less memory is free; the CPU plan is unchanged."""
    from lloydlib.training import sweep as sw

    base = TrainConfig(d=4, k=6, n=512, device="cuda")
    configs = training.grid(base, tau=[1.0, 0.25, 0.14, 0.1], embedding=["OH", "BN", "NA"], loss=["NE", "L2"],
                            seed=list(range(10)))  # fmt: skip
    cpu = [len(s) for s in sw.plan([c.replace(device="cpu") for c in configs], 1)]
    assert len(cpu) == 36 and max(cpu) == sw.stack_limit(base) == sw.STACK_BYTES // (4 * 32 * 512 * 518 * 4)
    h200 = sw.plan(configs, 1, memory_bytes=139 * 2**30)
    assert [len(s) for s in h200] == [40] * 6
    per_run = 4 * 32 * 512 * 518 * 4
    assert sw.stack_limit(base, 10 * 2**30) == int(sw.GPU_MEMORY_SHARE * 10 * 2**30) // per_run == 39
    assert len(sw.plan(configs, 1, memory_bytes=10 * 2**30)) == 12
    assert sw.stack_limit(base.replace(n=16), 139 * 2**30) == sw.MAX_STACK_GPU
    assert sw.device_memory([base.replace(device="cpu")]) is None
    with pytest.raises(ValueError, match="memory_bytes"):
        sw.stack_limit(base, 0)
