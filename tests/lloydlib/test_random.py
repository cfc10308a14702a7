"""Tests of lloydlib._random.generator, the one seeded-generator helper: a seeded CPU torch.Generator."""

import numpy as np
import pytest
import torch

import lloydlib as L
from lloydlib._random import generator


def test_same_seed_same_numbers_on_the_cpu():
    g = generator(7)
    assert isinstance(g, torch.Generator) and g.device.type == "cpu"
    assert g.initial_seed() == 7
    a = torch.rand(5, generator=g, dtype=torch.float64)
    assert torch.equal(a, torch.rand(5, generator=generator(7), dtype=torch.float64))
    assert not torch.equal(a, torch.rand(5, generator=generator(8), dtype=torch.float64))
    assert torch.equal(a, torch.rand(5, generator=torch.Generator().manual_seed(7), dtype=torch.float64))


def test_numpy_integer_seeds_are_accepted():
    assert generator(np.int64(3)).initial_seed() == 3
    assert generator(0).initial_seed() == 0


def test_none_draws_fresh_entropy_and_leaves_the_global_generator_alone():
    state = torch.random.get_rng_state()
    a = torch.rand(4, generator=generator(None))
    b = torch.rand(4, generator=generator(None))
    assert not torch.equal(a, b)
    assert torch.equal(state, torch.random.get_rng_state())


def test_seeded_library_draws_are_reproducible():
    # sample_tasks and the reseed policy draw from this generator: the same seed, the same tasks
    X1, C1 = L.sample_tasks(2, 12, 2, 3, seed=5, init="kmeans++")
    X2, C2 = L.sample_tasks(2, 12, 2, 3, seed=5, init="kmeans++")
    assert torch.equal(X1, X2) and torch.equal(C1, C2)


@pytest.mark.parametrize(
    "seed, exc, words",
    [
        (-1, ValueError, ["seed", ">= 0", "-1"]),
        (1.5, TypeError, ["seed", "integer", "float"]),
        ("1", TypeError, ["seed", "integer", "str"]),
        (True, TypeError, ["seed", "integer", "bool"]),
    ],
)
def test_bad_seed_raises_naming_it(seed, exc, words):
    with pytest.raises(exc) as err:
        generator(seed)
    for w in words:
        assert w in str(err.value)
