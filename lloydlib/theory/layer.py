"""One layer of Eq. 4 of the Leaner paper, and the sandwiches of Lemma I.1 and Theorems I.1, I.2 (Appendix I).

* :func:`eq4_layer` and :func:`one_layer` build the layer from :func:`lloydlib.attention.distance_attention`
  (four heads, two residual sublayers) and :mod:`lloydlib.embeddings`;
* :func:`norm_sandwich`: Lemma I.1, the token norms of one forward pass;
* :func:`layer_sandwich`: Theorem I.1 (the output in the parameters) and Theorem I.2 (the smoothed loss
  in the parameters), over ||Theta - Theta'||, the largest spectral norm of the twelve differences;
* :func:`phi_counterexample`: an explicit pair against Theorem I.1's four-term maximum.
"""

from __future__ import annotations

import math

import torch

from .._random import generator
from .._validate import check_choice, check_int, check_nonneg, check_positive, check_tensor
from ..attention import distance_attention
from ..embeddings import embed_centers, embed_points
from ..losses import REGULARIZERS, smoothed_loss
from .constants import EMBEDDINGS, dims, norm_bounds
from .head import batched_attention
from .sandwich import (
    DTYPE,
    SandwichResult,
    ascend,
    check_search,
    log_steps,
    norm21,
    one_thread,
    quotient,
    select,
    shrink_matrix,
    spec,
    step_size,
)
from .theorems import phi, phi_prime

__all__ = ["eq4_layer", "one_layer", "norm_sandwich", "layer_sandwich", "phi_counterexample"]


def eq4_layer(
    Xbar: torch.Tensor, Cbar: torch.Tensor, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, gamma: float = 1.0
):
    """One layer of Eq. 4 from :func:`~lloydlib.attention.distance_attention`: returns (Xbar1, Cbar1).

    Xbar (batch, n, d_emb), Cbar (batch, k, d_emb); Q, K, V (4, d_emb, d_emb), head mu = index mu-1:
    Xbar1 = Xbar + A(Xbar, Cbar; 1) + A(Xbar, Xbar; 2); Cbar1 = Cbar + A(Cbar, Xbar1; 3) + A(Cbar, Cbar; 4).
    """
    for name, W in (("Q", Q), ("K", K), ("V", V)):
        W = check_tensor(name, W, 3)
        if W.shape[0] != 4 or W.shape[1] != W.shape[2]:
            raise ValueError(f"{name} must have shape (4, d_emb, d_emb), got {tuple(W.shape)}")
    a = lambda mu, Z, Zp: distance_attention(Z, Zp, Q[mu], K[mu], V[mu], gamma)
    Xbar1 = Xbar + a(0, Xbar, Cbar) + a(1, Xbar, Xbar)
    Cbar1 = Cbar + a(2, Cbar, Xbar1) + a(3, Cbar, Cbar)
    return Xbar1, Cbar1


def one_layer(
    X: torch.Tensor, C: torch.Tensor, Q, K, V, embedding: str, gamma: float = 1.0, *, return_tokens: bool = False
):
    """F(X, C; Theta): embed (OH or BN), apply :func:`eq4_layer`, keep the first d rows of the centers.

    X (batch, n, d), C (batch, k, d) -> (batch, k, d); with ``return_tokens`` also
    (Xbar0, Cbar0, Xbar1, Cbar1).
    """
    check_choice("embedding", embedding, EMBEDDINGS)
    Xbar, Cbar = embed_points(X, C.shape[1], embedding), embed_centers(C, embedding)
    Xbar1, Cbar1 = eq4_layer(Xbar, Cbar, Q, K, V, gamma)
    F = Cbar1[..., : X.shape[-1]]
    return (F, (Xbar, Cbar, Xbar1, Cbar1)) if return_tokens else F


def _batched_layer(Xbar, Cbar, Q, K, V, gamma):
    """Eq. 4 with one set of weights per task: Q, K, V (R, 4, D, D)."""
    a = lambda mu, Z, Zp: batched_attention(Z, Zp, Q[:, mu], K[:, mu], V[:, mu], gamma)
    Xbar1 = Xbar + a(0, Xbar, Cbar) + a(1, Xbar, Xbar)
    Cbar1 = Cbar + a(2, Cbar, Xbar1) + a(3, Cbar, Cbar)
    return Xbar1, Cbar1


