"""Tests of lloydlib.generalisation.blocked_layer: the model's reference layer of Eq. 4 with head 2 in blocks gives
the same numbers bit for bit (difference and expanded squared distances, blocks of tasks and of rows), and the
model's own layer serves the cases the blocks leave to it."""

import math

import pytest
import torch

import lloydlib as L
from lloydlib.distances import DIRECT_LIMIT
from lloydlib.generalisation.blocked_layer import layer
from lloydlib.model import LearnableTransformer


def _model(embedding="BN", d=3, k=4, seed=0, dtype=torch.float32, **kw):
    torch.manual_seed(seed)
    return LearnableTransformer(d, k, embedding, dtype=dtype, **kw).eval()


def _tokens(model, batch, n, seed=1):
    X, C0 = L.sample_tasks(batch, n, model.d, model.k, seed=seed, dtype=model.Q.dtype)
    return model.embed(X, C0)


def _same(a, b):
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("embedding", ["OH", "BN", "NA"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("block", [1, 200, 5_000, 1 << 19])
def test_blocks_give_the_models_numbers_bit_for_bit(embedding, dtype, block):
    model = _model(embedding, dtype=dtype)
    with torch.no_grad():
        for batch, n in ((3, 40), (5, 7)):
            Xbar, Cbar = _tokens(model, batch, n)
            ref = model.layer(Xbar, Cbar)
            assert _same(layer(model, Xbar, Cbar, block_entries=block), ref)
            assert _same(layer(model, *ref, block_entries=block), model.layer(*ref))  # a second step, iterated


def test_the_expanded_distances_of_a_large_batch_stay_expanded():
    model = _model("NA", d=2, k=3)  # D = 2: 4 tasks of 1450 points pass sqdist's limit of the difference tensor
    batch, n = 4, 1450
    assert batch * n * n * model.d_emb > DIRECT_LIMIT
    with torch.no_grad():
        Xbar, Cbar = _tokens(model, batch, n)
        assert _same(layer(model, Xbar, Cbar), model.layer(Xbar, Cbar))
        assert _same(layer(model, Xbar, Cbar, block_entries=n * n), model.layer(Xbar, Cbar))


def test_what_the_blocks_leave_to_the_model():
    exact = _model("BN", gamma=math.inf).load_theorem_weights()
    dropped = _model("BN", dropout=0.5).train()
    with torch.no_grad():
        Xbar, Cbar = _tokens(exact, 2, 12)
        assert _same(layer(exact, Xbar, Cbar), exact.layer(Xbar, Cbar))
        torch.manual_seed(3)
        a = layer(dropped, Xbar, Cbar)
        torch.manual_seed(3)
        assert _same(a, dropped.layer(Xbar, Cbar))
    model = _model("BN")
    out = layer(model, Xbar, Cbar)  # gradients on: the model's own layer
    out[1].sum().backward()
    assert model.K.grad is not None
    with pytest.raises(TypeError, match="LearnableTransformer"):
        layer(object(), Xbar, Cbar)
    with pytest.raises(ValueError, match="finite"), torch.no_grad():
        layer(model, Xbar.clone().fill_(math.nan), Cbar)
