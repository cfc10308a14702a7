"""The book's training sweeps, listed once: every run a chapter trains or reads is a config of one of these.

A :class:`Sweep` is a named grid of :class:`lloydlib.training.TrainConfig` at a scale's settings
(:mod:`lloydbook.scales`). The chapters ask for their runs by name (:func:`runs`, which reads the run store and
the cache and trains only what is missing; :func:`recorded` for a ``recorded`` sweep, which only ``python -m
lloydbook.record`` trains, into ``results/recorded/<machine>``); :func:`paper_sweeps` are the learning chapters'
sweeps at the paper's settings. ``tests/lloydbook/test_sweeps.py`` checks that no chapter trains anything else.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

from lloydlib import training

from . import results
from .scales import params
from .tables import fmt_value

__all__ = [
    "Sweep",
    "SWEEPS",
    "WALL_NS",
    "get",
    "specs",
    "configs",
    "stored_configs",
    "runs",
    "tiers",
    "recorded",
    "recorded_configs",
    "PAPER_SWEEPS",
    "paper_sweeps",
    "select",
    "paper_keys",
    "at_paper",
    "configs_of",
    "sweep_configs",
    "sweep_commands",
]

#: Fig. 17's points per task in the paper
WALL_NS = [256, 512, 1024]


@dataclass(frozen=True)
class Sweep:
    """A named grid of runs: ``specs(params)`` -> ``[(base TrainConfig, axes)]``, its entries in priority order
    (:func:`tiers`), at the settings ``params`` of the chapter key ``settings`` (:func:`lloydbook.scales.params`).
    ``chapter`` is the notebook that trains it first, ``figure`` what it reproduces; ``stacked`` False trains
    every run alone; ``stored`` says whether the run store holds it at ``default`` (else it trains where it
    runs); ``recorded`` says that only ``python -m lloydbook.record`` trains it (:func:`runs` refuses it)."""

    name: str
    chapter: str
    settings: str
    figure: str
    specs: Callable
    stacked: bool = True
    stored: bool = True
    recorded: bool = False


def _base(p) -> training.TrainConfig:
    return training.TrainConfig(**p["base"])


def _shape(p) -> training.TrainConfig:
    return _base(p).replace(steps=p["shape_steps"])


def _wall(p, ns) -> list:
    wall = _base(p).replace(tau=p["wall_tau"], loss="L2", clip=p["wall_clip"], steps=p["wall_steps"])
    return [
        (wall.replace(d=d, k=k), dict(n=ns, embedding=["OH", "BN"], seed=p["wall_seeds"])) for d, k in p["wall_cases"]
    ]


def _recorded_paper(key: str):
    """The specs of a figure at the paper's own setting, the same at every scale (``p[key]``, as
    ``fig10a_paper``): one grid of embeddings x losses at its base per tier, the tiers in priority order."""

    def specs(p) -> list:
        q = p[key]
        base = training.TrainConfig(**q["base"])
        grid = [{**{f: v for f, v in t.items() if f != "seed"}, "embedding": q["embeddings"], "loss": q["losses"],
                 "seed": t["seed"]} for t in q["tiers"]]  # fmt: skip
        return [(base, axes) for axes in grid]

    return specs


def _race(p) -> list:
    base = training.TrainConfig(
        d=p["tr_d"], k=p["tr_k"], n=p["tr_n"], loss="NE", tau=0.1, lr=0.01, batch=32, steps=p["tr_steps"],
        plateau=False, val_tasks=p["tr_val"], eval_every=p["tr_every"], device="cpu",
    )  # fmt: skip
    return [(base, dict(embedding=["OH", "BN"], seed=p["tr_seeds"]))]


_LIST = (
    Sweep(
        "fig10", "04_learning", "learning", "Figs. 2a and 10: temperature, embedding and regulariser",
        lambda p: [(_base(p), dict(d=p["tau_ds"], tau=p["taus"], embedding=p["embeddings"], loss=p["losses"],
                                   seed=p["seeds"]))],
    ),
    Sweep(
        "fig10b", "04_learning", "learning", "Fig. 10b: temperature, embedding and regulariser at the paper's d=32",
        lambda p: [(_base(p).replace(steps=p["tau_b_steps"]), dict(d=p["tau_b_ds"], tau=p["taus"],
                                                                   embedding=p["embeddings"], loss=p["losses"],
                                                                   seed=p["seeds"]))],
    ),
    Sweep(
        "fig10a-paper", "04_learning", "learning", "Figs. 2a and 10a at the paper's own setting (n=512, 10,000 steps)",
        _recorded_paper("fig10a_paper"), stored=False, recorded=True,
    ),
    Sweep(
        "fig17", "04_learning", "learning", "Fig. 17: wall-clock training, one run at a time",
        lambda p: _wall(p, [p["wall_n"]]), stacked=False, stored=False,
    ),
    Sweep(
        "cli", "04_learning", "learning", "the command-line demonstration",
        lambda p: [(_base(p).replace(steps=p["cli_steps"]), dict(embedding=["OH", "BN"], seed=p["seeds"][:1]))],
        stored=False,
    ),
    Sweep(
        "fig14", "05_shapes", "learning", "Figs. 2b and 14: dimension",
        lambda p: [(_shape(p), dict(d=p["ds"], tau=p["d_taus"], embedding=p["d_embeddings"], loss=p["losses"],
                                    seed=p["seeds"]))],
    ),
    Sweep(
        "fig11", "05_shapes", "learning", "Fig. 11: learning rate",
        lambda p: [(_base(p).replace(steps=p["lr_steps"]), dict(d=p["lr_ds"], lr=p["lrs"], embedding=p["lr_embeddings"],
                                                               loss=p["sub_losses"], seed=p["lr_seeds"]))],
    ),
    Sweep(
        "fig11a-paper", "05_shapes", "learning", "Fig. 11a at the paper's own setting (d=4, 5,000 steps)",
        _recorded_paper("fig11a_paper"), stored=False, recorded=True,
    ),
    Sweep(
        "fig13", "05_shapes", "learning", "Fig. 13: points per task",
        lambda p: [(_shape(p), dict(n=p["ns"], embedding=p["n_embeddings"], loss=p["sub_losses"], seed=p["n_seeds"]))],
    ),
    Sweep(
        "fig13a-paper", "05_shapes", "learning", "Fig. 13a at the paper's own n of 128, 256 and 512 (10,000 steps)",
        _recorded_paper("fig13a_paper"), stored=False, recorded=True,
    ),
    Sweep(
        "fig15", "05_shapes", "learning", "Fig. 15: clusters per task",
        lambda p: [(_shape(p).replace(d=d, tau=t), dict(k=p["ks"], embedding=p["embeddings"], loss=p["sub_losses"],
                                                        seed=p["k_seeds"])) for d, t in p["k_cases"]],
    ),
    Sweep(
        "fig15a-paper", "05_shapes", "learning", "Fig. 15b at the paper's own setting (n=512, 10,000 steps)",
        _recorded_paper("fig15a_paper"), stored=False, recorded=True,
    ),
    Sweep(
        "fig6", "06_many_steps", "steps", "Figs. 6, 7 and 12: the models evaluated for many steps and new inputs",
        lambda p: [(training.TrainConfig(**p["models"]["base"]),
                    dict(embedding=p["models"]["embeddings"], loss=p["models"]["losses"], seed=p["models"]["seeds"]))],
        stored=False,
    ),
    Sweep(
        "families", "07_families", "families", "Figs. 4, 8 and 18: task families",
        lambda p: [(_base(p), dict(family=p["families"], tau=p["taus"], embedding=p["embeddings"], loss=p["losses"],
                                   seed=p["seeds"]))],
    ),
    Sweep(
        "families-na", "07_families", "families", "Fig. 16: task families, NA (the raw embedding)",
        lambda p: [(_base(p), dict(family=p["families"], tau=p["taus"], embedding=["NA"], loss=p["losses"],
                                   seed=p["seeds"]))],
    ),
    Sweep("race", "09_lemmas", "lemmas", "Theorem 3.1's prediction: OH trains faster than BN", _race),
)  # fmt: skip
#: the registry: name -> :class:`Sweep`, in the order the chapters train them
SWEEPS: dict[str, Sweep] = {s.name: s for s in _LIST}


def get(name: str) -> Sweep:
    """The sweep ``name``; a ValueError listing the registry otherwise."""
    if name not in SWEEPS:
        raise ValueError(f"name must be one of the book's sweeps {list(SWEEPS)}, got {name!r}")
    return SWEEPS[name]


def specs(name: str, scale: str | None = None) -> list:
    """``[(base config, axes)]`` of the sweep ``name`` at ``scale`` (default: ``$LLOYD_SCALE``)."""
    sweep = get(name)
    return sweep.specs(params(sweep.settings, scale))


def select(configs, **where) -> list:
    """The configs whose fields equal ``where`` (field -> value, or a list of allowed values)."""
    for field in where:
        training.config.check_field_name(field)
    allowed = {f: v if isinstance(v, (list, tuple)) else [v] for f, v in where.items()}
    return [c for c in configs if all(getattr(c, f) in vs for f, vs in allowed.items())]


def tiers(name: str, scale: str | None = None, **where) -> list[list]:
    """The configs of the sweep ``name`` at ``scale`` in priority order: one list per entry of its specs, in
    grid order (the last axis fastest), without the configs an earlier entry holds; with ``where``, only those
    matching (see :func:`select`); empty lists left out."""
    seen, out = set(), []
    for base, axes in specs(name, scale):
        tier = [c for c in dict.fromkeys(training.grid(base, **axes)) if c not in seen]
        seen.update(tier)
        tier = select(tier, **where)
        if tier:
            out.append(tier)
    return out


def configs(name: str, scale: str | None = None, **where) -> list:
    """Every config of the sweep ``name`` at ``scale``, each once: its :func:`tiers` one after the other."""
    return [c for tier in tiers(name, scale, **where) for c in tier]


def stored_configs(scale: str = "default") -> dict[str, list]:
    """Sweep name -> its configs at ``scale``, for the sweeps the run store holds, each run listed under
    every sweep that holds it."""
    return {name: configs(name, scale) for name, s in SWEEPS.items() if s.stored}


def runs(name: str, *, scale: str | None = None, progress: bool = False, **where) -> list:
    """The runs of the sweep ``name`` (at ``scale``; with ``where``, those matching), in grid order: read from
    the checkout's run store or a recorded store (``results/recorded/<machine>``), else from the training
    cache, else trained now (in the settings' ``workers`` processes, stacked unless the sweep is not). Prints
    where they came from. A ``recorded`` sweep raises a ValueError that says to read it with :func:`recorded`."""
    sweep = get(name)
    if sweep.recorded:
        raise ValueError(
            f"name {name!r} is a recorded sweep, which no chapter trains: read its recorded runs (and the configs "
            f"still missing) with sweeps.recorded({name!r}); python -m lloydbook.record {name} --budget SECONDS "
            f"--out results/recorded/<machine> trains it"
        )
    cfgs = configs(name, scale, **where)
    if not cfgs:
        raise ValueError(f"where={where} selects no run of the sweep {name!r}")
    p = params(sweep.settings, scale)
    store = results.store()
    cache = results.cache_dir()
    # runs recorded on other machines (stores of the same format) serve their configs too
    gpu = [d for d in results.recorded_run_dirs() if training.store.is_store(d)]
    in_store = 0 if store is None else sum(c in store for c in cfgs)
    in_cache = sum(c not in (store or ()) and training.cache.has(c, [cache]) for c in cfgs)  # read once, below
    t0 = time.time()
    out = training.train_many(
        cfgs,
        cache_dir=cache,
        stores=([] if store is None else [store.root]) + gpu,
        workers=p.get("workers", 1),
        stack=sweep.stacked,
        progress=progress,
    )
    new = len(cfgs) - in_store - in_cache
    print(
        f"{name} ({sweep.figure}): {len(out)} runs, {in_store} from the run store, {in_cache} from the cache, "
        f"{new} trained now ({time.time() - t0:.0f} s)"
    )
    return out


def recorded(name: str, *, scale: str | None = None, **where) -> tuple[list, list]:
    """``(runs, missing)``: the runs of the sweep ``name`` (at ``scale``; with ``where``, those matching) that
    a recorded store under ``results/recorded/`` holds (the first machine folder, in name order, that holds a
    config serves it), in the sweep's priority order, and the configs that none holds. Trains nothing. A
    recorded store trained by other code raises :class:`lloydlib.training.StaleStoreError`, a damaged one
    :class:`lloydlib.training.StoreError`."""
    cfgs = configs(name, scale, **where)
    if not cfgs:
        raise ValueError(f"where={where} selects no run of the sweep {name!r}")
    return recorded_configs(cfgs)


def recorded_configs(cfgs) -> tuple[list, list]:
    """``(runs, missing)`` of the configs ``cfgs`` as :func:`recorded` reads them from ``results/recorded/``."""
    dirs = results.recorded_run_dirs()
    found = [(c, training.lookup(c, dirs) if dirs else None) for c in cfgs]
    return [r for _, r in found if r is not None], [c for c, r in found if r is None]


#: the learning chapters' sweeps in the order a GPU should train them at the paper's settings
PAPER_SWEEPS = ("fig10", "fig10b", "fig14", "fig11", "fig13", "fig15", "fig17")


def paper_sweeps(p=None) -> list[tuple[str, list, bool]]:
    """The learning chapters' sweeps at the paper's settings ``p`` (default ``params("learning", "paper")``),
    in the order a GPU should train them (:data:`PAPER_SWEEPS`): ``(name, [(base config, axes)], unstacked)``.
    ``fig17`` spans the paper's :data:`WALL_NS` (it times single runs, so it trains unstacked)."""
    p = params("learning", "paper") if p is None else p
    return [
        (name, _wall(p, WALL_NS) if name == "fig17" else get(name).specs(p), not get(name).stacked)
        for name in PAPER_SWEEPS
    ]


def sweep_configs(specs) -> list:
    """Every config of a sweep's ``[(base config, axes)]``, in order."""
    return [c for base, axes in specs for c in training.grid(base, **axes)]


def sweep_commands(specs, unstacked: bool, cache: str) -> list[str]:
    """The shell commands that train a sweep's ``[(base config, axes)]`` into the cache root ``cache``:
    one ``python -m lloydlib train`` sweep per entry, or, ``unstacked``, shell loops of one-run command
    lines (the command line stacks the runs it is given)."""
    tail = f" --cache-dir {cache}"
    if not unstacked:
        return [training.command(b, **axes) + tail for b, axes in specs]
    out = []
    for b, axes in specs:
        loops = "".join(f"for {f} in {' '.join(fmt_value(v) for v in vs)}; do " for f, vs in axes.items())
        opts = "".join(f" --{f.replace('_', '-')} ${f}" for f in axes)
        out.append(loops + training.command(b) + opts + tail + "; done" * len(axes))
    return out


@functools.cache
def paper_keys() -> frozenset:
    """The cache keys of every config of the book's sweeps at ``paper`` and of :func:`paper_sweeps`."""
    cfgs = [c for name in SWEEPS for c in configs(name, "paper")]
    cfgs += [c for _, entries, _ in paper_sweeps() for c in sweep_configs(entries)]
    return frozenset(c.key() for c in cfgs)


def configs_of(runs) -> list:
    """The configs of ``runs``: a run (its ``.config``), a config, or a list, tuple or dict of them, nested."""
    if isinstance(runs, dict):
        runs = list(runs.values())
    if not isinstance(runs, (list, tuple)):
        return [getattr(runs, "config", runs)]
    return [c for r in runs for c in configs_of(r)]


def at_paper(runs) -> bool:
    """Whether every run (or config) of ``runs`` (see :func:`configs_of`) is at the paper's setting: a config of
    the book's sweeps at ``paper`` (execution fields, such as the device, aside)."""
    cfgs = configs_of(runs)
    if not cfgs:
        raise ValueError("runs must hold at least one run or TrainConfig, got none")
    bad = [type(c).__name__ for c in cfgs if not isinstance(c, training.TrainConfig)]
    if bad:
        raise TypeError(f"runs must hold runs (with a .config) or TrainConfigs, got {bad[0]}")
    keys = paper_keys()
    return all(c.key() in keys for c in cfgs)
