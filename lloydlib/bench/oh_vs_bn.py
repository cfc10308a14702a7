"""OH against BN, one layer at a time: Figure 1 and Table 1 of the Leaner paper.

For each embedding it times, interleaved, the **forward (train)** pass ``model(X, C)`` in training mode
(building the autograd graph), the **backward** pass ``loss.backward()`` of the NE smoothed k-means loss
(tau = 0.1, :func:`~lloydlib.bench.reference_loss` for every model, so only the model differs; the loss
is computed between the timers) and the **forward (eval)** pass after ``model.eval()`` under
``torch.no_grad()``; then the step's peak memory (:func:`~lloydlib.bench.peak_memory`) in two
accountings: everything the step allocates, and everything but the (batch, n, n) attention matrices
(Figure 1's accounting, :func:`~lloydlib.bench.memory.attention_matrix_bytes`). Every
repetition times each embedding once, alternating their order, so a change of machine load hits both
alike; summaries are medians and quartiles over repetitions after discarded warm-up repetitions (the
paper: 10 and 30), and every sample is kept.
"""

from __future__ import annotations

import torch

from .. import hardware
from .._validate import check_choice, check_int
from ..embeddings import EMBEDDINGS, code_dim
from ..tasks import sample_tasks
from . import timing
from .memory import attention_matrix_bytes, peak_memory
from .reference import IMPLEMENTATIONS, make_model, reference_loss
from .timing import CLOCKS, summarize

__all__ = ["TABLE1_KS", "FIGURE1_DS", "FIGURE1_KS", "measure_embeddings", "grid"]

TABLE1_KS = (6, 25, 100, 400, 1000)  # Table 1's k, at d = 32
FIGURE1_DS = (4, 8, 16, 32, 64, 128)  # Figure 1's rows
FIGURE1_KS = (10, 16, 25, 40, 64, 100)  # Figure 1's columns
_PASSES = ("forward", "backward", "eval")


def measure_embeddings(
    d: int,
    k: int,
    *,
    n: int = 1024,
    batch: int = 32,
    warmup: int = 10,
    reps: int = 30,
    embeddings=("OH", "BN"),
    impl: str = "lloydlib",
    tau: float = 0.1,
    memory: bool = True,
    clock: str = "wall",
    seed: int = 0,
    device=None,
    passes=_PASSES,
    threads: int | None = None,
) -> dict:
    """Time forward (train), backward and forward (eval) of one layer for each embedding, interleaved.

    Returns ``{embedding: {"d_emb", "extra_dims", "forward": summary, "backward": summary, "eval": summary,
    "memory_bytes", "memory_bytes_no_attention", "samples": {pass: [ms, ...]}}}`` with
    :func:`~lloydlib.bench.summarize` summaries over ``reps`` repetitions after ``warmup`` discarded ones,
    timed on ``clock`` ("wall" or "cpu"); ``passes`` (a subset of "forward", "backward", "eval") says which
    passes are timed (the others get no summary, and the eval pass is not run); ``threads`` sets torch's
    thread count for the timed repetitions (None: as it is; see :func:`~lloydlib.bench.timing.torch_threads`). ``memory_bytes`` is the
    full accounting of :func:`~lloydlib.bench.peak_memory`, ``memory_bytes_no_attention`` the same without
    allocations of one (batch, n, n) matrix (None for both with ``memory=False``).
    All embeddings see the same tasks (``batch`` tasks of n points, k centers, d dimensions) and models
    initialised from the same seed.
    """
    d, k, n = check_int("d", d, 1), check_int("k", k, 2), check_int("n", n, 1)
    batch, warmup, reps = check_int("batch", batch, 1), check_int("warmup", warmup, 0), check_int("reps", reps, 1)
    for e in embeddings:
        check_choice("embeddings", e, EMBEDDINGS)
    check_choice("impl", impl, IMPLEMENTATIONS)
    check_choice("clock", clock, CLOCKS)
    passes = tuple(passes) if not isinstance(passes, str) else (passes,)
    for p in passes:
        check_choice("passes", p, _PASSES)
    if not passes:
        raise ValueError("passes must name at least one of ['forward', 'backward', 'eval'], got none")
    device = torch.device(device or "cpu")
    X, C = sample_tasks(batch, n, d, k, seed=seed, device=device)
    models = {}
    for e in embeddings:
        torch.manual_seed(seed)
        models[e] = make_model(impl, d, k, e, device=device)
    samples = {e: {m: [] for m in passes} for e in embeddings}
    with timing.torch_threads(threads):
        for r in range(warmup + reps):
            for e in embeddings if r % 2 == 0 else tuple(reversed(embeddings)):
                times = _time_passes(models[e], X, C, tau, device, clock, "eval" in passes)
                if r >= warmup:
                    for m in passes:
                        samples[e][m].append(times[m])
    out = {}
    for e in embeddings:
        model = models[e]
        model.train()
        model.zero_grad(set_to_none=True)

        def step(model=model):
            reference_loss(X, model(X, C), tau).backward()

        attention = (attention_matrix_bytes(batch, n, X.dtype),)
        out[e] = {
            "d_emb": model.d_emb,
            "extra_dims": code_dim(k, e),
            **{m: summarize(v) for m, v in samples[e].items()},
            "memory_bytes": peak_memory(step, device) if memory else None,
            "memory_bytes_no_attention": peak_memory(step, device, exclude_nbytes=attention) if memory else None,
            "samples": samples[e],
        }
        model.zero_grad(set_to_none=True)
    return out


