"""Train runs under a time budget, on any device, into a run store, over many calls.

A sweep too long for one sitting (a device loan, a working session on a CPU) is trained over many calls of
:func:`record`. Its configs come as tiers in priority order, each cut into stacks by
:func:`lloydlib.training.sweep.plan` (sized on a GPU by its free memory); each stack trains in chunks of
``chunk`` steps (:func:`lloydlib.training.train_stack` with ``stop_at``). A chunk starts only when the time it is
expected to take (the slowest chunk so far, times :data:`SAFETY`) fits in what is left of the :class:`Budget`.
With ``workers`` N the stacks are spread over N spawned processes of ``threads`` torch threads each, every one
under the same budget and chunking.

Nothing trained is lost. The runs a stack finishes are merged into the run store at ``out`` (the format of
:mod:`lloydlib.training.store`; each run's ``info["hardware"]`` and the store's note name the machine) as soon
as the stack ends: the runs the store holds already are read and kept, so each call adds to the store, and a
store trained by other code is refused, never re-stamped. Unfinished runs stop at a chunk boundary with their
checkpoints in ``out/checkpoints/runs/<key>/checkpoint.pt`` (29 kB plus 11 bytes a step trained: 125 kB at
9,000 steps; kept, so that the next call with the same ``out`` resumes them); a finished run's folder there is
removed once the store holds it. As it goes and at the end it prints how many runs are done and what is left
(:class:`lloydlib.training.progress.Progress`); ``out/record.json`` keeps that, every call's time and the
core-seconds spent in all. TF32 is off. :func:`machine_name` names a machine's folder (``h200``,
``cpu-amd-epyc``).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import re
import shutil
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import torch

try:
    import fcntl
except ImportError:  # pragma: no cover (Windows)
    fcntl = None

from .. import hardware
from ..checks import check_int, check_positive
from .cache import CHECKPOINT, read_checkpoint
from .config import TrainConfig
from .fingerprint import fingerprint
from .pack import write_store
from .progress import Progress, read_record, stack_label
from .stacked import train_stack
from .store import RunStore, StaleStoreError, fingerprint_id, is_store, lookup
from .sweep import plan

__all__ = ["SAFETY", "RETRAIN", "Budget", "machine_name", "resolve_device", "train_in_chunks", "merge",
           "resumed_first", "sole_recorder", "record"]  # fmt: skip

#: a chunk starts only if this many times the slowest chunk so far fits in the budget left
SAFETY = 1.5
#: what to do with a recorded store trained by other code (the recorder never re-stamps one)
RETRAIN = "re-certify it (lloydlib.training.recertify) or move it aside and re-train it with"


@dataclass
class Budget:
    """Seconds to spend, read from ``clock`` (``time.monotonic``, or a fake one in the tests)."""

    seconds: float
    clock: object = time.monotonic
    start: float = field(default=None)
    slowest: float = 0.0

    def __post_init__(self):
        self.seconds = check_positive("seconds", self.seconds)
        self.start = self.clock() if self.start is None else self.start

    def left(self) -> float:
        """Seconds left of the budget."""
        return self.seconds - (self.clock() - self.start)

    def allows(self, estimate: float | None = None) -> bool:
        """Whether a chunk expected to take ``estimate`` seconds (default: the slowest so far) fits, with
        :data:`SAFETY`; the first chunk of all always starts while time is left."""
        estimate = self.slowest if estimate is None else estimate
        return self.left() > SAFETY * estimate

    def took(self, seconds: float) -> None:
        """Note a chunk that took ``seconds``."""
        self.slowest = max(self.slowest, float(seconds))


def machine_name(info: dict | None = None) -> str:
    """A folder name for the machine of a :func:`lloydlib.hardware.probe` result (default: this CPU): the GPU's
    model (``NVIDIA H200`` -> ``h200``), else ``cpu-`` and the CPU's (``AMD EPYC 7B13 64-Core Processor`` ->
    ``cpu-amd-epyc-7b13``), at most four words."""
    info = hardware.probe() if info is None else info
    if not isinstance(info, dict) or not ("gpu" in info or "cpu" in info):
        raise ValueError(f"info must be a dict returned by lloydlib.hardware.probe, got {info!r}")
    name, prefix = (info["gpu"], "") if "gpu" in info else (info["cpu"], "cpu-")
    noise = r"\((?:r|tm)\)|@.*$|\bnvidia\b|\bcpu\b|\bprocessor\b|\b\d+-core\b|\bwith radeon.*$"
    words = re.findall(r"[a-z0-9]+", re.sub(noise, " ", str(name).lower()))[:4]
    return prefix + ("-".join(words) or "unknown")


def resolve_device(device: str | None) -> str:
    """``device`` as the recorder trains on it: None and ``"auto"`` are ``"cuda"`` when a GPU is present, else
    ``"cpu"``; otherwise ``"cpu"``, ``"cuda"`` or ``"cuda:N"``."""
    if device is None or device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not isinstance(device, str) or not re.fullmatch(r"cpu|cuda(:\d+)?", device):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    return device


def _checkpoint_step(config, cache: Path) -> int:
    """The step of the checkpoint of ``config`` in the cache root ``cache`` (0 when there is none)."""
    ck = read_checkpoint(cache / "runs" / config.key() / CHECKPOINT, config)
    return 0 if ck is None else int(ck["step"])


def train_in_chunks(stack, cache: Path, budget: Budget, chunk: int, device: str, on_chunk=None) -> dict:
    """Train the runs of one stack that the cache root ``cache`` lacks, from their checkpoints, in chunks of
    ``chunk`` steps while ``budget`` allows; ``on_chunk(chunk record, keys, step)`` after each. Returns
    ``{"chunks": [...], "unfinished": {key: step reached}}``; the finished runs are in ``cache``."""
    todo = [c for c in stack if lookup(c, [cache]) is None]
    reached = {c.key(): _checkpoint_step(c, cache) for c in todo}
    chunks = []
    while todo:
        mark = min(max(c.steps for c in todo), (min(reached[c.key()] for c in todo) // chunk + 1) * chunk)
        if not budget.allows():
            break
        t0, c0 = budget.clock(), time.process_time()
        runs = train_stack(todo, cache_dir=cache, device=device, stop_at=mark)
        wall, cpu = budget.clock() - t0, time.process_time() - c0
        budget.took(wall)
        work = sum(max(0, min(mark, c.steps) - reached[c.key()]) for c in todo)
        chunks.append(
            dict(runs=len(todo), to_step=mark, seconds=round(wall, 3), cpu_seconds=round(cpu, 3), run_steps=work)
        )
        keys = [c.key() for c in todo]
        reached.update({k: mark for k in keys})
        todo = [r.config for r in runs if r.status == "partial"]
        if on_chunk is not None:
            on_chunk(chunks[-1], keys, mark)
    return dict(chunks=chunks, unfinished={c.key(): reached[c.key()] for c in todo})


def _job(job: dict) -> dict:
    """One stack in a worker process: :func:`train_in_chunks` under the seconds left until ``job["deadline"]``
    (wall clock), the parent's slowest chunk as the first estimate, with ``job["threads"]`` torch threads."""
    torch.set_num_threads(job["threads"])
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    stack, left = job["stack"], job["deadline"] - time.time()
    if left <= 0:
        return dict(chunks=[], unfinished={c.key(): _checkpoint_step(c, Path(job["cache"])) for c in stack})
    label = stack_label(stack)

    def say(c, keys, mark):
        print(f"  [{label}] {c['runs']} run(s) to step {mark} in {c['seconds']:.0f} s", flush=True)

    budget = Budget(left, slowest=job["slowest"])
    return train_in_chunks(stack, Path(job["cache"]), budget, job["chunk"], job["device"], say)


