"""``python -m lloydlib train``: one run, or a sweep over every combination of the values given."""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import fields

from .cache import cache_dir, lookup
from .config import TrainConfig
from .sweep import grid, train_many

__all__ = ["main"]


def _parse_bool(text: str) -> bool:
    t = text.lower()
    if t in ("1", "true", "yes", "on"):
        return True
    if t in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _parse_clip(text: str):
    return None if text.lower() in ("none", "off") else float(text)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m lloydlib train",
        description="Train learnable transformers on clustering tasks: one run, or a sweep over every "
        "combination of the values given (e.g. --seed 0 1 --tau 0.1 1 trains 4 runs). Finished "
        "runs are cached (see --cache-dir) and skipped.",
        epilog="Example: python -m lloydlib train --d 4 --k 6 --n 64 --steps 500 --embedding OH BN --seed 0 1",
    )
    defaults = TrainConfig()
    for f in fields(TrainConfig):
        default = getattr(defaults, f.name)
        kind = _parse_clip if f.name == "clip" else _parse_bool if isinstance(default, bool) else type(default)
        p.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f.name,
            nargs="+",
            type=kind,
            default=[default],
            metavar=f.name.upper(),
            help=f"(default {default})",
        )
    p.add_argument(
        "--cache-dir",
        default=None,
        help="cache root to write results into (default: $LLOYD_CACHE, else ~/.cache/lloydlib)",
    )
    p.add_argument("--workers", type=int, default=1, help="train this many runs at a time, in processes")
    p.add_argument("--dry-run", action="store_true", help="list the runs and whether they are cached, train none")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def main(argv: list[str] | None = None) -> int:
    """Every :class:`TrainConfig` field is an option taking one or more values; returns the exit status."""
    args = _parser().parse_args(argv)
    axes = {f.name: getattr(args, f.name) for f in fields(TrainConfig)}
    try:
        configs = grid(TrainConfig(), **axes)
    except (TypeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    root = cache_dir(args.cache_dir)
    varying = [name for name, v in axes.items() if len(v) > 1]
    print(f"{len(configs)} run(s); results in {root / 'runs'}")
    if args.dry_run:
        for c in configs:
            print(f"  {c.key()}  {'cached ' if lookup(c, [root]) else 'to train'}  {c.label()}")
        return 0
    runs = train_many(configs, cache_dir=root, progress=not args.no_progress, workers=args.workers)
    print(f"{'key':<16}  {'status':<8}  {'val rel loss':>12}  {'seconds':>8}  " + "  ".join(varying))
    for r in runs:
        print(
            f"{r.key:<16}  {r.status:<8}  {r.final_val:12.4f}  {r.info.get('seconds', math.nan):8.1f}  "
            + "  ".join(str(getattr(r.config, v)) for v in varying)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