def _library_layer(Xbar, Cbar, Q, K, V, gamma):
    outs = [eq4_layer(Xbar[i : i + 1], Cbar[i : i + 1], Q[i], K[i], V[i], gamma) for i in range(Xbar.shape[0])]
    return torch.cat([o[0] for o in outs]), torch.cat([o[1] for o in outs])


def check_layer_args(d, k, n, embedding, gamma, Gamma1, Gamma2):
    """(d, k, n) as ints (d >= 1, k >= 2, n >= 1); embedding OH or BN; gamma > 0; Gamma1, Gamma2 >= 0."""
    d, k, n = check_int("d", d, 1), check_int("k", k, 2), check_int("n", n, 1)
    check_choice("embedding", embedding, EMBEDDINGS)
    check_positive("gamma", gamma)
    check_nonneg("Gamma1", Gamma1)
    check_nonneg("Gamma2", Gamma2)
    return d, k, n


def _init_layer(R, n, k, d, D, g, Gamma1, Gamma2, data_scale=3.0):
    raw = {
        "X": data_scale * torch.randn(R, n, d, generator=g, dtype=DTYPE),
        "C": data_scale * torch.randn(R, k, d, generator=g, dtype=DTYPE),
    }
    for key, bound in (("Q", Gamma1), ("K", Gamma1), ("V", Gamma2)):
        W = torch.randn(R, 4, D, D, generator=g, dtype=DTYPE)
        raw[key] = W * (bound / spec(W))[..., None, None]
    return raw


def _layer_tokens(raw, embedding, Gamma1, Gamma2):
    X, C = torch.sigmoid(raw["X"]), torch.sigmoid(raw["C"])  # Assumption I.1: entries in [0,1]
    Xbar, Cbar = embed_points(X, C.shape[1], embedding), embed_centers(C, embedding)
    Q, K = shrink_matrix(raw["Q"], Gamma1), shrink_matrix(raw["K"], Gamma1)
    V = shrink_matrix(raw["V"], Gamma2)
    return X, C, Xbar, Cbar, Q, K, V


@one_thread
def norm_sandwich(
    d: int,
    k: int,
    n: int,
    embedding: str,
    *,
    gamma: float = 1.0,
    Gamma1: float = 1.0,
    Gamma2: float = 1.0,
    restarts: int = 16,
    steps: int = 200,
    lr: float = 0.05,
    random_pairs: int = 64,
    seed: int = 0,
) -> dict:
    """Lemma I.1 on forward passes of Eq. 4: the largest token norm of X0, C0, X1, C1 against the bound.

    Random tasks (entries of X, C uniform in [0,1]) with random weights of spectral norms Gamma1,
    Gamma2, then gradient ascent on each norm over data and weights. Returns {"X0": SandwichResult, ...};
    a SandwichResult's random/ascent fields hold norms, its bound the Lemma I.1 bound
    (C1: the paper's (1 + 2 Gamma2 + 2 Gamma2^2) sqrt(d_E)).
    """
    d, k, n = check_layer_args(d, k, n, embedding, gamma, Gamma1, Gamma2)
    restarts, steps, lr, random_pairs = check_search(restarts, steps, lr, random_pairs)
    d_E, D = dims(d, k, embedding)
    nb = norm_bounds(d, d_E, Gamma2)
    g = generator(seed)

    def norms(raw, which, layer=_batched_layer):
        _, _, Xbar, Cbar, Q, K, V = _layer_tokens(raw, embedding, Gamma1, Gamma2)
        if which in ("X0", "C0"):
            Z = Xbar if which == "X0" else Cbar
        else:
            Xbar1, Cbar1 = layer(Xbar, Cbar, Q, K, V, gamma)
            Z = Xbar1 if which == "X1" else Cbar1
        return Z.norm(dim=-1).amax(-1)

    out = {}
    for which in ("X0", "C0", "X1", "C1"):
        rnd = _init_layer(random_pairs, n, k, d, D, g, Gamma1, Gamma2)
        with torch.no_grad():
            i = int(norms(rnd, which).argmax())
            r_rand = float(norms(select(rnd, i), which, _library_layer)[0])
        init = _init_layer(restarts, n, k, d, D, g, Gamma1, Gamma2)
        best = ascend(init, lambda r, which=which: norms(r, which), steps, lr)
        with torch.no_grad():
            one = select(best, int(norms(best, which).argmax()))
            r_lib = float(norms(one, which, _library_layer)[0])
            X, C, *_, Q, K, V = _layer_tokens(one, embedding, Gamma1, Gamma2)
        out[which] = SandwichResult(
            f"Lemma I.1 {which}",
            float(nb[which]),
            r_rand,
            r_lib,
            {"X": X[0], "C": C[0], "Q": Q[0], "K": K[0], "V": V[0]},
        )
    return out


