"""Where the stacks of a sweep train: in this process or local processes (``local``), or on a Ray cluster (``ray``).

Both take a list of stacks (lists of :class:`TrainConfig` sharing a :func:`~lloydlib.training.stacked.stack_key`)
and a cache root, train each stack with :func:`~lloydlib.training.stacked.train_stack`, and call
``done(stack)`` as each stack's runs land in the cache; they return nothing (the caller reads the cache).

- :func:`run_local`: one stack after another in this process, or ``workers`` spawned processes with
  ``torch threads // workers`` threads each, writing the cache themselves (it is on this machine).
- :func:`run_ray`: each stack is a Ray task on the cluster ``ray.init(address=...)`` reaches (None: a new
  local instance); a task asks for a GPU when its configs' device is ``cuda``. Tasks return their runs
  (weights moved to the CPU) and this process, the driver, writes them into the cache with
  :func:`~lloydlib.training.cache.write_result`, so no shared file system is needed. A task whose worker
  dies is retried (``max_retries``); a worker that sees the cache root resumes from the checkpoints
  there, so nothing already trained is lost. Ray is the optional extra ``lloydlib[distributed]``,
  imported only here, inside :func:`run_ray`.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable
from pathlib import Path

import torch

from .._validate import check_choice, check_int
from .cache import Run, write_result
from .config import TrainConfig
from .stacked import train_stack

__all__ = ["EXECUTORS", "stack_task", "run_local", "run_ray", "execute"]

#: the executors :func:`lloydlib.training.train_many` knows
EXECUTORS = ("local", "ray")


def stack_task(configs: list[TrainConfig], root: str | None, threads: int, write: bool) -> list[Run]:
    """Train one stack with ``threads`` torch threads: what a worker runs. ``root`` None, or a folder this
    worker cannot see, trains without a cache (no checkpoints). With ``write`` the runs are written into
    ``root``; without, they come back whole, weights on the CPU (a driver without a GPU can read them)."""
    torch.set_num_threads(threads)
    if root is not None and not os.path.isdir(root):
        root = None
    runs = train_stack(configs, cache_dir=root, progress=False, write=write)
    for r in runs:
        r.model.to("cpu")
    return runs


def _local_task(args) -> int:
    i, configs, root, threads = args
    stack_task(configs, root, threads, True)
    return i


def run_local(stacks: list[list[TrainConfig]], root: Path, *, workers: int = 1, done: Callable | None = None) -> None:
    """Train ``stacks`` into the cache root ``root`` here (``workers`` 1) or in ``workers`` spawned processes."""
    workers = check_int("workers", workers, 1)
    done = done or (lambda stack: None)
    root.mkdir(parents=True, exist_ok=True)
    if workers == 1 or len(stacks) == 1:
        for stack in stacks:
            stack_task(stack, str(root), torch.get_num_threads(), True)
            done(stack)
        return
    threads = max(1, torch.get_num_threads() // workers)
    with mp.get_context("spawn").Pool(min(workers, len(stacks))) as pool:
        jobs = [(i, stack, str(root), threads) for i, stack in enumerate(stacks)]
        for i in pool.imap_unordered(_local_task, jobs):
            done(stacks[i])


def _import_ray():
    try:
        import ray
    except ImportError as e:
        raise ImportError(
            "executor 'ray' needs Ray, the optional extra 'distributed' of lloydlib: pip install 'lloydlib[distributed]'"
        ) from e
    return ray


def _needs_gpu(stack: list[TrainConfig]) -> bool:
    return any(c.device.startswith("cuda") for c in stack)


def run_ray(
    stacks: list[list[TrainConfig]],
    root: Path,
    *,
    address: str | None = None,
    done: Callable | None = None,
    max_retries: int = 3,
    task: Callable = stack_task,
) -> None:
    """Train ``stacks`` as Ray tasks on the cluster at ``address`` and write their runs into ``root`` here.

    Connects with ``ray.init(address=address)`` unless Ray is already initialised in this process (then
    that connection is used, and left open); a connection made here is shut down at the end. Each task
    asks for 1 CPU, and 1 GPU when its configs' device is ``cuda``, and is retried ``max_retries`` times
    when its worker dies. ``task(configs, root, threads, write)`` is what each task runs
    (:func:`stack_task`). A task that fails for good raises here, after the stacks that finished are
    written.
    """
    ray = _import_ray()
    max_retries = check_int("max_retries", max_retries, 0)
    if address is not None and not isinstance(address, str):
        raise TypeError(f"address must be a string such as 'auto' or 'host:6379', or None, got {address!r}")
    done = done or (lambda stack: None)
    root.mkdir(parents=True, exist_ok=True)
    started = not ray.is_initialized()
    if started:  # a new local instance needs no dashboard; a cluster's is its own business
        local = address is None and not os.environ.get("RAY_ADDRESS")
        ray.init(address=address, log_to_driver=False, **({"include_dashboard": False} if local else {}))
    try:
        remote = ray.remote(task)
        pending = {}
        for stack in stacks:
            options = dict(num_cpus=1, num_gpus=1 if _needs_gpu(stack) else 0, max_retries=max_retries)
            pending[remote.options(**options).remote(stack, str(root), 1, False)] = stack
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            stack = pending.pop(ready[0])
            try:
                runs = ray.get(ready[0])
            except Exception:
                for ref in pending:
                    ray.cancel(ref, force=True)
                raise
            for run in runs:
                write_result(root, run)
            done(stack)
    finally:
        if started:
            ray.shutdown()


def execute(executor: str, stacks, root: Path, *, workers: int, address: str | None, done: Callable | None) -> None:
    """Train ``stacks`` into ``root`` with ``executor`` (one of :data:`EXECUTORS`)."""
    check_choice("executor", executor, EXECUTORS)
    if executor == "ray":
        run_ray(stacks, root, address=address, done=done)
    else:
        run_local(stacks, root, workers=workers, done=done)
