"""A whole training step, lloydlib against the reference form (``python -m lloydlib bench train-step``).

A step is ``zero_grad``, forward, loss, backward and ``Adam.step`` together, timed on the wall clock and
in CPU time. lloydlib's forward and loss (:func:`~lloydlib.bench.lloydlib_loss`) run under
``torch.compile`` unless ``compile=False`` (compilation is timed apart and excluded); the reference
form's loss is :func:`~lloydlib.bench.reference_loss`. Steps are interleaved, alternating which form
goes first, and the load average is recorded before and after.
"""

from __future__ import annotations

import statistics
import time

import torch

from .. import hardware
from .._validate import check_choice, check_int, check_positive
from ..embeddings import EMBEDDINGS
from ..losses import REGULARIZERS
from ..tasks import sample_tasks
from . import timing
from .reference import lloydlib_loss, make_model, reference_loss
from .timing import loadavg, quiet_logger, summarize

__all__ = ["train_step"]

_FORMS = ("lloydlib", "reference")


def _agree(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-4 * (1 + abs(b))


def _compile(loss_fn, model, eager_loss: float, dropout: float):
    """``torch.compile(loss_fn)`` after its first (compiling) call, the seconds that took, and the error
    if compilation failed (then the eager ``loss_fn`` is returned)."""
    compiled = torch.compile(loss_fn)
    t0 = time.perf_counter()
    try:
        with quiet_logger("torch._dynamo"):
            loss = compiled()  # compiles forward and loss, and (AOTAutograd) their backward
            loss.backward()
        model.zero_grad(set_to_none=True)
    except Exception as e:  # e.g. no C++ compiler: time the eager step instead
        return loss_fn, time.perf_counter() - t0, f"{type(e).__name__}: {e}"
    seconds = time.perf_counter() - t0
    if dropout == 0 and not _agree(float(loss.detach()), eager_loss):
        raise RuntimeError(f"compiled and eager lloydlib disagree: loss {float(loss.detach())!r} vs {eager_loss!r}")
    return compiled, seconds, None


def _time_steps(losses, opts, warmup, reps, device):
    """Interleaved steps of both forms; per form the wall-clock and CPU ms of the ``reps`` timed steps."""
    times = {name: [] for name in _FORMS}
    cpu_times = {name: [] for name in _FORMS}
    for r in range(warmup + reps):
        for name in _FORMS if r % 2 == 0 else tuple(reversed(_FORMS)):
            c0, t0 = time.process_time(), timing.clock(device)
            opts[name].zero_grad(set_to_none=True)
            losses[name]().backward()
            opts[name].step()
            t1, c1 = timing.clock(device), time.process_time()
            if r >= warmup:
                times[name].append(1e3 * (t1 - t0))
                cpu_times[name].append(1e3 * (c1 - c0))
    return times, cpu_times


def train_step(
    *,
    embedding: str = "BN",
    n: int = 512,
    d: int = 32,
    k: int = 10,
    batch: int = 32,
    tau: float = 0.1,
    loss: str = "NE",
    dropout: float = 0.0,
    gamma: float = 1.0,
    lr: float = 0.01,
    warmup: int = 3,
    reps: int = 20,
    compile: bool = True,
    seed: int = 0,
    device=None,
) -> dict:
    """ms per full training step (zero_grad, forward, loss of Eq. 6 with regulariser ``loss``, backward, Adam)
    for lloydlib and the reference.

    lloydlib's step is :class:`~lloydlib.model.LearnableTransformer` (``fast=True``) with
    :func:`~lloydlib.bench.lloydlib_loss`; with ``compile`` (the default: the fastest choice we measured
    on a 2-core CPU) the forward and the loss are wrapped together in ``torch.compile``, whose warm-up
    (compilation and first step) is timed apart and excluded from ms per step. If compilation fails the
    eager step is timed and the error reported. Both models start from the same weights and see the same
    ``batch`` tasks of n points in d dimensions with k centers; before timing, their losses must agree.

    Returns a JSON-ready dict with ``lloydlib_ms_per_step`` and ``reference_ms_per_step`` (medians),
    ``speedup`` (their ratio), ``paired_speedup`` (median of per-repetition ratios), the same in CPU
    time (``*_cpu_ms_per_step``, ``cpu_speedup``), ``speedup_of_minimums`` (ratio of the fastest steps,
    closest to an idle machine's), summaries and samples, ``compile_warmup_seconds``, the load average,
    the configuration and the hardware.
    """
    check_choice("embedding", embedding, EMBEDDINGS)
    check_choice("loss", loss, REGULARIZERS)
    n, d, k, batch = check_int("n", n, 1), check_int("d", d, 1), check_int("k", k, 2), check_int("batch", batch, 1)
    warmup, reps = check_int("warmup", warmup, 0), check_int("reps", reps, 1)
    tau, lr = check_positive("tau", tau), check_positive("lr", lr)
    device = torch.device(device or "cpu")
    X, C = sample_tasks(batch, n, d, k, seed=seed, device=device)
    torch.manual_seed(seed)
    ours = make_model("lloydlib", d, k, embedding, dropout=dropout, gamma=gamma, device=device)
    ref = make_model("reference", d, k, embedding, dropout=dropout, gamma=gamma, device=device).load_from(ours)

    def ours_loss():
        return lloydlib_loss(X, ours(X, C), tau, loss)

    losses = {"lloydlib": ours_loss, "reference": lambda: reference_loss(X, ref(X, C), tau, loss)}
    ours.eval(), ref.eval()  # no dropout for the agreement check
    with torch.no_grad():
        a, b = float(losses["lloydlib"]()), float(losses["reference"]())
    ours.train(), ref.train()
    if not _agree(a, b):
        raise RuntimeError(f"lloydlib and the reference form disagree before timing: loss {a!r} vs {b!r}")
    compile_seconds = compile_error = None
    if compile:
        losses["lloydlib"], compile_seconds, compile_error = _compile(ours_loss, ours, a, dropout)
    opts = {
        "lloydlib": torch.optim.Adam(ours.parameters(), lr=lr),
        "reference": torch.optim.Adam(ref.parameters(), lr=lr),
    }
    load_before = loadavg()
    times, cpu_times = _time_steps(losses, opts, warmup, reps, device)
    s_ours, s_ref = summarize(times["lloydlib"]), summarize(times["reference"])
    c_ours, c_ref = summarize(cpu_times["lloydlib"]), summarize(cpu_times["reference"])
    compiled_ok = compile and compile_error is None
    config = {"embedding": embedding, "n": n, "d": d, "k": k, "batch": batch, "d_emb": ours.d_emb, "tau": tau}
    config |= {"loss": loss, "dropout": dropout, "gamma": gamma, "lr": lr, "optimizer": "Adam", "warmup": warmup}
    config |= {"reps": reps, "seed": seed, "dtype": "float32"}
    config["lloydlib_form"] = "LearnableTransformer(fast=True) + lloydlib.losses.training_loss" + (
        ", forward and loss in torch.compile" if compiled_ok else ", eager"
    )
    config["reference_form"] = f"nn.Linear projections, cdist**2, softmax, {loss} loss with cdist**2, eager"
    return {
        "benchmark": "train-step",
        "lloydlib_ms_per_step": s_ours["median_ms"],
        "reference_ms_per_step": s_ref["median_ms"],
        "speedup": s_ref["median_ms"] / s_ours["median_ms"],
        "paired_speedup": statistics.median(r / o for o, r in zip(times["lloydlib"], times["reference"])),
        "lloydlib_cpu_ms_per_step": c_ours["median_ms"],
        "reference_cpu_ms_per_step": c_ref["median_ms"],
        "cpu_speedup": c_ref["median_ms"] / c_ours["median_ms"],
        "speedup_of_minimums": s_ref["min_ms"] / s_ours["min_ms"],
        "lloydlib": s_ours,
        "reference": s_ref,
        "lloydlib_cpu": c_ours,
        "reference_cpu": c_ref,
        "samples_ms": times,
        "cpu_samples_ms": cpu_times,
        "load_average": {"before": load_before, "after": loadavg()},
        "compile": compiled_ok,
        "compile_warmup_seconds": compile_seconds,
        "compile_error": compile_error,
        "initial_loss": {"lloydlib": a, "reference": b},
        "config": config,
        "hardware": hardware.probe(device),
    }
