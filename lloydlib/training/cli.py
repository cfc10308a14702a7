"""``python -m lloydlib train``: one run, or a sweep over every combination of the values given.

Each :class:`TrainConfig` field is an option taking one or more values (``--seed 0 1 --tau 0.1 1`` trains
4 runs). ``--sweep`` adds a sweep specification: ``FIELD=V1,V2,...`` words (more axes, as the options
are) and JSON (a file ``NAME.json`` or the text itself): an object ``{"field": value or [values], ...}``
is one grid, a list of objects the union of their grids; every grid is combined with the options' axes.
Every value is checked against its field's type before anything trains; errors name the field.
``--executor ray --address auto`` trains the sweep's stacks on a Ray cluster (see
:mod:`lloydlib.training.executors`).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import fields
from pathlib import Path

from .cache import CacheError, cache_dir, lookup
from .config import TrainConfig, check_field, check_field_name, parse_field
from .executors import EXECUTORS
from .sweep import grid, train_many

__all__ = ["main", "read_sweep"]

_FIELDS = [f.name for f in fields(TrainConfig)]


def _option_type(name: str):
    def parse(text: str):
        try:
            return parse_field(name, text)
        except (TypeError, ValueError) as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return parse


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m lloydlib train",
        description="Train learnable transformers on clustering tasks: one run, or a sweep over every "
        "combination of the values given (e.g. --seed 0 1 --tau 0.1 1 trains 4 runs). Finished "
        "runs are cached (see --cache-dir) and skipped; the missing ones train in stacks.",
        epilog="Examples: python -m lloydlib train --d 4 --k 6 --n 64 --steps 500 --embedding OH BN --seed 0 1; "
        "python -m lloydlib train --sweep sweep.json --device cuda --executor ray --address auto",
    )
    for f in fields(TrainConfig):  # each field's help and check are declared once, in TrainConfig
        p.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f.name,
            nargs="+",
            type=_option_type(f.name),
            default=None,
            metavar=f.name.upper(),
            help=f"{f.metadata['help']} (default {f.default}; {f.metadata['role']})",
        )
    p.add_argument(
        "--sweep",
        nargs="+",
        default=[],
        metavar="SPEC",
        help="more axes as FIELD=V1,V2,... words, and/or JSON grids: a file NAME.json or the JSON text, "
        'an object {"field": [values], ...} or a list of such objects (their union)',
    )
    p.add_argument(
        "--cache-dir",
        default=None,
        help="cache root to write results into (default: $LLOYD_CACHE, else ~/.cache/lloydlib)",
    )
    p.add_argument("--executor", choices=EXECUTORS, default="local", help="where the stacks train (default local)")
    p.add_argument(
        "--address",
        default=None,
        help="with --executor ray: the cluster to join ('auto': the one this machine is in; "
        "default: start a local Ray instance)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="local: train this many stacks at a time, in processes; ray: cut the sweep into at least this many tasks",
    )
    p.add_argument("--dry-run", action="store_true", help="list the runs and whether they are cached, train none")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def _json_grids(value, source: str) -> list[dict]:
    objects = value if isinstance(value, list) else [value]
    grids = []
    for i, obj in enumerate(objects):
        where = source if not isinstance(value, list) else f"{source}[{i}]"
        if not isinstance(obj, dict) or not obj:
            raise ValueError(
                f"sweep {where} must be a non-empty JSON object {{field: value or [values]}}, got {json.dumps(obj)[:80]}"
            )
        axes = {}
        for name, values in obj.items():
            values = values if isinstance(values, list) else [values]
            if not values:
                raise ValueError(f"sweep {where}: axis {name!r} is empty")
            try:
                check_field_name(name)
                axes[name] = [check_field(name, v) for v in values]
            except (TypeError, ValueError) as e:
                raise type(e)(f"sweep {where}: {e}") from None
        grids.append(axes)
    return grids


def read_sweep(specs: list[str]) -> tuple[dict, list[dict]]:
    """``--sweep``'s words: (axes of the ``FIELD=V1,V2`` words, the JSON grids); errors name the field.

    Values are checked against their field's type (:func:`~lloydlib.training.config.check_field`).
    """
    axes, grids = {}, []
    for spec in specs:
        text = spec.strip()
        if text.startswith(("{", "[")) or text.endswith(".json"):
            source = "JSON text" if text.startswith(("{", "[")) else spec
            try:
                raw = text if text.startswith(("{", "[")) else Path(spec).read_text()
                value = json.loads(raw)
            except OSError as e:
                raise ValueError(f"sweep file {spec!r} cannot be read: {e.strerror}") from None
            except json.JSONDecodeError as e:
                raise ValueError(f"sweep {source} is not valid JSON: {e}") from None
            grids += _json_grids(value, source)
            continue
        name, sep, values = text.partition("=")
        if not sep:
            raise ValueError(f"sweep {spec!r} must be FIELD=V1,V2,... or JSON (a NAME.json file or the text itself)")
        name = name.strip().replace("-", "_")
        try:
            check_field_name(name)
            if name in axes:
                raise ValueError(f"field {name!r} is given twice in --sweep")
            axes[name] = [parse_field(name, v) for v in values.split(",")]
        except (TypeError, ValueError) as e:
            raise type(e)(f"sweep {spec!r}: {e}") from None
    return axes, grids


def _configs(args) -> list[TrainConfig]:
    axes = {name: getattr(args, name) for name in _FIELDS if getattr(args, name) is not None}
    words, grids = read_sweep(args.sweep)
    for name in words:
        if name in axes:
            raise ValueError(f"field {name!r} is given both as --{name.replace('_', '-')} and in --sweep")
    axes |= words
    configs = {}
    for g in grids or [{}]:
        both = sorted(set(g) & set(axes))
        if both:
            raise ValueError(f"field(s) {both} given both as options and in a --sweep JSON grid: give each once")
        for c in grid(TrainConfig(), **axes, **g):
            configs.setdefault(c.key(), c)
    return list(configs.values())


def main(argv: list[str] | None = None) -> int:
    """Every :class:`TrainConfig` field is an option taking one or more values; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        configs = _configs(args)
    except (TypeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.address is not None and args.executor != "ray":
        print("error: --address needs --executor ray", file=sys.stderr)
        return 2
    root = cache_dir(args.cache_dir)
    varying = [name for name in _FIELDS if len({getattr(c, name) for c in configs}) > 1]
    print(f"{len(configs)} run(s); results in {root / 'runs'}")
    try:
        if args.dry_run:
            for c in configs:
                print(f"  {c.key()}  {'cached ' if lookup(c, [root]) else 'to train'}  {c.label()}")
            return 0
        runs = train_many(
            configs,
            cache_dir=root,
            progress=not args.no_progress,
            workers=args.workers,
            executor=args.executor,
            address=args.address,
        )
    except (ImportError, ValueError, CacheError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{'key':<16}  {'status':<8}  {'val rel loss':>12}  {'seconds':>8}  " + "  ".join(varying))
    for r in runs:
        print(
            f"{r.key:<16}  {r.status:<8}  {r.final_val:12.4f}  {r.info.get('seconds', math.nan):8.1f}  "
            + "  ".join(str(getattr(r.config, v)) for v in varying)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
