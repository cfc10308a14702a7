"""Re-certifying a stale store: a code change that leaves the arithmetic equal need not cost a rebuild.

A store (:mod:`lloydlib.training.store`) whose runs were trained by other code (a module of
:data:`~lloydlib.training.fingerprint.MODULES` changed, or torch) is stale, and nothing reads it. A
change that computes the same numbers up to rounding (a faster kernel, say) need not retrain it:
:func:`recertify` re-trains a sample (:func:`~lloydlib.training.verify.sample`: ``per_shape`` runs of
every combination of :data:`~lloydlib.training.verify.SHAPE_FIELDS` among the runs of each stale
fingerprint) with this code, compares every step (up to the step where a run parts from its stored self by
more than the later tolerance: after it nothing can save the run, so it is not trained), and only if every run
agrees gives the store this code's fingerprint (:func:`~lloydlib.training.pack.restamp`), recording in the
manifest what it re-trained and found. If one disagrees, nothing is re-stamped and the result names it.

How a run is compared, and why
------------------------------
Each run re-trains alone (a stack of one; :func:`~lloydlib.training.verify.retrain` stacks the runs that can
share a stack), eagerly, on the CPU, in float32 when it trained so. Its per-step training loss (Eq. 6) and the
relative validation losses (Eq. 20) of its evaluations are compared with the stored ones by
:func:`~lloydlib.training.verify.compare` within ``tolerance`` (step 1, later steps), on the steps
:func:`~lloydlib.training.verify.stable_steps` and :func:`~lloydlib.training.verify.stable_until` allow.

Over a whole run that is not always possible, whatever the code. Measured on the book's store (1,650
runs of 1,000 to 6,000 steps, each trained in a compiled stack of 10 to 60 on one thread) with the code that
trained it, re-trained whole this way on one thread: 19 of a 48-run sample (one per shape) part from
their stored selves by more than 1e-2 somewhere (up to 0.38 in a step's training loss, 18% in a validation
loss), mostly OH and BN runs with the L2 loss or at tau < 1, and runs at d=32. They agree to 1e-7 at first,
but rounding flips a discrete choice and the difference grows exponentially, from 1e-4 to 1e-2 within 15
to 2,200 steps. Re-training the way they trained does not help. Three such runs (n=16, 32 at d=4 and d=32)
re-trained as a compiled stack of one differ from their stored selves by 0.14 to 0.29 (eagerly: 0.16 to
0.31); two of them in a compiled stack of two by 0.14 and 0.24. One run's whole stack of 20, re-trained
compiled on one thread, reproduces none of its 20 runs bit for bit: its 10 runs at tau=0.1 differ by 0.17
to 0.24 (that run by 0.24, as in the stack of two), and its 10 at tau=1 agree within 1e-6. No way of
re-training reproduces those steps, so no comparison there can tell a code change from rounding.

So a run that disagrees after step 1 is compared up to its *horizon*: the step before rounding alone, with
this code, has grown to :data:`HORIZON_SHARE` of the later tolerance. Rounding alone is measured by a
twin, the same run re-trained in float64 (the same tasks and initial weights; float32 training is a
rounding of it): the horizon is the first step where the twin and the float32 re-training differ by more
than that share in a training loss or a validation loss. Measured on six such runs, that step came 24 to
219 steps before the stored and re-trained runs differed by 1e-2 (and the twin passed 1e-2 within 45 steps
of them, either way). The twin trains only up to the step where the stored and re-trained runs part
(:func:`~lloydlib.training.verify.parting_step`), not over the run's whole length: a later horizon could not
save the run. A run that agrees with its stored self over its whole length needs no twin. With the
book's tolerance (1e-5, 1e-2), the 48-run sample above passes: 29 runs compared over their whole length
(one, at Fig. 11's rate 1.0, up to its jump), 19 up to their horizons (steps 500 to 2,251 of 3,000 or
6,000), the largest difference before them 2.8e-3; 950 s on one busy core. Before its horizon a run must
agree within the tolerance: a change that moves the numbers beyond rounding before then is caught; one
whose effect starts only after the horizons of every sampled run of its shape is not (the runs that never
part, three in five of the book's, are compared whole).

The horizon is one draw of rounding against another, and can miss: re-certifying a copy of the book's store
after the fused attention kernel came in (commit ca8f384), 47 of a 48-run sample passed and one did not. Its
stored run (OH:L2, k=16, seed 16) parts from its eager re-training by up to 1.26e-2 after step 1,000 while
the float64 twin stays within 4.6e-4 of it, and the old code, re-trained the same way, gives the new code's
numbers bit for bit: the stored run took another turn by rounding, and the change has nothing to do with it.
So where the old code can be had (``baseline``: :func:`~lloydlib.training.baseline.find_code` finds it in git
history by its fingerprint), each run is also re-trained with it the same way, and the same numbers bit for
bit certify the run, provided step 1 agrees with the stored run (a store off from its first step is no code
change's doing, and is refused). A run whose numbers the change moves at all is judged by the comparison
with the stored run, as above. Re-certifying that copy so, the same sample passed: 46 runs bit for bit as the
old code trains them, and the 2 at n=64 (whose validation, B = 320 tasks, now takes the fused kernel: its
losses differ by up to 2.5e-7, the training losses not at all) within 7.8e-4 up to their horizons; 1,102 s
on one core of a busy machine.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing as mp
import os
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

import lloydlib

from .._validate import check_int
from . import fingerprint as _fingerprint
from .baseline import retrain_with
from .cache import Run
from .config import TrainConfig
from .pack import restamp
from .stacked import train_stack
from .store import MANIFEST, RunStore, StoreError, StoreTorchWarning, fingerprint_id, is_store
from .verify import HORIZON_SHARE, SHAPE_FIELDS, Check, check_tolerance, compare, parting_step, sample, to_horizon

__all__ = ["Recheck", "Recertification", "recheck", "recertify"]


@dataclass(frozen=True)
class Recheck:
    """One stored run re-trained (``trained`` steps: all of them, or up to the end of the :data:`SEGMENT` where
    it parted from its stored self) and compared: ``check`` with the
    stored run (:class:`~lloydlib.training.verify.Check`, over its first ``check.steps`` steps); ``whole`` is
    the largest later difference over every comparable step (``check.later`` when ``horizon`` is None);
    ``horizon`` the first step where rounding alone (the float64 twin) passed :data:`HORIZON_SHARE` of the
    later tolerance, when the run disagreed somewhere and the twin was trained (None: compared whole);
    ``identical`` whether the old code, re-trained the same way, gave the same numbers bit for bit (None:
    no old code to ask); ``seconds`` the wall time of its re-training (and the twin's, and the old code's).
    ``ok`` when ``check`` is, or when ``identical`` and step 1 agrees with the stored run."""

    check: Check
    trained: int
    whole: float
    horizon: int | None
    seconds: float
    identical: bool | None = None

    @property
    def ok(self) -> bool:
        return self.check.ok or (bool(self.identical) and self.check.first <= self.check.tolerance[0])

    @classmethod
    def from_dict(cls, key: str, tolerance, d: dict) -> Recheck:
        """The recheck of the run ``key`` at ``tolerance`` that :meth:`as_dict` wrote as ``d``."""
        c = Check(
            key, d["label"], d["compared"], d["first"], d["later"], d["where"], tuple(tolerance), tuple(d["status"])
        )
        return cls(c, d["trained"], d["whole"], d["horizon"], d["seconds"], d["identical"])

    def as_dict(self) -> dict:
        c = self.check
        return dict(
            label=c.label,
            trained=self.trained,
            compared=c.steps,
            horizon=self.horizon,
            first=c.first,
            later=c.later,
            where=c.where,
            whole=self.whole,
            identical=self.identical,
            status=list(c.status),
            ok=self.ok,
            seconds=round(self.seconds, 1),
        )


#: the steps between the comparisons of a re-training with its stored run: once the two part by more than the
#: later tolerance (:func:`~lloydlib.training.verify.parting_step`), the rest of the run cannot change the
#: verdict (:func:`~lloydlib.training.verify.to_horizon` compares up to a horizon before that step, or fails the
#: run), so it is not trained
SEGMENT = 500

#: the file in a store's folder that keeps the rechecks of a re-certification as they finish, so that one cut
#: short (a session's end, say) resumes where it stopped; removed once the store is re-stamped
PROGRESS = "recertify-progress.json"

#: the steps the old code re-trains first: where its numbers differ from this code's there, the run is not the
#: same bit for bit, and the old code's re-training over the whole run (as long as this code's) is skipped
PREFIX = 20


def recheck(run: Run, tolerance: tuple[float, float], *, threads: int = 1, baseline=None) -> Recheck:
    """Re-train the stored ``run`` with this code (a stack of one, eagerly, on the CPU, ``threads`` torch
    threads) and compare it within ``tolerance``: over every comparable step, or, when it disagrees after step
    1, up to its horizon (a float64 twin trained to find it; see the module docstring). Step 1, before any
    optimiser step, is compared in any case, and a difference there decides alone. The run trains in segments
    of :data:`SEGMENT` steps and stops at the end of the one where it parts from its stored self.
    ``baseline``, a folder holding the lloydlib package that trained the run
    (:func:`~lloydlib.training.baseline.find_code`), re-trains its first :data:`PREFIX` steps the same way with
    that code too (:func:`~lloydlib.training.baseline.retrain_with`); where they are this code's numbers bit for
    bit, both codes train the run whole, and the same numbers bit for bit certify it."""
    if not isinstance(run, Run):
        raise TypeError(f"run must be a Run, got {type(run).__name__}")
    tolerance = check_tolerance(tolerance)
    threads = check_int("threads", threads, 1)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        t0 = time.time()
        config = run.config.replace(device="cpu")
        steps, prefix = config.steps, min(PREFIX, config.steps)
        with tempfile.TemporaryDirectory() as tmp:
            stop = min(SEGMENT, steps)
            new = _train_to(config, tmp, stop)
            early = baseline is not None and _old_code_agrees(baseline, config, new, prefix, threads)
            while stop < steps and (early or parting_step(run, new, stop, tolerance) is None):
                stop = min(stop + SEGMENT, steps)
                new = _train_to(config, tmp, stop)
        same = (
            None
            if baseline is None
            else early and (prefix == steps or _old_code_agrees(baseline, config, new, steps, threads))
        )
        whole = compare(run, new, stop, tolerance)
        check, at = (whole, None) if same else to_horizon(run, new, whole)
        return Recheck(check, stop, whole.later, at, time.time() - t0, same)
    finally:
        torch.set_num_threads(before)


def _train_to(config: TrainConfig, cache: str, stop: int) -> Run:
    """``config`` trained up to step ``stop`` (a partial run before its last step), resuming from the checkpoint
    an earlier call left in the folder ``cache``."""
    (run,) = train_stack(
        [config], cache_dir=cache, write=False, compile=False, stop_at=stop if stop < config.steps else None
    )
    return run


def _old_code_agrees(baseline, config: TrainConfig, new: Run, steps: int, threads: int) -> bool:
    """Whether the old code in ``baseline``, re-training ``config``'s first ``steps`` steps (all of them when
    ``steps`` is its length) the same way, gives ``new``'s numbers over them bit for bit."""
    old = retrain_with(baseline, config.replace(steps=steps), threads=threads)
    return _same(old, new, None if steps == config.steps else steps)


