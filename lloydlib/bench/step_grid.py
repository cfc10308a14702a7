"""The training step over several configurations, each against the reference form and against its cost
estimate (``python -m lloydlib bench train-step-grid``).

Every configuration (embedding x loss) is timed by :func:`lloydlib.bench.train_step` in each of ``rounds``
rounds, the configurations in alternating order from round to round, so that a shared machine's drift
falls on all of them alike. Per configuration the result keeps every round's medians and reports the
median over rounds with its spread (smallest and largest round), the speed-up over the reference form
(both forms timed in the same run, interleaved), and the ratio of lloydlib's step to the estimate of
:mod:`lloydlib.bench.estimate` at the rates measured at the start of the run.
"""

from __future__ import annotations

import statistics

import torch

from .. import hardware
from .._validate import check_choice, check_int
from ..embeddings import EMBEDDINGS
from ..losses import REGULARIZERS
from .estimate import estimate, machine_rates, step_cost
from .step import train_step
from .timing import loadavg

__all__ = ["train_step_grid"]


def _spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "rounds": values}


def train_step_grid(
    *,
    embeddings=("OH", "BN", "NA"),
    losses=("NE", "L2"),
    rounds: int = 3,
    threads: int | None = None,
    **step,
) -> dict:
    """:func:`train_step` for every (embedding, loss) of ``embeddings`` x ``losses``, ``rounds`` times, on
    ``threads`` torch threads; ``step`` holds its other arguments (n, d, k, batch, tau, warmup, reps, ...).
    Returns a JSON-ready dict: ``configs`` (one entry per configuration: ``lloydlib_ms``, ``reference_ms``,
    ``speedup`` and ``cpu_ms`` as median/min/max over rounds, ``cost`` from :func:`step_cost`,
    ``estimate_ms`` and ``over_estimate``), the measured ``rates``, the load average and the hardware."""
    embeddings = [check_choice("embeddings", e, EMBEDDINGS) for e in embeddings]
    losses = [check_choice("losses", name, REGULARIZERS) for name in losses]
    if not embeddings or not losses:
        raise ValueError(f"embeddings and losses must each name at least one, got {embeddings} and {losses}")
    rounds = check_int("rounds", rounds, 1)
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(check_int("threads", threads, 1))
    try:
        rates = machine_rates()
        load_before = loadavg()
        grid = [(e, name) for e in embeddings for name in losses]
        runs = {c: [] for c in grid}
        for r in range(rounds):
            for e, name in grid if r % 2 == 0 else reversed(grid):
                runs[(e, name)].append(train_step(embedding=e, loss=name, **step))
        shape = {f: step[f] for f in ("n", "d", "k", "batch", "tau") if f in step}
        configs = []
        for (e, name), results in runs.items():
            cost = step_cost(embedding=e, loss=name, **shape)
            ours = [x["lloydlib_ms_per_step"] for x in results]
            est = estimate(cost, rates)
            configs.append(
                {
                    "embedding": e,
                    "loss": name,
                    "lloydlib_ms": _spread(ours),
                    "reference_ms": _spread([x["reference_ms_per_step"] for x in results]),
                    "speedup": _spread([x["speedup"] for x in results]),
                    "cpu_ms": _spread([x["lloydlib_cpu_ms_per_step"] for x in results]),
                    "compiled": all(x["compile"] for x in results),
                    "cost": cost,
                    "estimate_ms": est,
                    "over_estimate": statistics.median(ours) / est,
                    "config": results[0]["config"],
                }
            )
        threads_used = torch.get_num_threads()
    finally:
        torch.set_num_threads(before)
    return {
        "benchmark": "train-step-grid",
        "configs": configs,
        "rounds": rounds,
        "threads": threads_used,
        "rates": rates,
        "load_average": {"before": load_before, "after": loadavg()},
        "hardware": hardware.probe(torch.device("cpu")) | {"torch_threads": threads_used},
    }
