"""Stored runs checked against this code: re-train a sample for its first steps and compare, step by step.

A stored run (:mod:`lloydlib.training.store`) is evidence only while this code still computes it. The
fingerprint catches changed code; this module catches the rest (another torch, another machine, a
change the fingerprint's module list misses): :func:`sample` picks runs that cover every shape of a
sweep, :func:`retrain` trains each again for its first ``steps`` steps, eagerly, on the CPU, and compares
the per-step training loss (Eq. 6) and the relative validation losses (Eq. 20) of the evaluations on the
way with the stored ones. Runs are deterministic functions of their config (every draw is derived from
the seed, :mod:`lloydlib.training.config`), so only rounding separates the two: the stored run was
trained in a compiled stack of many runs, perhaps with other threads or on a GPU; the re-training is eager,
the runs that share a :func:`~lloydlib.training.stacked.stack_key` in one stack (a stacked run is the run
trained alone up to rounding, :mod:`lloydlib.training.stack_engine`, and a stack shares each step's Python
work among its runs: 5 runs of 300 steps at n=32 took 3.9 s stacked against 7.7 s one by one).
:func:`relative_difference` is the measure, and the tolerance is the caller's, measured
(:func:`drift` measures how far rounding alone parts a store's runs from themselves). :func:`report`
re-trains a sample and prints the verdict, for a command to show.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np
import torch

from .._validate import check_int, check_positive
from .cache import Run
from .config import TrainConfig
from .stacked import stack_key, train_stack
from .store import RunStore

__all__ = [
    "SHAPE_FIELDS",
    "RISE",
    "Check",
    "sample",
    "relative_difference",
    "stable_steps",
    "stable_until",
    "compare",
    "parting_step",
    "HORIZON_SHARE",
    "horizon",
    "to_horizon",
    "stacks",
    "retrain",
    "check_tolerance",
    "check_command",
    "report",
    "drift",
]

#: the fields that make a run's shape for :func:`sample`: at least one run of each combination is drawn
SHAPE_FIELDS = ("embedding", "loss", "d", "k", "n", "family")
#: a step whose training loss, or an evaluation whose validation loss, is above RISE times the smallest before
#: it ends the comparison there (see :func:`stable_steps` and :func:`stable_until`)
RISE = 10.0
#: a run that agrees at step 1 and parts later is compared on the steps before rounding alone (a float64 twin of
#: its re-training) reaches this share of the later tolerance (:func:`to_horizon`)
HORIZON_SHARE = 0.1


@dataclass(frozen=True)
class Check:
    """One re-trained run against its stored self, over its first ``steps`` steps (fewer than it re-trained
    when :func:`stable_steps` or :func:`stable_until` cuts the comparison short): ``first`` is the
    :func:`relative_difference` of the step-1 training loss (the untrained model on the first batch: the
    initial weights, the task draw, the forward pass and the loss, before any optimiser step); ``later``
    the largest over the training losses of steps 2 to ``steps`` and the validation losses (Eq. 20) of
    those steps, at ``where`` (e.g. ``"train loss, step 37"``). ``ok`` when both are within
    ``tolerance`` (step 1, later) and the run ended the same way (``status``: stored, then now)."""

    key: str
    label: str
    steps: int
    first: float
    later: float
    where: str
    tolerance: tuple[float, float]
    status: tuple[str, str]

    @property
    def ok(self) -> bool:
        return self.first <= self.tolerance[0] and self.later <= self.tolerance[1] and self.status[0] == self.status[1]


def sample(configs, seed: int, *, fields=SHAPE_FIELDS, per_shape: int = 1) -> list[TrainConfig]:
    """``per_shape`` configs drawn at random (numpy's generator at ``seed``) from each combination of
    ``fields`` present in ``configs``, in the order of ``configs``."""
    configs = list(configs)
    for i, c in enumerate(configs):
        if not isinstance(c, TrainConfig):
            raise TypeError(f"configs[{i}] must be a TrainConfig, got {type(c).__name__}")
    seed, per_shape = check_int("seed", seed, 0), check_int("per_shape", per_shape, 1)
    shapes: dict[tuple, list[int]] = {}
    for i, c in enumerate(configs):
        shapes.setdefault(tuple(getattr(c, f) for f in fields), []).append(i)
    rng = np.random.default_rng(seed)
    picked = set()
    for members in shapes.values():
        picked.update(int(i) for i in rng.choice(members, size=min(per_shape, len(members)), replace=False))
    return [configs[i] for i in sorted(picked)]


def relative_difference(a, b) -> np.ndarray:
    """``|a - b| / max(|b|, 1e-12)`` elementwise (``b`` the stored values); +inf where exactly one is
    finite, 0 where both are the same non-finite value."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have one shape, got {a.shape} and {b.shape}")
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.abs(a - b) / np.maximum(np.abs(b), 1e-12)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    return np.where(same, 0.0, np.where(np.isfinite(out), out, np.inf))