def _same(old, new: Run, steps: int | None = None) -> bool:
    """Whether two re-trainings of one run gave the same per-step losses, evaluations and end, bit for bit; with
    ``steps``, whether ``old``, trained for ``steps`` steps, is ``new``'s first ``steps`` (their ends not compared)."""
    seen = new.history["step"] <= (np.inf if steps is None else steps)
    return (
        (steps is not None or old.status == new.status)
        and np.array_equal(old.train_losses, new.train_losses[:steps], equal_nan=True)
        and np.array_equal(old.history["step"], new.history["step"][seen])
        and np.array_equal(old.history["val_rel_loss"], new.history["val_rel_loss"][seen], equal_nan=True)
    )


def _task(args) -> tuple[int, Recheck]:
    i, run, tolerance, threads, baseline = args
    return i, recheck(run, tolerance, threads=threads, baseline=baseline)


@dataclass(frozen=True)
class Recertification:
    """What :func:`recertify` did to the store at ``root``: ``changes`` between the code that trained its
    stale runs and this code ([] when none was stale: nothing re-trained); ``old`` their fingerprint ids and
    ``new`` this code's; the sample drawn at ``seed`` (``per_shape`` runs of each shape) and its
    ``rechecks``, in the manifest's order; ``restamped``, the runs given the new fingerprint (0 unless every
    recheck is ok)."""

    root: Path
    changes: tuple[str, ...]
    old: tuple[str, ...]
    new: str
    seed: int
    per_shape: int
    tolerance: tuple[float, float]
    rechecks: tuple[Recheck, ...]
    restamped: int

    @property
    def ok(self) -> bool:
        """The store is this code's now (re-stamped, or already)."""
        return not self.changes or self.restamped > 0

    @property
    def failed(self) -> tuple[Recheck, ...]:
        return tuple(r for r in self.rechecks if not r.ok)

    def largest(self) -> dict:
        """The largest differences that decided: at step 1 over every recheck (with its run), and later over
        the rechecks the old code did not certify bit for bit (0 and "-" when it certified all); ``whole``
        the largest later difference over every comparable step of every recheck, decisive or not."""
        if not self.rechecks:
            return {}
        first = max(self.rechecks, key=lambda r: r.check.first)
        judged = [r for r in self.rechecks if not r.identical]
        later = max(judged, key=lambda r: r.check.later) if judged else None
        return dict(
            first=first.check.first,
            first_key=first.check.key,
            later=later.check.later if later else 0.0,
            later_key=later.check.key if later else None,
            where=later.check.where if later else "-",
            whole=max(r.whole for r in self.rechecks),
            identical=sum(bool(r.identical) for r in self.rechecks),
        )


