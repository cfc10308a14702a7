"""``python -m lloydlib bench``: OH against BN (Figure 1, Table 1 of the Leaner paper), lloydlib's
training step against the reference form, and many runs stacked against one at a time, printed as a
table or as JSON (``--json``, ``--out FILE``)."""

from __future__ import annotations

import argparse
import json
import sys

import torch

from .._validate import check_int
from ..embeddings import EMBEDDINGS
from ..losses import REGULARIZERS
from .oh_vs_bn import FIGURE1_DS, FIGURE1_KS, TABLE1_KS, grid
from .reference import IMPLEMENTATIONS
from .step import train_step
from .step_grid import train_step_grid
from .sweep import sweep
from .timing import CLOCKS

__all__ = ["main"]


def _ints(text: str):
    return [int(x) for x in text.replace(",", " ").split()]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lloydlib bench", description=__doc__.split("\n")[0].strip("`: "))
    sub = p.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--seed", type=int, default=0)
    common.add_argument("--device", default=None, help="cpu (default) or cuda")
    common.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    common.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    common.add_argument("--out", default=None, help="also write the JSON result to this file")

    t = sub.add_parser("train-step", parents=[common], help="ms per training step: lloydlib vs the reference form")
    t.add_argument("--embedding", default="BN", choices=EMBEDDINGS)
    t.add_argument("--loss", default="NE", choices=REGULARIZERS)
    tg = sub.add_parser(
        "train-step-grid", parents=[common], help="train-step for embeddings x losses, in rounds, against the estimate"
    )
    tg.add_argument("--embeddings", nargs="+", default=["OH", "BN", "NA"], choices=EMBEDDINGS)
    tg.add_argument("--losses", nargs="+", default=["NE", "L2"], choices=REGULARIZERS)
    tg.add_argument("--rounds", type=int, default=3, help="timings of every configuration, in alternating order")
    for parser in (t, tg):
        for name, kind, default in (("n", int, 512), ("d", int, 32), ("k", int, 10), ("batch", int, 32)):
            parser.add_argument(f"--{name}", type=kind, default=default)
        for name, default in (("tau", 0.1), ("dropout", 0.0), ("gamma", 1.0)):
            parser.add_argument(f"--{name}", type=float, default=default)
        parser.add_argument("--warmup", type=int, default=3)
        parser.add_argument("--reps", type=int, default=20)
        parser.add_argument(
            "--compile",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="torch.compile lloydlib's forward and loss (default: on; --no-compile times the eager step)",
        )

    w = sub.add_parser("sweep", parents=[common], help="runs per hour: many runs stacked vs one at a time")
    w.add_argument("--embedding", default="BN", choices=EMBEDDINGS)
    w.add_argument("--loss", default="L2", choices=("NE", "L2"))
    for name, default in (("runs", 40), ("d", 4), ("k", 6), ("n", 32), ("batch", 32), ("steps", 300)):
        w.add_argument(f"--{name}", type=int, default=default)
    w.add_argument("--sequential-runs", type=int, default=None, help="runs trained one at a time (default: all)")
    w.add_argument("--workers", type=int, default=2, help="processes of the one-at-a-time form on a CPU")
    w.add_argument("--per-hour-steps", type=int, default=3000, help="steps of the runs counted per hour")
    w.add_argument("--rounds", type=int, default=5, help="interleaved timings of each form (default 5)")
    w.add_argument(
        "--compile",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="torch.compile the stacked step (default: on)",
    )

    for name, ds, ks, help_ in (
        ("grid", FIGURE1_DS, FIGURE1_KS, "OH vs BN over a (d, k) grid (Figure 1)"),
        ("table1", (32,), TABLE1_KS, "OH vs BN at d=32 (Table 1)"),
    ):
        g = sub.add_parser(name, parents=[common], help=help_)
        g.add_argument("--d", type=_ints, default=list(ds), help=f"dimensions (default {' '.join(map(str, ds))})")
        g.add_argument("--k", type=_ints, default=list(ks), help=f"cluster counts (default {' '.join(map(str, ks))})")
        g.add_argument("--n", type=int, default=1024)
        g.add_argument("--batch", type=int, default=32)
        g.add_argument("--warmup", type=int, default=10)
        g.add_argument("--reps", type=int, default=30)
        g.add_argument("--impl", default="lloydlib", choices=IMPLEMENTATIONS)
        g.add_argument("--no-memory", action="store_true", help="skip the peak-memory measurement")
        g.add_argument(
            "--clock",
            default="wall",
            choices=CLOCKS,
            help="wall-clock time (default) or the process's CPU time (steadier on a shared machine)",
        )
    return p


def _print_grid(result: dict) -> None:
    hw = result["hardware"]
    settings = " ".join(f"{k}={v}" for k, v in result["config"].items() if k not in ("ds", "ks"))
    print(
        f"# {hw['cpu']} | {hw.get('gpu', 'no GPU')} | torch {hw['torch']} | {hw['torch_threads']} threads | {settings}"
    )
    print(
        f"{'d':>4} {'k':>5} {'OH/BN dims':>10} {'fwd OH/BN ms':>16} {'x':>6} {'bwd OH/BN ms':>16} {'x':>6} "
        f"{'eval OH/BN ms':>16} {'x':>6} {'mem OH/BN MB':>16} {'red.':>6}"
    )
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


def _print_train_step_grid(result: dict) -> None:
    hw, r = result["hardware"], result["rates"]
    print(
        f"# {hw['cpu']}, {result['threads']} threads, torch {hw['torch']}; {result['rounds']} rounds; measured "
        f"{r['flops_per_s'] / 1e9:.0f} GFLOP/s (matrix product), {r['bytes_per_s'] / 1e9:.1f} GB/s (copy)"
    )
    print(f"{'config':8} {'lloydlib ms':>20} {'reference ms':>14} {'speed-up':>18} {'estimate ms':>12} {'ratio':>6}")
    for c in result["configs"]:
        o, ref, sp = c["lloydlib_ms"], c["reference_ms"], c["speedup"]
        print(
            f"{c['embedding'] + ' ' + c['loss']:8} {o['median']:7.1f} [{o['min']:5.1f}, {o['max']:5.1f}] "
            f"{ref['median']:14.1f} {sp['median']:6.2f}x [{sp['min']:.2f}, {sp['max']:.2f}] "
            f"{c['estimate_ms']:12.1f} {c['over_estimate']:6.2f}"
        )
    load = result["load_average"]
    if load["before"] is not None:
        print(f"  load average {load['before']:.1f} before, {load['after']:.1f} after")


def _print_train_step(result: dict) -> None:
    c, hw = result["config"], result["hardware"]
    print(f"# {hw['cpu']}, {hw['torch_threads']} threads, torch {hw['torch']}")
    print(
        f"training step, {c['embedding']} n={c['n']} d={c['d']} k={c['k']} batch={c['batch']} "
        f"dropout={c['dropout']} ({c['reps']} interleaved repetitions after {c['warmup']} warm-up)"
    )
    for name in ("lloydlib", "reference"):
        s = result[name]
        print(f"  {name:<9} {s['median_ms']:8.1f} ms/step  (IQR {s['q1_ms']:.1f}-{s['q3_ms']:.1f})")
    print(
        f"  speed-up  {result['speedup']:.2f}x  (median of paired ratios {result['paired_speedup']:.2f}x; "
        f"CPU time {result['lloydlib_cpu_ms_per_step']:.1f} vs {result['reference_cpu_ms_per_step']:.1f} ms, "
        f"{result['cpu_speedup']:.2f}x)"
    )
    print(
        f"  fastest steps {result['lloydlib']['min_ms']:.1f} vs {result['reference']['min_ms']:.1f} ms "
        f"({result['speedup_of_minimums']:.2f}x)"
    )
    load = result["load_average"]
    if load["before"] is not None:
        print(f"  load average {load['before']:.1f} before, {load['after']:.1f} after, on {hw['cpu_cores']} cores")
    if result["compile"]:
        print(f"  torch.compile warm-up {result['compile_warmup_seconds']:.1f} s (excluded)")
    elif result["compile_error"]:
        print(f"  torch.compile failed ({result['compile_error']}); the eager step was timed")


def _print_sweep(result: dict) -> None:
    c, load = result["config"], result["load_average"]
    print(f"# {result['machine']}, {c['torch_threads']} threads")
    print(
        f"{c['runs']} runs {c['embedding']}:{c['loss']} d={c['d']} k={c['k']} n={c['n']} batch={c['batch']}, "
        f"{c['steps']} steps each, rates for runs of {c['per_hour_steps']} steps, {c['rounds']} interleaved round(s)"
    )
    seconds = ", ".join(f"{x:.1f}" for x in result["stacked_seconds"])
    print(f"  stacked        {result['stacked_runs_per_hour']:10.1f} runs/hour (seconds: {seconds})")
    seconds = ", ".join(f"{x:.1f}" for x in result["sequential_seconds"])
    print(
        f"  one at a time  {result['sequential_runs_per_hour']:10.1f} runs/hour (seconds: {seconds}; "
        f"{c['sequential_runs']} runs in {c['workers']} processes)"
    )
    interval = result["ratio_interval"]
    spread = "" if interval is None else f" [{interval[0]:.2f}, {interval[1]:.2f}] at {1 - result['alpha']:.0%}"
    print(
        f"  ratio {result['ratio']:.2f}x{spread} (median of the rounds: "
        + ", ".join(f"{x:.2f}" for x in result["round_ratios"])
        + f"); {result['ratio_with_compile']:.2f}x with the {result['compile_warmup_seconds']:.1f} s compile "
        f"warm-up amortised (compiled: {result['compiled']})"
    )
    if load["before"] is not None:
        print(f"  load average {load['before']:.1f} before, {load['after']:.1f} after")


def _run(args) -> dict:
    if args.command == "sweep":
        return sweep(
            runs=args.runs,
            d=args.d,
            k=args.k,
            n=args.n,
            batch=args.batch,
            embedding=args.embedding,
            loss=args.loss,
            steps=args.steps,
            sequential_runs=args.sequential_runs,
            workers=args.workers,
            compile=args.compile,
            per_hour_steps=args.per_hour_steps,
            rounds=args.rounds,
            seed=args.seed,
            device=args.device,
        )
    if args.command in ("train-step", "train-step-grid"):
        step = dict(
            n=args.n,
            d=args.d,
            k=args.k,
            batch=args.batch,
            tau=args.tau,
            dropout=args.dropout,
            gamma=args.gamma,
            warmup=args.warmup,
            reps=args.reps,
            compile=args.compile,
            seed=args.seed,
            device=args.device,
        )
        if args.command == "train-step":
            return train_step(embedding=args.embedding, loss=args.loss, **step)
        return train_step_grid(embeddings=args.embeddings, losses=args.losses, rounds=args.rounds, **step)
    progress = None if args.json else (lambda row: print(f"  d={row['d']} k={row['k']} done", file=sys.stderr))
    result = grid(
        args.d,
        args.k,
        n=args.n,
        batch=args.batch,
        warmup=args.warmup,
        reps=args.reps,
        impl=args.impl,
        memory=not args.no_memory,
        clock=args.clock,
        seed=args.seed,
        device=args.device,
        progress=progress,
    )
    result["benchmark"] = args.command
    return result


def main(argv: list[str] | None = None) -> int:
    """Run one benchmark from the command line; returns the exit status (2 for a bad argument)."""
    args = _parser().parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(check_int("threads", args.threads, 1))
    try:
        result = _run(args)
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
        _print_train_step(result)
    elif args.command == "train-step-grid":
        _print_train_step_grid(result)
    elif args.command == "sweep":
        _print_sweep(result)
    else:
        _print_grid(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
