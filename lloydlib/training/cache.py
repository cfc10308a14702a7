"""Where finished runs live, and how they are written and read back.

A cache root holds ``runs/<key>/`` per run, ``key`` being :meth:`TrainConfig.key` (every field that
defines the experiment plus ``lloydlib.__version__``, not the device: a run trained on a GPU can be read
on a CPU). A finished run is ``result.pt`` (config, weights, history, status, info) with a readable
``result.json`` beside it; an unfinished one is ``checkpoint.pt``. Files are written to a temporary name
and moved into place with ``os.replace``, so a reader never sees half a file; :func:`write_result` holds
an exclusive lock on ``runs/<key>/.lock`` (``fcntl.flock``) while it writes, and keeps a result already
there, so two processes that finish the same run at once leave one valid entry. A file that cannot be read
back (truncated, foreign, of another run) raises :class:`CacheError`, which names the file and says to
delete it.

The key names the package version, not the code: a finished run also records what trained it (:func:`code_ids`,
in ``info``): ``fingerprint``, the id of :func:`lloydlib.training.fingerprint.fingerprint` (torch and the
code, the id a run store files it under), and ``code_id``, the id of the code's module hashes alone. A cached
run whose ``code_id`` is not this code's (trained by other code, or written before runs recorded it) is
*stale*: :func:`lookup` and :func:`has` treat it as missing, so it is trained again, and :func:`write_result`
replaces it. As in a run store, another torch version alone does not make a run stale.

The library never guesses a checkout's folders: :func:`cache_dir` is the ``path`` given, else
``$LLOYD_CACHE``, else ``~/.cache/lloydlib``. (The book passes its checkout's ``.lloydlib-cache`` on
explicitly, as the ``cache_dir`` arguments and ``--cache-dir``, so that its chapters and the processes they
start share one cache.)
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

import lloydlib

from . import fingerprint as _fingerprint
from .config import DTYPES, TrainConfig, build_model

try:  # POSIX; elsewhere the atomic moves alone keep files whole
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = [
    "RESULT",
    "CHECKPOINT",
    "SUMMARY",
    "CacheError",
    "FINGERPRINT",
    "CODE_ID",
    "code_ids",
    "is_current",
    "cache_dir",
    "Run",
    "has",
    "lookup",
    "roots",
    "load_runs",
    "write_result",
    "read_checkpoint",
    "run_lock",
]

RESULT, CHECKPOINT, SUMMARY, LOCK = "result.pt", "checkpoint.pt", "result.json", ".lock"
_RESULT_KEYS = {"config", "model", "history", "train_losses", "status", "info"}
_CHECKPOINT_KEYS = {"key", "model", "optimizer", "step"}
#: the keys of a finished run's ``info`` that name the code that trained it (see :func:`code_ids`)
FINGERPRINT, CODE_ID = "fingerprint", "code_id"


class CacheError(RuntimeError):
    """A file in the cache that cannot be used: the message names it and says to delete it."""

    def __init__(self, path, problem: str):
        self.path = Path(path)
        super().__init__(f"cache file {self.path} {problem}; delete it (rm {self.path}) and the run is trained again")


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """The cache root: ``path`` if given, else ``$LLOYD_CACHE`` when set, else ``~/.cache/lloydlib``."""
    if path is not None:
        return Path(path)
    if os.environ.get("LLOYD_CACHE"):
        return Path(os.environ["LLOYD_CACHE"])
    return Path.home() / ".cache" / "lloydlib"


@functools.cache
def code_ids() -> dict:
    """What a run trained by this process's code records in ``info``: ``{"fingerprint": id of
    :func:`~lloydlib.training.fingerprint.fingerprint` (torch version and module hashes), "code_id": id of the
    module hashes alone}`` (:func:`~lloydlib.training.fingerprint.fingerprint_id`), computed once per process."""
    fp = _fingerprint.fingerprint()
    return {FINGERPRINT: _fingerprint.fingerprint_id(fp), CODE_ID: _fingerprint.fingerprint_id(fp["modules"])}


def is_current(info) -> bool:
    """Whether a finished run's ``info`` records this code (its ``code_id`` is :func:`code_ids`'); False for a
    run without one (written before runs recorded their code)."""
    return isinstance(info, dict) and info.get(CODE_ID) == code_ids()[CODE_ID]


def atomic_write(path: Path, write) -> None:
    """Call ``write(file_object)`` on a temporary file next to ``path``, then move it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def save_torch(path: Path, obj) -> None:
    """``torch.save(obj)`` to ``path``, atomically."""
    atomic_write(path, lambda f: torch.save(obj, f))


