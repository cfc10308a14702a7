"""Training the heads: Riemannian projected gradient descent on the sphere, and where the heads end.

The summary ("Approach", "Key results") trains the heads "with projected gradient descent on the sphere"
from "initializations on the manifold" M; its ablations ("Measured effects") swap the Riemannian update
for plain projected steps, drop the projection, initialise uniformly on the sphere and add an
orthogonality regularisation. Reconstructed here (book appendix "How the model is reconstructed", section
"Training"): for each head

    lambda_h <- normalize(lambda_h - eta (I - lambda_h lambda_h^T) g_h),

the penalty gamma sum_{h<h'} <lambda_h, lambda_h'>^2, the manifold
M = {lambda_h perp mu_h', lambda_h perp lambda_h' for h != h'}, and the distance to the centroids
min over permutations pi and signs eps of (sum_h ||lambda_h - eps_h mu_pi(h)||^2)^(1/2).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import torch

from .. import _random
from .._validate import check_choice, check_int, check_nonneg, check_positive, check_tensor
from ._checks import check_centroids, check_heads
from .data import draw_parts, second_moment
from .heads import FORMS, mhat_risk, population_risk

__all__ = [
    "UPDATES",
    "orthogonality_penalty",
    "sphere_step",
    "init_on_sphere",
    "init_on_manifold",
    "manifold_violation",
    "centroid_distance",
    "subspace_distance",
    "TrainResult",
    "train_heads",
    "train_heads_shared",
]

UPDATES = ("riemannian", "projected", "euclidean")


def orthogonality_penalty(Lam: torch.Tensor) -> torch.Tensor:
    """sum_{h<h'} <lambda_h, lambda_h'>^2 for Lam (H, d) -> () or (runs, H, d) -> (runs,) (the penalty's form is reconstructed)."""
    Lam = check_heads(Lam)
    gram = Lam @ Lam.transpose(-1, -2)
    return torch.triu(gram, diagonal=1).pow(2).sum((-1, -2))


def sphere_step(Lam: torch.Tensor, grad: torch.Tensor, lr: float, update: str = "riemannian") -> torch.Tensor:
    """One step for every head (rows of Lam, shape (…, H, d)), given the Euclidean gradient ``grad``.

    "riemannian": lambda <- normalize(lambda - lr (I - lambda lambda^T) g)  (PGD on the sphere)
    "projected":  lambda <- normalize(lambda - lr g)   (plain projected gradient: no tangent projection)
    "euclidean":  lambda <- lambda - lr g              (no projection at all: heads leave the sphere)
    """
    Lam = check_heads(Lam)
    grad = check_tensor("grad", grad)
    if grad.shape != Lam.shape:
        raise ValueError(f"grad must have Lam's shape {tuple(Lam.shape)}, got {tuple(grad.shape)}")
    lr = check_positive("lr", lr)
    check_choice("update", update, UPDATES)
    if update == "riemannian":
        grad = grad - (grad * Lam).sum(-1, keepdim=True) * Lam
    new = Lam - lr * grad
    if update == "euclidean":
        return new
    return new / new.norm(dim=-1, keepdim=True)


def init_on_sphere(
    h: int, d: int, *, runs: int | None = None, seed=None, generator=None, dtype=torch.float64
) -> torch.Tensor:
    """H heads uniform on the sphere S^{d-1}, independent: (H, d), or (runs, H, d)."""
    h = check_int("h", h, 1)
    d = check_int("d", d, 1)
    g = generator if generator is not None else _random.generator(seed)
    n = 1 if runs is None else check_int("runs", runs, 1)
    Lam = torch.randn(n, h, d, generator=g, dtype=torch.float64)
    Lam = (Lam / Lam.norm(dim=-1, keepdim=True)).to(dtype)
    return Lam[0] if runs is None else Lam


def init_on_manifold(mu: torch.Tensor, *, runs: int | None = None, seed=None, generator=None) -> torch.Tensor:
    """Random heads on M = {lambda_h perp mu_h', lambda_h perp lambda_h' for h != h'}, one per centroid.

    mu (K, d) orthonormal -> Lam (K, d), or (runs, K, d). Head h is a Gaussian vector projected on the
    orthogonal complement of {mu_h' : h' != h} and of the earlier heads, then normalised; so it keeps
    a component along its own centroid mu_h and one outside the centroid span. Needs d >= K + 1.
    """
    mu = check_centroids(mu)
    if mu.dim() != 2:
        raise ValueError(f"mu must have shape (K, d), got {tuple(mu.shape)}")
    k, d = mu.shape
    if d < k + 1:
        raise ValueError(f"initialising on M needs d >= K + 1, got K={k} and d={d}")
    g = generator if generator is not None else _random.generator(seed)
    n = 1 if runs is None else check_int("runs", runs, 1)
    mu64 = mu.detach().to("cpu", torch.float64)
    out = torch.empty(n, k, d, dtype=torch.float64)
    for r in range(n):
        heads = []
        for h in range(k):
            basis = torch.cat([mu64[[i for i in range(k) if i != h]], *(x[None] for x in heads)], 0)
            v = torch.randn(d, generator=g, dtype=torch.float64)
            if basis.shape[0]:
                Q = torch.linalg.qr(basis.T).Q  # (d, rank) orthonormal columns
                v = v - Q @ (Q.T @ v)
            heads.append(v / v.norm())
        out[r] = torch.stack(heads)
    out = out.to(device=mu.device, dtype=mu.dtype)
    return out[0] if runs is None else out


def manifold_violation(Lam: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
    """Largest |<lambda_h, mu_h'>| or |<lambda_h, lambda_h'>| over h != h' (0 on M): () or (runs,)."""
    Lam = check_heads(Lam)
    mu = check_centroids(mu, d=Lam.shape[-1])
    if mu.dim() != 2 or mu.shape[0] != Lam.shape[-2]:
        raise ValueError(f"mu must have shape (H={Lam.shape[-2]}, d), got {tuple(mu.shape)}")
    off = ~torch.eye(mu.shape[0], dtype=torch.bool, device=Lam.device)
    a = (Lam @ mu.T).abs()[..., off]
    b = (Lam @ Lam.transpose(-1, -2)).abs()[..., off]
    return torch.maximum(a.amax(-1), b.amax(-1))


def centroid_distance(Lam: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
    """min over permutations pi and signs eps of (sum_h ||lambda_h - eps_h mu_pi(h)||^2)^(1/2) (summary, "Experimental setup": "up to sign and permutation").

    Lam (H, d) or (runs, H, d); mu (H, d) -> () or (runs,). The differences are formed explicitly (not
    via 2 - 2|cos|), so distances near machine precision are resolved.
    """
    Lam = check_heads(Lam)
    mu = check_centroids(mu, d=Lam.shape[-1])
    if mu.dim() != 2 or mu.shape[0] != Lam.shape[-2]:
        raise ValueError(f"mu must have shape (H={Lam.shape[-2]}, d), got {tuple(mu.shape)}")
    h = mu.shape[0]
    plus = ((Lam[..., :, None, :] - mu) ** 2).sum(-1)  # (…, H, K)
    minus = ((Lam[..., :, None, :] + mu) ** 2).sum(-1)
    cost = torch.minimum(plus, minus)
    best = None
    for perm in itertools.permutations(range(h)):
        total = cost[..., list(range(h)), list(perm)].sum(-1)
        best = total if best is None else torch.minimum(best, total)
    return best.sqrt()


def subspace_distance(Lam: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
    """Frobenius distance between G = Lam^T Lam and the projector P on span(mu): 0 iff the heads are an
    orthonormal basis of the centroid span. Lam (…, H, d), mu (K, d) -> (…)."""
    Lam = check_heads(Lam)
    mu = check_centroids(mu, d=Lam.shape[-1])
    G = Lam.transpose(-1, -2) @ Lam
    P = mu.transpose(-1, -2) @ mu
    return (G - P).flatten(-2).norm(dim=-1)


class TrainResult(NamedTuple):
    """Output of :func:`train_heads`: final heads (runs, H, d) and histories (runs, T) at ``steps`` (T,).

    distance: :func:`centroid_distance`; risk: :func:`population_risk` (no penalty); violation:
    :func:`manifold_violation`; subspace: :func:`subspace_distance`; overlap: the largest
    |<lambda_h, lambda_h'>| over pairs of heads (1 when two heads coincide up to sign).
    """

    Lam: torch.Tensor
    steps: torch.Tensor
    distance: torch.Tensor
    risk: torch.Tensor
    violation: torch.Tensor
    subspace: torch.Tensor
    overlap: torch.Tensor


def train_heads(
    mu: torch.Tensor,
    sigma: float,
    c: float,
    *,
    form: str = "R1",
    L: int | None = None,
    init="manifold",
    penalty: float = 0.0,
    lr: float = 0.1,
    steps: int = 1000,
    batch: int = 1000,
    update: str = "riemannian",
    runs: int = 1,
    record_every: int = 1,
    seed=0,
) -> TrainResult:
    """Train H = K heads by gradient steps on the sphere (summary, "Approach"), several independent runs at once.

    mu (K, d) orthonormal centroids (fixed across prompts). ``L=None`` minimises the exact population
    risk (:func:`population_risk`, L = inf: deterministic PGD); an integer L runs stochastic PGD on
    ``batch`` fresh prompts of L tokens per step and run, minimising their mean :func:`layer_risk`.
    The loss adds ``penalty`` * :func:`orthogonality_penalty`. ``init``: "manifold"
    (:func:`init_on_manifold`), "sphere" (:func:`init_on_sphere`) or a tensor (runs, K, d). ``update``:
    see :func:`sphere_step`. The initial heads come from ``seed`` and the prompts from ``seed + 1``, so
    two calls that differ only in ``init`` see the same prompts.

    Histories are recorded every ``record_every`` steps (and at the end); ``risk`` is the population
    risk (L = inf) of the current heads without the penalty, so runs at different L are comparable.
    """
    setting = dict(sigma=sigma, c=c, form=form, init=init, penalty=penalty, lr=lr, update=update)
    common = dict(L=L, steps=steps, batch=batch, runs=runs, record_every=record_every, seed=seed)
    return train_heads_shared(mu, {0: setting}, **common)[0]


def train_heads_shared(
    mu: torch.Tensor,
    settings: dict,
    *,
    L: int | None = None,
    steps: int = 1000,
    batch: int = 1000,
    runs: int = 1,
    record_every: int = 1,
    seed=0,
) -> dict:
    """:func:`train_heads` for several settings on one seed, in lockstep: ``{key: TrainResult}``, each
    equal to ``train_heads(mu, **settings[key], L=L, ..., seed=seed)``.

    ``settings`` maps a key to the keyword arguments that may differ between the settings: ``sigma`` and
    ``c`` (required), ``form``, ``init``, ``penalty``, ``lr``, ``update`` (:func:`train_heads`'s defaults).
    Calls of one seed draw the same prompts' components and noise, whatever their setting (tokens at
    sigma are ``means + sigma * xi``, :func:`lloydlib.attention_clustering.data.draw_parts`): here they
    are drawn once per step for every setting, and the prompts' second moments Mhat (runs, batch, d, d)
    formed once per step and sigma. Every setting's own computation is :func:`train_heads`'s.
    """
    mu = check_centroids(mu)
    if mu.dim() != 2:
        raise ValueError(f"mu must have shape (K, d), got {tuple(mu.shape)}")
    if not isinstance(settings, dict) or not settings:
        raise ValueError(f"settings must be a non-empty dict of key -> keyword arguments, got {settings!r}")
    if L is not None:
        L = check_int("L", L, 1)
        batch = check_int("batch", batch, 1)
    steps = check_int("steps", steps, 0)
    runs = check_int("runs", runs, 1)
    record_every = check_int("record_every", record_every, 1)
    seed = check_int("seed", seed, 0)
    mu = mu.detach().to("cpu", torch.float64)
    heads = {key: _Heads(mu, runs, seed, **kw) for key, kw in settings.items()}
    g_data = _random.generator(seed + 1)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small tensors: extra threads only add overhead (10x slower on a busy 2-core CPU)
    try:
        with torch.no_grad():
            for h in heads.values():
                h.record(0)
        for t in range(1, steps + 1):
            Mhat = {}  # sigma -> the step's prompts' second moments (runs, batch, d, d)
            if L is not None:
                k, d = mu.shape
                means, xi, _ = draw_parts(mu.expand(runs * batch, k, d), L, g_data, torch.float32)
                for sigma in dict.fromkeys(h.sigma for h in heads.values()):
                    X = means + sigma * xi
                    Mhat[sigma] = (X.transpose(1, 2) @ X / L).view(runs, batch, d, d)
            for h in heads.values():
                h.step(t, Mhat.get(h.sigma), t % record_every == 0 or t == steps)
    finally:
        torch.set_num_threads(threads)
    return {key: h.result() for key, h in heads.items()}


class _Heads:
    """One setting of :func:`train_heads_shared`: its heads Lam (runs, K, d), its loss and its histories."""

    def __init__(
        self, mu, runs, seed, *, sigma, c, form="R1", init="manifold", penalty=0.0, lr=0.1, update="riemannian"
    ):
        self.sigma = check_nonneg("sigma", sigma)
        self.c = check_positive("c", c)
        self.form = check_choice("form", form, FORMS)
        self.penalty = check_nonneg("penalty", penalty)
        self.lr = check_positive("lr", lr)
        self.update = check_choice("update", update, UPDATES)
        self.mu, (k, d) = mu, mu.shape
        if isinstance(init, torch.Tensor):
            Lam = check_heads(init, name="init").detach().to("cpu", torch.float64).clone()
            if Lam.shape != (runs, k, d):
                raise ValueError(f"init must have shape (runs={runs}, K={k}, d={d}), got {tuple(Lam.shape)}")
        else:
            check_choice("init", init, ("manifold", "sphere"))
            g_init = _random.generator(seed)
            Lam = (
                init_on_manifold(mu, runs=runs, generator=g_init)
                if init == "manifold"
                else init_on_sphere(k, d, runs=runs, generator=g_init)
            )
        self.Lam, self.runs = Lam, runs
        self.M = second_moment(mu, self.sigma)
        self.hist = {"steps": [], "distance": [], "risk": [], "violation": [], "subspace": [], "overlap": []}
        self.off = ~torch.eye(k, dtype=torch.bool)

    def record(self, t):
        Lam, mu, hist, (k, d) = self.Lam, self.mu, self.hist, self.mu.shape
        hist["steps"].append(t)
        hist["distance"].append(centroid_distance(Lam, mu))
        hist["risk"].append(population_risk(Lam, self.M, self.c, self.form))
        hist["violation"].append(manifold_violation(Lam, mu) if d > k else torch.zeros(self.runs, dtype=Lam.dtype))
        hist["subspace"].append(subspace_distance(Lam, mu))
        gram = (Lam @ Lam.transpose(-1, -2)).abs()
        hist["overlap"].append(gram[:, self.off].amax(-1) if k > 1 else torch.zeros(self.runs, dtype=Lam.dtype))

    def step(self, t, Mhat, record):
        """Step t on the population risk (``Mhat`` None) or on the prompts' second moments ``Mhat``."""
        Lam = self.Lam.requires_grad_(True)
        if Mhat is None:
            loss = population_risk(Lam, self.M, self.c, self.form)
        else:
            loss = mhat_risk(Mhat, Lam[:, None], self.c, self.form).mean(1)
        if self.penalty > 0:
            loss = loss + self.penalty * orthogonality_penalty(Lam)
        (grad,) = torch.autograd.grad(loss.sum(), Lam)
        with torch.no_grad():
            self.Lam = sphere_step(Lam.detach(), grad, self.lr, self.update)
            if record:
                self.record(t)

    def result(self) -> TrainResult:
        return TrainResult(
            self.Lam.detach(),
            torch.tensor(self.hist["steps"]),
            *(torch.stack(self.hist[key], 1) for key in ("distance", "risk", "violation", "subspace", "overlap")),
        )
