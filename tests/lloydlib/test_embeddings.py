"""Tests of lloydlib.embeddings: the OH/BN/NA/SC cluster codes and tokens, the codes' distance margin and
the embeddings' norms; bad input raises errors naming the argument."""

import math

import pytest
import torch
from _support import assert_raises_naming

import lloydlib as L
from lloydlib.embeddings import code_margin, code_sqdists, embedding_norms


def test_bn_codes_lsb_first_as_in_the_paper():
    B = L.cluster_codes(6, "BN")
    assert B.T.tolist() == [[0, 1, 0, 1, 0, 1], [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1]]


@pytest.mark.parametrize("k,expected", [(2, 1), (3, 2), (4, 2), (5, 3), (6, 3), (10, 4), (1000, 10), (1024, 10)])
def test_embedding_dims(k, expected):
    assert L.code_dim(k, "BN") == expected
    assert L.embedding_dim(32, k, "BN") == 32 + expected
    assert L.embedding_dim(32, k, "OH") == 32 + k
    assert L.embedding_dim(32, k, "NA") == 32
    assert L.embedding_dim(32, k, "SC") == 33


def test_token_builders():
    X, C = L.sample_tasks(2, 10, 3, 5, seed=0)
    Xb, Cb = L.embed_points(X, 5, "OH"), L.embed_centers(C, "OH")
    assert Xb.shape == (2, 10, 8) and Cb.shape == (2, 5, 8)
    assert bool((Xb[..., 3:] == 0).all()) and torch.equal(Cb[0, :, 3:], torch.eye(5))


@pytest.mark.parametrize("embedding, margin", [("OH", 2.0), ("BN", 1.0), ("SC", 1.0)])
@pytest.mark.parametrize("k", [2, 5, 6, 13, 64])
def test_code_margin_exact(embedding, margin, k):
    assert code_margin(k, embedding) == margin
    D = code_sqdists(k, embedding)
    assert torch.equal(D, D.T) and float(D.diagonal().abs().max()) == 0.0


def test_code_margin_in_low_precision():
    assert code_margin(2048, "SC", dtype=torch.float32, formula="expanded") == 1.0
    assert code_margin(4096, "SC", dtype=torch.float32, formula="expanded") <= 0.0
    assert code_margin(4096, "BN", dtype=torch.float32, formula="expanded") == 1.0
    assert code_margin(64, "BN", dtype=torch.bfloat16, formula="expanded") == 1.0
    assert code_margin(64, "SC", dtype=torch.bfloat16, formula="expanded") < 0.0
    assert math.isnan(code_margin(512, "SC", dtype=torch.float16, formula="expanded"))  # overflow
    assert code_margin(300, "SC", chunk=7) == 1.0  # chunked rows


def test_embedding_norms_and_counts():
    oh, bn, sc = (embedding_norms(8, 10, e) for e in ("OH", "BN", "SC"))
    assert (oh["d_emb"], oh["d_E"]) == (18, 9) and (bn["d_emb"], bn["d_E"]) == (12, 12)
    assert (sc["d_emb"], sc["d_E"], sc["d_E_exact"]) == (9, 8 + 81, 8 + 81)
    assert bn["d_E_exact"] == 8 + 3  # code 7 = 0b111 has the most bits set
    assert sc["exponent"] == pytest.approx(89 / 3)


X = torch.rand(2, 10, 3)

BAD_CALLS = [
    # (callable, exception, words that must appear in the message)
    (lambda: L.code_dim(1, "BN"), ValueError, ["k", ">= 2", "BN", "k=1"]),
    (lambda: L.code_dim(4, "binary"), ValueError, ["embedding", "binary", "BN"]),
    (lambda: L.embedding_dim(0, 4, "BN"), ValueError, ["d", ">= 1"]),
    (lambda: L.embed_points(X, 0, "OH"), ValueError, ["k", ">= 1"]),
    (lambda: L.embed_centers(torch.rand(2, 1, 3), "BN"), ValueError, ["k", ">= 2", "BN"]),
    (lambda: code_margin(1, "BN"), ValueError, ["k", ">= 2"]),
    (lambda: code_margin(4, "NA"), ValueError, ["embedding", "NA"]),
    (lambda: code_margin(4, "BN", formula="fast"), ValueError, ["formula", "fast"]),
    (lambda: code_margin(4, "BN", dtype=torch.int32), TypeError, ["dtype"]),
    (lambda: code_sqdists(4, "XX"), ValueError, ["embedding", "XX"]),
    (lambda: embedding_norms(0, 4, "BN"), ValueError, ["d"]),
]


@pytest.mark.parametrize("call,exc,words", BAD_CALLS, ids=[f"bad{i}" for i in range(len(BAD_CALLS))])
def test_bad_input_raises_clear_error(call, exc, words):
    assert_raises_naming(call, exc, words)
