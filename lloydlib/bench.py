"""Benchmarks: OH against BN (Figure 1, Table 1 of the Leaner paper) and lloydlib's training step
against a reference form built the straightforward way. ``python -m lloydlib bench --help``.

What is measured
----------------
* **forward (train)**: ``model(X, C)`` in training mode, building the autograd graph.
* **backward**: ``loss.backward()`` for the smoothed k-means loss (NE, tau = 0.1, :func:`reference_loss`
  for every model, so only the model differs) of that output; the loss is computed between the timers.
* **forward (eval)**: ``model(X, C)`` after ``model.eval()`` under ``torch.no_grad()``.
* **peak memory**: on a GPU, ``torch.cuda.max_memory_allocated`` during forward, loss and backward, less
  the memory allocated before (what the paper reports). On a CPU we define the same quantity from the
  allocation and free events PyTorch's profiler records with ``profile_memory=True``: the peak, over the
  forward, loss and backward, of the bytes held by tensors allocated since the step began. It counts
  every tensor the step allocates through PyTorch (activations saved for backward, temporaries,
  gradients), not buffers that BLAS or the fused attention kernel keep internally, and not memory
  that was live before the step (parameters, inputs). It is deterministic: the same step gives the same
  bytes. Unlike the paper (Figure 1) we do not subtract the self-attention matrices; lloydlib's fused
  attention never stores them.
* **training step** (``train-step``): ``zero_grad``, forward, loss (lloydlib's own
  :func:`lloydlib.losses.training_loss` for lloydlib), backward and ``Adam.step`` together, on the wall
  clock and in CPU time. lloydlib's forward and loss run under ``torch.compile`` unless ``--no-compile``
  (compilation is timed apart and excluded).

Timers are ``time.perf_counter`` differences (after ``torch.cuda.synchronize`` on a GPU), or, with
``clock="cpu"``, ``time.process_time`` differences: the CPU time of the process, which on a shared
machine measures the work done rather than the time spent waiting for a core. Runs are *interleaved*:
every repetition times each compared variant once (OH and BN, or lloydlib and the reference),
alternating their order, so a change of machine load hits both alike; we report medians and quartiles
over repetitions after warm-up repetitions that are discarded (the paper: 10 and 30), and keep every
sample. Each result names the hardware; ``train-step`` also records the load average.

The reference form (:class:`ReferenceTransformer`, :func:`reference_loss`) is how the authors' code
computes (``kmt.py``): an ``nn.Linear`` per projection, squared distances as ``torch.cdist(...) ** 2``,
the softmax as its own operation on the materialised n x n score matrix, attention dropout as
``nn.Dropout`` on the weights, and the NE loss with ``cdist`` too. It is the baseline of ``bench`` and is used nowhere else in the
library.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import platform
import statistics
import sys
import time

import torch
from torch import nn

from ._validate import check_choice, check_int, check_positive
from .embeddings import EMBEDDINGS, cluster_codes, code_dim, embedding_dim
from .model import LearnableTransformer
from .tasks import sample_tasks

__all__ = ["IMPLEMENTATIONS", "CLOCKS", "hardware", "ReferenceTransformer", "reference_loss", "lloydlib_loss",
           "make_model", "peak_memory", "summarize", "measure_embeddings", "grid", "train_step",
           "recorded", "main"]

IMPLEMENTATIONS = ("lloydlib", "reference")
TABLE1_KS = (6, 25, 100, 400, 1000)
FIGURE1_DS = (4, 8, 16, 32, 64, 128)
FIGURE1_KS = (10, 16, 25, 40, 64, 100)


# ------------------------------------------------------------------------------------------ hardware
def hardware(device: torch.device | str | None = None) -> dict:
    """The machine a benchmark ran on: CPU model, cores, torch threads, torch version, GPU name if any."""
    device = torch.device(device or "cpu")
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    info = {"device": str(device), "cpu": cpu, "cpu_cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__, "python": platform.python_version(), "platform": platform.platform()}
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
        info["cuda"] = torch.version.cuda
    return info


# ------------------------------------------------------------------------------------ reference form
class _ReferenceHead(nn.Module):
    """One distance-attention head of Eq. 3 the straightforward way (as ``kmt.py`` computes it)."""

    def __init__(self, d_emb: int, gamma: float, bias: bool, dropout: float):
        super().__init__()
        self.q = nn.Linear(d_emb, d_emb, bias=bias)
        self.k = nn.Linear(d_emb, d_emb, bias=bias)
        self.v = nn.Linear(d_emb, d_emb, bias=bias)
        self.gamma, self.d_emb = gamma, d_emb
        self.drop = nn.Dropout(dropout)

    def forward(self, Z: torch.Tensor, Zp: torch.Tensor) -> torch.Tensor:
        scores = -self.gamma * torch.cdist(self.q(Z), self.k(Zp)) ** 2 / math.sqrt(self.d_emb)
        return self.drop(torch.softmax(scores, dim=-1)) @ self.v(Zp)


class ReferenceTransformer(nn.Module):
    """Eq. 4 with four :class:`_ReferenceHead` s: the baseline of ``bench``; same signature as
    :class:`lloydlib.model.LearnableTransformer` (``model(X, C) -> (batch, k, d)``), no input checks."""

    def __init__(self, d: int, k: int, embedding: str = "BN", *, gamma: float = 1.0, bias: bool = True,
                 dropout: float = 0.0, dtype=torch.float32, device=None):
        super().__init__()
        self.d, self.k, self.embedding = d, k, embedding
        self.d_emb = embedding_dim(d, k, embedding)
        self.heads = nn.ModuleList(_ReferenceHead(self.d_emb, gamma, bias, dropout) for _ in range(4))
        self.register_buffer("codes", cluster_codes(k, embedding, dtype=dtype, device=device), persistent=False)
        self.to(device=device, dtype=dtype)

    @torch.no_grad()
    def load_from(self, model: LearnableTransformer) -> "ReferenceTransformer":
        """Copy a :class:`LearnableTransformer` 's weights, so both compute the same function."""
        for mu, head in enumerate(self.heads):
            for kind in "QKV":
                lin = getattr(head, kind.lower())
                lin.weight.copy_(getattr(model, kind)[mu])
                if lin.bias is not None:
                    lin.bias.copy_(getattr(model, "b" + kind)[mu])
        return self

    def forward(self, X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
        m = self.d_emb - self.d
        Xbar = torch.cat([X, X.new_zeros(X.shape[0], X.shape[1], m)], dim=2)
        Cbar = torch.cat([C, self.codes.expand(C.shape[0], -1, -1)], dim=2)
        h = self.heads
        Xbar1 = Xbar + h[0](Xbar, Cbar) + h[1](Xbar, Xbar)
        Cbar1 = Cbar + h[2](Cbar, Xbar1) + h[3](Cbar, Cbar)
        return Cbar1[..., : self.d]


def reference_loss(X: torch.Tensor, C: torch.Tensor, tau: float = 0.1) -> torch.Tensor:
    """The NE smoothed k-means loss (Eq. 26) the reference way: ``cdist`` squared, batch mean of the sum."""
    r = torch.cdist(X, C) ** 2
    return (torch.softmax(-r / tau, dim=-1) * r).sum(dim=(1, 2)).mean()


def lloydlib_loss(X: torch.Tensor, C: torch.Tensor, tau: float = 0.1) -> torch.Tensor:
    """lloydlib's NE training loss, :func:`lloydlib.losses.training_loss` without its input checks.

    The same arithmetic (:func:`lloydlib.lloyd.sqdist`, then :func:`lloydlib.losses.regularized_argmax`),
    so that under ``torch.compile`` the model and the loss form one graph: a value check such as
    "all entries finite" reads a tensor into Python and would cut the graph in pieces.
    """
    from .losses import regularized_argmax
    from .lloyd import sqdist
    r = sqdist(X, C)
    return (regularized_argmax(-r / tau, "NE", dim=2) * r).sum(dim=(1, 2)).mean()


def make_model(impl: str, d: int, k: int, embedding: str, *, dropout: float = 0.0, gamma: float = 1.0,
               bias: bool = True, dtype=torch.float32, device=None) -> nn.Module:
    """A model of implementation ``impl`` ("lloydlib": the fast :class:`LearnableTransformer`, or "reference")."""
    check_choice("impl", impl, IMPLEMENTATIONS)
    if impl == "lloydlib":
        return LearnableTransformer(d, k, embedding, gamma=gamma, bias=bias, dropout=dropout, fast=True,
                                    dtype=dtype, device=device)
    return ReferenceTransformer(d, k, embedding, gamma=gamma, bias=bias, dropout=dropout, dtype=dtype, device=device)


# ------------------------------------------------------------------------------------ timing, memory
CLOCKS = ("wall", "cpu")


def _clock(device: torch.device, clock: str = "wall") -> float:
    """Seconds on ``clock``: "wall" (``time.perf_counter``) or "cpu" (``time.process_time``: CPU time of
    this process, all threads; it does not count time the process waits for a core)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() if clock == "wall" else time.process_time()


def summarize(samples_ms) -> dict:
    """Median, quartiles, min and count of timings in ms; ``spread`` = IQR / median (relative noise)."""
    s = sorted(float(x) for x in samples_ms)
    if not s:
        raise ValueError("summarize needs at least one timing, got none")
    q1, med, q3 = (statistics.quantiles(s, n=4, method="inclusive") if len(s) > 1 else (s[0], s[0], s[0]))
    return {"median_ms": med, "q1_ms": q1, "q3_ms": q3, "min_ms": s[0], "n": len(s),
            "spread": (q3 - q1) / med if med > 0 else 0.0}


@contextlib.contextmanager
def _quiet_stderr():
    """Silence the profiler's C++ log lines, written straight to file descriptor 2 (which Jupyter
    kernels redirect to a pipe of their own, so it is fd 2 itself, not ``sys.stderr.fileno()``)."""
    fd = 2
    try:
        sys.stderr.flush()
        saved = os.dup(fd)
    except (AttributeError, ValueError, OSError):
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


@contextlib.contextmanager
def _quiet_logger(name: str):
    """Raise a logger's level to ERROR for the duration of a block."""
    logger = logging.getLogger(name)
    old = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(old)