def theta_norm(dQ, dK, dV):
    """||Theta - Theta'||: the largest spectral norm of the twelve differences, per restart."""
    return torch.cat([spec(dQ), spec(dK), spec(dV)], dim=-1).amax(-1)


@one_thread
def layer_sandwich(
    d: int,
    k: int,
    n: int,
    embedding: str,
    *,
    target: str = "output",
    gamma: float = 1.0,
    Gamma1: float = 1.0,
    Gamma2: float = 1.0,
    tau: float = 0.1,
    regularizer: str = "NE",
    restarts: int = 16,
    steps: int = 200,
    lr: float = 0.05,
    random_pairs: int = 64,
    seed: int = 0,
    bound: float | None = None,
) -> SandwichResult:
    """Theorem I.1 (``target="output"``: ||F(Theta) - F(Theta')||_{2,1}) or Theorem I.2 (``"loss"``:
    |L~(X, F(Theta)) - L~(X, F(Theta'))|) over ||Theta - Theta'|| (largest spectral norm of the twelve).

    Data X, C in [0,1]^d (Assumption I.1), weights within Gamma1, Gamma2 (Assumption I.2). The bound is
    phi (output) or phi' = kappa1 phi (loss) unless ``bound`` is given. Random pairs and gradient ascent
    over data, weights, direction and size; the best pair is re-evaluated with :func:`eq4_layer`.
    """
    d, k, n = check_layer_args(d, k, n, embedding, gamma, Gamma1, Gamma2)
    check_choice("target", target, ("output", "loss"))
    tau = check_positive("tau", tau)
    check_choice("regularizer", regularizer, REGULARIZERS)
    restarts, steps, lr, random_pairs = check_search(restarts, steps, lr, random_pairs)
    d_E, D = dims(d, k, embedding)
    if bound is None:
        args = (n, k, d, d_E, D, Gamma1, Gamma2, gamma)
        bound = phi(*args) if target == "output" else phi_prime(*args, tau)
    else:
        bound = check_positive("bound", bound, allow_inf=True)
    g = generator(seed)

    def init(R, h0):
        raw = _init_layer(R, n, k, d, D, g, Gamma1, Gamma2)
        for key in ("dQ", "dK", "dV"):
            raw[key] = torch.randn(R, 4, D, D, generator=g, dtype=DTYPE)
        raw["log_h"] = torch.full((R,), math.log(h0), dtype=DTYPE)
        return raw

    def pair(raw):
        X, C, Xbar, Cbar, Q, K, V = _layer_tokens(raw, embedding, Gamma1, Gamma2)
        dirs = [raw[key] for key in ("dQ", "dK", "dV")]
        scale = theta_norm(*dirs)[:, None, None, None]
        h = step_size(raw["log_h"])[:, None, None, None]
        Q2 = shrink_matrix(Q + h * max(Gamma1, 1e-3) * dirs[0] / scale, Gamma1)
        K2 = shrink_matrix(K + h * max(Gamma1, 1e-3) * dirs[1] / scale, Gamma1)
        V2 = shrink_matrix(V + h * max(Gamma2, 1e-3) * dirs[2] / scale, Gamma2)
        return X, C, Xbar, Cbar, (Q, K, V), (Q2, K2, V2)

    def ratio(raw, layer=_batched_layer):
        X, C, Xbar, Cbar, th, th2 = pair(raw)
        F1 = layer(Xbar, Cbar, *th, gamma)[1][..., :d]
        F2 = layer(Xbar, Cbar, *th2, gamma)[1][..., :d]
        if target == "output":
            num = norm21(F1 - F2)
        else:
            num = (smoothed_loss(X, F1, tau, regularizer) - smoothed_loss(X, F2, tau, regularizer)).abs()
        den = theta_norm(*(a - b for a, b in zip(th, th2)))
        return quotient(num, den, max(Gamma1, Gamma2, 1e-3))

    rnd = init(random_pairs, 1.0)
    rnd["log_h"] = log_steps(random_pairs, g)
    with torch.no_grad():
        r_rand = float(ratio(select(rnd, int(ratio(rnd).argmax())), _library_layer)[0])
    best = ascend(init(restarts, 1e-3), ratio, steps, lr)
    with torch.no_grad():
        one = select(best, int(ratio(best).argmax()))
        r_lib = float(ratio(one, _library_layer)[0])
        X, C, _, _, th, th2 = pair(one)
    best_pair = {
        "X": X[0],
        "C": C[0],
        "Q": th[0][0],
        "K": th[1][0],
        "V": th[2][0],
        "Q_prime": th2[0][0],
        "K_prime": th2[1][0],
        "V_prime": th2[2][0],
    }
    return SandwichResult(f"Theorem I.{1 if target == 'output' else 2}", float(bound), r_rand, r_lib, best_pair)


