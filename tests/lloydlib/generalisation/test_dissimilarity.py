"""Tests of lloydlib.generalisation.dissimilarity: the EMD task dissimilarity of Figs. 9 and 19."""

import numpy as np
import pytest
import torch
from scipy.stats import wasserstein_distance

from lloydlib import sample_tasks
from lloydlib.generalisation.dissimilarity import (
    block_summary,
    center_distances,
    emd_cross,
    emd_matrix,
    groups_of,
    task_to_blocks,
)


def tasks(batch=3, n=8, d=2, k=3, seed=0, family="normal"):
    return sample_tasks(batch, n, d, k, family=family, seed=seed, dtype=torch.float64)


def test_center_distances_are_the_sorted_point_center_squared_distances():
    X, C0 = tasks()
    D = center_distances(X, C0)
    assert D.shape == (3, 8 * 3) and D.dtype == np.float64
    brute = sorted(float(((X[1, i] - C0[1, j]) ** 2).sum()) for i in range(8) for j in range(3))
    np.testing.assert_allclose(D[1], brute, rtol=1e-12, atol=1e-15)
    assert np.all(np.diff(D, axis=1) >= 0)


def test_center_distances_accept_float32():
    X, C0 = sample_tasks(2, 5, 2, 2, seed=1)
    assert center_distances(X, C0).dtype == np.float64


def test_emd_matrix_is_symmetric_with_zero_diagonal_and_matches_scipy():
    X, C0 = tasks(batch=4)
    M = emd_matrix(X, C0)
    assert M.shape == (4, 4)
    np.testing.assert_array_equal(M, M.T)
    np.testing.assert_array_equal(np.diag(M), 0.0)
    D = center_distances(X, C0)
    assert M[0, 2] == pytest.approx(wasserstein_distance(D[0], D[2]))
    assert (M[~np.eye(4, dtype=bool)] > 0).all()


def test_emd_is_the_shift_for_shifted_distributions():
    # one point per task, one center: the distance distributions are single values a and b
    X = torch.tensor([[[0.0, 0.0]], [[3.0, 0.0]]], dtype=torch.float64)
    C0 = torch.zeros(2, 1, 2, dtype=torch.float64)
    assert emd_matrix(X, C0)[0, 1] == pytest.approx(9.0)


def test_emd_cross_handles_different_sizes_and_agrees_with_the_matrix():
    X, C0 = tasks(batch=3)
    Y, D0 = tasks(batch=2, n=12, d=3, k=4, seed=5)
    E = emd_cross(X, C0, Y, D0)
    assert E.shape == (3, 2)
    M = emd_matrix(X, C0)
    np.testing.assert_allclose(emd_cross(X, C0, X, C0), M, atol=1e-15)


def test_emd_separates_cauchy_tasks_from_normal_ones():
    Xn, Cn = tasks(batch=4, n=128, d=4, k=4, seed=2)
    Xc, Cc = tasks(batch=4, n=128, d=4, k=4, seed=3, family="cauchy")
    M = emd_matrix(torch.cat([Xn, Xc]), torch.cat([Cn, Cc]))
    labels = ["normal"] * 4 + ["cauchy"] * 4
    groups, S = block_summary(M, labels)
    assert groups == ["normal", "cauchy"]
    assert S[1, 1] < S[0, 1]


def test_block_summary_leaves_out_the_diagonal():
    M = np.array([[0.0, 1.0, 5.0], [1.0, 0.0, 7.0], [5.0, 7.0, 0.0]])
    groups, S = block_summary(M, ["a", "a", "b"])
    assert groups == ["a", "b"]
    assert S[0, 0] == 1.0 and S[0, 1] == 6.0 and S[1, 0] == 6.0
    assert np.isnan(S[1, 1])  # a group of one task has no pair within it
    _, med = block_summary(M, ["a", "a", "b"], reduce="median")
    assert med[0, 1] == 6.0


def test_task_to_blocks_leaves_out_the_task_itself():
    M = np.array([[0.0, 1.0, 5.0], [1.0, 0.0, 7.0], [5.0, 7.0, 0.0]])
    groups, T = task_to_blocks(M, ["a", "a", "b"])
    np.testing.assert_array_equal(T[0], [1.0, 5.0])
    assert np.isnan(T[2, 1]) and T[2, 0] == 6.0
    _, Tm = task_to_blocks(M, ["a", "a", "b"], reduce="mean")
    assert Tm[2, 0] == 6.0


def test_groups_of_keeps_first_seen_order():
    assert groups_of(["b", "a", "b", "c"]) == ["b", "a", "c"]


def test_bad_inputs_name_the_argument():
    X, C0 = tasks()
    with pytest.raises(TypeError, match="X"):
        emd_matrix(X.numpy(), C0)
    with pytest.raises(ValueError, match="C0"):
        emd_matrix(X, C0[:2])
    with pytest.raises(ValueError, match="X"):
        center_distances(X[0], C0)
    with pytest.raises(ValueError, match="square"):
        block_summary(np.zeros((2, 3)), ["a", "b"])
    with pytest.raises(ValueError, match="labels"):
        block_summary(np.zeros((2, 2)), ["a"])
    with pytest.raises(ValueError, match="reduce"):
        task_to_blocks(np.zeros((2, 2)), ["a", "b"], reduce="max")
