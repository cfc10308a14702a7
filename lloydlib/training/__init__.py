"""Training learnable transformers on clustering tasks (Algorithm 1, Eqs. 5-6 and 20 of the Leaner paper).

One run is one :class:`TrainConfig`; :func:`train` trains it (or loads it from the cache) and returns a
:class:`Run`. The modules:

- :mod:`~lloydlib.training.config`: :class:`TrainConfig`, its cache key, :func:`derive_seed`;
- :mod:`~lloydlib.training.cache`: the cache root (:func:`cache_dir`), atomic writes, :class:`Run`,
  :func:`lookup`, :func:`load_runs`, :func:`gpu_results`;
- :mod:`~lloydlib.training.loop`: :func:`train`, repeatable and resumable from checkpoints;
- :mod:`~lloydlib.training.sweep`: :func:`grid`, :func:`train_many`, :func:`command`;
- :mod:`~lloydlib.training.stats`: :func:`curves`, :func:`group`, :func:`quartiles`, :func:`iqr_relation`,
  :func:`final_values`;
- :mod:`~lloydlib.training.cli`: ``python -m lloydlib train --help`` (:func:`main`).
"""

from .cache import Run, cache_dir, gpu_results, load_runs, lookup
from .cli import main
from .config import DTYPES, EXECUTION_FIELDS, TrainConfig, derive_seed
from .loop import train
from .stats import curves, final_values, group, iqr_relation, quartiles
from .sweep import command, grid, train_many

__all__ = [
    "TrainConfig",
    "Run",
    "train",
    "train_many",
    "grid",
    "lookup",
    "load_runs",
    "cache_dir",
    "curves",
    "final_values",
    "group",
    "quartiles",
    "iqr_relation",
    "gpu_results",
    "command",
    "derive_seed",
    "main",
    "DTYPES",
    "EXECUTION_FIELDS",
]
