"""lloydlib.training.executors: a sweep's stacks train the same here, in local processes and on Ray.

The Ray tests start one local Ray instance (2 CPUs) for the module and shut it down after; they are
skipped only where Ray (the extra ``lloydlib[distributed]``) is not installed.
"""

import importlib.util
import os

import pytest
import torch

from lloydlib import training
from lloydlib.training import TrainConfig, executors

needs_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="Ray is not installed (pip install 'lloydlib[distributed]')"
)


@pytest.fixture(scope="module")
def ray_instance():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def sweep(tiny):
    """4 tiny float64 runs in 2 stacks (one per embedding)."""
    base = TrainConfig(**dict(tiny, steps=10, dtype="float64"))
    return training.grid(base, embedding=["OH", "BN"], seed=[0, 1])


def stored(root, config) -> dict:
    """What the cache holds for ``config``, less what depends on when and where it ran."""
    blob = torch.load(root / "runs" / config.key() / "result.pt", weights_only=True)
    blob["history"].pop("wall_time")
    blob.pop("info")
    return blob


def assert_same_results(root_a, root_b, configs):
    for c in configs:
        a, b = stored(root_a, c), stored(root_b, c)
        assert a.keys() == b.keys() and a["model"].keys() == b["model"].keys()
        assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"]), c.label()  # bitwise
        assert {k: v for k, v in a.items() if k != "model"} == {k: v for k, v in b.items() if k != "model"}


def test_stacks_ask_for_a_gpu_only_when_their_device_is_cuda(tiny):
    cpu, gpu = TrainConfig(**tiny), TrainConfig(**dict(tiny, device="cuda"))
    assert not executors._needs_gpu([cpu]) and executors._needs_gpu([gpu])
    assert not executors._needs_gpu([TrainConfig(**dict(tiny, device="auto"))])


def test_the_local_executor_in_processes_matches_this_process(tmp_path, sweep):
    here = training.train_many(sweep, cache_dir=tmp_path / "here", progress=False)
    there = training.train_many(sweep, cache_dir=tmp_path / "procs", progress=False, workers=2)
    assert [r.key for r in here] == [r.key for r in there] == [c.key() for c in sweep]
    assert_same_results(tmp_path / "here", tmp_path / "procs", sweep)


@needs_ray
def test_ray_and_local_give_bitwise_identical_cached_results(ray_instance, tmp_path, sweep, capsys):
    assert training.sweep.plan(sweep, workers=2) == training.sweep.plan(sweep)  # one stack per embedding
    local = training.train_many(sweep, cache_dir=tmp_path / "local", progress=False)
    ray = training.train_many(sweep, cache_dir=tmp_path / "ray", progress=False, workers=2, executor="ray")
    assert [r.key for r in ray] == [r.key for r in local] == [c.key() for c in sweep]
    assert all(r.info["cached"] and r.status == "done" for r in ray)
    assert_same_results(tmp_path / "local", tmp_path / "ray", sweep)
    # the command line reaches the same cache through Ray (the instance running here) and finds it full
    argv = ["--d", "2", "--k", "3", "--n", "12", "--steps", "10", "--batch", "4", "--val-tasks", "8",
            "--eval-every", "5", "--checkpoint-every", "10", "--device", "cpu", "--dtype", "float64",
            "--sweep", "embedding=OH,BN", "seed=0,1", "--executor", "ray", "--no-progress",
            "--cache-dir", str(tmp_path / "ray"), "--dry-run"]  # fmt: skip
    assert training.main(argv) == 0
    assert capsys.readouterr().out.count("cached ") == 4


@needs_ray
def test_a_task_whose_worker_dies_is_retried(ray_instance, tmp_path, sweep):
    marker = tmp_path / "first-attempt"

    def dies_once(configs, root, threads, write):
        if configs[0].embedding == "OH" and not marker.exists():
            marker.touch()
            os._exit(1)  # the worker process dies, as a killed or preempted machine's would
        return executors.stack_task(configs, root, threads, write)

    stacks = training.sweep.plan(sweep)
    executors.run_ray(stacks, tmp_path / "ray", task=dies_once, max_retries=1)
    assert marker.exists()  # the first attempt ran and died; its retry trained the stack
    assert all(training.lookup(c, [tmp_path / "ray"]) is not None for c in sweep)
    training.train_many(sweep, cache_dir=tmp_path / "local", progress=False)
    assert_same_results(tmp_path / "local", tmp_path / "ray", sweep)

    marker.unlink()
    with pytest.raises(Exception, match="(?i)worker|died|crash|exit"):  # no retries left: the failure surfaces
        executors.run_ray(stacks, tmp_path / "again", task=dies_once, max_retries=0)
    assert training.lookup(sweep[0], [tmp_path / "again"]) is None
