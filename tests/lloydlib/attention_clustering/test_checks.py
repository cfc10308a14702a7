"""Tests for lloydlib.attention_clustering._checks (head vectors and centroids) and the package's re-exports."""

import pytest
import torch

from lloydlib import attention_clustering as q
from lloydlib.attention_clustering._checks import check_centroids, check_heads


def test_package_reexports_every_public_name():
    from lloydlib.attention_clustering import closed_forms, data, heads, quantizer, sphere

    names = {n for m in (closed_forms, data, heads, quantizer, sphere) for n in m.__all__}
    assert names == set(q.__all__)
    assert all(getattr(q, n) is not None for n in q.__all__)


def test_check_heads():
    X = torch.zeros(3, 5, 4, dtype=torch.float64)
    Lam = torch.ones(2, 4, dtype=torch.float64)
    assert check_heads(Lam, X) is Lam
    assert check_heads(torch.ones(3, 2, 4, dtype=torch.float64), X).shape == (3, 2, 4)
    with pytest.raises(ValueError, match="batch size"):
        check_heads(torch.ones(2, 2, 4, dtype=torch.float64), X)
    with pytest.raises(ValueError, match="dimension d=4"):
        check_heads(torch.ones(2, 3, dtype=torch.float64), X)
    with pytest.raises(TypeError, match="dtype"):
        check_heads(torch.ones(2, 4), X)
    with pytest.raises(ValueError, match="shape"):
        check_heads(torch.ones(4, dtype=torch.float64))


def test_check_centroids():
    mu = torch.eye(4, dtype=torch.float64)[:2]
    assert check_centroids(mu, d=4) is mu
    with pytest.raises(ValueError, match="d=5"):
        check_centroids(mu, d=5)
    with pytest.raises(ValueError, match="K <= d"):
        check_centroids(torch.ones(5, 4, dtype=torch.float64))
    with pytest.raises(TypeError, match="torch.Tensor"):
        check_centroids([[1.0, 0.0]])