def merge(out: Path, runs, group: str, rebuild: str) -> set:
    """Write the finished ``runs`` into the run store at ``out`` beside the runs it holds (each kept in its
    groups; the new ones listed under ``group``; the store's rebuild command is every sweep's, ``; ``-separated);
    returns the keys the store holds. A store trained by other
    code, or another torch, raises :class:`lloydlib.training.StaleStoreError`: its runs are not re-stamped."""
    groups: dict[str, list] = {}
    kept: dict = {}  # what the store records of its re-certifications, kept when it is rewritten
    if is_store(out):
        store = RunStore(out, rebuild=rebuild, check_code=False)
        changes = store.changes()
        if changes:
            raise StaleStoreError(out / "store.json", changes, len(store), f"{RETRAIN}: {rebuild}")
        groups = {g: store.runs(g) for g in store.groups()}
        kept = dict(recertify=store.recertify, recertified=store.manifest.get("recertified"))
        before = [c for c in str(store.manifest.get("rebuild") or "").split("; ") if c]
        rebuild = "; ".join(dict.fromkeys([*before, rebuild]))  # a store of several sweeps: every one's command
    have = {r.key for rs in groups.values() for r in rs}
    new = list({r.key: r for r in runs if r.key not in have}.values())
    if not new:
        return have
    groups.setdefault(group, []).extend(new)
    machines = sorted({r.info.get("hardware", "?") for rs in groups.values() for r in rs})
    note = f"recorded by lloydlib.training.record on {'; '.join(machines)}; TF32 off"
    write_store(out, groups, rebuild=rebuild, note=note, **kept)
    return have | {r.key for r in new}


