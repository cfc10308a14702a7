"""Many runs at once: the grids of configs a chapter sweeps, training them (in parallel processes on a
CPU), and the ``python -m lloydlib train`` command line that trains the same grid."""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import sys
from dataclasses import fields

import torch
from tqdm import tqdm

from .._validate import check_int
from .cache import Run, cache_dir, lookup
from .config import TrainConfig
from .loop import train

__all__ = ["grid", "train_many", "command"]

_cache_root = cache_dir  # ``train_many``'s argument ``cache_dir`` hides the function of that name


def grid(base: TrainConfig | None = None, **axes) -> list[TrainConfig]:
    """The Cartesian product of ``axes`` (field name -> list of values) over ``base`` (default config).

    ``grid(TrainConfig(d=4), embedding=["OH", "BN"], seed=[0, 1])`` gives 4 configs, the last axis
    varying fastest. A scalar value counts as a one-element list.
    """
    base = TrainConfig() if base is None else base
    if not isinstance(base, TrainConfig):
        raise TypeError(f"base must be a TrainConfig, got {type(base).__name__}")
    names = list(axes)
    values = [v if isinstance(v, (list, tuple)) else [v] for v in axes.values()]
    for name, v in zip(names, values):
        if not v:
            raise ValueError(f"axis {name!r} of the grid is empty")
    return [base.replace(**dict(zip(names, combo))) for combo in itertools.product(*values)]


def _worker(args) -> str:
    config, root, threads = args
    torch.set_num_threads(threads)
    return train(config, cache_dir=root, progress=False).status


def _cost(config: TrainConfig) -> int:
    """Roughly proportional to a run's time: steps x n x (n + k) x token width."""
    return config.steps * config.n * (config.n + config.k) * (config.d + config.k)


def train_many(
    configs, *, cache_dir: str | os.PathLike | None = None, progress: bool = True, workers: int = 1
) -> list[Run]:
    """Train (or load) every config; returns runs in the order given.

    Runs already in the cache are loaded. With ``workers`` > 1 the missing runs train in that many
    processes, each with ``torch threads // workers`` threads (small models on a CPU train faster as
    independent processes than as one multi-threaded one); the results are then read from the cache.
    """
    configs = list(configs)
    for i, c in enumerate(configs):
        if not isinstance(c, TrainConfig):
            raise TypeError(f"configs[{i}] must be a TrainConfig, got {type(c).__name__}")
    workers = check_int("workers", workers, 1)
    root = _cache_root(cache_dir)
    missing = list({c.key(): c for c in configs if lookup(c, [root]) is None}.values())
    missing.sort(key=_cost, reverse=True)  # longest first, so that parallel workers finish together
    bar = None
    if progress and missing:
        bar = tqdm(total=len(missing), desc=f"training {len(missing)} of {len(configs)} runs", file=sys.stderr)
    if workers > 1 and len(missing) > 1:
        threads = max(1, torch.get_num_threads() // workers)
        with mp.get_context("spawn").Pool(min(workers, len(missing))) as pool:
            for _ in pool.imap_unordered(_worker, [(c, str(root), threads) for c in missing]):
                if bar is not None:
                    bar.update(1)
    else:
        for c in missing:
            train(c, cache_dir=root, progress=False)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return [lookup(c, [root]) for c in configs]


def _cli_value(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return str(v).lower()
    return f"{v:g}" if isinstance(v, float) else str(v)


def command(base: TrainConfig | None = None, **axes) -> str:
    """The ``python -m lloydlib train`` command line that trains ``grid(base, **axes)``.

    Only fields that differ from :class:`TrainConfig`'s defaults, or that vary, are written.
    """
    configs = grid(base, **axes)  # validates
    defaults = TrainConfig()
    parts = ["python -m lloydlib train"]
    for f in fields(TrainConfig):
        values = list(dict.fromkeys(getattr(c, f.name) for c in configs))
        if values == [getattr(defaults, f.name)]:
            continue
        parts.append(f"--{f.name.replace('_', '-')} " + " ".join(_cli_value(v) for v in values))
    return " ".join(parts)