def phi_counterexample(
    d: int,
    k: int,
    n: int,
    embedding: str,
    *,
    Gamma1: float = 1.0,
    Gamma2: float = 1.0,
    gamma: float = 1.0,
    h: float = 1e-6,
):
    """An explicit pair (Theta, Theta') against Theorem I.1's four-term max, when gamma Gamma1^2 is small.

    All points at 1_d, all centers at 1_d; Q = K = 0, so every head averages uniformly and the heads'
    value matrices compound: V1, V2 write along x_bar, V3 reads it into the first data coordinate y.
    The direction moves V1, V2, V3 and V4 at once (each by spectral norm h), and every contribution adds
    up along y, so that ||F(Theta) - F(Theta')||_{2,1} / h -> k (1 + 2 Gamma2) (||x_bar|| + ||c_bar||),
    which exceeds phi -> k (1 + 2 Gamma2) sqrt(d_E) as gamma Gamma1^2 -> 0: the single-matrix
    constants add, they do not take a maximum.

    Returns ``(ratio, X, C, (Q, K, V), (Q', K', V'))`` with the ratio computed by :func:`one_layer`.
    """
    d, k, n = check_layer_args(d, k, n, embedding, gamma, Gamma1, Gamma2)
    h = check_positive("h", h)
    _, D = dims(d, k, embedding)
    X = torch.ones(1, n, d, dtype=DTYPE)
    C = torch.ones(1, k, d, dtype=DTYPE)
    xbar = embed_points(X, k, embedding)[0].mean(0)
    cbar = embed_centers(C, embedding)[0].mean(0)
    xh, ch = xbar / xbar.norm(), cbar / cbar.norm()
    y = torch.zeros(D, dtype=DTYPE)
    y[0] = 1.0
    Z = torch.zeros(4, D, D, dtype=DTYPE)
    V = torch.zeros(4, D, D, dtype=DTYPE)
    V[0] = Gamma2 * torch.outer(xh, ch)  # V1 c_bar = Gamma2 ||c_bar|| x_hat
    V[1] = Gamma2 * torch.outer(xh, xh)  # V2 x_bar = Gamma2 ||x_bar|| x_hat
    V[2] = Gamma2 * torch.outer(y, xh)  # V3 x_hat = Gamma2 y
    dV = torch.zeros_like(V)
    dV[0], dV[1] = torch.outer(xh, ch), torch.outer(xh, xh)
    dV[2], dV[3] = torch.outer(y, xh), torch.outer(y, ch)
    Vp = V - h * dV  # inside the ball ||V_mu'|| <= Gamma2
    F1 = one_layer(X, C, Z, Z, V, embedding, gamma)
    F2 = one_layer(X, C, Z, Z, Vp, embedding, gamma)
    ratio = float(norm21(F1 - F2)[0]) / float(theta_norm(Z, Z, V - Vp))
    return ratio, X, C, (Z, Z, V), (Z, Z, Vp)
