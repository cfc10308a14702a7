"""Record a sweep of the book's registry under a time budget, over many calls (:mod:`lloydlib.training.record`).

    python -m lloydbook.record fig10a-paper --budget 10800 --workers 1 --out results/recorded/cpu-amd-epyc
    python -m lloydbook.record fig10 --where d=4 --scale paper --budget 600 --device cuda --out results/recorded/h200

The sweep's tiers (:func:`lloydbook.sweeps.tiers`, in priority order) train in chunks under the budget into the
run store ``--out`` (default ``results/recorded/<machine>``), resuming from the checkpoints an earlier call left
there. ``scripts/record_gpu_learning.sh`` runs it on a GPU. :func:`problems` names a recorded store that is
damaged or was trained by other code.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from lloydlib import hardware, training
from lloydlib.checks import check_positive
from lloydlib.training.record import Budget, machine_name, record, resolve_device

from . import results, sweeps

__all__ = ["RETRAIN", "problems", "main"]

#: what to do with a recorded store trained by other code (the recorder never re-stamps one)
RETRAIN = "re-certify it (python -m lloydbook.runs recertify) or move it aside and re-train it with"


def problems() -> list[str]:
    """The problems of the recorded stores (:func:`lloydbook.results.recorded_run_dirs`), one line each, as
    ``python -m lloydbook.runs check`` words its own: a damaged store (its error names the file and the command
    that re-trains it) or one trained by other code or another torch; [] when all are sound."""
    out = []
    for root in results.recorded_run_dirs():
        if not training.store.is_store(root):
            continue
        try:
            store = training.RunStore(root, check_code=False)
        except training.StoreError as e:
            out.append(str(e))
            continue
        changes = store.changes()
        if changes:
            out.append(
                f"the recorded run store {root} was trained by other code: {'; '.join(changes)}; {RETRAIN} "
                f"{store.manifest.get('rebuild')}"
            )
    return out


def _where(words) -> dict:
    """``FIELD=VALUE`` words as ``{field: value}``, each value parsed as its TrainConfig field."""
    out = {}
    for word in words:
        name, sep, value = word.partition("=")
        if not sep:
            raise ValueError(f"--where takes FIELD=VALUE words, got {word!r}")
        out[name] = training.config.parse_field(name, value)
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lloydbook.record", description=__doc__.split("\n\n")[0])
    p.add_argument("sweep", help=f"a sweep of the registry: {', '.join(sweeps.SWEEPS)}")
    p.add_argument("--where", nargs="*", default=[], metavar="FIELD=VALUE", help="select the sweep's runs")
    p.add_argument("--scale", default="paper", choices=("ci", "default", "paper"))
    p.add_argument("--budget", type=float, required=True, help="seconds of training at most")
    p.add_argument("--chunk", type=int, default=1000, help="steps a chunk trains before the budget is read")
    p.add_argument("--workers", type=int, default=1, help="processes the stacks are spread over (default 1)")
    p.add_argument("--threads", type=int, default=1, help="torch threads per worker (default 1)")
    p.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cuda when present, else cpu)")
    p.add_argument("--out", default=None, help="the store to add to (default: results/recorded/<machine>)")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        check_positive("budget", args.budget)
        device = resolve_device(args.device)
        where = _where(args.where)
        tiers = sweeps.tiers(args.sweep, args.scale, **where)
        if not tiers:
            raise ValueError(f"--where {' '.join(args.where)} selects no run of the sweep {args.sweep!r}")
        out = args.out or str(Path(results.RECORDED) / machine_name(hardware.probe(torch.device(device))))
        sel = (" --where " + " ".join(args.where) if args.where else "") + (
            "" if args.scale == "paper" else f" --scale {args.scale}"
        )
        rebuild = f"python -m lloydbook.record {args.sweep}{sel} --budget SECONDS --workers N --out {out}"
        budget = Budget(args.budget)
        rec = record(tiers, out, budget, chunk=args.chunk, device=device, group=args.sweep, workers=args.workers,
                     threads=args.threads, rebuild=rebuild)  # fmt: skip
    except (TypeError, ValueError, training.StoreError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps({k: v for k, v in rec.items() if k not in ("chunks", "calls")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