def _store_finished(configs, out: Path, cache: Path, group: str, rebuild: str) -> set:
    """Move the finished runs of ``configs`` from the cache root ``cache`` into the store at ``out``
    (:func:`merge`), then remove their folders from the cache; returns the keys the store holds."""
    found = [r for r in (lookup(c, [cache]) for c in configs) if r is not None]
    held = merge(out, found, group, rebuild) if found or is_store(out) else set()
    for r in found:
        shutil.rmtree(cache / "runs" / r.key, ignore_errors=True)
    return held


def _tiers(configs) -> list[list]:
    """``configs`` as tiers in priority order: a list of TrainConfigs is one tier; a list of lists, several."""
    configs = list(configs)
    if all(isinstance(c, TrainConfig) for c in configs):
        return [configs] if configs else []
    if all(isinstance(t, (list, tuple)) and all(isinstance(c, TrainConfig) for c in t) for t in configs):
        return [list(t) for t in configs if t]
    raise TypeError("configs must be a list of TrainConfig, or a list of such lists (tiers in priority order)")


def _train(stacks, out, cache, budget, opts, progress, group, rebuild, log) -> list:
    """Train ``stacks`` in order, in this process (one worker) or in a pool; store each stack's finished runs
    when it ends; returns every chunk record."""
    chunks, workers = [], opts["workers"]

    def finish(stack, res):
        chunks.extend(res["chunks"])
        progress.finished(_store_finished(stack, out, cache, group, rebuild), res["unfinished"])
        progress.write(out / "record.json")
        left = res["unfinished"]
        state = "done" if not left else f"stopped at step {min(left.values())} (the budget)"
        log(f"stack {state}: {stack_label(stack)}; {progress.line()}")

    if workers == 1:
        for i, stack in enumerate(stacks, 1):
            if not budget.allows():
                break

            def say(c, keys, mark, i=i, stack=stack):
                progress.chunk(c, keys, mark)
                progress.write(out / "record.json")  # a process ended mid-stack leaves its time recorded
                log(
                    f"stack {i}/{len(stacks)} ({stack_label(stack)}): step {mark} in {c['seconds']:.0f} s; {progress.line()}"
                )

            finish(stack, train_in_chunks(stack, cache, budget, opts["chunk"], opts["device"], say))
        return chunks
    queue, pending = list(stacks), {}
    with ProcessPoolExecutor(min(workers, len(stacks)), mp_context=mp.get_context("spawn")) as pool:
        while queue or pending:
            while queue and len(pending) < workers and budget.allows():
                job = dict(opts, stack=queue.pop(0), cache=str(cache), deadline=time.time() + budget.left())
                pending[pool.submit(_job, dict(job, slowest=budget.slowest))] = job["stack"]
            if not pending:
                break
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                stack, res = pending.pop(f), f.result()
                for c in res["chunks"]:
                    budget.took(c["seconds"])
                    progress.chunk(c, [], 0)
                finish(stack, res)
    return chunks


