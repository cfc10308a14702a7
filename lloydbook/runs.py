"""The book's run store: ``python -m lloydbook.runs check|verify|build|recertify|train-missing|drift``.

Every run of the stored sweeps of :mod:`lloydbook.sweeps` at ``default`` (which are also the ``ci`` runs) is trained
once and committed under ``results/runs/`` (:mod:`lloydlib.training.store`'s format), with the fingerprint of the
code that trained it. ``check`` (``make test``) says whether the store is this code's and complete; ``verify``
(``make test``) re-trains a sample, at least one run of every shape, for its first :data:`STEPS` steps (recorded
stores under ``results/recorded/<machine>/`` for :data:`GPU_STEPS`) and compares within :data:`TOLERANCE`;
``build`` (``make runs``; ``--keep`` trains only what the store lacks) writes and verifies the store;
``recertify``, after a code change that should leave every run's numbers equal, re-trains a sample whole and
re-stamps the store only if every run agrees (:mod:`lloydlib.training.recertify`); ``train-missing``
(``make book``) trains into the cache what the stacked sweeps at the scale lack; ``drift`` measures the
rounding drift behind :data:`TOLERANCE`.
"""

from __future__ import annotations

import argparse
import json
import secrets
import shutil
import sys
import time
from pathlib import Path

import torch

from lloydlib import hardware, training
from lloydlib.training import recertify_report, verify

from . import book, record, results, sweeps

__all__ = [
    "STEPS",
    "GPU_STEPS",
    "PER_SHAPE",
    "TOLERANCE",
    "RECERTIFY",
    "missing",
    "check",
    "sample",
    "recertify",
    "main",
]

#: steps each sampled run re-trains (48 shapes x 2 runs x 300 steps; the d=32 shapes cost the most)
STEPS = 300
#: steps each sampled GPU run re-trains on the CPU (n = 512: about 10 times a step at n = 32)
GPU_STEPS = 50
#: runs drawn per shape
PER_SHAPE = 2
#: largest relative differences allowed: (step 1, later steps). Measured (``drift``, results/store_drift.json):
#: re-trained as the verification does, the 880 stored runs differ from themselves by at most 2.8e-7 at step 1
#: (float32 rounding) and 2.0e-3 within 300 steps, when rounding flips a discrete choice (a sparsemax support)
#: and the trajectories part by a finite step; two threads (1.6e-3) and the single-run engine of that time
#: (2.0e-3, before ``train`` became a stack of one) no more. The tolerances are 35 and 5 times those.
TOLERANCE = (1e-5, 1e-2)
#: the command that re-certifies the run store after a code change (the stale-store message names it)
RECERTIFY = "python -m lloydbook.runs recertify"


def missing(store, scale: str) -> dict[str, int]:
    """Sweep name -> how many of its runs at ``scale`` the store lacks (only sweeps that lack some)."""
    lack = {name: sum(c not in store for c in cfgs) for name, cfgs in sweeps.stored_configs(scale).items()}
    return {name: n for name, n in lack.items() if n}


def check() -> list[str]:
    """The problems of the checkout's store ([] when it is this code's, this torch's and complete)."""
    try:
        store = results.store()
    except training.StaleStoreError as e:  # named with both ways out, whatever the manifest records
        return [str(training.StaleStoreError(e.path, e.changes, e.runs, e.rebuild, e.recertify or RECERTIFY))]
    except training.StoreError as e:
        return [str(e)]
    if store is None:
        return [f"no run store at {results.store_dir()}: build it with {results.REBUILD}"]
    problems = []
    changes = store.changes()
    if changes:
        problems.append(
            f"the run store {store.root} was trained by other code: {'; '.join(changes)}; rebuild it with "
            f"{results.REBUILD}, or, if the change leaves every run's numbers equal within the verification's "
            f"tolerance, re-certify it with {RECERTIFY}"
        )
    for scale in ("ci", "default"):
        lack = missing(store, scale)
        if lack:
            problems.append(
                f"the run store is incomplete at LLOYD_SCALE={scale}: it lacks "
                + ", ".join(f"{n} runs of {name}" for name, n in lack.items())
                + f"; rebuild it with {results.REBUILD}"
            )
    wanted = {c.key() for cfgs in sweeps.stored_configs("default").values() for c in cfgs}
    extra = [k for k in store.keys() if k not in wanted]
    if extra:
        problems.append(
            f"the run store holds {len(extra)} runs no stored sweep lists (e.g. {store.manifest['runs'][extra[0]]['label']}); "
            f"rebuild it with {results.REBUILD}"
        )
    return problems + record.problems()  # the recorded stores under results/recorded/: damaged or stale


