"""Tests of lloydlib.model, the learnable transformer of Eq. 4: fast path == plain reference (values and gradients), Theorem B.1
weights reproduce Lloyd exactly, parameters, dropout and bad input."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import lloydlib as L
from lloydlib.model import LearnableTransformer

F64 = torch.float64


def _pair(d, k, embedding, *, seed=0, **kw):
    """A fast and a plain model with the same random weights (float64)."""
    torch.manual_seed(seed)
    fast = LearnableTransformer(d, k, embedding, fast=True, dtype=F64, **kw)
    plain = LearnableTransformer(d, k, embedding, fast=False, dtype=F64, **kw)
    plain.load_state_dict(fast.state_dict())
    return fast, plain


def _values_and_grads(model, X, C, G):
    model.zero_grad(set_to_none=True)
    out = model(X, C)
    (out * G).sum().backward()
    return out.detach(), {name: p.grad.clone() for name, p in model.named_parameters()}


def _assert_same(fast, plain, X, C, *, atol=1e-11):
    G = torch.randn(C.shape, dtype=F64, generator=torch.Generator().manual_seed(1))
    a, ga = _values_and_grads(fast, X, C, G)
    b, gb = _values_and_grads(plain, X, C, G)
    assert a.shape == C.shape
    torch.testing.assert_close(a, b, atol=atol, rtol=1e-9)
    assert ga.keys() == gb.keys()
    for name in ga:
        torch.testing.assert_close(
            ga[name], gb[name], atol=atol, rtol=1e-8, msg=lambda m, name=name: f"grad {name}: {m}"
        )


@pytest.mark.parametrize("embedding", ["OH", "BN", "NA", "SC"])
@given(
    n=st.integers(2, 40),
    d=st.integers(1, 6),
    k=st.integers(2, 9),
    gamma=st.sampled_from([0.3, 1.0, 4.0]),
    bias=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_fast_equals_plain_values_and_gradients(embedding, n, d, k, gamma, bias, seed):
    k = min(k, n)
    X, C = L.sample_tasks(3, n, d, k, seed=seed, dtype=F64)
    fast, plain = _pair(d, k, embedding, seed=seed, gamma=gamma, bias=bias)
    _assert_same(fast, plain, X, C)


@pytest.mark.parametrize("embedding", ["OH", "BN"])
def test_fast_equals_plain_at_the_benchmark_size(embedding):
    # large enough that the plain path expands distances and the fused kernel works in blocks
    X, C = L.sample_tasks(4, 300, 8, 10, seed=3, dtype=F64)
    fast, plain = _pair(8, 10, embedding, seed=3)
    _assert_same(fast, plain, X, C, atol=1e-9)


@pytest.mark.parametrize("fused_limit, blocked", [(0, True), (0, False), (10**9, True)])
def test_fast_equals_plain_with_and_without_the_fused_kernel(fused_limit, blocked, monkeypatch):
    import lloydlib.fast_layer

    monkeypatch.setattr(lloydlib.fast_layer, "FUSED_LIMIT", fused_limit)  # 0: never the explicit scores
    monkeypatch.setattr(lloydlib.fast_layer, "BLOCKED_ON_CPU", blocked)  # then blocked_attention, or the fused kernel
    X, C = L.sample_tasks(3, 50, 5, 7, seed=4, dtype=F64)
    fast, plain = _pair(5, 7, "BN", seed=4)
    _assert_same(fast, plain, X, C)


def test_fast_equals_plain_in_float32():
    X, C = L.sample_tasks(4, 200, 32, 10, seed=5)
    torch.manual_seed(0)
    fast = LearnableTransformer(32, 10, "BN")
    plain = LearnableTransformer(32, 10, "BN", fast=False)
    plain.load_state_dict(fast.state_dict())
    torch.testing.assert_close(fast(X, C), plain(X, C), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("embedding", ["OH", "BN"])
def test_fast_equals_plain_with_sparsemax(embedding):
    X, C = L.sample_tasks(3, 30, 3, 5, seed=2, dtype=F64)
    fast, plain = _pair(3, 5, embedding, seed=2, gamma=3.0, weighting="sparsemax")
    _assert_same(fast, plain, X, C, atol=1e-10)


@pytest.mark.parametrize("embedding", ["OH", "BN"])
def test_dropout_same_masks_in_both_paths(embedding):
    # both paths apply dropout to the four heads' weights in the same order and shapes
    X, C = L.sample_tasks(2, 25, 3, 4, seed=4, dtype=F64)
    fast, plain = _pair(3, 4, embedding, seed=4, dropout=0.3)
    torch.manual_seed(11)
    a = fast(X, C)
    torch.manual_seed(11)
    b = plain(X, C)
    torch.testing.assert_close(a, b, atol=1e-11, rtol=1e-9)
    fast.eval()
    plain.eval()
    torch.testing.assert_close(fast(X, C), plain(X, C), atol=1e-11, rtol=1e-9)
    assert not torch.allclose(a, fast(X, C)), "dropout in training mode should change the output"


def test_dropout_off_by_default_and_eval_is_deterministic():
    model = LearnableTransformer(3, 4)
    assert model.dropout == 0.0 and model.gamma == 1.0 and model.bias
    X, C = L.sample_tasks(2, 20, 3, 4, seed=0)
    model.dropout = 0.5
    model.eval()
    torch.testing.assert_close(model(X, C), model(X, C), atol=0, rtol=0)


@pytest.mark.parametrize("embedding", ["OH", "BN", "SC"])
@pytest.mark.parametrize("fast", [True, False])
def test_theorem_weights_at_gamma_inf_are_lloyd_exactly(embedding, fast):
    d, k = 3, 6
    X, C = L.sample_tasks(8, 50, d, k, seed=7, dtype=F64)
    model = LearnableTransformer(d, k, embedding, gamma=math.inf, fast=fast, dtype=F64).load_theorem_weights()
    T = L.exact_transformer(d, k, embedding)
    _, report = T.run(X, C, 1, return_report=True, warn=False)
    ok = ~report["empty"].any(-1).any(-1) & (report["ties"].sum(-1) == 0)
    assert int(ok.sum()) >= 5
    with torch.no_grad():
        out = model(X, C)
    torch.testing.assert_close(out, T(X, C), atol=0, rtol=0)
    torch.testing.assert_close(out[ok], L.lloyd_step(X, C)[ok], atol=1e-12, rtol=0)


@pytest.mark.parametrize("embedding", ["OH", "BN"])
def test_theorem_weights_with_large_gamma_approach_lloyd_on_the_fast_path(embedding):
    # finite gamma takes the fused path; at gamma = 1e9 the softmax is a hardmax to float64 precision
    d, k = 2, 5
    X, C = L.sample_tasks(6, 40, d, k, seed=9, dtype=F64)
    model = LearnableTransformer(d, k, embedding, gamma=1e9, dtype=F64).load_theorem_weights()
    _, report = L.exact_transformer(d, k, embedding).run(X, C, 1, return_report=True, warn=False)
    ok = ~report["empty"].any(-1).any(-1) & (report["ties"].sum(-1) == 0)
    with torch.no_grad():
        out = model(X, C)
    assert int(ok.sum()) >= 3
    torch.testing.assert_close(out[ok], L.lloyd_step(X, C)[ok], atol=1e-8, rtol=0)


def test_theorem_weights_zero_the_biases_and_NA_has_none():
    model = LearnableTransformer(4, 6, "BN").load_theorem_weights()
    Q, K, V = L.theorem_weights(4, 6, "BN", dtype=torch.float32)
    torch.testing.assert_close(model.Q.data, Q)
    torch.testing.assert_close(model.K.data, K)
    torch.testing.assert_close(model.V.data, V)
    assert all(float(b.detach().abs().max()) == 0 for b in (model.bQ, model.bK, model.bV))
    with pytest.raises(ValueError, match="NA"):
        LearnableTransformer(4, 6, "NA").load_theorem_weights()


@pytest.mark.parametrize("embedding,d_emb", [("OH", 3 + 10), ("BN", 3 + 4), ("NA", 3), ("SC", 4)])
def test_parameters_shapes_and_default_init(embedding, d_emb):
    model = LearnableTransformer(3, 10, embedding)
    assert (model.d, model.k, model.embedding, model.d_emb) == (3, 10, embedding, d_emb)
    params = dict(model.named_parameters())
    assert set(params) == {"Q", "K", "V", "bQ", "bK", "bV"}
    assert all(params[n].shape == (4, d_emb, d_emb) for n in "QKV")
    assert all(params["b" + n].shape == (4, d_emb) for n in "QKV")
    assert all(p.dtype == torch.float32 for p in params.values())
    assert sum(p.numel() for p in params.values()) == 12 * d_emb * d_emb + 12 * d_emb
    bound = 1 / math.sqrt(d_emb)
    assert all(float(p.detach().abs().max()) <= bound for p in params.values())
    assert set(model.state_dict()) == set(params)
    no_bias = LearnableTransformer(3, 10, embedding, bias=False)
    assert {n for n, _ in no_bias.named_parameters()} == {"Q", "K", "V"}


def test_output_shape_any_n_and_unused_value_rows_get_no_gradient():
    model = LearnableTransformer(4, 6, "BN")
    for n in (6, 17, 64):
        X, C = L.sample_tasks(2, n, 4, 6, seed=n)
        out = model(X, C)
        assert out.shape == (2, 6, 4) and bool(torch.isfinite(out).all())
    out.sum().backward()
    # only the first d output coordinates of heads 3 and 4 reach the output
    assert float(model.V.grad[2:, 4:].abs().max()) == 0
    assert float(model.V.grad[:2].abs().max()) > 0


def test_forward_and_loss_compile_to_one_graph():
    # fullgraph=True fails on any graph break; aot_eager traces forward and backward without codegen
    from lloydlib.bench import lloydlib_loss

    X, C = L.sample_tasks(2, 64, 4, 5, seed=1)
    torch.manual_seed(0)
    model = LearnableTransformer(4, 5, "BN")
    compiled = torch.compile(lambda X, C: lloydlib_loss(X, model(X, C)), backend="aot_eager", fullgraph=True)
    a = compiled(X, C)
    ga = torch.autograd.grad(a, list(model.parameters()))
    b = lloydlib_loss(X, model(X, C))
    gb = torch.autograd.grad(b, list(model.parameters()))
    torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    for x, y in zip(ga, gb):
        torch.testing.assert_close(x, y, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        (dict(embedding="XX"), ValueError, "embedding"),
        (dict(gamma=0.0), ValueError, "gamma"),
        (dict(gamma=-1.0), ValueError, "gamma"),
        (dict(dropout=1.0), ValueError, r"dropout must be >= 0.0 and < 1.0, got 1.0"),
        (dict(dropout=-0.1), ValueError, r"dropout must be >= 0.0 and < 1.0, got -0.1"),
        (dict(dropout="0.1"), TypeError, "dropout must be a real number"),
        (dict(weighting="hardmax"), ValueError, "weighting"),
        (dict(fast=1), TypeError, r"fast must be a bool \(True or False\), got int 1"),
        (dict(bias="yes"), TypeError, r"bias must be a bool \(True or False\)"),
    ],
)
def test_bad_constructor_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        LearnableTransformer(3, 4, **kwargs)


def test_bad_d_or_k():
    with pytest.raises(ValueError, match="k must be >= 2"):
        LearnableTransformer(3, 1, "BN")
    with pytest.raises(TypeError, match="d must be an integer"):
        LearnableTransformer(3.0, 4)


@pytest.mark.parametrize("fast", [True, False])
def test_bad_forward_input(fast):
    model = LearnableTransformer(3, 4, fast=fast)
    X, C = L.sample_tasks(2, 10, 3, 4, seed=0)
    with pytest.raises(ValueError, match="d=3"):
        model(X[..., :2], C[..., :2])
    with pytest.raises(ValueError, match="k=4"):
        model(X, C[:, :3])
    with pytest.raises(TypeError, match="dtype"):
        model(X.double(), C.double())
    with pytest.raises(ValueError, match="finite"):
        model(X.masked_fill(X > 0.5, float("nan")), C)
    with pytest.raises(ValueError, match="batch"):
        model(X, C[:1])