def resumed_first(stacks, reached: dict) -> list:
    """``stacks`` (one tier's, as :func:`lloydlib.training.sweep.plan` cuts them) with those that hold checkpointed
    steps first, most steps first, the rest in the order given; ``reached`` maps a config's key to its checkpointed
    step. A call finishes what earlier calls began before it begins more: the plan cuts a tier afresh each call,
    after runs have left it, so a stack an earlier call checkpointed need not be first any more."""
    missing = [c for s in stacks for c in s if c.key() not in reached]
    if missing:
        raise ValueError(f"reached must map every config of stacks to its step, missing {len(missing)}")
    return sorted(stacks, key=lambda s: -sum(reached[c.key()] for c in s))


@contextlib.contextmanager
def sole_recorder(out: Path):
    """Hold the store folder ``out`` for one recorder while inside (an exclusive flock on ``out/.record.lock``);
    raise ValueError at once when another process holds it. Two recorders on one store would train the same
    runs and race on their checkpoints. Where ``fcntl`` is missing (Windows) it holds nothing."""
    out.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover
        yield
        return
    with open(out / ".record.lock", "a+b") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(
                f"out {str(out)!r} is being recorded into by another process (it holds {out / '.record.lock'}); "
                "wait for it to end or stop it"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def record(configs, out, budget: Budget, *, chunk: int = 1000, device=None, group: str = "sweep", workers: int = 1,
           threads: int = 1, rebuild: str | None = None, log=print) -> dict:  # fmt: skip
    """Train ``configs`` (a list, or a list of tiers in priority order) under ``budget`` in chunks of ``chunk``
    steps, on ``device`` (default: a GPU when present, else the CPU), in ``workers`` processes of ``threads``
    torch threads; add the finished runs to the store at ``out`` (group ``group``; ``rebuild``, the command
    that trains it, goes into its manifest) and write ``out/record.json``; return that record. ``log`` prints
    the progress (see the module docstring)."""
    chunk, workers = check_int("chunk", chunk, 1), check_int("workers", workers, 1)
    threads = check_int("threads", threads, 1)
    if not isinstance(budget, Budget):
        raise TypeError(f"budget must be a lloydlib.training.record.Budget, got {type(budget).__name__}")
    if not isinstance(group, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", group):
        raise ValueError(f"group must be a name of letters, digits, '-' and '_', got {group!r}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"out must be a folder (the store to add to), got the file {str(out)!r}")
    device = resolve_device(device)
    tiers = [[c.replace(device=device) for c in t] for t in _tiers(configs)]
    everything = list({c.key(): c for t in tiers for c in t}.values())
    rebuild = rebuild or f"lloydlib.training.record.record(<the {group} configs>, {str(out)!r}, Budget(SECONDS))"
    cache, before = out / "checkpoints", torch.get_num_threads()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with sole_recorder(out):
        out.mkdir(parents=True, exist_ok=True)
        previous, code = read_record(out / "record.json"), fingerprint_id(fingerprint())
        held = _store_finished(everything, out, cache, group, rebuild)
        todo = [[c for c in t if c.key() not in held] for t in tiers]
        reached = {c.key(): _checkpoint_step(c, cache) for t in todo for c in t}
        stacks = [s for t in todo if t for s in resumed_first(plan(t, workers), reached)]
        machine = hardware.describe(hardware.probe(torch.device(device)))
        opts = dict(chunk=chunk, device=device, workers=workers, threads=threads)
        progress = Progress(
            everything, held, reached, previous, dict(opts, group=group, machine=machine, fingerprint=code)
        )
        log(f"record {group}: {len(everything)} runs, {len(stacks)} stack(s) to train on {machine} ({workers} worker(s) of "
            f"{threads} thread(s), chunks of {chunk} steps, budget {budget.seconds:.0f} s) into {out}")  # fmt: skip
        if previous.get("fingerprint") not in (None, code) and any(reached.values()):
            log(f"warning: the checkpoints in {cache} were written by other code (fingerprint {previous['fingerprint']}, "
                f"now {code}); the runs resume from them")  # fmt: skip
        log(progress.line())
        torch.set_num_threads(threads)
        try:
            chunks = _train(stacks, out, cache, budget, opts, progress, group, rebuild, log)
        finally:
            torch.set_num_threads(before)
        rec = progress.write(out / "record.json", budget_s=budget.seconds, spent_s=round(budget.seconds - budget.left(), 3),
                             stacks=len(stacks), chunks=chunks)  # fmt: skip
        log(f"record {group} ends: {progress.line()}")
        return rec
