"""lloydlib.fast_layer: the one fast layer of Eq. 4, for a stack of layers and for LearnableTransformer."""

import pytest
import torch
from entmax import sparsemax as entmax_sparsemax

import lloydlib as L
from lloydlib import fast_layer
from lloydlib.fast_layer import sparsemax
from lloydlib.model import LearnableTransformer

F64 = torch.float64


def _stack(models):
    names = [name for name, _ in models[0].named_parameters()]
    return {name: torch.stack([dict(m.named_parameters())[name] for m in models]) for name in names}


@pytest.mark.parametrize("weighting", ["softmax", "sparsemax"])
@pytest.mark.parametrize("bias", [True, False])
def test_a_stack_of_layers_is_each_layer_and_the_reference(weighting, bias):
    torch.manual_seed(0)
    models = [LearnableTransformer(3, 5, "BN", bias=bias, gamma=0.7, weighting=weighting, dtype=F64) for _ in range(3)]
    tasks = [L.sample_tasks(4, 11, 3, 5, seed=s, dtype=F64) for s in range(3)]
    X, C = torch.stack([x for x, _ in tasks]), torch.stack([c for _, c in tasks])
    out = fast_layer.fast_layer(_stack(models), X, C, models[0].codes, 0.7, weighting=weighting)
    assert out.shape == (3, 4, 5, 3)
    for s, (m, (x, c)) in enumerate(zip(models, tasks)):
        torch.testing.assert_close(out[s], m(x, c), rtol=0, atol=0)  # the model runs this function
        plain = LearnableTransformer(3, 5, "BN", bias=bias, gamma=0.7, weighting=weighting, fast=False, dtype=F64)
        plain.load_state_dict(m.state_dict())
        torch.testing.assert_close(out[s], plain(x, c), rtol=1e-10, atol=1e-10)  # and it is Eq. 4


def test_dropout_acts_in_training_only_and_follows_the_generator():
    torch.manual_seed(1)
    m = LearnableTransformer(2, 3, "BN", dropout=0.3, dtype=F64)
    X, C = L.sample_tasks(2, 9, 2, 3, seed=0, dtype=F64)
    m.eval()
    clean = m(X, C)
    m.train()
    torch.manual_seed(5)
    a = m(X, C)
    torch.manual_seed(5)
    b = m(X, C)
    assert torch.equal(a, b) and not torch.allclose(a, clean)
    m.eval()
    assert torch.equal(m(X, C), clean)


@pytest.mark.parametrize("limit, blocked", [(0, True), (0, False)])
def test_head_two_routes_agree(limit, blocked, monkeypatch):
    torch.manual_seed(2)
    models = [LearnableTransformer(3, 4, "OH", dtype=F64) for _ in range(2)]
    X, C = (torch.stack(t) for t in zip(*[L.sample_tasks(3, 20, 3, 4, seed=s, dtype=F64) for s in range(2)]))
    params = _stack(models)
    explicit = fast_layer.fast_layer(params, X, C, models[0].codes, 1.0)
    monkeypatch.setattr(fast_layer, "FUSED_LIMIT", limit)
    monkeypatch.setattr(fast_layer, "BLOCKED_ON_CPU", blocked)
    torch.testing.assert_close(
        fast_layer.fast_layer(params, X, C, models[0].codes, 1.0), explicit, rtol=1e-12, atol=1e-12
    )


def test_sparsemax_equals_entmax_with_gradients():
    g = torch.Generator().manual_seed(1)
    z = (3 * torch.randn(500, 7, generator=g, dtype=torch.float64)).requires_grad_(True)
    z_ties = torch.tensor([[1.0, 1.0, 0.2, -3.0], [0.5, 0.5, 0.5, 0.5]], dtype=torch.float64)
    for x in (z, z_ties):
        torch.testing.assert_close(sparsemax(x), entmax_sparsemax(x, dim=-1), rtol=0, atol=1e-15)
    w = torch.randn(500, 7, generator=g, dtype=torch.float64)
    (a,) = torch.autograd.grad((sparsemax(z) * w).sum(), z)
    (b,) = torch.autograd.grad((entmax_sparsemax(z, dim=-1) * w).sum(), z)
    torch.testing.assert_close(a, b, rtol=0, atol=1e-14)
