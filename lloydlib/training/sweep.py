"""Many runs at once: the grids of configs a chapter sweeps, training them in stacks (in this process, in
parallel processes, or on a Ray cluster), and the ``python -m lloydlib train`` command line of a grid."""

from __future__ import annotations

import itertools
import math
import os
import sys
from dataclasses import fields

import torch
from tqdm import tqdm

from .._validate import check_bool, check_choice, check_int
from .cache import Run, cache_dir
from .config import DTYPES, TrainConfig
from .executors import EXECUTORS, execute
from .stacked import stack_key
from .store import lookup

__all__ = [
    "MAX_STACK",
    "STACK_BYTES",
    "MAX_STACK_GPU",
    "GPU_MEMORY_SHARE",
    "grid",
    "plan",
    "stack_limit",
    "device_memory",
    "train_many",
    "command",
]

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
            raise ValueError(f"axis {name!r} of the grid is empty")  # else the product would be empty
    return [base.replace(**dict(zip(names, combo))) for combo in itertools.product(*values)]


#: the most runs one stack holds on a CPU
MAX_STACK = 64
#: about the most memory (bytes) one stack's attention scores, weights and their gradients may take on a CPU
STACK_BYTES = 2**30
#: the most runs one stack holds on a GPU (whose memory, not this cap, usually decides)
MAX_STACK_GPU = 512
#: the share of a GPU's free memory that one stack's estimated attention may take: the estimate (4 score
#: tensors a run) leaves out the layer's other activations, the validation chunk and the allocator's slack
GPU_MEMORY_SHARE = 0.5


def _attention_bytes(config: TrainConfig) -> int:
    """Estimated bytes of one run's attention in a training step: ``batch`` x n x (n + k) scores, about 4
    such tensors with their gradients."""
    return 4 * config.batch * config.n * (config.n + config.k) * DTYPES[config.dtype].itemsize


