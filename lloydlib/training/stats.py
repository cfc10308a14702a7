"""Summaries over runs (usually the seeds of one setting), as the book reports them: median curves with
their inter-quartile band, final values, and whether two settings' seeds separate."""

from __future__ import annotations

import math
from dataclasses import fields

import numpy as np

from .._validate import check_choice, check_int
from .cache import Run
from .config import TrainConfig

__all__ = ["curves", "group", "quartiles", "iqr_relation", "final_values"]

_METRICS = ("train_loss", "val_rel_loss", "val_loss", "lr", "wall_time")


def curves(runs, metric: str = "val_rel_loss"):
    """Median and inter-quartile range of a history ``metric`` over runs (usually the seeds of one config).

    Returns ``(step, median, q25, q75)``, numpy arrays of shape (evaluations,). A run that diverged
    counts as +inf from its divergence on (so it pulls the quantiles up instead of vanishing).
    """
    runs = list(runs)
    if not runs:
        raise ValueError("runs must hold at least one Run, got none")
    check_choice("metric", metric, _METRICS)
    step = max((r.history["step"] for r in runs), key=len)
    table = np.full((len(runs), len(step)), np.inf)
    for i, r in enumerate(runs):
        v = np.asarray(r.history[metric], dtype=np.float64)
        table[i, : len(v)] = np.where(np.isfinite(v), v, np.inf)
    q25, median, q75 = _quantiles(table, (0.25, 0.5, 0.75))
    return step, median, q25, q75


def _quantiles(table: np.ndarray, qs) -> np.ndarray:
    """numpy's linear quantiles ``qs`` over axis 0 of ``table`` (runs, steps), exact with +inf entries.

    numpy interpolates as ``a + t (b - a)``, which is NaN when ``b`` is +inf and ``t = 0`` or when both
    are +inf; there the value is ``a`` (``t = 0``) or +inf. Elsewhere numpy's numbers are kept as they are.
    """
    with np.errstate(invalid="ignore"):
        out = np.quantile(table, qs, axis=0)
    bad = np.isnan(out)
    if bad.any():
        ordered = np.sort(table, axis=0)
        for i, q in enumerate(qs):
            h = (table.shape[0] - 1) * q
            lo, t = int(np.floor(h)), h - np.floor(h)
            exact = ordered[lo] if t == 0 else np.where(np.isinf(ordered[lo + 1]), np.inf, ordered[lo])
            out[i] = np.where(bad[i], exact, out[i])
    return out


def group(runs, *names: str) -> dict[tuple, list[Run]]:
    """Runs grouped by the values of config fields ``names`` (e.g. the seeds of one setting), in first-seen order."""
    valid = {f.name for f in fields(TrainConfig)}
    for name in names:
        check_choice("names", name, valid)
    out: dict[tuple, list[Run]] = {}
    for r in runs:
        out.setdefault(tuple(getattr(r.config, name) for name in names), []).append(r)
    return out


def quartiles(values) -> tuple[float, float, float]:
    """(first quartile, median, third quartile) of ``values`` (numpy's linear interpolation)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0:
        raise ValueError("values must hold at least one number, got none")
    q25, med, q75 = np.quantile(v, [0.25, 0.5, 0.75])
    return float(q25), float(med), float(q75)


def iqr_relation(a, b) -> str:
    """ "below" when the inter-quartile range of ``a`` lies entirely below that of ``b``, "above" when
    entirely above, "overlap" otherwise: how this book decides whether seeds separate two settings."""
    a25, _, a75 = quartiles(a)
    b25, _, b75 = quartiles(b)
    return "below" if a75 < b25 else "above" if a25 > b75 else "overlap"


def final_values(runs, metric: str = "val_rel_loss", window: int = 1) -> np.ndarray:
    """The mean of the last ``window`` evaluations of ``metric`` of each run, shape (runs,); +inf if diverged."""
    window = check_int("window", window, 1)
    check_choice("metric", metric, _METRICS[:3])
    return np.array([math.inf if r.status == "diverged" else float(np.mean(r.history[metric][-window:])) for r in runs])
