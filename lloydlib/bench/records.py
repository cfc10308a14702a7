"""Benchmark results recorded with ``python -m lloydlib bench ... --out FILE``, read back from a folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .._validate import check_choice

__all__ = ["BENCHMARKS", "recorded"]

#: the values of a result's ``benchmark`` field ("grid" and "table1" are written as "oh-vs-bn" by
#: :func:`~lloydlib.bench.grid` and renamed by the command line)
BENCHMARKS = ("train-step", "train-step-grid", "table1", "grid", "oh-vs-bn", "sweep")


def recorded(benchmark: str, *, root: str | os.PathLike, gpu_only: bool = False) -> list[dict]:
    """The results of ``benchmark`` recorded as JSON files directly in the folder ``root``.

    Returns the JSON objects whose ``benchmark`` field equals ``benchmark`` (one of :data:`BENCHMARKS`),
    sorted by file name, each with its file name added as ``"file"``; with ``gpu_only`` only those whose
    ``hardware`` names a GPU. A folder that does not exist holds none: [].
    """
    check_choice("benchmark", benchmark, BENCHMARKS)
    found = []
    for path in sorted(Path(root).glob("*.json")):
        with open(path) as f:
            blob = json.load(f)
        if not isinstance(blob, dict) or blob.get("benchmark") != benchmark:
            continue
        if gpu_only and "gpu" not in blob.get("hardware", {}):
            continue
        found.append(blob | {"file": path.name})
    return found
