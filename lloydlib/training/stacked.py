"""Training runs: :func:`train` (one run, a stack of one) and :func:`train_stack` (many as one stacked model).

A one-layer model of Eq. 4 is a dozen small matrices: trained alone it leaves nearly all of a CPU's
vector width (and all of a GPU) idle, and most of a step is the fixed cost of launching operations.
Runs that share their shapes (d, k, n, embedding, loss, batch, dtype, ...: :func:`stack_key`) train as one
model whose parameters have a leading "model" dimension S (:mod:`~lloydlib.training.stacked_model`), with a
vectorised Adam (:mod:`~lloydlib.training.adam`), so S runs cost little more than one; the stacked step
runs under ``torch.compile`` (with an eager fallback), which removes most of the per-operation cost.
S stays symbolic in the compiled step, so every stack of one :func:`stack_key` (but a stack of one)
shares one graph, compiled once and then read from inductor's on-disk cache by the other processes.

There is one engine, :class:`~lloydlib.training.stack_engine.Stack`; a run's numbers do not depend on the
stack it trains in (see :mod:`~lloydlib.training.stack_engine`). Finished runs are cached
(:mod:`lloydlib.training.cache`): a run asked for again is loaded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

import torch

from .._validate import check_bool, check_int
from .cache import Run, cache_dir, lookup, write_result
from .config import PER_RUN_FIELDS, TrainConfig
from .stack_engine import Stack

__all__ = ["PER_RUN_FIELDS", "stack_key", "train", "train_stack"]

_cache_root = cache_dir  # ``train``'s argument ``cache_dir`` hides the function of that name


def _resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(name)
    except RuntimeError as e:
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {name!r}") from e


#: stacks of at least this many run-steps (steps x runs) compile by default on a CPU (a first compilation
#: takes one to four minutes on a busy 2-core machine; later ones hit the on-disk cache); a GPU always compiles
COMPILE_MIN_STEPS = 20_000


def stack_key(config: TrainConfig) -> tuple:
    """What runs must share to train in one stack: ((field, value), ...) for every field of ``config``
    but :data:`PER_RUN_FIELDS`. Configs with equal keys can be passed to :func:`train_stack` together."""
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    return tuple((f.name, getattr(config, f.name)) for f in fields(config) if f.name not in PER_RUN_FIELDS)


def _check(configs) -> list[TrainConfig]:
    if isinstance(configs, TrainConfig) or not isinstance(configs, Sequence):
        raise TypeError(f"configs must be a sequence of TrainConfig, got {type(configs).__name__}")
    configs = list(configs)
    for i, c in enumerate(configs):
        if not isinstance(c, TrainConfig):
            raise TypeError(f"configs[{i}] must be a TrainConfig, got {type(c).__name__}")
    if configs:
        key = stack_key(configs[0])
        for i, c in enumerate(configs):
            other = dict(stack_key(c))
            diff = [name for name, value in key if other[name] != value]
            if diff:
                raise ValueError(
                    f"configs[{i}] cannot train in one stack with configs[0]: they differ in "
                    + ", ".join(f"{name} ({other[name]!r} vs {dict(key)[name]!r})" for name in diff)
                )
    return configs


def _compile_default(configs, device: torch.device) -> bool:
    if os.environ.get("LLOYD_COMPILE", "").strip().lower() in ("0", "false", "no", "off"):
        return False
    return device.type == "cuda" or max(c.steps for c in configs) * len(configs) >= COMPILE_MIN_STEPS


def train(
    config: TrainConfig,
    *,
    cache_dir: str | os.PathLike | None = None,
    progress: bool = True,
    stop_at: int | None = None,
) -> Run:
    """Train one run (a stack of one), or load it from the cache when it was trained before; resume from a
    checkpoint.

    ``cache_dir`` overrides the cache root (see :func:`lloydlib.training.cache_dir`). ``progress`` shows
    a tqdm bar. ``stop_at`` trains only up to that step, writes a checkpoint there and returns a
    "partial" run (a later call continues from it). Returns a :class:`~lloydlib.training.Run`, written
    into the cache when finished.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    return train_stack([config], cache_dir=_cache_root(cache_dir), progress=progress, stop_at=stop_at)[0]


def train_stack(
    configs: Sequence[TrainConfig],
    *,
    cache_dir: str | os.PathLike | None = None,
    progress: bool = False,
    write: bool = True,
    device=None,
    compile: bool | None = None,
    stop_at: int | None = None,
) -> list[Run]:
    """Train (or load) every config of one stack as one stacked model; returns runs in the order given.

    All configs must share :func:`stack_key` (else a ValueError names the first that does not). With
    ``cache_dir`` (a cache root), runs already there are loaded, checkpoints are written there every
    ``checkpoint_every`` steps (an interrupted stack resumes from them, in a stack of any size), and with
    ``write`` each finished run is written (:func:`~lloydlib.training.cache.write_result`); ``write=False``
    writes no result, and ``cache_dir=None`` nothing at all. ``device`` overrides the configs' ``device``
    ("cpu", "cuda", ...). ``compile`` wraps the stacked step in ``torch.compile`` (default: on a GPU, and on
    a CPU for stacks of at least :data:`COMPILE_MIN_STEPS` run-steps; ``$LLOYD_COMPILE=0`` turns it off); if
    compilation fails the stack trains eagerly and says so in each run's ``info["compile_error"]``.
    ``stop_at`` trains only up to that step: runs that stop before their last step come back "partial",
    with a checkpoint (and are not written as results). Runs with attention dropout train one at a time
    (their masks come from torch's global generator). The returned runs hold their models on the CPU and
    pickle; ``info["stacked"]`` is the stack size, and ``seconds`` the wall-clock time of the stack's steps
    (shared by its runs).
    """
    configs = _check(configs)
    progress, write = check_bool("progress", progress), check_bool("write", write)
    if compile is not None:
        compile = check_bool("compile", compile)
    if stop_at is not None:
        stop_at = check_int("stop_at", stop_at, 1)
    if not configs:
        return []
    root = None if cache_dir is None else Path(cache_dir)
    dev = _resolve_device(str(device) if device is not None else configs[0].device)
    found: dict[str, Run] = {}
    todo: dict[str, TrainConfig] = {}
    for c in configs:
        key = c.key()
        if key in found or key in todo:
            continue
        cached = lookup(c, [root]) if root is not None else None
        if cached is not None:
            found[key] = cached
        else:
            todo[key] = c.replace(device=str(dev))
    missing = list(todo.values())
    if compile is None:
        compile = _compile_default(missing, dev) if missing else False
    stacks = [[c] for c in missing] if missing and missing[0].dropout > 0 else [missing] if missing else []
    for stack in stacks:
        run_dirs = [None if root is None else root / "runs" / c.key() for c in stack]
        for run in Stack(stack, dev, run_dirs, compile=compile, progress=progress).train(stop_at):
            if root is not None and write and run.status != "partial":
                run.info["path"] = str(write_result(root, run))
            found[run.config.key()] = run
    return [found[c.key()] for c in configs]
