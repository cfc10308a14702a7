"""lloydlib.bench.timing: clocks and summaries of timings."""

import time

import pytest
import torch

from lloydlib import bench
from lloydlib.bench import timing


def test_summarize():
    s = bench.summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s["median_ms"], s["q1_ms"], s["q3_ms"], s["min_ms"], s["n"]) == (3.0, 2.0, 4.0, 1.0, 5)
    assert s["spread"] == pytest.approx(2 / 3)
    assert bench.summarize([7.0])["median_ms"] == 7.0
    with pytest.raises(ValueError, match="at least one"):
        bench.summarize([])


def test_the_cpu_clock_counts_work_not_waiting():
    cpu = torch.device("cpu")
    w0, c0 = timing.clock(cpu, "wall"), timing.clock(cpu, "cpu")
    time.sleep(0.05)
    assert timing.clock(cpu, "wall") - w0 >= 0.05
    assert timing.clock(cpu, "cpu") - c0 < 0.04


def test_loadavg_is_a_number_or_none():
    value = timing.loadavg()
    assert value is None or value >= 0
