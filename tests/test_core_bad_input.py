"""Bad input to every public core function raises ValueError/TypeError naming the argument."""
import math

import pytest
import torch

import lloydlib as L
from lloydlib.attention import attention_weights, distance_attention

X = torch.rand(2, 10, 3)
C = torch.rand(2, 4, 3)
I3 = torch.eye(3)


def nan_points():
    Y = X.clone()
    Y[0, 0, 0] = float("nan")
    return Y


def inf_centers():
    Y = C.clone()
    Y[1, 0, 2] = float("inf")
    return Y


BAD_CALLS = [
    # (callable, exception, words that must appear in the message)
    (lambda: L.sample_tasks(0, 10, 2, 3), ValueError, ["batch", ">= 1", "0"]),
    (lambda: L.sample_tasks(2, 10, 2, 11), ValueError, ["k", "n", "11"]),
    (lambda: L.sample_tasks(2, 10, 2, 0), ValueError, ["k", ">= 1", "0"]),
    (lambda: L.sample_tasks(2, 10, 0, 3), ValueError, ["d", ">= 1"]),
    (lambda: L.sample_tasks(2, 10, 2, 3, family="uniform"), ValueError, ["family", "uniform", "normal"]),
    (lambda: L.sample_tasks(2, 10, 2, 3, init="best"), ValueError, ["init", "best"]),
    (lambda: L.sample_tasks(2, 10, 2, 3, scale=-1.0), ValueError, ["scale", "-1"]),
    (lambda: L.sample_tasks(2.5, 10, 2, 3), TypeError, ["batch", "integer", "float"]),
    (lambda: L.sample_tasks(2, 10, 2, 3, dtype=torch.int64), TypeError, ["dtype", "int64"]),
    (lambda: L.init_centers(X, 11), ValueError, ["k", "n"]),
    (lambda: L.lloyd_step(X[0], C), ValueError, ["X", "3 dimensions", "(10, 3)"]),
    (lambda: L.lloyd_step(X, C[:1]), ValueError, ["C", "batch"]),
    (lambda: L.lloyd_step(X, torch.rand(2, 4, 2)), ValueError, ["C", "d=2", "d=3"]),
    (lambda: L.lloyd_step(X, torch.rand(2, 11, 3)), ValueError, ["k=11", "n=10"]),
    (lambda: L.lloyd_step(X, torch.rand(2, 0, 3)), ValueError, ["C", "k >= 1", "k=0"]),
    (lambda: L.lloyd_step(nan_points(), C), ValueError, ["X", "finite", "NaN"]),
    (lambda: L.lloyd_step(X, inf_centers()), ValueError, ["C", "finite"]),
    (lambda: L.lloyd_step(X.long(), C), TypeError, ["X", "floating-point", "int64"]),
    (lambda: L.lloyd_step(X, C.double()), TypeError, ["dtype", "float64"]),
    (lambda: L.lloyd_step(X, C, empty="drop"), ValueError, ["empty", "drop", "keep"]),
    (lambda: L.lloyd(X, C, -1), ValueError, ["steps", ">= 0"]),
    (lambda: L.lloyd(X, C, 2.0), TypeError, ["steps", "integer"]),
    (lambda: L.kmeans_objective([[0.0]], C), TypeError, ["X", "torch.Tensor", "list"]),
    (lambda: L.assign(X, C.numpy()), TypeError, ["C", "torch.Tensor", "ndarray"]),
    (lambda: L.soft_kmeans_step(X, C, 0.0), ValueError, ["beta", "positive"]),
    (lambda: L.code_dim(1, "BN"), ValueError, ["k", ">= 2", "BN", "k=1"]),
    (lambda: L.code_dim(4, "binary"), ValueError, ["embedding", "binary", "BN"]),
    (lambda: L.embedding_dim(0, 4, "BN"), ValueError, ["d", ">= 1"]),
    (lambda: L.embed_points(X, 0, "OH"), ValueError, ["k", ">= 1"]),
    (lambda: L.embed_centers(torch.rand(2, 1, 3), "BN"), ValueError, ["k", ">= 2", "BN"]),
    (lambda: attention_weights(X, C, I3, I3, -1.0), ValueError, ["gamma", "positive"]),
    (lambda: attention_weights(X, C, I3, I3, float("nan")), ValueError, ["gamma", "nan"]),
    (lambda: attention_weights(X, C, torch.eye(4), torch.eye(4)), ValueError, ["Q", "d_emb=3"]),
    (lambda: attention_weights(X, C, I3, torch.eye(3)[:2]), ValueError, ["K", "shape"]),
    (lambda: attention_weights(X, C[:1], I3, I3), ValueError, ["batch size"]),
    (lambda: attention_weights(X, torch.rand(2, 4, 5), I3, I3), ValueError, ["Zp", "d_emb=3"]),
    (lambda: attention_weights(X, C, I3, I3, weighting="hard"), ValueError, ["weighting", "hard"]),
    (lambda: distance_attention(X, C, I3, I3, torch.eye(3, 2)), ValueError, ["V", "d_emb=3"]),
    (lambda: L.exact_transformer(3, 4, "NA"), ValueError, ["embedding", "NA"]),
    (lambda: L.exact_transformer(3, 1, "BN"), ValueError, ["k", ">= 2"]),
    (lambda: L.exact_transformer(3, 4, "BN", center_update="linear"), ValueError, ["center_update", "OH"]),
    (lambda: L.exact_transformer(3, 4, "BN", gamma=(1.0, 2.0)), ValueError, ["gamma", "4"]),
    (lambda: L.exact_transformer(3, 4, "BN", gamma=0), ValueError, ["gamma", "positive"]),
    (lambda: L.exact_transformer(3, 4)(X, torch.rand(2, 5, 3)), ValueError, ["C", "k=4", "k=5"]),
    (lambda: L.exact_transformer(2, 4)(X, C), ValueError, ["X", "d=2", "d=3"]),
    (lambda: L.exact_transformer(3, 4).run(X, C, -2), ValueError, ["steps"]),
]


@pytest.mark.parametrize("call,exc,words", BAD_CALLS, ids=[f"bad{i}" for i in range(len(BAD_CALLS))])
def test_bad_input_raises_clear_error(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} missing from error message: {message}"


def test_infinite_gamma_is_accepted_but_not_nan():
    assert L.exact_transformer(3, 4, gamma=math.inf).gammas == (math.inf,) * 4
