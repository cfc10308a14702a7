"""Train the book's sweeps before the chapters run: ``python -m lloydbook.pretrain`` (``make book`` and
``make test`` call it).

Each chapter trains its own sweeps through the shared cache (:func:`lloydbook.learning.train_grid`), so it
stays self-contained on Colab. In a full build they would train one chapter at a time, and at the end of
each sweep one of the training processes waits while the other finishes the last stack. Trained here
first, as one sweep, the stacks of all chapters share the workers; the chapters then read every run from
the cache (their "trained now" counts are 0). The runs are the same configs as the chapters' (the
learning chapters' sweeps are :func:`lloydbook.learning.paper_sweeps` at the scale's settings, the
families chapter's grid is below, the lemmas chapter's race is :func:`lloydbook.lemmas.race_configs`),
so nothing trains twice. Fig. 17's runs time single runs: their
chapter trains them.
"""

from __future__ import annotations

import argparse
import sys
import time

from lloydlib import training
from lloydlib.training.sweep import plan

from . import book, lemmas, results
from .learning import paper_sweeps, sweep_configs

__all__ = ["book_configs", "main"]


def book_configs(scale: str | None = None) -> list[training.TrainConfig]:
    """Every stacked run the chapters train at ``scale`` (default: ``$LLOYD_SCALE``), each once, in
    chapter order: chapter 04's tau grid (Fig. 10 at the scale's ``tau_ds``), chapter 05's sweeps (Figs.
    14, 11, 13, 15), chapter 07's family sweep and chapter 09's OH-against-BN race."""
    p = book.params("learning", scale)
    configs = []
    for name, specs, unstacked in paper_sweeps(p):
        kept = [(base, axes) for base, axes in specs if not name.startswith("Fig. 10") or base.d in p["tau_ds"]]
        if not unstacked:
            configs += sweep_configs(kept)
    f = book.params("families", scale)
    configs += training.grid(
        training.TrainConfig(**f["base"]),
        family=f["families"],
        tau=f["taus"],
        embedding=f["embeddings"],
        loss=f["losses"],
        seed=f["seeds"],
    )
    configs += lemmas.race_configs(book.params("lemmas", scale))
    return list(dict.fromkeys(configs))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lloydbook.pretrain", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", choices=book.SCALE_NAMES, default=None, help="default: $LLOYD_SCALE")
    parser.add_argument("--workers", type=int, default=None, help="training processes (default: the scale's)")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and train nothing")
    args = parser.parse_args(argv)
    configs = book_configs(args.scale)
    workers = args.workers or book.params("learning", args.scale)["workers"]
    cache = results.use_cache()
    missing = [c for c in configs if training.lookup(c, [cache]) is None]
    stacks = plan(missing, workers) if missing else []
    print(
        f"the book's sweeps: {len(configs)} runs, {len(missing)} not in {cache}; {len(stacks)} stacks, {workers} workers"
    )
    if args.dry_run or not missing:
        return 0
    t0 = time.time()
    training.train_many(missing, cache_dir=cache, workers=workers, progress=False)
    print(f"trained {len(missing)} runs in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