def stable_steps(losses) -> int:
    """How many steps of the stored per-step ``losses`` a re-training can be compared on: all of them, or the
    steps before the first step whose loss exceeds :data:`RISE` times the smallest loss before it.

    Such a jump (a learning rate far too large, Fig. 11's 1.0: the loss goes from 36 to 5e4 in one step)
    makes training chaotic: a rounding difference of 1e-7 becomes an O(1) difference, whatever the code.
    The jumping step is itself a product of it: at Fig. 11's rate 1.0 at d=32 the loss jumps at step 2, after
    Adam's first update, which moves each weight by about the rate times the sign of its gradient, so a
    weight whose gradient is rounding noise moves by about 1 either way; re-trained, those step-2 losses
    (near 1e7) differ from the stored ones by up to 28% while step 1 agrees to 3e-7. Up to the jump the two
    runs must still agree."""
    losses = np.asarray(losses, dtype=np.float64)
    for t in range(1, len(losses)):
        if np.isfinite(losses[t]) and losses[t] > RISE * np.min(losses[:t]):
            return t
    return len(losses)


def stable_until(steps, losses, n: int) -> int:
    """How many of the first ``n`` steps a re-training can be compared on, judged by the stored validation
    ``losses`` at evaluation ``steps`` (both shape ``(evals,)``): ``n``, or the steps before the first
    evaluation (after step 0) whose loss exceeds :data:`RISE` times the smallest evaluation before it.

    The training loss can miss such a jump: at Fig. 11's learning rate 1.0 at d=32 one step can send the
    smoothed training loss to exactly 0 while the weights run away, and the validation loss goes from 12
    to 1e11 by the next evaluation. From there rounding is amplified as after a jump of the training loss,
    and the jump happened somewhere between the two evaluations, so the jumping one is not compared."""
    steps, losses = np.asarray(steps), np.asarray(losses, dtype=np.float64)
    if steps.shape != losses.shape or steps.ndim != 1:
        raise ValueError(f"steps and losses must be of one shape (evals,), got {steps.shape} and {losses.shape}")
    for i in range(1, len(losses)):
        if steps[i] > n:
            break
        if np.isfinite(losses[i]) and losses[i] > RISE * np.min(losses[:i]):
            return min(n, int(steps[i]) - 1)
    return n


def check_tolerance(tolerance) -> tuple[float, float]:
    """``tolerance`` as a pair (step 1, later steps) of positive floats; a TypeError or ValueError naming it."""
    if not isinstance(tolerance, (tuple, list)) or len(tolerance) != 2:
        raise TypeError(f"tolerance must be a pair (step 1, later steps) of positive numbers, got {tolerance!r}")
    return check_positive("tolerance[0]", tolerance[0]), check_positive("tolerance[1]", tolerance[1])


