"""Clocks and summaries of timings.

Timers are ``time.perf_counter`` differences (after ``torch.cuda.synchronize`` on a GPU), or, with
``clock="cpu"``, ``time.process_time`` differences: the CPU time of the process, which on a shared
machine measures the work done rather than the time spent waiting for a core.

Noise: :func:`median_interval` is a distribution-free confidence interval for the median of repeated
measurements (the sign test's order statistics), which trusts no estimate of spread from a few samples;
:func:`min_reps` is the number of repetitions it needs for a given false-alarm rate, and
:func:`paired_ratios` turns two interleaved series of timings into per-repetition ratios, so that a change
of machine load during the run hits both sides of each ratio alike.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import statistics
import time

import torch

from .._validate import check_scalar

__all__ = [
    "CLOCKS",
    "clock",
    "summarize",
    "loadavg",
    "quiet_logger",
    "torch_threads",
    "paired_ratios",
    "min_reps",
    "median_interval",
    "rank_sum_counts",
    "ratio_interval",
]

CLOCKS = ("wall", "cpu")


def clock(device: torch.device, kind: str = "wall") -> float:
    """Seconds on clock ``kind``: "wall" (``time.perf_counter``) or "cpu" (``time.process_time``: CPU time of
    this process, all threads; it does not count time the process waits for a core). Synchronises a GPU."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() if kind == "wall" else time.process_time()


def summarize(samples_ms) -> dict:
    """Median, quartiles, min and count of timings in ms; ``spread`` = IQR / median (relative noise)."""
    s = sorted(float(x) for x in samples_ms)
    if not s:
        raise ValueError("summarize needs at least one timing, got none")
    q1, med, q3 = statistics.quantiles(s, n=4, method="inclusive") if len(s) > 1 else (s[0], s[0], s[0])
    return {
        "median_ms": med,
        "q1_ms": q1,
        "q3_ms": q3,
        "min_ms": s[0],
        "n": len(s),
        "spread": (q3 - q1) / med if med > 0 else 0.0,
    }


def loadavg() -> float | None:
    """The 1-minute load average (runnable processes; above the core count, timings are contended)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


@contextlib.contextmanager
def quiet_logger(name: str):
    """Raise a logger's level to ERROR for the duration of a block."""
    logger = logging.getLogger(name)
    old = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(old)


@contextlib.contextmanager
def torch_threads(threads: int | None):
    """Run a block with ``torch.set_num_threads(threads)`` (None: leave the count alone), restoring it after.

    One thread makes CPU timings of small layers steadier on a shared machine: with several, a thread that
    waits for a busy core holds up the others at every parallel region."""
    if threads is None:
        yield
        return
    threads = check_scalar("threads", threads, int, min_val=1)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def paired_ratios(numerators, denominators) -> list[float]:
    """Per-repetition ratios a_i / b_i of two equally long series of positive timings (e.g. t_OH / t_BN of
    the same repetition)."""
    a, b = [float(x) for x in numerators], [float(x) for x in denominators]
    if len(a) != len(b) or not a:
        raise ValueError(f"paired_ratios needs two non-empty series of equal length, got {len(a)} and {len(b)}")
    if min(a + b) <= 0:
        raise ValueError(f"paired_ratios needs positive timings, got a minimum of {min(a + b)}")
    return [x / y for x, y in zip(a, b)]


def _binom_cdf_half(j: int, m: int) -> float:
    """P(Bin(m, 1/2) <= j)."""
    return sum(math.comb(m, i) for i in range(j + 1)) / 2**m


def min_reps(alpha: float, outliers: int = 0) -> int:
    """The fewest samples m for which :func:`median_interval` at level ``alpha`` leaves out the ``outliers``
    most extreme samples on each side: P(Bin(m, 1/2) <= outliers) <= alpha / 2. With ``outliers=0`` the
    interval is [min, max] (2 / 2^m <= alpha); with more, that many wild samples on one side cannot move
    it."""
    alpha = check_scalar("alpha", alpha, float, min_val=0, max_val=1, include_boundaries="neither")
    outliers = check_scalar("outliers", outliers, int, min_val=0)
    m = outliers + 1
    while _binom_cdf_half(outliers, m) > alpha / 2:
        m += 1
    return m