def save_json(path: Path, obj) -> None:
    """``obj`` as indented, key-sorted JSON in ``path``, atomically."""
    atomic_write(path, lambda f: f.write((json.dumps(obj, indent=1, sort_keys=True) + "\n").encode()))


@dataclass
class Run:
    """A trained (or loaded) run.

    ``history`` holds numpy arrays, one entry per evaluation (step 0, then every ``eval_every`` steps
    and the last step): ``step``; ``train_loss``, the mean smoothed training loss (Eq. 6) of the steps
    since the previous evaluation (at step 0: the untrained model's loss on the first batch);
    ``val_rel_loss``, Eq. 20 on the validation tasks; ``val_loss``, the mean k-means loss (Eq. 5) there;
    ``lr``; and ``wall_time``, seconds spent in training steps up to that step (validation excluded).
    ``train_losses`` is the per-step training loss, shape (steps run,). ``status`` is "done", "diverged"
    (a non-finite loss stopped the run; ``info["diverged_at"]`` gives the step) or "partial" (stopped by
    ``stop_at``). ``info`` records where it ran (``device``, ``hardware``), ``seconds`` and
    ``cpu_seconds`` (wall-clock and process CPU time spent in training steps), ``resumed_from`` and
    ``cached`` (loaded, not trained, now).
    """

    config: TrainConfig
    model: torch.nn.Module
    history: dict
    train_losses: np.ndarray
    status: str
    info: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return self.config.key()

    @property
    def final_val(self) -> float:
        """The last validation relative loss (inf for a diverged run)."""
        return math.inf if self.status == "diverged" else float(self.history["val_rel_loss"][-1])

    def final_train(self, window: int | None = None) -> float:
        """Mean training loss over the last ``window`` steps (default: ``eval_every``); inf if diverged."""
        if self.status == "diverged":
            return math.inf
        w = window or self.config.eval_every
        return float(np.mean(self.train_losses[-w:]))

    def __repr__(self):
        return (
            f"Run({self.config.label()}, status={self.status}, steps={len(self.train_losses)}, "
            f"final val rel loss={self.final_val:.4f}, key={self.key})"
        )


def roots(dirs) -> list[Path]:
    """``dirs`` as a list of folders: None is [:func:`cache_dir`], one path is [it]."""
    if dirs is None:
        return [cache_dir()]
    if isinstance(dirs, (str, os.PathLike)):
        return [Path(dirs)]
    return [Path(d) for d in dirs]


