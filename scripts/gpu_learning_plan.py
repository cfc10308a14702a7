"""Plan the paper-scale training of the learning chapters on a GPU (it trains nothing).

The chapters "Learning one Lloyd step" (book/04_learning.ipynb) and "Shapes" (book/05_shapes.ipynb) read
paper-scale runs from a recorded store or cache root ``results/recorded/<machine>/`` trained on a GPU and
committed. Their settings are ``SCALES["learning"]["paper"]`` (lloydbook/scales.py). This script lists those sweeps in priority order
(the registry's fig10, fig10b, fig14, fig11, fig13, fig15, fig17), counts each run once (in the first part that has it), reports the runs
already finished under ``--results DIR/<machine>``, and prints each part's ``python -m lloydlib train``
command, its stacks (``lloydlib.training.sweep.plan``) and an estimated GPU time:

    python scripts/gpu_learning_plan.py --dry-run [--machine h200] [--budget-minutes 60] [--results results/recorded]

Time model: a stack of S runs of n points costs ``steps * t_step(n) * max(1, S / 64)`` seconds, with
``t_step(n) = 0.0094 * (n / 512) ** 2`` s per step above n=512 and 0.0094 s at or below (9.4 ms: the measured
H200 step of one run at the paper's settings, launch-bound; a stack of up to 64 runs costs about one run).
Fig. 17 times single runs, so it trains one run at a time (one stack per run): its commands are shell loops
of one-run command lines. Without ``--dry-run`` the script refuses (exit 2): it only plans.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lloydbook.scales import SCALES
from lloydbook.sweeps import paper_sweeps, sweep_commands, sweep_configs
from lloydlib import training
from lloydlib.training.sweep import plan

STEP_SECONDS = 0.0094  # one run's training step on an H200 at n=512 (launch-bound)
STACK_RUNS = 64  # a stack of up to this many runs costs about one run (an assumption: not yet measured on a GPU)
GPU_BYTES = 139 * 2**30  # an H200's memory: the plan sizes the stacks by it (lloydlib.training.sweep.stack_limit)


def t_step(n: int) -> float:
    """Seconds per training step of one stack of n-point tasks."""
    return STEP_SECONDS * max(1.0, (n / 512) ** 2)


def parts(params: dict | None = None) -> list[tuple[str, list[training.TrainConfig], bool]]:
    """(name, configs, unstacked) of every part in priority order (default: the paper's settings)."""
    params = SCALES["learning"]["paper"] if params is None else params
    return [(name, sweep_configs(specs), un) for name, specs, un in paper_sweeps(params)]


def estimate_seconds(configs, unstacked: bool = False) -> float:
    """Estimated GPU seconds to train ``configs`` (see the module's time model)."""
    stacks = [[c] for c in configs] if unstacked else plan(list(configs), workers=1, memory_bytes=GPU_BYTES)
    return sum(max(c.steps for c in s) * t_step(s[0].n) * max(1.0, len(s) / STACK_RUNS) for s in stacks)


def _minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of minutes, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dry-run", action="store_true", help="print the plan (required: this script only plans)")
    p.add_argument("--machine", default="h200", help="machine name: the runs go to RESULTS/MACHINE (default h200)")
    p.add_argument("--budget-minutes", type=_minutes, default=None, help="GPU minutes: mark the parts that fit")
    p.add_argument(
        "--results", default="results/recorded", help="folder of the machines' stores (default results/recorded)"
    )
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if not args.dry_run:
        print("this script only plans; run the printed commands on the GPU machine (see --dry-run)", file=sys.stderr)
        return 2
    root = Path(args.results) / args.machine
    cache = root.as_posix()
    print(f"Plan of the learning chapters' paper-scale runs into {cache} (trains nothing).")
    print(
        "Time model: a stack of S runs of n points costs steps * t_step(n) * max(1, S/64) s, "
        f"t_step(n) = {STEP_SECONDS * 1e3:.1f} ms * max(1, (n/512)^2) (H200 step at the paper's settings); "
        "Fig. 17 trains one run at a time. Stacks are sized by an H200's memory; that a stack of up to 64 "
        "runs costs one run's step is an assumption until `bench sweep --device cuda` is recorded."
    )
    seen, total, fit = set(), 0.0, []
    specs = {name: (s, un) for name, s, un in paper_sweeps(SCALES["learning"]["paper"])}
    for i, (name, configs, unstacked) in enumerate(parts(), 1):
        unique = list({c.key(): c for c in configs if c.key() not in seen}.values())
        seen.update(c.key() for c in configs)
        finished = {c.key() for c in unique if training.lookup(c, [root]) is not None}
        new = [c for c in unique if c.key() not in finished]
        stacks = len(new) if unstacked else len(plan(new, workers=1, memory_bytes=GPU_BYTES))
        seconds = estimate_seconds(new, unstacked)
        total += seconds
        fits = args.budget_minutes is not None and total <= 60 * args.budget_minutes
        if fits and new:
            fit.append(name)
        mark = "" if args.budget_minutes is None else ("  [fits]" if fits else "  [over budget]")
        print(
            f"\n{i}. {name}: {len(configs)} runs ({len(new)} new, {len(finished)} done, "
            f"{len(configs) - len(unique)} in earlier parts), {stacks} stack(s), "
            f"~{seconds / 60:.1f} min (cumulative {total / 3600:.2f} h){mark}"
        )
        for line in sweep_commands(*specs[name], cache):
            print("   " + line)
    print(f"\nTotal: ~{total / 3600:.2f} h of GPU time for the runs not yet done.")
    if args.budget_minutes is not None:
        print(f"\nParts that fit in {args.budget_minutes:g} min: {', '.join(fit) or 'none'}")
        if fit:
            print("set -e")
            for name in fit:
                print(f"# {name}")
                for line in sweep_commands(*specs[name], cache):
                    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
