"""lloydlib.training.stacked_model: the stacked forward and losses equal the single-run ones."""

import pytest
import torch

from lloydlib import fast_layer
from lloydlib.lloyd import kmeans_objective
from lloydlib.losses import smoothed_loss
from lloydlib.model import LearnableTransformer
from lloydlib.tasks import sample_tasks
from lloydlib.training.stacked_model import StackShape, kmeans_objective_unchecked, smoothed_losses, stacked_forward


@pytest.mark.parametrize("embedding", ["OH", "BN", "NA", "SC"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("fused", [False, True])
def test_stacked_forward_and_losses_equal_each_model(embedding, bias, fused, monkeypatch):
    if fused:
        monkeypatch.setattr(fast_layer, "FUSED_LIMIT", 0)  # head 2 through scaled_dot_product_attention
        monkeypatch.setattr(fast_layer, "BLOCKED_ON_CPU", False)
    torch.manual_seed(0)
    shape = StackShape(3, 5, embedding, bias, gamma=0.7)
    models = [LearnableTransformer(3, 5, embedding, bias=bias, gamma=0.7, dtype=torch.float64) for _ in range(3)]
    theta = torch.stack([shape.flatten(m.state_dict()) for m in models])
    tasks = [sample_tasks(4, 11, 3, 5, seed=s, dtype=torch.float64) for s in range(3)]
    X, C = torch.stack([x for x, _ in tasks]), torch.stack([c for _, c in tasks])
    out = stacked_forward(shape, theta, X, C, shape.codes(torch.float64, "cpu"))
    tau = torch.tensor([0.1, 1.0, 0.3], dtype=torch.float64)
    for s, (m, (x, c)) in enumerate(zip(models, tasks)):
        expected = m(x, c)
        torch.testing.assert_close(out[s], expected, rtol=1e-12, atol=1e-12)
        for reg in ("NE", "L2"):
            want = smoothed_loss(x, expected, float(tau[s]), reg).mean()
            torch.testing.assert_close(smoothed_losses(X, out, tau, reg)[s], want, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(
            kmeans_objective_unchecked(X, out)[s], kmeans_objective(x, expected), rtol=1e-12, atol=1e-12
        )
        assert shape.model(theta[s]).state_dict().keys() == m.state_dict().keys()
        torch.testing.assert_close(shape.model(theta[s])(x, c), expected, rtol=0, atol=0)
