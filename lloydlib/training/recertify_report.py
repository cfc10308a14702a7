"""A stale store re-certified for a command: the old code looked for, each run and the verdict printed.

:func:`~lloydlib.training.recertify.recertify` re-trains a sample of a stale store and re-stamps it only if
every run agrees. :func:`report` is what a command around it does: it looks for the code that trained the
stale runs in a git repository's history (:func:`~lloydlib.training.baseline.find_code`, by their one
fingerprint, when they were trained with this torch), so that each run is re-trained with it too, prints
each re-trained run as it finishes and then the verdict, and returns the exit status.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from ..checks import check_int
from . import fingerprint as _fingerprint
from .baseline import find_code
from .recertify import Recheck, recertify
from .store import MANIFEST, fingerprint_id, is_store
from .verify import check_command, check_tolerance

__all__ = ["report"]


def report(
    root, *, tolerance, seed: int, per_shape: int = 1, workers: int = 1, command: str, repo, rebuild: str
) -> int:
    """Re-certify the store at ``root`` for this code (:func:`~lloydlib.training.recertify.recertify`),
    printing each re-trained run and the verdict; returns the exit status (0: the store is this code's now,
    or was already; 1: a run disagreed and nothing was re-stamped).

    ``tolerance`` is the pair (step 1, later steps) of largest relative differences allowed; ``per_shape``
    runs of every shape are drawn at ``seed`` and re-trained by ``workers`` processes (:func:`~lloydlib.training.recertify.recheck`). ``command`` is
    the command that re-certifies this store: the first line prints it as the replay (``command --seed
    seed``), and the manifest keeps it. ``repo`` is the git repository in whose history the code that trained
    the stale runs is looked for (one stale fingerprint and this torch; else the runs are compared with the
    stored ones only). ``rebuild`` is the command that rebuilds the store, named in a failure when the
    store's manifest names none."""
    if not isinstance(root, (str, os.PathLike)) or not is_store(root):
        raise ValueError(f"root must be a run store (a folder holding {MANIFEST}), got {str(root)!r}")
    if not isinstance(repo, (str, os.PathLike)):
        raise TypeError(f"repo must be a path (a git repository), got {type(repo).__name__}")
    root, repo, tolerance = Path(root), Path(repo), check_tolerance(tolerance)
    seed, per_shape, workers = (
        check_int("seed", seed, 0),
        check_int("per_shape", per_shape, 1),
        check_int("workers", workers, 1),
    )
    command, rebuild = check_command("command", command), check_command("rebuild", rebuild)
    t0 = time.time()
    print(
        f"re-certification of {root}: seed {seed} (replay: {command} --seed {seed}), {per_shape} run(s) per "
        f"shape, {workers} worker(s); tolerance {tolerance[0]:g} at step 1 and {tolerance[1]:g} after",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        commit = _old_code(root, Path(tmp), repo)
        print(
            f"the old code: commit {commit[:12]}, found in git history by its fingerprint: each run is re-trained "
            "with it too, and the same numbers bit for bit certify it"
            if commit
            else "the old code: not to be had (not in git history, several fingerprints, or another torch): the "
            "runs are compared with the stored ones only",
            flush=True,
        )
        done = recertify(
            root,
            tolerance=tolerance,
            seed=seed,
            per_shape=per_shape,
            workers=workers,
            command=command,
            baseline=Path(tmp) if commit else None,
            baseline_note=f"commit {commit}" if commit else "",
            done=_show,
        )
    same = sum(bool(r.identical) for r in done.rechecks)
    took = f"{len(done.rechecks)} runs re-trained in {time.time() - t0:.0f} s" + (
        f", {same} of them bit for bit as the old code trains them" if commit else ""
    )
    if not done.old:
        print(f"re-certification: the run store {root} is this code's already; nothing to re-certify")
        return 0
    big = done.largest()
    if done.ok:
        print(
            f"re-certification: PASSED, {took}; largest step-1 difference {big['first']:.1e} against {tolerance[0]:g}, "
            f"largest later difference {big['later']:.1e} ({big['where']}) against {tolerance[1]:g} (over the runs "
            f"the old code did not certify bit for bit); {done.restamped} "
            f"runs re-stamped from {', '.join(done.old)} to {done.new} ({'; '.join(done.changes)}), recorded in "
            f"{root / MANIFEST}"
        )
        return 0
    for r in done.failed:
        c = r.check
        print(
            f"re-certification FAILED: {c.label} (key {c.key}): step 1 {c.first:.2e}, later {c.later:.2e} at {c.where} "
            f"(tolerance {tolerance[0]:g}, {tolerance[1]:g}), status stored/now {c.status}",
            file=sys.stderr,
        )
    print(
        f"re-certification: FAILED, {took}; {len(done.failed)} of {len(done.rechecks)} runs disagree; nothing was "
        f"re-stamped: this code does not train the stored runs ({'; '.join(done.changes)}); rebuild the store with: "
        f"{json.loads((root / MANIFEST).read_text()).get('rebuild') or rebuild}",
        file=sys.stderr,
    )
    return 1


def _old_code(root: Path, dest: Path, repo: Path) -> str | None:
    """The commit of ``repo`` whose lloydlib trained the stale runs of the store at ``root`` (one fingerprint,
    this torch), written into ``dest`` (:func:`~lloydlib.training.baseline.find_code`); None if there is none."""
    manifest = json.loads((root / MANIFEST).read_text())
    current = _fingerprint.fingerprint()
    stale = {e["fingerprint"] for e in manifest["runs"].values()} - {fingerprint_id(current)}
    if len(stale) != 1:
        return None
    old = manifest["fingerprints"][stale.pop()]
    return find_code(old, repo, dest) if old.get("torch") == current["torch"] else None


def _show(r: Recheck) -> None:
    """Print one re-trained run as it finishes: its verdict, steps, differences and time."""
    c = r.check
    span = "whole" if r.horizon is None else f"to the horizon, step {r.horizon}"
    print(
        f"  {'ok' if r.ok else 'MISMATCH':8s} {c.label:52s} {r.trained:5d} steps, {c.steps:5d} compared ({span}): "
        f"step 1 {c.first:.1e}, later {c.later:.1e} ({c.where}); whole length {r.whole:.1e}"
        + ("" if r.identical is None else "; the old code: " + ("the same" if r.identical else "other numbers"))
        + f"; {r.seconds:.0f} s",
        flush=True,
    )
