"""lloydlib.bench.memory: the CPU peak-memory measure is well defined and deterministic."""

import pytest
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


def test_attention_matrix_bytes():
    assert bench.memory.attention_matrix_bytes(2, 8) == 2 * 64 * 4
    assert bench.memory.attention_matrix_bytes(1, 8, torch.float64) == 64 * 8
    with pytest.raises(ValueError, match="n must be >= 1"):
        bench.memory.attention_matrix_bytes(1, 0)
    with pytest.raises(TypeError, match="dtype must be a torch.dtype"):
        bench.memory.attention_matrix_bytes(1, 8, "float32")


def test_excluded_sizes_are_left_out_of_the_peak():
    def step():
        a = torch.empty(100, 100)  # 40,000 bytes, the "attention matrix"
        b = torch.empty(10, 10)  # 400 bytes
        del a, b

    assert bench.peak_memory(step) >= 40_400
    assert 400 <= bench.peak_memory(step, exclude_nbytes=(40_000,)) < 40_000
    with pytest.raises(ValueError, match="exclude_nbytes must be >= 1"):
        bench.peak_memory(step, exclude_nbytes=(0,))


def test_leaving_out_the_attention_matrices_of_the_reference_form():
    X, C = L.sample_tasks(2, 64, 4, 5, seed=0)
    excl = (bench.memory.attention_matrix_bytes(2, 64),)
    for impl in ("reference", "lloydlib"):
        model = bench.make_model(impl, 4, 5, "OH")

        def step(model=model):
            bench.reference_loss(X, model(X, C)).backward()

        full, without = bench.peak_memory(step), bench.peak_memory(step, exclude_nbytes=excl)
        assert without <= full
        if impl == "reference":  # it keeps several n x n matrices at its peak
            assert without < full - excl[0]
