"""Train a registry sweep under a time budget and record it as a run store (``scripts/record_gpu_learning.sh``).

    python -m lloydbook.gpu_record fig10 --where d=4 --scale paper --budget 600 --out results/gpu/h200

A device is lent for minutes, a paper-scale sweep takes longer: the sweep's stacks (:func:`lloydlib.training.sweep.plan`,
sized by the GPU's free memory) train one after the other, each in chunks of ``chunk`` steps
(:func:`lloydlib.training.train_stack` with ``stop_at``), and a chunk starts only when the time it is expected to
take (the slowest chunk so far, times a safety factor) fits in what is left of the budget. So some stacks finish
and the rest stop at a chunk boundary, with their checkpoints on disk: nothing trained is lost. The finished runs
are written as a run store at ``out`` (the format of :mod:`lloydlib.training.store`, their hardware named in each
run); the unfinished ones leave ``out/checkpoints/runs/<key>/checkpoint.pt``, which a later call with the same
``out`` resumes. ``out/record.json`` says what was trained, how long it took and what is left. TF32 is off.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from lloydlib import training
from lloydlib.checks import check_int, check_positive
from lloydlib.training.sweep import plan

from . import results, sweeps

__all__ = ["Budget", "record", "main"]

#: a chunk starts only if this many times the slowest chunk so far fits in the budget left
SAFETY = 1.5


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
        return self.seconds - (self.clock() - self.start)

    def allows(self, estimate: float | None = None) -> bool:
        """Whether a chunk expected to take ``estimate`` seconds (default: the slowest so far) fits, with
        :data:`SAFETY`; the first chunk of all always starts while time is left."""
        estimate = self.slowest if estimate is None else estimate
        return self.left() > SAFETY * estimate

    def took(self, seconds: float) -> None:
        self.slowest = max(self.slowest, float(seconds))


def record(configs, out, budget: Budget, *, chunk: int = 1000, device=None, group: str = "sweep") -> dict:
    """Train ``configs`` (stacks of :func:`plan`) under ``budget`` in chunks of ``chunk`` steps; write the
    finished runs as a store at ``out`` (group ``group``) and ``out/record.json``; return that record."""
    chunk = check_int("chunk", chunk, 1)
    out = Path(out)
    cache = out / "checkpoints"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    stacks = plan(list(configs), 1)
    finished, unfinished, chunks = {}, [], []
    for stack in stacks:
        todo = [c for c in stack if training.lookup(c, [cache]) is None]
        reached = 0
        while todo:
            steps = max(c.steps for c in todo)
            mark = min(steps, (reached // chunk + 1) * chunk)
            if not budget.allows():
                break
            t0 = budget.clock()
            runs = training.train_stack(todo, cache_dir=cache, device=device, stop_at=mark)
            budget.took(budget.clock() - t0)
            chunks.append(dict(runs=len(todo), to_step=mark, seconds=round(budget.clock() - t0, 3)))
            reached = mark
            todo = [r.config for r in runs if r.status == "partial"]
        unfinished += todo
    for c in configs:
        run = training.lookup(c, [cache])
        if run is not None:
            finished[c.key()] = run
    if finished:
        machines = sorted({r.info.get("hardware", "?") for r in finished.values()})
        training.write_store(
            out,
            {group: list(finished.values())},
            rebuild=f"python -m lloydbook.gpu_record (on the device); {results.REBUILD} for the CPU store",
            note=f"trained on {'; '.join(machines)}; TF32 off",
        )
    rec = dict(
        configs=len(configs),
        stacks=len(stacks),
        finished=len(finished),
        unfinished=len({c.key() for c in unfinished}),
        chunk=chunk,
        chunks=chunks,
        budget_s=budget.seconds,
        spent_s=round(budget.seconds - budget.left(), 3),
        tf32=False,
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "record.json").write_text(json.dumps(rec, indent=1) + "\n")
    return rec


def _where(words) -> dict:
    out = {}
    for word in words:
        name, sep, value = word.partition("=")
        if not sep:
            raise ValueError(f"--where takes FIELD=VALUE words, got {word!r}")
        out[name] = training.config.parse_field(name, value)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m lloydbook.gpu_record", description=__doc__.split("\n\n")[0])
    p.add_argument("sweep", help=f"a sweep of the registry: {', '.join(sweeps.SWEEPS)}")
    p.add_argument("--where", nargs="*", default=[], metavar="FIELD=VALUE", help="select the sweep's runs")
    p.add_argument("--scale", default="paper", choices=("ci", "default", "paper"))
    p.add_argument("--budget", type=float, required=True, help="seconds of training at most")
    p.add_argument("--chunk", type=int, default=1000, help="steps a chunk trains before the budget is read")
    p.add_argument("--device", default=None, help="cuda (default: the configs' device)")
    p.add_argument("--out", required=True, help="the store to write (results/gpu/<machine>)")
    args = p.parse_args(argv)
    try:
        configs = sweeps.configs(args.sweep, args.scale, **_where(args.where))
        rec = record(configs, args.out, Budget(args.budget), chunk=args.chunk, device=args.device, group=args.sweep)
    except (TypeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps({k: v for k, v in rec.items() if k != "chunks"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
