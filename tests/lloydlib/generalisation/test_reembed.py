"""Tests of lloydlib.generalisation.reembed: a re-embedding step with head 2 computed once gives the model's
forward bit for bit (with and without biases, each route of head 2), and the model itself serves the rest."""

import math

import pytest
import torch

import lloydlib as L
from lloydlib import fast_layer
from lloydlib.generalisation.reembed import reembedder
from lloydlib.model import LearnableTransformer


def _model(embedding="BN", d=3, k=4, seed=0, dtype=torch.float32, **kw):
    torch.manual_seed(seed)
    return LearnableTransformer(d, k, embedding, dtype=dtype, **kw).eval()


def _steps_agree(model, batch, n, steps=4):
    X, C = L.sample_tasks(batch, n, model.d, model.k, seed=2, dtype=model.Q.dtype)
    step, C_ref = reembedder(model, X), C
    with torch.no_grad():
        for _ in range(steps):
            C, C_ref = step(C), model(X, C_ref)
            if not torch.equal(C, C_ref):
                return False
    return True


@pytest.mark.parametrize("embedding", ["OH", "BN", "NA"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_steps_are_the_models_forward_bit_for_bit(embedding, bias, dtype):
    model = _model(embedding, bias=bias, dtype=dtype)
    assert _steps_agree(model, 5, 30)  # head 2's scores explicit
    assert _steps_agree(model, 3, 700)  # above fast_layer.FUSED_LIMIT: the fused kernel (float32) or the blocks
    assert 3 * 700 * 700 > fast_layer.FUSED_LIMIT


def test_what_is_left_to_the_model_and_bad_input():
    for model in (_model(gamma=math.inf), _model(fast=False), _model(weighting="sparsemax")):
        assert _steps_agree(model, 2, 12, steps=2)
    model = _model()
    X, C = L.sample_tasks(2, 12, 3, 4, seed=1)
    with pytest.raises(TypeError, match="LearnableTransformer"):
        reembedder(object(), X)
    with pytest.raises(TypeError, match="dtype"):
        reembedder(model, X.double())
    with pytest.raises(ValueError):
        reembedder(model, X[..., :2])
    step = reembedder(model, X)
    with pytest.raises(ValueError):
        step(C[:, :3])  # k = 3 centers for a model of k = 4
    with pytest.raises(ValueError, match="finite"):
        step(C.clone().fill_(math.nan))
