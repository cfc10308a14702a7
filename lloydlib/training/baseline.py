"""The code that trained a stored run, found again in git history, and runs re-trained with it.

A re-certification (:mod:`lloydlib.training.recertify`) asks whether a code change leaves a run's numbers as
they were. The sharpest answer re-trains the run twice the same way, with the old code and with the new,
and compares the two: when the change does not touch a run's arithmetic (a kernel used only at other
shapes, say) they agree bit for bit over the whole run, whatever rounding does to a comparison with the
stored run (see :mod:`lloydlib.training.recertify`). The store keeps only the old code's fingerprint
(:mod:`lloydlib.training.fingerprint`), so :func:`find_code` looks for it in a git repository's history;
:func:`retrain_with` re-trains a run with that code, in a child process.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

from .._validate import check_int
from .config import TrainConfig
from .fingerprint import module_hash

__all__ = ["find_code", "retrain_with"]


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)


def find_code(fingerprint: dict, repo, dest) -> str | None:
    """Find the commit of the git repository ``repo`` whose lloydlib modules hash to ``fingerprint``'s
    (:func:`~lloydlib.training.fingerprint.fingerprint`; the torch version is not looked at) and write its
    ``lloydlib`` package into the folder ``dest`` (``dest/lloydlib``); returns the commit's hash, or None
    when no commit matches (the runs were trained by code never committed) or ``repo`` is not a git
    repository. Commits that touched the fingerprinted modules are tried newest first."""
    if not isinstance(fingerprint, dict) or not isinstance(fingerprint.get("modules"), dict):
        raise TypeError(f"fingerprint must be a fingerprint dict with 'modules', got {fingerprint!r:.100}")
    repo, dest = Path(repo), Path(dest)
    paths = sorted(fingerprint["modules"])
    try:
        log = _git(repo, "log", "--format=%H", "--", *paths)
    except FileNotFoundError:  # no git
        return None
    if log.returncode != 0:
        return None
    for commit in log.stdout.decode().split():
        if all(_hash_at(repo, commit, p) == h for p, h in fingerprint["modules"].items()):
            tar = _git(repo, "archive", "--format=tar", commit, "lloydlib")
            if tar.returncode != 0:
                return None
            dest.mkdir(parents=True, exist_ok=True)
            with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as t:
                kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                t.extractall(dest, **kwargs)
            return commit
    return None


def _hash_at(repo: Path, commit: str, path: str) -> str | None:
    shown = _git(repo, "show", f"{commit}:{path}")
    if shown.returncode != 0:
        return None
    try:
        return module_hash(shown.stdout.decode())
    except (SyntaxError, UnicodeDecodeError):
        return None


#: what the child process runs: the config (JSON, the old code's fields kept), re-trained as a stack of one,
#: eagerly, on the CPU, its per-step losses and evaluations written to an .npz
_CHILD = """
import dataclasses, json, sys
import numpy as np, torch
from lloydlib import training
torch.set_num_threads(int(sys.argv[2]))
fields = {f.name for f in dataclasses.fields(training.TrainConfig)}
config = training.TrainConfig(**{k: v for k, v in json.loads(sys.argv[1]).items() if k in fields})
(run,) = training.train_stack([config], cache_dir=None, write=False, compile=False)
np.savez(sys.argv[3], train_losses=run.train_losses, step=run.history["step"], val=run.history["val_rel_loss"],
         status=np.array(run.status))
"""


@dataclasses.dataclass(frozen=True)
class Retrained:
    """A run re-trained by other code: ``train_losses`` per step, ``history`` with ``step`` and
    ``val_rel_loss`` (Eq. 20) per evaluation, and ``status``."""

    train_losses: np.ndarray
    history: dict
    status: str


def retrain_with(code, config: TrainConfig, *, threads: int = 1, timeout: float | None = None) -> Retrained:
    """Re-train ``config`` (on the CPU) with the lloydlib package in the folder ``code`` (``code/lloydlib``,
    as :func:`find_code` writes it), as :mod:`lloydlib.training.recertify` re-trains a run: a stack of one,
    eagerly, with ``threads`` torch threads, in a child process of this Python (its other packages this
    environment's). A failure of the child raises a RuntimeError with the end of its output."""
    code = Path(code)
    if not (code / "lloydlib" / "__init__.py").is_file():
        raise ValueError(f"code must be a folder holding a lloydlib package, got {str(code)!r}")
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    threads = check_int("threads", threads, 1)
    text = json.dumps(dataclasses.asdict(config.replace(device="cpu")))
    env = dict(os.environ, PYTHONPATH=str(code), OMP_NUM_THREADS=str(threads))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.npz"
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, text, str(threads), str(out)],
            cwd=code,  # the old package, not this checkout's, is the one ``import lloydlib`` finds
            env=env,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0 or not out.is_file():
            tail = (done.stdout + done.stderr).decode(errors="replace")[-2000:]
            raise RuntimeError(f"re-training {config.label()} with the code in {code} failed:\n{tail}")
        with np.load(out) as z:
            history = {"step": z["step"], "val_rel_loss": z["val"]}
            return Retrained(z["train_losses"], history, str(z["status"]))
