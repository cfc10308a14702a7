"""Clocks and summaries of timings.

Timers are ``time.perf_counter`` differences (after ``torch.cuda.synchronize`` on a GPU), or, with
``clock="cpu"``, ``time.process_time`` differences: the CPU time of the process, which on a shared
machine measures the work done rather than the time spent waiting for a core.
"""

from __future__ import annotations

import contextlib
import logging
import os
import statistics
import time

import torch

__all__ = ["CLOCKS", "clock", "summarize", "loadavg", "quiet_logger"]

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
