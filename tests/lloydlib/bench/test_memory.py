"""lloydlib.bench.memory: the CPU peak-memory measure is well defined and deterministic."""

import torch

import lloydlib as L
from lloydlib import bench
from lloydlib.model import LearnableTransformer


def test_peak_memory_is_deterministic_and_grows_with_the_input():
    def step(n):
        X, C = L.sample_tasks(2, n, 4, 5, seed=0)
        model = LearnableTransformer(4, 5, "OH")
        return lambda: bench.lloydlib_loss(X, model(X, C)).backward()

    small, large = step(64), step(256)
    a, b = bench.peak_memory(small), bench.peak_memory(small)
    assert a == b > 0
    assert bench.peak_memory(large) > a
    # a tensor allocated and freed inside counts
    assert bench.peak_memory(lambda: torch.empty(1000, 1000)) >= 4_000_000


def test_memory_live_before_the_step_does_not_count():
    kept = torch.ones(1000, 1000)
    assert bench.peak_memory(lambda: kept.sum()) < 1_000_000