def recertify(
    root,
    *,
    tolerance,
    seed: int,
    per_shape: int = 1,
    workers: int = 1,
    threads: int = 1,
    fields=SHAPE_FIELDS,
    command: str | None = None,
    baseline=None,
    baseline_note: str = "",
    done: Callable[[Recheck], None] | None = None,
) -> Recertification:
    """Re-certify the store at ``root`` for this code; returns a :class:`Recertification`.

    When some of its runs were trained by other code (another fingerprint, torch included), draws
    ``per_shape`` of them per combination of ``fields`` and per stale fingerprint at ``seed``
    (:func:`~lloydlib.training.verify.sample`), re-trains each with this code (:func:`recheck`) in
    ``workers`` spawned processes of ``threads`` torch threads (:func:`recheck`; ``done(recheck)`` is
    called as each finishes) and compares it within ``tolerance`` (step 1, later steps). Only if every one
    agrees, re-stamps the store (:func:`~lloydlib.training.pack.restamp`) and appends to its manifest's
    ``recertified`` list: ``when``, ``from`` (the old fingerprints, whole), ``to`` (the new id),
    ``changes``, ``seed``, ``per_shape``, ``fields``, ``tolerance``, ``horizon_share``, ``how``, ``keys``
    (the sample), ``runs`` (key -> :meth:`Recheck.as_dict`), ``largest`` and ``lloydlib``. ``command``,
    when given, is kept as the manifest's re-certification command. ``baseline``, a folder holding the
    lloydlib package that trained the stale runs (one stale fingerprint; see
    :func:`~lloydlib.training.baseline.find_code`), re-trains each sampled run with it too (:func:`recheck`),
    recorded as ``baseline_note`` (the commit, say). A store that is this code's already is left as it is.
    Each recheck is kept in the store's :data:`PROGRESS` file as it finishes: the same re-certification (this
    code, the stale fingerprints, the sample, the tolerance and the way of re-training), started again after
    being cut short, re-trains only the runs that file lacks.
    """
    if not isinstance(root, (str, os.PathLike)) or not is_store(root):
        raise ValueError(f"root must be a run store (a folder holding {MANIFEST}), got {str(root)!r}")
    root = Path(root)
    tolerance = check_tolerance(tolerance)
    seed, per_shape = check_int("seed", seed, 0), check_int("per_shape", per_shape, 1)
    workers, threads = check_int("workers", workers, 1), check_int("threads", threads, 1)
    names = {f.name for f in dataclasses.fields(TrainConfig)}
    fields = tuple(fields) if isinstance(fields, (list, tuple)) else ()
    if not fields or any(f not in names for f in fields):
        raise ValueError(f"fields must be a non-empty sequence of TrainConfig field names, got {fields!r}")
    if command is not None and (not isinstance(command, str) or not command.strip()):
        raise ValueError(f"command must be the command that re-certifies the store, or None, got {command!r}")
    if baseline is not None and not (Path(baseline) / "lloydlib" / "__init__.py").is_file():
        raise ValueError(f"baseline must be a folder holding a lloydlib package, or None, got {str(baseline)!r}")
    store, expected = _read(root)
    current = _fingerprint.fingerprint()
    new = fingerprint_id(current)
    stale = sorted({e["fingerprint"] for e in store.manifest["runs"].values()} - {new})
    changes = tuple(store.changes(current))
    picked: list[Run] = []
    for fid in stale:
        configs = [
            TrainConfig(**store.record(k)["config"])
            for k, e in store.manifest["runs"].items()
            if e["fingerprint"] == fid
        ]
        picked += [store.get(c) for c in sample(configs, seed, fields=fields, per_shape=per_shape)]
    if baseline is not None and len(stale) > 1:
        raise ValueError(f"baseline is the code of one fingerprint; the store's stale runs have {len(stale)}")
    if baseline is not None and stale and store.manifest["fingerprints"][stale[0]].get("torch") != current["torch"]:
        raise ValueError("baseline cannot certify another torch (it runs on this one): re-certify without it")
    how = (
        f"stack of one, eager, CPU, float32 as trained, in segments of {SEGMENT} steps up to where it parts; "
        "float64 twin for the horizon"
        + (f"; the old code re-trained the same way, its first {PREFIX} steps first" if baseline is not None else "")
    )
    header = dict(
        to=new, old=stale, seed=seed, per_shape=per_shape, fields=list(fields), tolerance=list(tolerance), how=how
    )
    kept = _kept(root / PROGRESS, header)
    for run in picked:
        if run.key in kept and done is not None:
            done(kept[run.key])

    def finished(r: Recheck) -> None:
        kept[r.check.key] = r
        _keep(root / PROGRESS, header, kept)
        if done is not None:
            done(r)

    _run([r for r in picked if r.key not in kept], tolerance, workers, threads, baseline, finished)
    rechecks = tuple(kept[r.key] for r in picked)
    result = Recertification(root, changes, tuple(stale), new, seed, per_shape, tolerance, rechecks, 0)
    if not stale or result.failed:
        return result
    record = dict(
        when=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **{"from": {fid: store.manifest["fingerprints"][fid] for fid in stale}},
        to=new,
        changes=list(changes),
        seed=seed,
        per_shape=per_shape,
        fields=list(fields),
        tolerance=list(tolerance),
        horizon_share=HORIZON_SHARE,
        how=how,
        baseline=(baseline_note or str(baseline)) if baseline is not None else None,
        keys=[r.check.key for r in rechecks],
        runs={r.check.key: r.as_dict() for r in rechecks},
        largest=result.largest(),
        lloydlib=lloydlib.__version__,
    )
    manifest = restamp(root, expected, current, record, recertify=command)
    (root / PROGRESS).unlink(missing_ok=True)
    return Recertification(
        root, changes, tuple(stale), new, seed, per_shape, tolerance, rechecks, len(manifest["runs"])
    )