def check_command(name: str, value) -> str:
    """``value`` if it is a non-empty string (a command to print); a ValueError naming ``name`` otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string (a command), got {value!r}")
    return value


def _diverged_within(run: Run, steps: int) -> bool:
    at = run.info.get("diverged_at")
    return run.status == "diverged" and (at is None or at <= steps)


def compare(stored: Run, new: Run, steps: int, tolerance: tuple[float, float]) -> Check:
    """The :class:`Check` of the re-trained run ``new`` against the ``stored`` one over their first ``steps``
    steps (cut short by :func:`stable_steps` and :func:`stable_until`): the per-step training losses and the
    relative validation losses of those steps, and whether each diverged within them. ``new`` may have
    trained longer than ``steps``; what it did after them is not compared."""
    n, train, val_steps, val = _differences(stored, new, steps)
    first = float(train[0]) if n else 0.0
    later, where = 0.0, "-"
    if n > 1 and float(train[1:].max()) > later:
        later, where = float(train[1:].max()), f"train loss, step {int(train[1:].argmax()) + 2}"
    if val.size and float(val.max()) > later:
        later, where = float(val.max()), f"validation loss (Eq. 20), step {int(val_steps[int(val.argmax())])}"
    status = tuple("diverged" if _diverged_within(r, steps) else "done" for r in (stored, new))
    return Check(stored.key, stored.config.label(), n, first, later, where, tolerance, status)


def _differences(stored: Run, new: Run, steps: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`compare` compares: the steps n it compares, the relative differences of the training losses
    of steps 1..n (n,), and the steps of the evaluations among them with their validation losses' differences."""
    n = min(steps, len(stored.train_losses), len(new.train_losses))
    n = stable_steps(stored.train_losses[:n])
    n = stable_until(stored.history["step"], stored.history["val_rel_loss"], n)
    train = relative_difference(new.train_losses[:n], stored.train_losses[:n])
    s_steps, n_steps = np.asarray(stored.history["step"]), np.asarray(new.history["step"])
    rows = [i for i, s in enumerate(s_steps) if 0 < s <= n and i < len(n_steps) and n_steps[i] == s]
    val = relative_difference(np.asarray(new.history["val_rel_loss"])[rows], stored.history["val_rel_loss"][rows])
    return n, train, s_steps[rows], val


def parting_step(stored: Run, new: Run, steps: int, tolerance: tuple[float, float]) -> int | None:
    """The first of the first ``steps`` steps after step 1 where :func:`compare` finds ``new`` and ``stored``
    more than the later tolerance apart, in a training loss or a validation loss; None where it finds none."""
    tolerance = check_tolerance(tolerance)
    n, train, val_steps, val = _differences(stored, new, steps)
    over = [int(i) + 2 for i in np.flatnonzero(train[1:] > tolerance[1])[:1]]
    over += [int(val_steps[i]) for i in np.flatnonzero(val > tolerance[1])[:1]]
    return min(over) if over else None


def horizon(new: Run, twin: Run, share: float) -> int | None:
    """The first step where the two re-trainings ``new`` and ``twin`` of one run differ by more than
    ``share`` (relative) in a training loss or in a validation loss (Eq. 20) of an evaluation at that step;
    None when they never do."""
    share = check_positive("share", share)
    n = min(len(new.train_losses), len(twin.train_losses))
    over = np.flatnonzero(relative_difference(new.train_losses[:n], twin.train_losses[:n]) > share)
    steps = [int(over[0]) + 1] if over.size else []
    a, b = np.asarray(new.history["step"]), np.asarray(twin.history["step"])
    m = min(len(a), len(b))
    same = a[:m] == b[:m]
    va, vb = np.asarray(new.history["val_rel_loss"])[:m][same], np.asarray(twin.history["val_rel_loss"])[:m][same]
    val_over = np.flatnonzero(relative_difference(va, vb) > share)
    steps += [max(1, int(a[:m][same][val_over[0]]))] if val_over.size else []
    return min(steps) if steps else None


def to_horizon(stored: Run, new: Run, check: Check) -> tuple[Check, int | None]:
    """``check`` (of the re-training ``new`` against ``stored``) and the horizon it was taken to. A run that
    agreed at step 1 (the untrained model: a difference there decides alone) and parts later is compared again
    on the steps before its horizon: :func:`horizon` of ``new`` and a twin of it trained in float64 (float32 for
    a float64 run), at :data:`HORIZON_SHARE` of the later tolerance. Before it the run must agree; after it
    rounding alone parts two trainings of one run. Otherwise (or when the twin never parts) ``check`` stands and
    the horizon is None. The twin trains only up to the :func:`parting_step` of ``new`` and ``stored``: a
    horizon after it would leave that step compared, and the run failing, as no horizon does."""
    if check.ok or check.first > check.tolerance[0]:
        return check, None
    config = new.config
    part = parting_step(stored, new, check.steps, check.tolerance)
    (twin,) = train_stack(
        [config.replace(dtype="float64" if config.dtype != "float64" else "float32")],
        cache_dir=None,
        write=False,
        compile=False,
        stop_at=part if part is not None and part < config.steps else None,
    )
    at = horizon(new, twin, HORIZON_SHARE * check.tolerance[1])
    return (check if at is None else compare(stored, new, max(at - 1, 1), check.tolerance)), at


def _short(run: Run, steps: int) -> TrainConfig:
    """The config that re-trains ``run``'s first ``steps`` steps (all of them if it has fewer) on the CPU."""
    return run.config.replace(steps=min(steps, run.config.steps), device="cpu")


