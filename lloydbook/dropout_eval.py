"""Trained models scored the way the authors' code scores them: with attention dropout left on.

The authors' attention calls ``F.dropout(attn, p)`` without ``training=``, so its dropout (p = 0.01 in their
scripts) stays on when their models are evaluated (``../shared/papers/kmeans-trf-agreement.md``); this book trains
and evaluates without it. :func:`rescore` scores a stored model once with lloydlib's dropout option
(:class:`lloydlib.model.LearnableTransformer`'s ``dropout``) off and ``repeats`` times with it on, on the same fixed
tasks, so that the differences are the dropout's alone.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

import lloydlib as L
from lloydlib import losses
from lloydlib.model import LearnableTransformer

from .claims.evidence import all_of
from .learning import setting_of

__all__ = ["Rescoring", "rescore", "rescore_runs", "dropout_claim", "dropout_numbers"]


@dataclass(frozen=True)
class Rescoring:
    """Relative losses (Eq. 20, the mean over tasks) of ``R`` models: ``off`` shape (R,), dropout off;
    ``on`` shape (R, repeats), dropout on, one column per scoring."""

    off: np.ndarray
    on: np.ndarray

    @property
    def shift(self) -> np.ndarray:
        """Per model, the mean of the scorings with dropout on minus the score with it off, shape (R,)."""
        return self.on.mean(1) - self.off

    @property
    def spread(self) -> np.ndarray:
        """Per model, the range (max - min) of its scorings with dropout on, shape (R,)."""
        return self.on.max(1) - self.on.min(1)


def _check_int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def rescore(
    model, X: torch.Tensor, C0: torch.Tensor, *, p: float, repeats: int, seed: int, batch: int = 64, baseline=None
):
    """One model's relative loss on tasks ``X`` (B, n, d), ``C0`` (B, k, d): ``(off, on)`` with ``off`` a
    float (dropout off) and ``on`` shape (repeats,), each a scoring with attention dropout of probability
    ``p`` on every head. The masks come from torch's generator seeded with ``seed`` (its state outside is
    left as it was); ``model`` itself is not changed. Tasks go through in chunks of ``batch``. ``baseline``
    (B,) may pass :func:`lloydlib.losses.lloyd_baseline` of the tasks, computed once for several models."""
    if not isinstance(model, LearnableTransformer):
        raise TypeError(f"model must be a lloydlib.model.LearnableTransformer, got {type(model).__name__}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
        raise ValueError(f"p must be a dropout probability in (0, 1), got {p!r}")
    repeats, seed, batch = _check_int("repeats", repeats, 1), _check_int("seed", seed, 0), _check_int("batch", batch, 1)
    scored = copy.deepcopy(model).to(X.dtype)
    baseline = losses.lloyd_baseline(X, C0) if baseline is None else baseline

    def score() -> float:
        with torch.no_grad():
            out = torch.cat([scored(X[i : i + batch], C0[i : i + batch]) for i in range(0, len(X), batch)])
        return float(losses.relative_loss(X, C0, out, baseline=baseline))

    scored.eval()
    off = score()
    scored.dropout = float(p)
    scored.train()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        on = np.array([score() for _ in range(repeats)])
    return off, on


def rescore_runs(runs, *, p: float, repeats: int, tasks: int, seed: int) -> Rescoring:
    """:func:`rescore` for every run of ``runs`` (Runs of one (n, d, k)), on ``tasks`` tasks drawn once at that
    shape from ``seed`` (:func:`lloydlib.sample_tasks`, float32); each model's masks from ``seed + 1 + i``."""
    runs = list(runs)
    if not runs:
        raise ValueError("runs must hold at least one run, got none")
    shapes = {(r.config.n, r.config.d, r.config.k) for r in runs}
    if len(shapes) != 1:
        raise ValueError(f"runs must share one (n, d, k), got {sorted(shapes)}")
    (n, d, k), tasks = shapes.pop(), _check_int("tasks", tasks, 1)
    X, C0 = L.sample_tasks(tasks, n, d, k, seed=_check_int("seed", seed, 0))
    base = losses.lloyd_baseline(X, C0)  # the same tasks for every model
    scored = [
        rescore(r.model, X, C0, p=p, repeats=repeats, seed=seed + 1 + i, baseline=base) for i, r in enumerate(runs)
    ]
    return Rescoring(np.array([s[0] for s in scored]), np.array([s[1] for s in scored]))


def dropout_claim(ch, name: str, prefix: str, cells: dict, *, p, repeats, tasks, seed, fields, missing: str = ""):
    """Decide the row ``<ch.key>-<name>`` (beyond the paper): models trained without dropout score worse with
    attention dropout ``p`` left on (the mean of ``repeats`` scorings) than with it off, in every cell of
    ``cells`` ((embedding, loss) -> the runs of one setting), paired per model on ``tasks`` fixed tasks drawn from
    ``seed``. ``prefix`` opens the statement (where it was decided). With no cells, an open row whose "ours" says
    which models are ``missing``. Returns {cell: :class:`Rescoring`} ({} for an open row)."""
    statement = (
        f"{prefix}Scored with attention dropout p={p:g} left on, as the authors' code scores its models, models "
        f"trained without dropout at the smallest tau have a higher relative validation loss (the mean of {repeats} "
        "scorings) than with it off, for every embedding and regulariser"
    )
    source = "beyond the paper (the authors' code: ../shared/papers/kmeans-trf-agreement.md)"
    row = dict(statement=statement, source=source, paper="mentions no dropout")
    if not cells:
        ch.open(
            name,
            **row,
            decides="python -m lloydbook.record fig10a-paper --budget SECONDS --workers 1, then commit results/recorded/",
            ours=f"the models it scores are not all recorded; missing: {missing}",
        )
        return {}
    drop = {el: rescore_runs(runs, p=p, repeats=repeats, tasks=tasks, seed=seed) for el, runs in cells.items()}
    parts = [ch.judge.lower(f"{e}:{l}", r.off, r.on.mean(1), "off", "on", paired=True) for (e, l), r in drop.items()]
    ch.decide(
        name,
        **row,
        expected=ch.expect(name, list(cells.values())),
        setting=setting_of(list(cells.values()), fields, tasks=tasks),
        evidence=[all_of("dropout on scores worse", parts)],
    )
    return drop


def dropout_numbers(drop: dict) -> dict:
    """What the chapter says of :func:`dropout_claim`'s rescorings ``drop``: the median shift over every model
    (``drop-shift``), the lowest and highest per-cell median (``drop-shift-lo``, ``drop-shift-hi``) and the median
    spread of one model's scorings (``drop-spread``)."""
    if not drop:
        raise ValueError("drop must hold the rescorings of at least one cell, got none")
    cells = [float(np.median(r.shift)) for r in drop.values()]
    return {
        "drop-shift": float(np.median(np.concatenate([r.shift for r in drop.values()]))),
        "drop-shift-lo": min(cells),
        "drop-shift-hi": max(cells),
        "drop-spread": float(np.median(np.concatenate([r.spread for r in drop.values()]))),
    }
