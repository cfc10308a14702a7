"""Where finished runs live, and how they are written and read back.

A cache root holds ``runs/<key>/`` per run, ``key`` being :meth:`TrainConfig.key` (every field that
defines the experiment plus ``lloydlib.__version__``, not the device: a run trained on a GPU can be read
on a CPU). A finished run is ``result.pt`` (config, weights, history, status, info) with a readable
``result.json`` beside it; an unfinished one is ``checkpoint.pt``. Files are written to a temporary name
and moved into place with ``os.replace``, so a reader never sees half a file.

The library never guesses a checkout's folders: :func:`cache_dir` is the ``path`` given, else
``$LLOYD_CACHE``, else ``~/.cache/lloydlib``. (The book points ``$LLOYD_CACHE`` at its checkout's
``.lloydlib-cache``, so that its chapters and the processes they start share one cache.)
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..model import LearnableTransformer
from .config import DTYPES, TrainConfig

__all__ = ["RESULT", "CHECKPOINT", "SUMMARY", "cache_dir", "Run", "build_model", "lookup", "load_runs", "gpu_results"]

RESULT, CHECKPOINT, SUMMARY = "result.pt", "checkpoint.pt", "result.json"


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """The cache root: ``path`` if given, else ``$LLOYD_CACHE`` when set, else ``~/.cache/lloydlib``."""
    if path is not None:
        return Path(path)
    if os.environ.get("LLOYD_CACHE"):
        return Path(os.environ["LLOYD_CACHE"])
    return Path.home() / ".cache" / "lloydlib"


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


def build_model(config: TrainConfig) -> torch.nn.Module:
    """The untrained layer of Eq. 4 that ``config`` describes (float32, on the CPU)."""
    return LearnableTransformer(
        config.d,
        config.k,
        config.embedding,
        gamma=config.gamma,
        bias=config.bias,
        dropout=config.dropout,
        weighting=config.weighting,
        fast=config.fast,
    )


def _roots(dirs) -> list[Path]:
    if dirs is None:
        return [cache_dir()]
    if isinstance(dirs, (str, os.PathLike)):
        return [Path(dirs)]
    return [Path(d) for d in dirs]


def lookup(config: TrainConfig, dirs=None) -> Run | None:
    """The finished run of ``config`` if one of ``dirs`` (default: :func:`cache_dir`) holds it, else None.

    Each directory is a cache root (holding ``runs/<key>/``); the first that has the run wins.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    for root in _roots(dirs):
        path = root / "runs" / config.key() / RESULT
        if path.exists():
            return _load_result(path, config)
    return None


def _load_result(path: Path, config: TrainConfig | None = None) -> Run:
    blob = torch.load(path, map_location="cpu", weights_only=True)
    stored = TrainConfig(**blob["config"])
    if config is None:
        config = stored
    elif stored.experiment() != config.experiment():
        raise RuntimeError(f"cache entry {path} holds a different configuration than its key says; delete it")
    model = build_model(config).to(DTYPES[config.dtype])
    model.load_state_dict(blob["model"])
    model.eval()
    info = dict(blob["info"], cached=True, path=str(path.parent))
    history = {k: np.asarray(v) for k, v in blob["history"].items()}
    return Run(config, model, history, np.asarray(blob["train_losses"], dtype=np.float64), blob["status"], info)


def load_runs(root: str | os.PathLike) -> list[Run]:
    """Every finished run stored under the cache root ``root`` (e.g. a committed ``results/gpu/<machine>``)."""
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be an existing directory holding runs/<key>/{RESULT}, got {str(root)!r}")
    return [_load_result(p) for p in sorted(root.glob(f"runs/*/{RESULT}"))]


def gpu_results(root: str | os.PathLike) -> list[Path]:
    """The subfolders of ``root`` that hold finished runs, sorted; [] when ``root`` is not a directory.

    Each is a cache root (``runs/<key>/result.pt``), as written on a GPU by ``python -m lloydlib train
    --cache-dir <root>/<machine>``; its runs record the hardware in ``info["hardware"]``.
    """
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and any(p.glob(f"runs/*/{RESULT}")))