def stacks(configs) -> list[list[int]]:
    """The indices of ``configs`` grouped by :func:`~lloydlib.training.stacked.stack_key` and number of steps,
    each group in the order given and the groups in the order of their first members: the stacks
    :func:`retrain` trains."""
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(configs):
        groups.setdefault((stack_key(c), c.steps), []).append(i)
    return list(groups.values())


def retrain(runs, steps: int, *, tolerance, threads: int | None = None, to_horizons: bool = False) -> list[Check]:
    """Re-train every stored run of ``runs`` for its first ``steps`` steps (eagerly, on the CPU, with
    ``threads`` torch threads, default: as set; the runs that :func:`stacks` groups in one stack) and compare
    it with the stored run.

    ``tolerance`` is the pair (step 1, later steps) of largest relative differences allowed (see
    :class:`Check`). Returns one :class:`Check` per run, in order. A run that diverged within ``steps`` must diverge at the
    same step again. ``to_horizons``: a run that agrees at step 1 and parts later is compared up to its horizon
    (:func:`to_horizon`).
    """
    runs = list(runs)
    for i, r in enumerate(runs):
        if not isinstance(r, Run):
            raise TypeError(f"runs[{i}] must be a Run, got {type(r).__name__}")
    steps, tolerance = check_int("steps", steps, 1), check_tolerance(tolerance)
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(check_int("threads", threads, 1))
    shorts = [_short(r, steps) for r in runs]
    out: list[Check | None] = [None] * len(runs)
    try:
        for group in stacks(shorts):
            news = train_stack([shorts[i] for i in group], cache_dir=None, write=False, compile=False)
            for i, new in zip(group, news):
                check = compare(runs[i], new, shorts[i].steps, tolerance)
                out[i] = to_horizon(runs[i], new, check)[0] if to_horizons else check
        return out
    finally:
        torch.set_num_threads(before)


def report(picked, *, tolerance, seed: int, command: str, rebuild: str, since: float | None = None) -> int:
    """Re-train the stored runs ``picked`` and print the verdict; returns the exit status (0: every run agrees
    within ``tolerance``, 1: not).

    ``picked`` is a non-empty list of (run, steps, where): a stored :class:`~lloydlib.training.cache.Run`,
    how many of its first steps to re-train and compare (:func:`retrain`, one torch thread, up to its horizon
    when it parts after step 1, :func:`to_horizon`) and where it is stored (a short name, printed with it).
    ``tolerance`` is the pair (step 1, later steps) of :class:`Check`. The sample was drawn at ``seed``, and
    the first line prints the command that draws it again (``command --seed seed``); each run prints one
    line once its stack (:func:`stacks`) is compared, then the largest differences, then, on stderr, each run
    that disagrees, named with ``rebuild``, the command that rebuilds its store. ``since`` is the :func:`time.time` the
    verification began (default: now), for the time it took."""
    if not isinstance(picked, (list, tuple)) or not picked:
        raise ValueError(f"picked must be a non-empty list of (run, steps, where), got {picked!r:.100}")
    for i, item in enumerate(picked):
        if not isinstance(item, (tuple, list)) or len(item) != 3:
            raise TypeError(f"picked[{i}] must be a triple (run, steps, where), got {type(item).__name__}")
        if not isinstance(item[0], Run):
            raise TypeError(f"picked[{i}][0] must be a Run, got {type(item[0]).__name__}")
        check_int(f"picked[{i}][1]", item[1], 1)
        if not isinstance(item[2], str):
            raise TypeError(f"picked[{i}][2] must be a string (where the run is stored), got {item[2]!r}")
    tolerance, seed = check_tolerance(tolerance), check_int("seed", seed, 0)
    command, rebuild = check_command("command", command), check_command("rebuild", rebuild)
    t0 = time.time() if since is None else check_positive("since", since)
    print(
        f"verification: seed {seed} (replay: {command} --seed {seed}); {len(picked)} runs, "
        f"tolerance {tolerance[0]:g} at step 1 and {tolerance[1]:g} after"
    )
    checks = []
    shorts = [_short(run, steps) for run, steps, _ in picked]
    for group in stacks(shorts):
        runs = [picked[i][0] for i in group]
        for i, c in zip(group, retrain(runs, shorts[group[0]].steps, tolerance=tolerance, threads=1, to_horizons=True)):
            checks.append(c)
            flag = "ok" if c.ok else "MISMATCH"
            print(
                f"  {flag:8s} {picked[i][2]:8s} {c.label:52s} {c.steps:4d} steps  step 1 {c.first:.1e}  "
                f"later {c.later:.1e} ({c.where})"
            )
    bad = [c for c in checks if not c.ok]
    first, later = max(checks, key=lambda c: c.first), max(checks, key=lambda c: c.later)
    print(
        f"verification: {len(checks)} runs in {time.time() - t0:.0f} s; largest step-1 difference {first.first:.1e} "
        f"({first.label}) against {tolerance[0]:g}; largest later difference {later.later:.1e} ({later.label}, "
        f"{later.where}) against {tolerance[1]:g}"
    )
    for c in bad:
        print(
            f"verification FAILED: {c.label} (key {c.key}): step 1 {c.first:.2e}, later {c.later:.2e} at {c.where}, "
            f"status stored/now {c.status}; the stored run is not what this code trains: rebuild with {rebuild}",
            file=sys.stderr,
        )
    return 1 if bad else 0


