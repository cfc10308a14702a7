"""Adam over a stack of runs (Kingma and Ba, Algorithm 1, as ``torch.optim.Adam`` computes it), with
per-run learning rates, gradient-norm clipping and a mask of the runs that still train.

Every run s of a stack keeps its parameters in one row theta[s] (P,); its gradient g[s] is first
clipped as ``torch.nn.utils.clip_grad_norm_`` does (g <- g * min(1, c_s / (||g||_2 + 1e-6)), c_s = inf
for no clipping), then

    t <- t + 1,  m <- m + (1 - beta1) (g - m),  v <- beta2 v + (1 - beta2) g^2,
    theta <- theta - (lr_s / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps).

Runs whose ``active`` flag is False keep theta, m, v and t unchanged (a run that diverged is frozen).
"""

from __future__ import annotations

import torch

__all__ = ["BETAS", "EPS", "adam_update"]

BETAS, EPS = (0.9, 0.999), 1e-8


def adam_update(theta, grad, m, v, t, lr, clip, active):
    """One Adam step for every active run; returns (theta, m, v, t), new tensors.

    theta, grad, m, v (S, P); t (S,) steps taken so far (floating); lr (S,); clip (S,) the maximal gradient
    norm per run (inf: no clipping); active (S,) bool.
    """
    beta1, beta2 = BETAS
    norm = torch.linalg.vector_norm(grad, dim=1)
    coef = (clip / (norm + 1e-6)).clamp(max=1.0)
    grad = torch.where(torch.isinf(clip)[:, None], grad, grad * coef[:, None])
    t_new = t + 1
    m_new = m.lerp(grad, 1 - beta1)
    v_new = v * beta2 + (1 - beta2) * grad * grad
    step_size = lr / (1 - beta1**t_new)
    denom = v_new.sqrt() / (1 - beta2**t_new).sqrt()[:, None] + EPS
    theta_new = theta - step_size[:, None] * (m_new / denom)
    a = active[:, None]
    return (
        torch.where(a, theta_new, theta),
        torch.where(a, m_new, m),
        torch.where(a, v_new, v),
        torch.where(active, t_new, t),
    )