def median_interval(samples, alpha: float) -> tuple[float, float]:
    """Distribution-free two-sided confidence interval for the median of the distribution the samples come
    from, at level 1 - ``alpha``.

    With x_(1) <= ... <= x_(m) the sorted samples, the interval is [x_(j), x_(m+1-j)] for the largest j with
    P(Bin(m, 1/2) <= j - 1) <= alpha / 2: the median lies below x_(j) only if fewer than j samples fall
    below it, which for independent samples of a continuous distribution has probability
    P(Bin(m, 1/2) <= j - 1), whatever the distribution (the sign test). So the interval misses the median
    with probability at most ``alpha``, and a check that fails only when the whole interval lies beyond a
    threshold the true median satisfies fails falsely with probability at most ``alpha`` / 2. Raises
    ValueError when there are fewer than :func:`min_reps` (alpha) samples.
    """
    alpha = check_scalar("alpha", alpha, float, min_val=0, max_val=1, include_boundaries="neither")
    s = sorted(float(x) for x in samples)
    m = len(s)
    if m < min_reps(alpha):
        raise ValueError(f"median_interval at alpha={alpha:g} needs at least {min_reps(alpha)} samples, got {m}")
    j = 1
    while _binom_cdf_half(j, m) <= alpha / 2:
        j += 1
    return s[j - 1], s[m - j]


def rank_sum_counts(m: int, n: int) -> list[int]:
    """The exact null distribution of the Mann-Whitney statistic U of samples of sizes ``m`` and ``n``:
    entry u is the number of the C(m + n, m) orderings with U = u (u = 0 .. m n), the coefficients of the
    Gaussian binomial [m + n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i)."""
    m, n = check_scalar("m", m, int, min_val=1), check_scalar("n", n, int, min_val=1)
    c = [0] * (m * n + 1)
    c[0] = 1
    for i in range(1, m + 1):
        for u in range(len(c) - 1, n + i - 1, -1):  # times (1 - q^(n+i)), from the top
            c[u] -= c[u - n - i]
        for u in range(i, len(c)):  # divided by (1 - q^i): a running sum with stride i
            c[u] += c[u - i]
    return c


def ratio_interval(numerators, denominators, alpha: float) -> tuple[float, float, float]:
    """How many times longer the ``numerators`` take than the ``denominators``, from two independent series
    of positive timings (not paired): (estimate, lo, hi), an interval at level 1 - ``alpha``.

    The Hodges-Lehmann estimate and the distribution-free Mann-Whitney interval of the shift between the
    log timings, taken back to ratios: with w the m n pairwise log ratios log a_i - log b_j sorted, the
    interval is [w_(c), w_(m n + 1 - c)] for the largest c with P(U <= c - 1) <= alpha / 2 under the exact
    null distribution (:func:`rank_sum_counts`). If one series is the other's times a factor r, it misses
    r with probability at most ``alpha``. Unlike two intervals of medians compared end to end, a few wild
    samples on one side move only their own pairs: 3 of 27 move 81 of 729 pairs, while
    :func:`median_interval` at a small ``alpha`` takes its ends from the third sample in from either end.
    Raises ValueError for non-positive timings and for series too short for the level (1 / C(m + n, m)
    > ``alpha`` / 2)."""
    alpha = check_scalar("alpha", alpha, float, min_val=0, max_val=1, include_boundaries="neither")
    a, b = [float(x) for x in numerators], [float(x) for x in denominators]
    if not a or not b:
        raise ValueError(f"ratio_interval needs two non-empty series, got {len(a)} and {len(b)} timings")
    if not all(math.isfinite(x) and x > 0 for x in a + b):
        raise ValueError(f"ratio_interval needs positive finite timings, got a minimum of {min(a + b)}")
    m, n = len(a), len(b)
    total = math.comb(m + n, m)
    if 2 > alpha * total:
        raise ValueError(
            f"ratio_interval at alpha={alpha:g} needs series with C(m + n, m) >= {2 / alpha:.3g}, got m={m}, n={n}"
        )
    counts, c, below = rank_sum_counts(m, n), 0, 0
    while c < len(counts) and 2 * (below + counts[c]) <= alpha * total:  # P(U <= c) <= alpha / 2
        below += counts[c]
        c += 1
    w = sorted(math.log(x) - math.log(y) for x in a for y in b)
    return math.exp(statistics.median(w)), math.exp(w[c - 1]), math.exp(w[m * n - c])