def _time_passes(model, X, C, tau, device, kind, eval_pass=True) -> dict:
    """ms of the forward (train), backward and (with ``eval_pass``) forward (eval) passes of ``model`` on
    one batch: {pass: ms}."""
    model.train()
    model.zero_grad(set_to_none=True)
    t0 = timing.clock(device, kind)
    out = model(X, C)
    t1 = timing.clock(device, kind)
    loss = reference_loss(X, out, tau)
    t2 = timing.clock(device, kind)
    loss.backward()
    t3 = timing.clock(device, kind)
    times = {"forward": 1e3 * (t1 - t0), "backward": 1e3 * (t3 - t2)}
    if not eval_pass:
        return times
    model.eval()
    with torch.no_grad():
        t4 = timing.clock(device, kind)
        model(X, C)
        t5 = timing.clock(device, kind)
    return times | {"eval": 1e3 * (t5 - t4)}


def grid(
    ds,
    ks,
    *,
    n: int = 1024,
    batch: int = 32,
    warmup: int = 10,
    reps: int = 30,
    impl: str = "lloydlib",
    tau: float = 0.1,
    memory: bool = True,
    clock: str = "wall",
    seed: int = 0,
    device=None,
    progress=None,
    passes=_PASSES,
) -> dict:
    """OH against BN over every (d, k): a JSON-ready dict with ``hardware``, ``config`` and ``rows``.

    Each row has d, k and, per embedding, the :func:`measure_embeddings` results (samples included);
    ``progress`` is an optional callable given each finished row; ``passes`` as there.
    """
    device = torch.device(device or "cpu")
    rows = []
    for d in ds:
        for k in ks:
            res = measure_embeddings(
                d,
                k,
                n=n,
                batch=batch,
                warmup=warmup,
                reps=reps,
                impl=impl,
                tau=tau,
                memory=memory,
                clock=clock,
                seed=seed,
                device=device,
                passes=passes,
            )
            rows.append({"d": d, "k": k, **res})
            if progress is not None:
                progress(rows[-1])
    config = {"n": n, "batch": batch, "warmup": warmup, "reps": reps, "impl": impl, "tau": tau, "clock": clock}
    config |= {"seed": seed, "ds": list(ds), "ks": list(ks), "passes": list(passes)}
    return {"benchmark": "oh-vs-bn", "hardware": hardware.probe(device), "config": config, "rows": rows}