def stack_limit(config: TrainConfig, memory_bytes: int | None = None) -> int:
    """How many runs like ``config`` one stack may hold. On a CPU (``memory_bytes`` None): :data:`MAX_STACK`,
    fewer when their attention (:func:`_attention_bytes` a run) would pass :data:`STACK_BYTES`. On a GPU with
    ``memory_bytes`` free: :data:`MAX_STACK_GPU`, fewer when it would pass :data:`GPU_MEMORY_SHARE` of them.
    Runs with attention dropout train alone (1)."""
    if config.dropout > 0:  # attention dropout's masks come from one generator: see Stack
        return 1
    if memory_bytes is None:
        budget, cap = STACK_BYTES, MAX_STACK
    else:
        budget, cap = int(GPU_MEMORY_SHARE * check_int("memory_bytes", memory_bytes, 1)), MAX_STACK_GPU
    return max(1, min(cap, budget // _attention_bytes(config)))


def device_memory(configs) -> int | None:
    """Free bytes of the CUDA device ``configs`` train on (their ``device``: "cuda", "cuda:N", or "auto"
    with a GPU present), None when they train on a CPU."""
    names = {c.device for c in configs}
    cuda = [n for n in names if n.startswith("cuda") or (n == "auto" and torch.cuda.is_available())]
    if not cuda or not torch.cuda.is_available():
        return None
    device = torch.device("cuda" if cuda[0] == "auto" else cuda[0])
    free, _total = torch.cuda.mem_get_info(device)
    return int(free)


def _cost(config: TrainConfig) -> int:
    """Roughly proportional to a run's time: steps x n x (n + k) x token width."""
    return config.steps * config.n * (config.n + config.k) * (config.d + config.k)


def plan(configs, workers: int = 1, *, memory_bytes: int | None = None) -> list[list[TrainConfig]]:
    """The stacks that train ``configs``: configs with one :func:`stack_key` and one number of steps, in
    the order given, cut into pieces of at most :func:`stack_limit` runs and, while there are fewer than
    ``workers`` pieces in all and runs enough, into more equal pieces; longest stacks first (so parallel
    workers finish together), except that no stack starts beside another of the same compiled step
    (:func:`_stagger`). Runs of different lengths could share a stack, but the stack computes a finished
    run's rows until its longest run ends, so they do not. Depends only on ``configs`` and ``workers``,
    never on the executor: a sweep stacks the same way everywhere. On a GPU the stacks are sized by its free
    memory (``memory_bytes``, default: what :func:`device_memory` reads; see :func:`stack_limit`); on a CPU
    by :data:`STACK_BYTES`."""
    workers = check_int("workers", workers, 1)
    configs = list(configs)
    if memory_bytes is None:
        memory_bytes = device_memory(configs)
    groups: dict[tuple, list[TrainConfig]] = {}
    for c in configs:
        groups.setdefault((stack_key(c), c.steps), []).append(c)
    total = sum(len(g) for g in groups.values())
    stacks = []
    for g in groups.values():
        share = max(1, math.ceil(workers * len(g) / max(total, 1)))  # this group's share of the workers
        pieces = max(math.ceil(len(g) / stack_limit(g[0], memory_bytes)), min(share, len(g)))
        size = math.ceil(len(g) / pieces)
        stacks += [g[i : i + size] for i in range(0, len(g), size)]
    return _stagger(sorted(stacks, key=lambda s: len(s) * _cost(s[0]), reverse=True), workers)


def _stagger(stacks: list[list[TrainConfig]], workers: int) -> list[list[TrainConfig]]:
    """``stacks`` reordered so that none of ``workers`` neighbours compiles the same step as another.

    Two stacks with one :func:`stack_key` trace the same graph whatever their steps and sizes (the size
    is symbolic in the compiled step; a stack of one has a graph of its own): the pieces of one group cut
    for the workers, for instance. Started together, each worker compiles it (35-40 s of a CPU each,
    cold); started one after the other, the second reads it from inductor's on-disk cache in 2-3 s.
    Each place takes the first stack left whose graph differs from the ``workers - 1`` before it (the
    first left, if none does)."""
    out, rest = [], list(stacks)
    while rest:
        recent = {_graph(s) for s in out[max(0, len(out) - workers + 1) :]}
        j = next((i for i, s in enumerate(rest) if _graph(s) not in recent), 0)
        out.append(rest.pop(j))
    return out


def _graph(stack: list[TrainConfig]) -> tuple:
    return stack_key(stack[0]), len(stack) == 1


def train_many(
    configs,
    *,
    cache_dir: str | os.PathLike | None = None,
    progress: bool = True,
    workers: int = 1,
    executor: str = "local",
    address: str | None = None,
    stack: bool = True,
    stores=(),
) -> list[Run]:
    """Train (or load) every config; returns runs in the order given, each as :func:`lookup` reads it.

    Runs already in the cache root (``cache_dir``, default :func:`lloydlib.training.cache_dir`) are
    loaded; the missing ones are grouped into stacks (:func:`plan`), which train together
    (:func:`~lloydlib.training.stacked.train_stack`) and land in the cache exactly as :func:`train` writes
    them. ``executor`` "local" trains the stacks in this process, or in ``workers`` processes;
    "ray" makes each stack a Ray task on the cluster at ``address`` (None: a new local Ray instance;
    "auto": the cluster this machine belongs to), and ``workers`` is then the fewest tasks the sweep
    is cut into. See :mod:`lloydlib.training.executors`. ``stack=False`` trains every run alone (a stack of
    one), for experiments that time single runs: a stacked run's ``wall_time`` is its whole stack's.
    ``stores`` are run stores (:mod:`lloydlib.training.store`) read before the cache; what they hold is
    never trained (a stale store raises :class:`~lloydlib.training.store.StaleStoreError`).
    """
    configs = list(configs)
    for i, c in enumerate(configs):
        if not isinstance(c, TrainConfig):
            raise TypeError(f"configs[{i}] must be a TrainConfig, got {type(c).__name__}")
    workers = check_int("workers", workers, 1)
    check_choice("executor", executor, EXECUTORS)
    if address is not None and executor != "ray":
        raise ValueError(f"address is for executor 'ray' only, got address={address!r} with executor {executor!r}")
    check_bool("progress", progress)
    check_bool("stack", stack)
    root = _cache_root(cache_dir)
    if isinstance(stores, (str, os.PathLike)):
        stores = [stores]
    dirs = [*stores, root]
    found = {c.key(): lookup(c, dirs) for c in configs}
    missing = list({c.key(): c for c in configs if found[c.key()] is None}.values())
    if missing:
        stacks = plan(missing, workers) if stack else [[c] for c in sorted(missing, key=_cost, reverse=True)]
        bar, done = None, None
        if progress:
            desc = f"training {len(missing)} of {len(configs)} runs in {len(stacks)} stack(s) ({executor})"
            bar = tqdm(total=len(missing), desc=desc, file=sys.stderr)
            done = lambda stack: bar.update(len(stack))
        try:
            execute(executor, stacks, root, workers=workers, address=address, done=done)
        finally:
            if bar is not None:
                bar.close()
        found.update({c.key(): lookup(c, [root]) for c in missing})
    return [found[c.key()] for c in configs]


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
