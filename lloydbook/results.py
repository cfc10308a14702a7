"""The checkout's folders the chapters read and write (the library takes every directory as an argument):
``results/`` (benchmark JSON files, and run stores recorded on other machines under ``results/recorded/<machine>/``,
see ``results/README.md``), the run store ``results/runs/`` (:mod:`lloydbook.runs`; ``$LLOYD_STORE`` names
another), and the training cache ``.lloydlib-cache/`` (``$LLOYD_CACHE`` names another), which the book passes on as
an argument and never writes into the environment.
"""

from __future__ import annotations

import os
from pathlib import Path

from lloydlib import bench, training

__all__ = [
    "ROOT",
    "REBUILD",
    "checkout",
    "results_dir",
    "store_dir",
    "store",
    "cache_dir",
    "recorded",
    "RECORDED",
    "RECORDED_STORE",
    "recorded_run_dirs",
]

ROOT = Path(__file__).resolve().parents[1]
#: the one command that rebuilds the run store (every store error quotes it)
REBUILD = "make runs"
#: the folder, relative to the checkout, of the recorded run stores: one ``<machine>`` folder per machine
RECORDED = "results/recorded"
#: one machine's recorded store, as commands write it (``<machine>`` names the machine: see :mod:`lloydbook.record`)
RECORDED_STORE = f"{RECORDED}/<machine>"


def checkout() -> Path | None:
    """The repository checkout this package was loaded from, or None for an installed copy (Colab)."""
    return ROOT if (ROOT / "_toc.yml").exists() and (ROOT / "lloydlib").is_dir() else None


def results_dir() -> Path | None:
    """``<checkout>/results``, or None outside a checkout."""
    root = checkout()
    return None if root is None else root / "results"


def store_dir() -> Path | None:
    """The run store's folder: ``$LLOYD_STORE`` when set, else ``<checkout>/results/runs``; None outside a
    checkout."""
    if os.environ.get("LLOYD_STORE"):
        return Path(os.environ["LLOYD_STORE"])
    root = results_dir()
    return None if root is None else root / "runs"


def store() -> training.RunStore | None:
    """The checkout's run store, read (once per process, see :func:`lloydlib.training.open_store`), or None
    when there is none. A store trained by other code raises :class:`lloydlib.training.StaleStoreError`."""
    path = store_dir()
    if path is None or not training.store.is_store(path):
        return None
    return training.open_store(path, rebuild=REBUILD)


def cache_dir() -> Path:
    """The training cache the chapters share: ``$LLOYD_CACHE`` when set, else ``<checkout>/.lloydlib-cache``
    in a writable checkout, else ``~/.cache/lloydlib``."""
    if os.environ.get("LLOYD_CACHE"):
        return Path(os.environ["LLOYD_CACHE"])
    root = checkout()
    if root is not None and os.access(root, os.W_OK):
        return root / ".lloydlib-cache"
    return Path.home() / ".cache" / "lloydlib"


def recorded(benchmark: str, *, gpu_only: bool = False, folder: str | None = None) -> list[dict]:
    """The benchmark results recorded in the checkout's ``results/``, or in its sub-folder ``folder`` (see
    :func:`lloydlib.bench.recorded`); [] outside a checkout."""
    root = results_dir()
    if folder is not None and (not isinstance(folder, str) or not folder or Path(folder).is_absolute()):
        raise ValueError(f"folder must name a sub-folder of results/ (a relative path), got {folder!r}")
    if root is None:
        return []
    return bench.recorded(benchmark, root=root / folder if folder else root, gpu_only=gpu_only)


def recorded_run_dirs() -> list[Path]:
    """The recorded training-run folders ``results/recorded/<machine>`` that hold finished runs (stores, or
    cache roots), on whatever device they trained (:func:`lloydlib.training.gpu_results`, named before CPU
    recordings); [] outside a checkout."""
    root = results_dir()
    return [] if root is None else training.gpu_results(root / "recorded")
