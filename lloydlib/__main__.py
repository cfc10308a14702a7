"""Command line: ``python -m lloydlib bench ...`` and ``python -m lloydlib train ...``."""

from __future__ import annotations

import sys

from .bench import cli as bench_cli
from .training import cli as training_cli

COMMANDS = {
    "bench": (bench_cli.main, "time OH against BN and lloydlib's training step against a reference form"),
    "train": (training_cli.main, "train learnable transformers on clustering tasks (one run or a sweep)"),
}


def main(argv: list[str] | None = None) -> int:
    """Dispatch ``argv`` (default: ``sys.argv[1:]``) to a command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        lines = [f"  {name:<6} {help_}" for name, (_, help_) in COMMANDS.items()]
        print("usage: python -m lloydlib COMMAND [options]\n\ncommands:\n" + "\n".join(lines))
        return 0 if not argv or argv[0] in ("-h", "--help") else 2
    return int(COMMANDS[argv[0]][0](argv[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
