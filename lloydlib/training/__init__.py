"""Training learnable transformers on clustering tasks (Algorithm 1, Eqs. 5-6 and 20 of the Leaner paper).

One run is one :class:`TrainConfig`; :func:`train` trains it (or loads it from the cache) and returns a
:class:`Run`. The modules:

- :mod:`~lloydlib.training.config`: :class:`TrainConfig` (each field's check, role and help declared once),
  its cache key, :func:`derive_seed`;
- :mod:`~lloydlib.training.cache`: the cache root (:func:`cache_dir`), atomic and locked writes
  (:func:`write_result`), :class:`Run`, :class:`CacheError`;
- :mod:`~lloydlib.training.store`: finished runs kept as data (:class:`RunStore`, :func:`write_store`,
  :func:`open_store`; written by :mod:`~lloydlib.training.pack`) with the
  :mod:`~lloydlib.training.fingerprint` of their code; :func:`lookup`,
  :func:`load_runs` and :func:`gpu_results` read stores and cache roots alike;
- :mod:`~lloydlib.training.verify`: stored runs re-trained for their first steps and compared (and the
  verdict printed), and the rounding drift a tolerance rests on measured;
- :mod:`~lloydlib.training.recertify`: a stale store re-certified after a code change that leaves the
  arithmetic equal (a sample re-trained whole; the store re-stamped only if every run agrees), with
  :mod:`~lloydlib.training.baseline`, the old code found in git history and runs re-trained with it, and
  :mod:`~lloydlib.training.recertify_report`, the re-certification printed for a command;
- :mod:`~lloydlib.training.stacked`: :func:`train` (one run) and :func:`train_stack` (many runs as one
  stacked model, :func:`stack_key`), repeatable and resumable from checkpoints, through the one engine
  :mod:`~lloydlib.training.stack_engine` (with :mod:`~lloydlib.training.run_state`, a run's state in it);
- :mod:`~lloydlib.training.sweep`: :func:`grid`, :func:`train_many` (stacks, on an executor), :func:`command`;
- :mod:`~lloydlib.training.executors`: where stacks train, ``local`` processes or a ``ray`` cluster;
- :mod:`~lloydlib.training.record`: runs trained under a time budget in chunks over many calls, added to a
  store and resumed from checkpoints, with :mod:`~lloydlib.training.progress`, what is left;
- :mod:`~lloydlib.training.stats`: :func:`curves`, :func:`group`, :func:`quartiles`, :func:`iqr_relation`,
  :func:`median_difference`,
  :func:`final_values`;
- :mod:`~lloydlib.training.cli`: ``python -m lloydlib train --help`` (:func:`main`).
"""

from .cache import CacheError, Run, cache_dir, write_result
from .cli import main
from .config import DTYPES, EXECUTION_FIELDS, TrainConfig, derive_seed
from .executors import EXECUTORS
from .pack import write_store
from .stacked import stack_key, train, train_stack
from .stats import MedianDifference, curves, final_values, group, iqr_relation, median_difference, quartiles
from .store import RunStore, StaleStoreError, StoreError, gpu_results, load_runs, lookup, open_store
from .sweep import command, grid, train_many

__all__ = [
    "stack_key",
    "train_stack",
    "TrainConfig",
    "Run",
    "train",
    "train_many",
    "grid",
    "lookup",
    "write_result",
    "CacheError",
    "EXECUTORS",
    "load_runs",
    "cache_dir",
    "curves",
    "final_values",
    "group",
    "quartiles",
    "iqr_relation",
    "median_difference",
    "MedianDifference",
    "gpu_results",
    "RunStore",
    "StoreError",
    "StaleStoreError",
    "open_store",
    "write_store",
    "command",
    "derive_seed",
    "main",
    "DTYPES",
    "EXECUTION_FIELDS",
]
