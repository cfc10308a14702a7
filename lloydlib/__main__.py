"""Command line: ``python -m lloydlib bench ...`` and ``python -m lloydlib train ...``."""
from __future__ import annotations

import sys

COMMANDS = {
    "bench": ("lloydlib.bench", "time OH against BN and lloydlib's training step against a reference form"),
    "train": ("lloydlib.training", "train learnable transformers on clustering tasks (one run or a sweep)"),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        lines = [f"  {name:<6} {help_}" for name, (_, help_) in COMMANDS.items()]
        print("usage: python -m lloydlib COMMAND [options]\n\ncommands:\n" + "\n".join(lines))
        return 0 if not argv or argv[0] in ("-h", "--help") else 2
    import importlib
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return int(module.main(argv[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
