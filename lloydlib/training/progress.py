"""How far a recording (:mod:`lloydlib.training.record`) is: runs done of the total, what is left, and its record file.

:class:`Progress` counts the runs of a sweep that the recorded store holds, the steps the unfinished ones have
reached (from their checkpoints), and the time and CPU time the chunks took per run-step (one step of one run
of a stack), from which it estimates what is left: core-hours, and wall hours with the recorder's workers.
Before this call has measured a chunk it uses the rate an earlier call measured (kept in ``record.json``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

__all__ = ["Progress", "read_record", "stack_label", "duration"]


def read_record(path: Path) -> dict:
    """The record an earlier call wrote at ``path`` ({} when there is none, or it cannot be read)."""
    try:
        rec = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return rec if isinstance(rec, dict) else {}


def duration(seconds: float) -> str:
    """``seconds`` in words: ``"42 s"``, ``"3.5 min"`` or ``"2.1 h"``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _values(values) -> str:
    values = list(dict.fromkeys(values))
    if all(isinstance(v, int) for v in values) and len(values) > 2 and values == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}-{values[-1]}"
    return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


def stack_label(stack) -> str:
    """One line naming a stack: its shape, its size, its temperatures and seeds."""
    c = stack[0]
    taus, seeds = _values(s.tau for s in stack), _values(s.seed for s in stack)
    return f"{c.embedding}:{c.loss} d={c.d} k={c.k} n={c.n}, {len(stack)} runs, tau {taus}, seeds {seeds}"


class Progress:
    """The progress of one call over ``configs``: ``held``, the keys the store holds; ``reached``, key -> step
    of each unfinished run's checkpoint; ``previous``, the record of the call before; ``meta``, what the record
    says of this call (group, machine, workers, ...)."""

    def __init__(self, configs, held, reached: dict, previous: dict, meta: dict):
        self.steps = {c.key(): c.steps for c in configs}
        self.done = {k for k in self.steps if k in held}
        self.at_start = len(self.done)
        self.reached = {k: v for k, v in reached.items() if k in self.steps}
        self.previous, self.meta = previous, dict(meta)
        self.started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        self.core, self.wall, self.run_steps = 0.0, 0.0, 0

    def chunk(self, c: dict, keys, step: int) -> None:
        """Count the chunk record ``c``, after which the runs ``keys`` reached ``step``."""
        self.core += c["cpu_seconds"]
        self.wall += c["seconds"]
        self.run_steps += c["run_steps"]
        self.reached.update({k: step for k in keys if k in self.steps})

    def finished(self, held, unfinished: dict | None = None) -> None:
        """The store holds the keys ``held`` now; ``unfinished`` maps the runs left unfinished to their step."""
        self.done |= {k for k in self.steps if k in held}
        self.reached.update({k: s for k, s in (unfinished or {}).items() if k in self.steps})

    def left(self) -> int:
        """Run-steps left: the steps every unfinished run still has to train."""
        return sum(s - self.reached.get(k, 0) for k, s in self.steps.items() if k not in self.done)

    def rate(self) -> dict | None:
        """Core-seconds and wall seconds per run-step, measured this call, else by an earlier call; or None."""
        if self.run_steps:
            return dict(core_s=self.core / self.run_steps, wall_s=self.wall / self.run_steps, measured="this call")
        old = (self.previous.get("estimate") or {}).get("rate")
        return dict(old, measured="an earlier call") if old else None

    def estimate(self) -> dict:
        """What is left: run-steps, and (at :meth:`rate`) core-seconds and wall seconds with the workers."""
        left, rate = self.left(), self.rate()
        out = dict(run_steps_left=left, rate=None if rate is None else {k: rate[k] for k in ("core_s", "wall_s")})
        if rate is not None:
            out.update(
                core_s_left=round(left * rate["core_s"]), wall_s_left=round(left * rate["wall_s"] / self.workers)
            )
            out["measured"] = rate["measured"]
        return out

    @property
    def workers(self) -> int:
        return self.meta.get("workers", 1)

    def partial(self) -> int:
        """Unfinished runs that have trained some steps."""
        return sum(1 for k, s in self.reached.items() if s > 0 and k not in self.done)

    def line(self) -> str:
        """One line: runs done of the total, and the estimate of what is left."""
        e = self.estimate()
        head = (
            f"{len(self.done)} of {len(self.steps)} runs done ({len(self.done) - self.at_start} this call), "
            f"{self.partial()} partly trained; {e['run_steps_left']:,} run-steps left"
        )
        if e["rate"] is None:
            return head + " (no rate measured yet)"
        return head + (
            f": about {duration(e['core_s_left'])} of one core ({e['core_s_left']:,} core-s), "
            f"{duration(e['wall_s_left'])} of wall time with {self.workers} worker(s), at "
            f"{e['rate']['core_s'] * 1e3:.1f} core-ms per run-step (measured {e['measured']})"
        )

    def write(self, path: Path, **extra) -> dict:
        """Write the record of this call so far (and the earlier calls') to ``path``; return it."""
        call = dict(started=self.started, finished_runs=len(self.done) - self.at_start, core_s=round(self.core, 1),
                    wall_s=round(self.wall, 1), machine=self.meta.get("machine"), workers=self.workers)  # fmt: skip
        call.update({k: extra[k] for k in ("budget_s", "spent_s") if k in extra})
        rec = dict(
            self.meta, configs=len(self.steps), finished=len(self.done), unfinished=len(self.steps) - len(self.done)
        )
        rec.update(partial=self.partial(), estimate=self.estimate(), tf32=False)
        rec.update(core_s_total=round(self.previous.get("core_s_total", 0.0) + self.core, 1))
        rec["calls"] = [*self.previous.get("calls", []), call]
        rec.update(extra)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(rec, indent=1) + "\n")
        return rec