def sample(seed: int) -> list:
    """The stored runs the verification re-trains at ``seed``: :data:`PER_SHAPE` of every shape of the
    checkout's store, then one of every shape of each recorded store (``results/recorded/<machine>``, trained
    on a GPU or a CPU), for :data:`GPU_STEPS` steps; a list of (run, steps, where)."""
    store = results.store()
    picked = [(store.get(c), STEPS, "store") for c in verify.sample(store.configs(), seed, per_shape=PER_SHAPE)]
    for root in results.recorded_run_dirs():
        runs = training.load_runs(root)
        by = {r.key: r for r in runs}
        picked += [(by[c.key()], GPU_STEPS, root.name) for c in verify.sample([r.config for r in runs], seed)]
    return picked


def _verify(seed: int | None) -> int:
    seed = secrets.randbelow(2**31) if seed is None else seed
    t0 = time.time()
    picked = sample(seed)
    return verify.report(
        picked,
        tolerance=TOLERANCE,
        seed=seed,
        command="python -m lloydbook.runs verify",
        rebuild=results.REBUILD,
        since=t0,
    )


def _build(workers: int, cache: str | None, resume: bool, seed: int | None, keep: bool = False) -> int:
    t0 = time.time()
    root = results.ROOT / "_build" / "runs-train" if cache is None else Path(cache)
    if root.exists() and not resume:
        shutil.rmtree(root)
    groups = sweeps.stored_configs("default")
    unique = list(dict.fromkeys(c for cfgs in groups.values() for c in cfgs))
    stores, kept = [], 0
    if keep:
        store = results.store()  # a damaged store raises; a stale one, in train_many (never mixed with new runs)
        if store is not None:
            stores, kept = [store.root], sum(c in store for c in unique)
    print(
        f"make runs: {len(unique)} runs of {len(groups)} sweeps"
        + (f", {kept} kept from the run store, {len(unique) - kept} to train" if keep else "")
        + f" into {root}, {workers} workers"
    )
    runs = {
        r.key: r for r in training.train_many(unique, cache_dir=root, workers=workers, progress=False, stores=stores)
    }
    trained = time.time() - t0
    machines = sorted({r.info.get("hardware", "?") for r in runs.values()})
    manifest = training.write_store(
        results.store_dir(),
        {name: [runs[c.key()] for c in cfgs] for name, cfgs in groups.items()},
        rebuild=results.REBUILD,
        note=f"trained on {'; '.join(machines)}",
        recertify=RECERTIFY,
    )
    size = sum(f["bytes"] for f in manifest["files"].values())
    print(
        f"make runs: trained in {trained:.0f} s; wrote {len(runs)} runs, {size / 1e6:.1f} MB, to {results.store_dir()}"
    )
    return _verify(seed)


def _command(root: Path) -> str:
    """The re-certification command of the store at ``root``: :data:`RECERTIFY`, with ``--store`` unless it
    is the checkout's."""
    default = results.store_dir()
    if default is not None and root.resolve() == default.resolve():
        return RECERTIFY
    try:
        shown = root.resolve().relative_to(results.ROOT)
    except ValueError:
        shown = root.resolve()
    return f"{RECERTIFY} --store {shown}"