#: the steps :func:`drift` records the largest difference up to (and its ``steps``, the last)
DRIFT_MARKS = (1, 2, 5, 10, 25, 50, 100, 200)
#: the ways :func:`drift` re-trains, each a stack of one, eagerly: name -> torch threads
DRIFT_WAYS = {"stack of one, 1 thread": 1, "stack of one, 2 threads": 2}


def drift(store, steps: int, samples: int, hardware: str) -> dict:
    """How far re-training parts the runs of ``store`` (a :class:`~lloydlib.training.store.RunStore`) from
    themselves by rounding alone, the basis of a verification's tolerance; returns the record (JSON-ready).

    Each run is re-trained for its first ``steps`` steps in each way of :data:`DRIFT_WAYS` (the first, a
    verification's own, on every stored run; the others on ``samples`` samples of one run per shape,
    :func:`sample` at seeds 0 to ``samples - 1``) and its per-step training losses compared with the stored
    ones on the steps :func:`stable_steps` allows. The record holds ``steps``, ``samples`` (in words),
    ``hardware`` (the caller's description of the machine) and ``ways``: name -> ``runs``,
    ``compared_fewer_steps`` (runs cut short by :func:`stable_steps`), ``seconds`` and ``largest_by_step``
    (step -> the largest relative difference up to it over the runs, at :data:`DRIFT_MARKS` below ``steps``
    and at ``steps``). A line a way is printed as it ends."""
    if not isinstance(store, RunStore):
        raise TypeError(f"store must be a RunStore, got {type(store).__name__}")
    steps, samples = check_int("steps", steps, 1), check_int("samples", samples, 0)
    if not isinstance(hardware, str) or not hardware.strip():
        raise ValueError(f"hardware must be a non-empty string (the machine, in words), got {hardware!r}")
    marks = [m for m in DRIFT_MARKS if m < steps] + [steps]
    record = {
        "steps": steps,
        "samples": f"every stored run the first way; {samples} samples of one run per shape the others",
        "hardware": hardware,
        "ways": {},
    }
    before = torch.get_num_threads()
    try:
        for i, (way, threads) in enumerate(DRIFT_WAYS.items()):
            env, t0, count, unstable = np.zeros(steps), time.time(), 0, 0
            torch.set_num_threads(threads)
            configs = store.configs()
            chosen = configs if i == 0 else [c for s in range(samples) for c in sample(configs, s)]
            for c in chosen:
                run = store.get(c)
                (new,) = train_stack([c.replace(steps=steps)], cache_dir=None, write=False, compile=False)
                n = stable_steps(run.train_losses[:steps])
                unstable += n < steps
                d = relative_difference(new.train_losses[:n], run.train_losses[:n])
                env[: len(d)] = np.maximum(env[: len(d)], np.maximum.accumulate(d))
                count += 1
            record["ways"][way] = {
                "runs": count,
                "compared_fewer_steps": unstable,
                "seconds": round(time.time() - t0),
                "largest_by_step": {m: float(env[m - 1]) for m in marks},
            }
            shown = " ".join(f"{m}:{env[m - 1]:.1e}" for m in marks)
            print(way, count, "runs,", unstable, "compared on fewer steps:", shown, flush=True)
    finally:
        torch.set_num_threads(before)
    return record
