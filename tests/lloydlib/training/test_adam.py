"""lloydlib.training.adam: the stacked Adam step is torch.optim.Adam (with clip_grad_norm_) per run."""

import math

import torch

from lloydlib.training.adam import adam_update


def test_stacked_adam_matches_torch_adam_per_run():
    g = torch.Generator().manual_seed(0)
    S, P, steps = 4, 7, 6
    lrs, clips = [0.1, 0.01, 1.0, 0.3], [math.inf, 0.05, math.inf, 1.0]
    theta0 = torch.randn(S, P, generator=g, dtype=torch.float64)
    grads = torch.randn(steps, S, P, generator=g, dtype=torch.float64)
    active = torch.tensor([True, True, False, True])
    theta, m, v, t = theta0.clone(), torch.zeros(S, P, dtype=torch.float64), torch.zeros(S, P, dtype=torch.float64), 0
    t = torch.zeros(S, dtype=torch.float64)
    lr, clip = torch.tensor(lrs, dtype=torch.float64), torch.tensor(clips, dtype=torch.float64)
    for i in range(steps):
        theta, m, v, t = adam_update(theta, grads[i], m, v, t, lr, clip, active)
    for s in range(S):
        p = torch.nn.Parameter(theta0[s].clone())
        opt = torch.optim.Adam([p], lr=lrs[s])
        for i in range(steps if bool(active[s]) else 0):
            p.grad = grads[i, s].clone()
            if math.isfinite(clips[s]):
                torch.nn.utils.clip_grad_norm_([p], clips[s])
            opt.step()
        torch.testing.assert_close(theta[s], p.detach(), rtol=1e-12, atol=1e-14)
        if bool(active[s]):
            torch.testing.assert_close(m[s], opt.state[p]["exp_avg"], rtol=1e-12, atol=1e-14)
            torch.testing.assert_close(v[s], opt.state[p]["exp_avg_sq"], rtol=1e-12, atol=1e-14)
    assert t.tolist() == [steps, steps, 0, steps]


def test_a_frozen_run_ignores_non_finite_gradients():
    theta = torch.ones(2, 3)
    grad = torch.tensor([[float("nan")] * 3, [1.0, 2.0, 3.0]])
    zeros = torch.zeros(2, 3)
    out, m, v, t = adam_update(
        theta,
        grad,
        zeros,
        zeros,
        torch.zeros(2),
        torch.ones(2),
        torch.full((2,), math.inf),
        torch.tensor([False, True]),
    )
    assert torch.equal(out[0], theta[0]) and torch.isfinite(out).all() and t.tolist() == [0, 1]