def recertify(store=None, *, workers: int = 1, seed: int | None = None, per_shape: int = 1) -> int:
    """Re-certify the store at ``store`` (default: the checkout's) for this code, printing each re-trained run
    and the verdict (:func:`lloydlib.training.recertify_report.report`, with the old code looked for in this
    checkout's git history); returns the exit status (0: the store is this code's now, 1: a run disagreed and
    nothing was re-stamped). Bad arguments raise a ValueError naming the argument."""
    root = results.store_dir() if store is None else Path(store)
    if root is None or not training.store.is_store(root):
        raise ValueError(f"store must be a run store (a folder holding store.json), got {str(root)!r}")
    seed = secrets.randbelow(2**31) if seed is None else seed
    for name, value, least in (("workers", workers, 1), ("per_shape", per_shape, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return recertify_report.report(
        root,
        tolerance=TOLERANCE,
        seed=seed,
        per_shape=per_shape,
        workers=workers,
        command=_command(root),
        repo=results.ROOT,
        rebuild=results.REBUILD,
    )


def _drift(out: str, samples: int) -> int:
    """Re-train samples of the store in two ways and record each way's largest relative differences
    (:func:`lloydlib.training.verify.drift`) in ``out``."""
    cpu = hardware.describe(hardware.probe(torch.device("cpu")))
    (results.ROOT / out).write_text(json.dumps(verify.drift(results.store(), STEPS, samples, cpu), indent=1) + "\n")
    return 0


def _train_missing(scale: str | None, workers: int | None) -> int:
    scale = scale or book.scale()
    stored = sweeps.stored_configs(scale)
    configs = list(dict.fromkeys(c for name, cfgs in stored.items() if sweeps.SWEEPS[name].stacked for c in cfgs))
    store, cache = results.store(), results.cache_dir()
    todo = [c for c in configs if (store is None or c not in store) and training.lookup(c, [cache]) is None]
    workers = workers or book.params("learning", scale)["workers"]
    print(
        f"the book's stacked sweeps: {len(configs)} runs, {len(configs) - len(todo)} in the run store or cache, {len(todo)} to train"
    )
    if todo:
        t0 = time.time()
        training.train_many(todo, cache_dir=cache, workers=workers, progress=False)
        print(f"trained {len(todo)} runs in {time.time() - t0:.0f} s")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lloydbook.runs", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="the store is this code's and complete")
    v = sub.add_parser("verify", help="re-train a sample of the stored runs and compare")
    v.add_argument("--seed", type=int, default=None, help="the sample's seed (default: drawn and printed)")
    b = sub.add_parser("build", help="train every stored run cold and rewrite the store (make runs)")
    b.add_argument("--workers", type=int, default=2)
    b.add_argument("--cache", default=None, help="where the runs train (default: _build/runs-train, wiped first)")
    b.add_argument("--resume", action="store_true", help="keep what --cache already holds")
    b.add_argument("--seed", type=int, default=None, help="the verification's seed")
    b.add_argument(
        "--keep", action="store_true", help="train only the runs the store lacks; read the others from the store"
    )
    r = sub.add_parser("recertify", help="re-train a sample whole and re-stamp a stale store if every run agrees")
    r.add_argument("--store", default=None, help="the store (default: the checkout's, results/runs)")
    r.add_argument("--workers", type=int, default=1, help="processes re-training at once (default 1)")
    r.add_argument("--seed", type=int, default=None, help="the sample's seed (default: drawn and printed)")
    r.add_argument("--per-shape", type=int, default=1, help="runs re-trained per shape (default 1)")
    t = sub.add_parser("train-missing", help="train what the stacked sweeps at the scale lack into the cache")
    t.add_argument("--scale", choices=book.SCALE_NAMES, default=None, help="default: $LLOYD_SCALE")
    t.add_argument("--workers", type=int, default=None)
    d = sub.add_parser("drift", help="measure the rounding drift behind the verification's tolerance")
    d.add_argument("--out", default="results/store_drift.json")
    d.add_argument("--samples", type=int, default=3, help="samples of one run per shape")
    args = parser.parse_args(argv)
    if args.command == "check":
        problems = check()
        for p in problems:
            print(f"run store: {p}", file=sys.stderr)
        if not problems:
            store = results.store()
            print(
                f"run store {store.root}: {len(store)} runs, {store.size_bytes() / 1e6:.1f} MB, this code's, complete"
            )
        return 1 if problems else 0
    if args.command == "verify":
        return _verify(args.seed)
    if args.command == "build":
        return _build(args.workers, args.cache, args.resume, args.seed, args.keep)
    if args.command == "drift":
        return _drift(args.out, args.samples)
    if args.command == "recertify":
        try:
            return recertify(args.store, workers=args.workers, seed=args.seed, per_shape=args.per_shape)
        except ValueError as e:
            parser.error(str(e))
    return _train_missing(args.scale, args.workers)


if __name__ == "__main__":
    sys.exit(main())
