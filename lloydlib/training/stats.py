"""Summaries over runs (usually the seeds of one setting), as the book reports them: median curves with
their inter-quartile band, final values, whether two settings' seeds separate, and a bootstrap interval
for the difference of two settings' medians (:func:`median_difference`), on which claims are decided."""

from __future__ import annotations

import math
from dataclasses import fields
from typing import NamedTuple

import numpy as np

from .._validate import check_bool, check_choice, check_int, check_scalar
from .cache import Run
from .config import TrainConfig

__all__ = ["curves", "group", "quartiles", "iqr_relation", "final_values", "MedianDifference", "median_difference"]

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


class MedianDifference(NamedTuple):
    """``estimate`` of median(b) - median(a) (or, paired, the median of b_i - a_i) and its bootstrap
    interval [``low``, ``high``] at confidence ``level``."""

    estimate: float
    low: float
    high: float
    level: float


def _finite_or_inf(name: str, values) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size < 2:
        raise ValueError(f"{name} must hold at least two values (one per seed), got {v.size}")
    if np.isnan(v).any() or (v == -np.inf).any():
        raise ValueError(f"{name} must be numbers or +inf (a diverged run), got {v.tolist()}")
    return v


def _median_diff(a: np.ndarray, b: np.ndarray, axis=-1) -> np.ndarray:
    """median(b) - median(a) along ``axis``; NaN where both medians are +inf (two diverged settings: undefined)."""
    with np.errstate(invalid="ignore"):
        return np.median(b, axis=axis) - np.median(a, axis=axis)


def _bounded(values: np.ndarray, fill: float) -> np.ndarray:
    """``values`` with each undefined entry (NaN: +inf against +inf) read as ``fill``: -inf for a lower bound and
    +inf for an upper one, so that an undefined difference widens the interval and never reads as a number."""
    return np.where(np.isnan(values), fill, values)


def median_difference(
    a, b, *, paired: bool = False, level: float = 0.9, resamples: int = 4000, seed: int = 0
) -> MedianDifference:
    """The difference of two settings' per-seed values ``b - a`` in medians, with a percentile bootstrap
    interval at confidence ``level`` (``resamples`` resamples, drawn from ``seed``: repeatable).

    Unpaired (``paired=False``): median(b) - median(a), resampling each setting's seeds on their own.
    Paired (the runs of seed i of both settings saw the same tasks): the median of b_i - a_i, resampling
    seeds. +inf (a diverged run) is allowed and counts as the largest value. A difference of +inf and +inf (both
    medians, or both runs of a pair, diverged) is undefined: it widens the interval to -inf on the low side and +inf
    on the high one; the paired estimate is the median over the pairs where it is defined, and an estimate left
    undefined (both medians +inf, or every pair) raises a ValueError. A difference whose interval excludes 0
    separates the settings at that confidence.
    """
    a, b = _finite_or_inf("a", a), _finite_or_inf("b", b)
    paired = check_bool("paired", paired)
    level = check_scalar("level", level, min_val=0.0, max_val=1.0, include_boundaries="neither")
    resamples = check_int("resamples", resamples, 100)
    seed = check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    if paired:
        if a.shape != b.shape:
            raise ValueError(f"paired values must have one a and one b per seed, got {a.size} and {b.size}")
        with np.errstate(invalid="ignore"):
            diff = b - a  # NaN where both runs of a pair diverged
        idx = rng.integers(0, diff.size, size=(resamples, diff.size))
        # the estimate over the pairs where the difference is defined; the interval reads the others as -inf, +inf
        est = float(np.nanmedian(diff)) if not np.isnan(diff).all() else math.nan
        boot_low, boot_high = (np.median(_bounded(diff, f)[idx], axis=1) for f in (-np.inf, np.inf))
    else:
        ia = rng.integers(0, a.size, size=(resamples, a.size))
        ib = rng.integers(0, b.size, size=(resamples, b.size))
        est = float(_median_diff(a, b))
        boot = _median_diff(a[ia], b[ib], axis=1)
        boot_low, boot_high = _bounded(boot, -np.inf), _bounded(boot, np.inf)
    if math.isnan(est):
        raise ValueError(
            f"the difference of medians is undefined: a's and b's runs diverged (+inf) together "
            f"(a: {a.tolist()}, b: {b.tolist()}); compare the share of diverged runs instead"
        )
    # the outer order statistics (no interpolation: conservative, and exact with +inf)
    lo = np.quantile(boot_low, (1 - level) / 2, method="lower")
    hi = np.quantile(boot_high, (1 + level) / 2, method="higher")
    return MedianDifference(est, float(lo), float(hi), level)