def peak_memory(fn, device: torch.device | str = "cpu") -> int:
    """Peak bytes allocated by ``fn()`` above what was allocated before it (see the module docstring).

    GPU: ``torch.cuda.max_memory_allocated``. CPU: the running sum of the allocation (+) and free (-)
    events recorded by ``torch.profiler`` with ``profile_memory=True``, in time order; its maximum.
    """
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        torch.cuda.synchronize(device)
        return int(torch.cuda.max_memory_allocated(device) - base)
    from torch.profiler import ProfilerActivity, profile
    with _quiet_stderr():
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            fn()
    events = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events()
                    if e.name() == "[memory]" and e.device_type() == torch.autograd.DeviceType.CPU)
    current = peak = 0
    for _, nbytes in events:
        current += nbytes
        peak = max(peak, current)
    return int(peak)


def _loadavg():
    """The 1-minute load average (runnable processes; above the core count, timings are contended)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


# --------------------------------------------------------------------------- OH vs BN (Figure 1, Table 1)
def measure_embeddings(d: int, k: int, *, n: int = 1024, batch: int = 32, warmup: int = 10, reps: int = 30,
                       embeddings=("OH", "BN"), impl: str = "lloydlib", tau: float = 0.1, memory: bool = True,
                       clock: str = "wall", seed: int = 0, device=None) -> dict:
    """Time forward (train), backward and forward (eval) of one layer for each embedding, interleaved.

    Returns ``{embedding: {"d_emb", "extra_dims", "forward": summary, "backward": summary, "eval": summary,
    "memory_bytes", "samples": {metric: [ms, ...]}}}`` with :func:`summarize` summaries over ``reps``
    repetitions after ``warmup`` discarded ones, timed on ``clock`` ("wall" or "cpu", see :func:`_clock`).
    All embeddings see the same tasks (n points, k centers, d dimensions, ``batch`` tasks) and models
    initialised from the same seed. The loss before the backward pass is :func:`reference_loss` (the NE
    loss as the authors' code computes it) for every implementation, so only the model differs.
    """
    d, k, n = check_int("d", d, 1), check_int("k", k, 2), check_int("n", n, 1)
    batch, warmup, reps = check_int("batch", batch, 1), check_int("warmup", warmup, 0), check_int("reps", reps, 1)
    for e in embeddings:
        check_choice("embeddings", e, EMBEDDINGS)
    check_choice("impl", impl, IMPLEMENTATIONS)
    check_choice("clock", clock, CLOCKS)
    device = torch.device(device or "cpu")
    X, C = sample_tasks(batch, n, d, k, seed=seed, device=device)
    loss_fn = reference_loss
    models = {}
    for e in embeddings:
        torch.manual_seed(seed)
        models[e] = make_model(impl, d, k, e, device=device)
    samples = {e: {"forward": [], "backward": [], "eval": []} for e in embeddings}

    def once(e, keep):
        model = models[e]
        model.train()
        model.zero_grad(set_to_none=True)
        t0 = _clock(device, clock)
        out = model(X, C)
        t1 = _clock(device, clock)
        loss = loss_fn(X, out, tau)
        t2 = _clock(device, clock)
        loss.backward()
        t3 = _clock(device, clock)
        model.eval()
        with torch.no_grad():
            t4 = _clock(device, clock)
            model(X, C)
            t5 = _clock(device, clock)
        if keep:
            s = samples[e]
            s["forward"].append(1e3 * (t1 - t0))
            s["backward"].append(1e3 * (t3 - t2))
            s["eval"].append(1e3 * (t5 - t4))

    for r in range(warmup + reps):
        for e in (embeddings if r % 2 == 0 else tuple(reversed(embeddings))):
            once(e, r >= warmup)
    out = {}
    for e in embeddings:
        model = models[e]
        model.train()
        model.zero_grad(set_to_none=True)

        def step():
            loss_fn(X, model(X, C), tau).backward()

        out[e] = {"d_emb": model.d_emb, "extra_dims": code_dim(k, e),
                  **{m: summarize(v) for m, v in samples[e].items()},
                  "memory_bytes": peak_memory(step, device) if memory else None,
                  "samples": samples[e]}
        model.zero_grad(set_to_none=True)
    return out


def grid(ds, ks, *, n: int = 1024, batch: int = 32, warmup: int = 10, reps: int = 30, impl: str = "lloydlib",
         tau: float = 0.1, memory: bool = True, clock: str = "wall", seed: int = 0, device=None,
         progress=None) -> dict:
    """OH against BN over every (d, k): a JSON-ready dict with ``hardware``, ``config`` and ``rows``.

    Each row has d, k and, per embedding, the :func:`measure_embeddings` results (samples included);
    ``progress`` is an optional callable given each finished row.
    """
    device = torch.device(device or "cpu")
    rows = []
    for d in ds:
        for k in ks:
            res = measure_embeddings(d, k, n=n, batch=batch, warmup=warmup, reps=reps, impl=impl, tau=tau,
                                     memory=memory, clock=clock, seed=seed, device=device)
            rows.append({"d": d, "k": k, **res})
            if progress is not None:
                progress(rows[-1])
    return {"benchmark": "oh-vs-bn", "hardware": hardware(device),
            "config": {"n": n, "batch": batch, "warmup": warmup, "reps": reps, "impl": impl, "tau": tau,
                       "clock": clock, "seed": seed, "ds": list(ds), "ks": list(ks)},
            "rows": rows}


# ------------------------------------------------------------------------------------- training step
def train_step(*, embedding: str = "BN", n: int = 512, d: int = 32, k: int = 10, batch: int = 32,
               tau: float = 0.1, dropout: float = 0.0, gamma: float = 1.0, lr: float = 0.01, warmup: int = 3,
               reps: int = 20, compile: bool = True, seed: int = 0, device=None) -> dict:
    """ms per full training step (zero_grad, forward, NE loss, backward, Adam) for lloydlib and the reference.

    lloydlib's step is :class:`LearnableTransformer` (``fast=True``) with :func:`lloydlib_loss`; with
    ``compile`` (the default: the fastest choice we measured on a 2-core CPU) the forward and the loss
    are wrapped together in ``torch.compile``, whose warm-up (compilation and first step) is timed
    apart and excluded from ms per step. If compilation fails the eager step is timed and the error
    reported. Both models start from the same weights and see the same batch of tasks; before timing,
    their losses must agree. Steps are interleaved (see the module docstring).

    Returns a JSON-ready dict with ``lloydlib_ms_per_step`` and ``reference_ms_per_step`` (medians),
    ``speedup`` (their ratio), ``paired_speedup`` (median of per-repetition ratios), the same in CPU
    time (``*_cpu_ms_per_step``, ``cpu_speedup``), ``speedup_of_minimums`` (ratio of the fastest steps,
    closest to an idle machine's), summaries and samples, ``compile_warmup_seconds``, the load average,
    the configuration and the hardware.
    """
    check_choice("embedding", embedding, EMBEDDINGS)
    warmup, reps = check_int("warmup", warmup, 0), check_int("reps", reps, 1)
    tau = check_positive("tau", tau)
    device = torch.device(device or "cpu")
    X, C = sample_tasks(batch, n, d, k, seed=seed, device=device)
    torch.manual_seed(seed)
    ours = make_model("lloydlib", d, k, embedding, dropout=dropout, gamma=gamma, device=device)
    ref = make_model("reference", d, k, embedding, dropout=dropout, gamma=gamma, device=device).load_from(ours)

    def ours_loss():
        return lloydlib_loss(X, ours(X, C), tau)

    fl = {"lloydlib": ours_loss, "reference": lambda: reference_loss(X, ref(X, C), tau)}
    ours.eval(), ref.eval()                 # no dropout for the agreement check
    with torch.no_grad():
        a, b = float(fl["lloydlib"]()), float(fl["reference"]())
    ours.train(), ref.train()
    if not abs(a - b) <= 1e-4 * (1 + abs(b)):
        raise RuntimeError(f"lloydlib and the reference form disagree before timing: loss {a!r} vs {b!r}")
    compile_seconds = compile_error = None
    if compile:
        compiled = torch.compile(ours_loss)
        t0 = time.perf_counter()
        try:
            with _quiet_logger("torch._dynamo"):
                loss = compiled()           # compiles forward and loss, and (AOTAutograd) their backward
                loss.backward()
            ours.zero_grad(set_to_none=True)
            fl["lloydlib"] = compiled
        except Exception as e:              # e.g. no C++ compiler: time the eager step instead
            compile_error = f"{type(e).__name__}: {e}"
        compile_seconds = time.perf_counter() - t0
        if compile_error is None and dropout == 0 and not abs(float(loss.detach()) - a) <= 1e-4 * (1 + abs(a)):
            raise RuntimeError(f"compiled and eager lloydlib disagree: loss {float(loss.detach())!r} vs {a!r}")
    opts = {"lloydlib": torch.optim.Adam(ours.parameters(), lr=lr),
            "reference": torch.optim.Adam(ref.parameters(), lr=lr)}

    def step(name):
        opts[name].zero_grad(set_to_none=True)
        fl[name]().backward()
        opts[name].step()

    times = {"lloydlib": [], "reference": []}
    cpu_times = {"lloydlib": [], "reference": []}
    load_before = _loadavg()
    for r in range(warmup + reps):
        for name in (("lloydlib", "reference") if r % 2 == 0 else ("reference", "lloydlib")):
            c0, t0 = time.process_time(), _clock(device)
            step(name)
            t1, c1 = _clock(device), time.process_time()
            if r >= warmup:
                times[name].append(1e3 * (t1 - t0))
                cpu_times[name].append(1e3 * (c1 - c0))
    s_ours, s_ref = summarize(times["lloydlib"]), summarize(times["reference"])
    c_ours, c_ref = summarize(cpu_times["lloydlib"]), summarize(cpu_times["reference"])
    paired = statistics.median(r_ / o_ for o_, r_ in zip(times["lloydlib"], times["reference"]))
    compiled_ok = compile and compile_error is None
    return {
        "benchmark": "train-step",
        "lloydlib_ms_per_step": s_ours["median_ms"], "reference_ms_per_step": s_ref["median_ms"],
        "speedup": s_ref["median_ms"] / s_ours["median_ms"], "paired_speedup": paired,
        "lloydlib_cpu_ms_per_step": c_ours["median_ms"], "reference_cpu_ms_per_step": c_ref["median_ms"],
        "cpu_speedup": c_ref["median_ms"] / c_ours["median_ms"],
        "speedup_of_minimums": s_ref["min_ms"] / s_ours["min_ms"],
        "lloydlib": s_ours, "reference": s_ref, "lloydlib_cpu": c_ours, "reference_cpu": c_ref,
        "samples_ms": times, "cpu_samples_ms": cpu_times,
        "load_average": {"before": load_before, "after": _loadavg()},
        "compile": compiled_ok, "compile_warmup_seconds": compile_seconds, "compile_error": compile_error,
        "initial_loss": {"lloydlib": a, "reference": b},
        "config": {"embedding": embedding, "n": n, "d": d, "k": k, "batch": batch, "d_emb": ours.d_emb,
                   "tau": tau, "loss": "NE", "dropout": dropout, "gamma": gamma, "lr": lr, "optimizer": "Adam",
                   "warmup": warmup, "reps": reps, "seed": seed, "dtype": "float32",
                   "lloydlib_form": "LearnableTransformer(fast=True) + lloydlib.losses.training_loss"
                                    + (", forward and loss in torch.compile" if compiled_ok else ", eager"),
                   "reference_form": "nn.Linear projections, cdist**2, softmax, NE loss with cdist**2, eager"},
        "hardware": hardware(device),
    }


# ------------------------------------------------------------------------------------------ command line
def recorded(benchmark: str, *, root: str | os.PathLike | None = None, gpu_only: bool = False) -> list[dict]:
    """Benchmark results recorded with ``--out`` and committed under ``<checkout>/results`` (or ``root``).

    Returns the JSON objects whose ``benchmark`` field equals ``benchmark`` ("train-step", "table1", "grid"),
    sorted by file name, each with its file name added as ``"file"``; with ``gpu_only`` only those whose
    ``hardware`` names a GPU. An installed package without a checkout has no results folder: [].
    """
    from pathlib import Path

    from .training import _repo_root

    check_choice("benchmark", benchmark, ("train-step", "table1", "grid", "oh-vs-bn"))
    if root is None:
        repo = _repo_root()
        if repo is None:
            return []
        root = repo / "results"
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


def _ints(text: str):
    return [int(x) for x in text.replace(",", " ").split()]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lloydlib bench", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--seed", type=int, default=0)
    common.add_argument("--device", default=None, help="cpu (default) or cuda")
    common.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    common.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    common.add_argument("--out", default=None, help="also write the JSON result to this file")

    t = sub.add_parser("train-step", parents=[common], help="ms per training step: lloydlib vs the reference form")
    t.add_argument("--embedding", default="BN", choices=EMBEDDINGS)
    t.add_argument("--n", type=int, default=512)
    t.add_argument("--d", type=int, default=32)
    t.add_argument("--k", type=int, default=10)
    t.add_argument("--batch", type=int, default=32)
    t.add_argument("--tau", type=float, default=0.1)
    t.add_argument("--dropout", type=float, default=0.0)
    t.add_argument("--gamma", type=float, default=1.0)
    t.add_argument("--warmup", type=int, default=3)
    t.add_argument("--reps", type=int, default=20)
    t.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True,
                   help="torch.compile lloydlib's forward and loss (default: on; --no-compile times the eager step)")

    for name, ds, ks, help_ in (("grid", FIGURE1_DS, FIGURE1_KS, "OH vs BN over a (d, k) grid (Figure 1)"),
                                ("table1", (32,), TABLE1_KS, "OH vs BN at d=32 (Table 1)")):
        g = sub.add_parser(name, parents=[common], help=help_)
        g.add_argument("--d", type=_ints, default=list(ds), help=f"dimensions (default {' '.join(map(str, ds))})")
        g.add_argument("--k", type=_ints, default=list(ks), help=f"cluster counts (default {' '.join(map(str, ks))})")
        g.add_argument("--n", type=int, default=1024)
        g.add_argument("--batch", type=int, default=32)
        g.add_argument("--warmup", type=int, default=10)
        g.add_argument("--reps", type=int, default=30)
        g.add_argument("--impl", default="lloydlib", choices=IMPLEMENTATIONS)
        g.add_argument("--no-memory", action="store_true", help="skip the peak-memory measurement")
        g.add_argument("--clock", default="wall", choices=CLOCKS,
                       help="wall-clock time (default) or the process's CPU time (steadier on a shared machine)")
    return p


def _print_grid(result: dict) -> None:
    print(f"# {result['hardware']['cpu']} | {result['hardware'].get('gpu', 'no GPU')} | "
          f"torch {result['hardware']['torch']} | {result['hardware']['torch_threads']} threads | "
          + " ".join(f"{k}={v}" for k, v in result["config"].items() if k not in ("ds", "ks")))
    print(f"{'d':>4} {'k':>5} {'OH/BN dims':>10} {'fwd OH/BN ms':>16} {'x':>6} {'bwd OH/BN ms':>16} {'x':>6} "
          f"{'eval OH/BN ms':>16} {'x':>6} {'mem OH/BN MB':>16} {'red.':>6}")
    for row in result["rows"]:
        oh, bn = row["OH"], row["BN"]
        cells = []
        for m in ("forward", "backward", "eval"):
            a, b = oh[m]["median_ms"], bn[m]["median_ms"]
            cells.append(f"{a:7.2f}/{b:<8.2f} {a / b:5.2f}x")
        if oh["memory_bytes"] is not None:
            a, b = oh["memory_bytes"] / 2**20, bn["memory_bytes"] / 2**20
            cells.append(f"{a:7.1f}/{b:<8.1f} {100 * (1 - b / a):5.1f}%")
        print(f"{row['d']:>4} {row['k']:>5} {oh['extra_dims']:>5}/{bn['extra_dims']:<4} " + " ".join(cells))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(check_int("threads", args.threads, 1))
    try:
        if args.command == "train-step":
            result = train_step(embedding=args.embedding, n=args.n, d=args.d, k=args.k, batch=args.batch,
                                tau=args.tau, dropout=args.dropout, gamma=args.gamma, warmup=args.warmup,
                                reps=args.reps, compile=args.compile, seed=args.seed, device=args.device)
        else:
            progress = None if args.json else (lambda row: print(f"  d={row['d']} k={row['k']} done", file=sys.stderr))
            result = grid(args.d, args.k, n=args.n, batch=args.batch, warmup=args.warmup, reps=args.reps,
                          impl=args.impl, memory=not args.no_memory, clock=args.clock, seed=args.seed,
                          device=args.device,
                          progress=progress)
            result["benchmark"] = args.command
    except (TypeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    if args.json:
        print(json.dumps(result))
    elif args.command == "train-step":
        c = result["config"]
        print(f"# {result['hardware']['cpu']}, {result['hardware']['torch_threads']} threads, torch {result['hardware']['torch']}")
        print(f"training step, {c['embedding']} n={c['n']} d={c['d']} k={c['k']} batch={c['batch']} "
              f"dropout={c['dropout']} ({c['reps']} interleaved repetitions after {c['warmup']} warm-up)")
        for name in ("lloydlib", "reference"):
            s = result[name]
            print(f"  {name:<9} {s['median_ms']:8.1f} ms/step  (IQR {s['q1_ms']:.1f}-{s['q3_ms']:.1f})")
        print(f"  speed-up  {result['speedup']:.2f}x  (median of paired ratios {result['paired_speedup']:.2f}x; "
              f"CPU time {result['lloydlib_cpu_ms_per_step']:.1f} vs {result['reference_cpu_ms_per_step']:.1f} ms, "
              f"{result['cpu_speedup']:.2f}x)")
        print(f"  fastest steps {result['lloydlib']['min_ms']:.1f} vs {result['reference']['min_ms']:.1f} ms "
              f"({result['speedup_of_minimums']:.2f}x)")
        load = result["load_average"]
        if load["before"] is not None:
            print(f"  load average {load['before']:.1f} before, {load['after']:.1f} after, on "
                  f"{result['hardware']['cpu_cores']} cores")
        if result["compile"]:
            print(f"  torch.compile warm-up {result['compile_warmup_seconds']:.1f} s (excluded)")
        elif result["compile_error"]:
            print(f"  torch.compile failed ({result['compile_error']}); the eager step was timed")
    else:
        _print_grid(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
