"""lloydlib.bench.reference: the reference form and both NE losses compute what lloydlib computes."""

import pytest
import torch

import lloydlib as L
from lloydlib import bench
from lloydlib.losses import training_loss
from lloydlib.model import LearnableTransformer


@pytest.mark.parametrize("embedding", ["OH", "BN", "NA"])
@pytest.mark.parametrize("bias", [True, False])
def test_reference_form_equals_lloydlib_values_and_gradients(embedding, bias):
    X, C = L.sample_tasks(3, 40, 3, 5, seed=1, dtype=torch.float64)
    torch.manual_seed(0)
    ours = LearnableTransformer(3, 5, embedding, bias=bias, dtype=torch.float64)
    ref = bench.ReferenceTransformer(3, 5, embedding, bias=bias, dtype=torch.float64).load_from(ours)
    a = training_loss(X, ours(X, C), 0.1)
    b = bench.reference_loss(X, ref(X, C), 0.1)
    torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-10)
    a.backward()
    b.backward()
    for mu, head in enumerate(ref.heads):
        for kind in "QKV":
            torch.testing.assert_close(
                getattr(head, kind.lower()).weight.grad, getattr(ours, kind).grad[mu], atol=1e-9, rtol=1e-7
            )


def test_both_losses_are_the_NE_training_loss():
    X, C = L.sample_tasks(4, 30, 2, 3, seed=2, dtype=torch.float64)
    for tau in (0.1, 1.0):
        torch.testing.assert_close(bench.reference_loss(X, C, tau), training_loss(X, C, tau, "NE"))
        torch.testing.assert_close(bench.lloydlib_loss(X, C, tau), training_loss(X, C, tau, "NE"))


def test_make_model_picks_the_form():
    assert isinstance(bench.make_model("lloydlib", 3, 4, "BN"), LearnableTransformer)
    ref = bench.make_model("reference", 3, 4, "OH", dtype=torch.float64)
    assert isinstance(ref, bench.ReferenceTransformer) and ref.d_emb == 7 and ref.codes.dtype == torch.float64
    with pytest.raises(ValueError, match="impl must be one of"):
        bench.make_model("fast", 3, 4, "BN")
