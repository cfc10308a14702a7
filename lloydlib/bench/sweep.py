"""Many runs stacked against one at a time (``python -m lloydlib bench sweep``).

The same set of runs (Algorithm 1 of the Leaner paper at one (d, k, n, batch), a mix of temperatures
tau and seeds) trains for a fixed number of steps in two forms: stacked, with
:func:`lloydlib.training.stacked.train_stack`, and one at a time with :func:`lloydlib.training.train`
(each a stack of one) the way ``train_many`` trained them before stacking (``workers`` processes, each with
``torch threads // workers`` threads). On a CPU the stacked form trains the stacks ``train_many`` makes
for ``workers`` workers (:func:`lloydlib.training.sweep.plan`) in as many processes (intra-op threads of
one process wait on each other on a busy machine). Both are timed on the wall clock, in interleaved
rounds: on a shared machine the speed drifts by tens of percent within minutes, so the result is the
median of the rounds' ratios with a distribution-free interval, not one timing of each form. Rates are
extrapolated to runs of ``per_hour_steps`` steps per hour. The stacked step's compilation is timed apart
(a short warm-up stack of the same shapes) and reported both excluded and amortised over one stack."""

from __future__ import annotations

import multiprocessing as mp
import statistics
import tempfile
import time

import torch

from .. import hardware
from .._validate import check_bool, check_choice, check_int, check_scalar
from ..embeddings import EMBEDDINGS
from ..losses import REGULARIZERS
from .timing import loadavg, median_interval, min_reps

__all__ = ["TAUS", "sweep", "sweep_configs"]

#: the temperatures the runs of the sweep cycle through (those of the "Learning one Lloyd step" tau sweep)
TAUS = (1.0, 0.25, 0.1)