def _summary_current(run_dir: Path) -> bool:
    """Whether the ``result.json`` in ``run_dir`` names this code (:func:`is_current`); False when it cannot
    be read."""
    try:
        summary = json.loads((run_dir / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(summary, dict) and is_current(summary.get("info"))


def has(config: TrainConfig, dirs=None) -> bool:
    """Whether one of ``dirs`` (default: :func:`cache_dir`) holds the finished run of ``config``, trained by
    this code: a test of the files and of the small ``result.json`` beside the result (:func:`lookup` reads
    the run itself)."""
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    run_dirs = [root / "runs" / config.key() for root in roots(dirs)]
    return any((d / RESULT).exists() and _summary_current(d) for d in run_dirs)


def lookup(config: TrainConfig, dirs=None) -> Run | None:
    """The finished run of ``config`` if one of ``dirs`` (default: :func:`cache_dir`) holds it, trained by this
    code (:func:`is_current`), else None.

    Each directory is a cache root (holding ``runs/<key>/``); the first that has a current run wins. A stale
    run (other code's, or one that records no code) counts as missing.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    for root in roots(dirs):
        path = root / "runs" / config.key() / RESULT
        if path.exists():
            run = _load_result(path, config)
            if is_current(run.info):
                return run
    return None


def _read(path: Path, required: set, what: str) -> dict:
    """``torch.load`` of a cache file that must be a dict with keys ``required``; else :class:`CacheError`."""
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except Exception as e:  # truncated, not a torch file, or a pickle of something foreign
        raise CacheError(path, f"cannot be read as a lloydlib {what} ({type(e).__name__}: {str(e)[:200]})") from e
    if not isinstance(blob, dict) or not required <= set(blob):
        got = sorted(blob) if isinstance(blob, dict) else type(blob).__name__
        raise CacheError(path, f"is not a lloydlib {what}: expected a dict with keys {sorted(required)}, got {got}")
    return blob


def _load_result(path: Path, config: TrainConfig | None = None) -> Run:
    blob = _read(path, _RESULT_KEYS, "result")
    try:
        stored = TrainConfig(**blob["config"])
    except (TypeError, ValueError) as e:
        raise CacheError(path, f"holds a configuration this lloydlib cannot read ({e})") from e
    if config is None:
        config = stored
    elif stored.experiment() != config.experiment():
        raise CacheError(path, "holds a different configuration than its key says")
    model = build_model(config).to(DTYPES[config.dtype])
    try:
        model.load_state_dict(blob["model"])
        history = {k: np.asarray(v) for k, v in blob["history"].items()}
        train_losses = np.asarray(blob["train_losses"], dtype=np.float64)
        info = dict(blob["info"], cached=True, path=str(path.parent))
    except Exception as e:
        raise CacheError(path, f"holds weights or a history of another shape ({type(e).__name__}: {e})") from e
    model.eval()
    return Run(config, model, history, train_losses, blob["status"], info)


def load_runs(root: str | os.PathLike) -> list[Run]:
    """Every finished run stored under the cache root ``root`` (e.g. a committed ``results/recorded/<machine>``)."""
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be an existing directory holding runs/<key>/{RESULT}, got {str(root)!r}")
    return [_load_result(p) for p in sorted(root.glob(f"runs/*/{RESULT}"))]


@contextlib.contextmanager
def run_lock(run_dir: str | os.PathLike):
    """Hold an exclusive lock on the run folder ``run_dir`` (on the file ``.lock`` in it) while inside.

    Processes (on one machine or on a shared file system with working locks) that write the same run
    take turns. Where ``fcntl`` is missing (Windows) it locks nothing.
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover
        yield
        return
    with open(run_dir / LOCK, "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _result_blob(run: Run) -> dict:
    config = run.config
    info = {k: v for k, v in run.info.items() if k not in ("cached", "path")}
    info.setdefault("lloydlib", lloydlib.__version__)
    info.setdefault("key", config.key())
    info.setdefault("finished", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    if not run.info.get("cached"):  # trained by this code; a loaded run keeps what it recorded, or nothing
        for name, value in code_ids().items():
            info.setdefault(name, value)
    return dict(
        config=dataclasses.asdict(config),
        model={k: v.detach().to("cpu") for k, v in run.model.state_dict().items()},
        history={k: np.asarray(v).tolist() for k, v in run.history.items()},
        train_losses=[float(x) for x in np.asarray(run.train_losses).ravel()],
        status=run.status,
        info=info,
    )


def write_result(root: str | os.PathLike, run: Run) -> Path:
    """Store the finished ``run`` under the cache root ``root``; returns its folder ``root/runs/<key>``.

    Writes ``result.json`` (everything but the weights, plus ``"lloydlib"``: the version) and then
    ``result.pt`` (config as a dict, CPU weights, history as lists, ``train_losses``, ``status``,
    ``info`` without ``cached`` and ``path``; a run trained now records this code, :func:`code_ids`), each
    atomically, then drops the run's checkpoint. Under :func:`run_lock`: when a readable result of the same
    configuration and of this code is already there (another process finished the run first) it is kept as it
    is; one that cannot be read, or a stale one (:func:`is_current`), is replaced.
    """
    if not isinstance(run, Run):
        raise TypeError(f"run must be a Run, got {type(run).__name__}")
    if run.status not in ("done", "diverged"):
        raise ValueError(f"run must be finished (status 'done' or 'diverged'), got status {run.status!r}")
    run_dir = cache_dir(root) / "runs" / run.config.key()
    with run_lock(run_dir):
        result = run_dir / RESULT
        if result.exists():
            try:
                if is_current(_load_result(result, run.config).info):
                    return run_dir  # written by another process: keep the first
            except CacheError:
                pass  # unreadable: replace it with this run
        blob = _result_blob(run)
        save_json(
            run_dir / SUMMARY, {k: v for k, v in blob.items() if k != "model"} | {"lloydlib": blob["info"]["lloydlib"]}
        )
        save_torch(result, blob)
        (run_dir / CHECKPOINT).unlink(missing_ok=True)
    return run_dir


def read_checkpoint(path: str | os.PathLike, config: TrainConfig) -> dict | None:
    """The checkpoint at ``path`` of the run ``config`` (a dict with at least ``key``, ``model``,
    ``optimizer``, ``step``), or None when there is none. A truncated or foreign file, or the checkpoint of
    another run, raises :class:`CacheError` naming the file.
    """
    path = Path(path)
    try:
        blob = _read(path, _CHECKPOINT_KEYS, "checkpoint")
    except FileNotFoundError:  # none, or the run finished in another process, which dropped it
        return None
    if blob["key"] != config.key():
        raise CacheError(path, f"is the checkpoint of run {blob['key']!r}, not of {config.key()!r} ({config.label()})")
    return blob