def _kept(path: Path, header: dict) -> dict[str, Recheck]:
    """The rechecks a cut-short re-certification with the same ``header`` (this code, the stale fingerprints,
    the sample, the tolerance and the way of re-training) kept in ``path``: key -> recheck; none when there is
    no such file, or it is another re-certification's."""
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(kept, dict) or {k: kept.get(k) for k in header} != header:
        return {}
    return {key: Recheck.from_dict(key, header["tolerance"], d) for key, d in kept.get("runs", {}).items()}


def _keep(path: Path, header: dict, kept: dict[str, Recheck]) -> None:
    """Write the rechecks done so far to ``path`` (through a temporary file: a reader never sees half of it)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(dict(header, runs={k: r.as_dict() for k, r in kept.items()}), indent=1) + "\n")
    os.replace(tmp, path)


def _read(root: Path) -> tuple[RunStore, str]:
    """The store at ``root`` (stale or not) and its manifest's text, read as one (retried if a writer
    replaced the manifest in between)."""
    path = root / MANIFEST
    for _ in range(5):
        text = path.read_text() if path.is_file() else None
        with warnings.catch_warnings():  # another torch is one of the changes re-certified here
            warnings.simplefilter("ignore", StoreTorchWarning)
            store = RunStore(root, check_code=False)
        if text is not None and json.loads(text) == store.manifest:
            return store, text
    raise StoreError(path, "kept changing while it was read (another writer); re-certify it again", store.rebuild)


def _run(runs: list[Run], tolerance, workers: int, threads: int, baseline, done) -> tuple[Recheck, ...]:
    """Every run's :func:`recheck`, here (``workers`` 1) or in spawned processes, in the order of ``runs``."""
    done = done or (lambda r: None)
    out: dict[int, Recheck] = {}
    jobs = [(i, r, tolerance, threads, baseline) for i, r in enumerate(runs)]
    if workers == 1 or len(runs) <= 1:
        for job in jobs:
            i, r = _task(job)
            out[i] = r
            done(r)
    else:
        with mp.get_context("spawn").Pool(min(workers, len(runs))) as pool:
            for i, r in pool.imap_unordered(_task, jobs):
                out[i] = r
                done(r)
    return tuple(out[i] for i in range(len(runs)))