def sweep_configs(runs: int, *, d=4, k=6, n=64, batch=32, embedding="BN", loss="L2", steps=300, seed=0, device="cpu"):
    """``runs`` configs of one stack: temperatures cycle through :data:`TAUS`, seeds count up from ``seed``."""
    from ..training import TrainConfig

    base = TrainConfig(
        d=d, k=k, n=n, batch=batch, embedding=embedding, loss=loss, steps=steps, device=device, checkpoint_every=steps
    )
    return [base.replace(tau=TAUS[i % len(TAUS)], seed=seed + i // len(TAUS)) for i in range(runs)]


def _train_one(args) -> tuple[float, float]:
    config, root, threads = args
    from ..training import train

    torch.set_num_threads(threads)
    start = time.time()
    train(config, cache_dir=root, progress=False)
    return start, time.time()


def _stack_worker(stacks, threads: int, compile: bool, barrier, queue) -> None:
    """Compile (a 2-step warm-up stack of each stack's shapes), wait for the other workers, train the
    stacks one after the other."""
    from ..training.stacked import train_stack

    torch.set_num_threads(threads)
    t0 = time.perf_counter()
    warm = [train_stack([c.replace(steps=2, eval_every=1) for c in configs], compile=compile) for configs in stacks]
    compile_seconds = time.perf_counter() - t0
    barrier.wait()
    start = time.time()
    runs = [train_stack(configs, compile=compile) for configs in stacks]
    errors = [r[0].info["compile_error"] for r in runs + warm if r[0].info["compile_error"]]
    compiled = all(r[0].info["compiled"] for r in runs)
    queue.put((compile_seconds, start, time.time(), compiled, errors[0] if errors else None))


def _stacked(configs, workers: int, compile: bool):
    """(seconds, compile seconds, compiled, error) to train ``configs`` as the stacks ``train_many`` makes
    of them for ``workers`` workers (:func:`~lloydlib.training.sweep.plan`: here, runs that share a seed
    share a stack and its task draws), dealt to ``workers`` processes with ``torch threads // workers``
    threads each; timed from when all have compiled."""
    from ..training.sweep import plan

    stacks = plan(configs, workers)
    parts = [stacks[i::workers] for i in range(min(workers, len(stacks)))]
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(len(parts)), ctx.Queue()
    threads = max(1, torch.get_num_threads() // len(parts))
    procs = [ctx.Process(target=_stack_worker, args=(p, threads, compile, barrier, queue)) for p in parts]
    for proc in procs:
        proc.start()
    results = [queue.get() for _ in procs]
    for proc in procs:
        proc.join()
    seconds = max(r[2] for r in results) - min(r[1] for r in results)
    return seconds, max(r[0] for r in results), all(r[3] for r in results), next((r[4] for r in results if r[4]), None)


def _one_at_a_time(configs, workers: int) -> float:
    """Seconds to train ``configs`` one at a time, in ``workers`` processes as ``train_many`` did, from the
    first run's start to the last run's end (the processes' start-up is not counted)."""
    with tempfile.TemporaryDirectory() as root:
        if workers > 1 and len(configs) > 1:
            threads = max(1, torch.get_num_threads() // workers)
            with mp.get_context("spawn").Pool(min(workers, len(configs))) as pool:
                spans = list(pool.imap_unordered(_train_one, [(c, root, threads) for c in configs]))
        else:
            spans = [_train_one((c, root, torch.get_num_threads())) for c in configs]
    return max(end for _, end in spans) - min(start for start, _ in spans)


def _stacked_here(configs, compile: bool):
    """(seconds, compile seconds, compiled, error) of one stack in this process (a GPU)."""
    from ..training.stacked import train_stack

    t0 = time.perf_counter()  # warm-up: compiles the stacked step for these shapes
    warm = train_stack([c.replace(steps=2, eval_every=1) for c in configs], compile=compile)
    compile_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    stacked = train_stack(configs, compile=compile)
    seconds = time.perf_counter() - t0
    return (
        seconds,
        compile_seconds,
        bool(stacked[0].info["compiled"]),
        (stacked[0].info["compile_error"] or warm[0].info["compile_error"]),
    )


def sweep(
    *,
    runs: int = 40,
    d: int = 4,
    k: int = 6,
    n: int = 32,
    batch: int = 32,
    embedding: str = "BN",
    loss: str = "L2",
    steps: int = 300,
    sequential_runs: int | None = None,
    workers: int = 2,
    compile: bool = True,
    per_hour_steps: int = 3000,
    rounds: int = 5,
    alpha: float = 0.1,
    seed: int = 0,
    device=None,
) -> dict:
    """Runs per hour stacked and one at a time, for ``runs`` runs of ``steps`` steps at (d, k, n, batch).

    ``sequential_runs`` (default: all ``runs``) are trained one at a time, in ``workers`` processes on a
    CPU (one process on a GPU); the stacked runs train as the stacks ``train_many`` makes for ``workers``
    workers, in as many processes on a CPU (one stack on a GPU). The defaults are the book's default
    learning settings (d=4, k=6, n=32, batch 32, BN, L2; temperatures of its tau sweep) and, for 2
    workers, two stacks of 20 runs, the size of most of the book's stacks at ``default``. Both forms are
    timed ``rounds`` times, interleaved (stacked first in odd rounds, second in even ones), so that a
    machine that slows down or speeds up during the benchmark moves both sides of a round's ratio alike.
    Rates are runs of ``per_hour_steps`` steps per hour, extrapolated linearly from the timed ``steps``,
    from each form's median seconds. Returns a JSON-ready dict with ``stacked_runs_per_hour``,
    ``sequential_runs_per_hour``, ``ratio`` (the median of the rounds' ratios, compilation excluded),
    ``round_ratios``, ``ratio_interval`` (a distribution-free interval for the median ratio at level
    1 - ``alpha``, :func:`~lloydlib.bench.timing.median_interval`; None when ``rounds`` is too few for
    ``alpha``), ``ratio_with_compile`` (one compilation amortised over a stack of ``runs`` runs of
    ``per_hour_steps`` steps), the seconds measured, the load average, the settings and the machine.
    """
    runs, steps = check_int("runs", runs, 1), check_int("steps", steps, 1)
    workers, per_hour_steps = check_int("workers", workers, 1), check_int("per_hour_steps", per_hour_steps, 1)
    rounds = check_int("rounds", rounds, 1)
    alpha = check_scalar("alpha", alpha, float, min_val=0, max_val=1, include_boundaries="neither")
    sequential_runs = runs if sequential_runs is None else check_int("sequential_runs", sequential_runs, 1)
    check_choice("embedding", embedding, EMBEDDINGS)
    check_choice("loss", loss, REGULARIZERS)
    compile = check_bool("compile", compile)
    dev = torch.device(device or "cpu")
    configs = sweep_configs(
        runs, d=d, k=k, n=n, batch=batch, embedding=embedding, loss=loss, steps=steps, seed=seed, device=str(dev)
    )
    load_before = loadavg()
    seq_workers = workers if dev.type == "cpu" else 1
    stacked_times, sequential_times, compiles, compiled, error = [], [], [], True, None
    for r in range(rounds):
        for form in ("stacked", "sequential") if r % 2 == 0 else ("sequential", "stacked"):
            if form == "sequential":
                sequential_times.append(_one_at_a_time(configs[:sequential_runs], seq_workers))
                continue
            if seq_workers > 1:
                seconds, compile_seconds, ok, err = _stacked(configs, seq_workers, compile)
            else:
                seconds, compile_seconds, ok, err = _stacked_here(configs, compile)
            stacked_times.append(seconds)
            compiles.append(compile_seconds)
            compiled, error = compiled and ok, error or err
    scale = per_hour_steps / steps
    stacked_seconds, sequential_seconds = statistics.median(stacked_times), statistics.median(sequential_times)
    stacked_rate = runs * 3600 / (stacked_seconds * scale)
    sequential_rate = sequential_runs * 3600 / (sequential_seconds * scale)
    # a round's ratio of rates: (runs / stacked seconds) / (sequential runs / sequential seconds)
    ratios = [(runs / a) / (sequential_runs / b) for a, b in zip(stacked_times, sequential_times)]
    interval = median_interval(ratios, alpha) if rounds >= min_reps(alpha) else None
    with_compile = runs * 3600 / (stacked_seconds * scale + compiles[0])
    return {
        "benchmark": "sweep",
        "stacked_runs_per_hour": stacked_rate,
        "sequential_runs_per_hour": sequential_rate,
        "ratio": statistics.median(ratios),
        "ratio_interval": None if interval is None else list(interval),
        "alpha": alpha,
        "round_ratios": ratios,
        "stacked_runs_per_hour_with_compile": with_compile,
        "ratio_with_compile": with_compile / sequential_rate,
        "stacked_seconds": stacked_times,
        "sequential_seconds": sequential_times,
        "compile_warmup_seconds": compiles[0],
        "compiled": compiled,
        "compile_error": error,
        "extrapolation": (
            f"each form trains its runs for {steps} steps (validation every 50 steps included), {rounds} time(s), "
            f"interleaved; runs per hour are runs of {per_hour_steps} steps, extrapolated linearly from each "
            f"form's median seconds (x {per_hour_steps}/{steps}); the stacked form's compile warm-up (the first "
            "round's, from a cold cache if inductor's was cold) is excluded from stacked_runs_per_hour and "
            f"amortised over one stack of {runs} runs in stacked_runs_per_hour_with_compile"
        ),
        "load_average": {"before": load_before, "after": loadavg()},
        "config": {
            "runs": runs,
            "sequential_runs": sequential_runs,
            "d": d,
            "k": k,
            "n": n,
            "batch": batch,
            "embedding": embedding,
            "loss": loss,
            "taus": list(TAUS),
            "steps": steps,
            "per_hour_steps": per_hour_steps,
            "rounds": rounds,
            "workers": seq_workers,
            "torch_threads": torch.get_num_threads(),
            "stacked_form": (
                f"train_stack: {runs} runs as train_many stacks them for {seq_workers} worker(s), in as many "
                "processes, threads split between them"
            ),
            "sequential_form": f"train one run at a time in {seq_workers} process(es), as train_many did",
            "dtype": "float32",
            "seed": seed,
        },
        "hardware": hardware.probe(dev),
        "machine": hardware.describe(hardware.probe(dev)),
    }
