"""Sandwiches for one attention head: Lemmas I.3 to I.8 of the Leaner paper (Appendix I).

* :func:`softmax_sandwich`: Lemma I.3 (from Li et al. 2023, Lemma B.3), the softmax bounds;
* :func:`dispersion_sandwich`: Lemma I.4, the spread of the attention scores;
* :func:`attention_sandwich`: Lemmas I.5 (values), I.6 (queries), I.7 (keys), I.8 (key tokens).

Each looks for the largest ratio from random pairs and from gradient ascent (:func:`~lloydlib.theory.
sandwich.ascend`), within the hypotheses held by :class:`AttentionSetting`, and re-evaluates the best pair
with the library's own operator, :func:`lloydlib.attention.distance_attention` (Eq. 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .._random import generator
from .._validate import check_choice, check_int, check_positive
from ..attention import distance_attention
from .constants import LEMMAS, delta, lemma_constant, softmax_bound, softmax_l1_sharp
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
    shrink_tokens,
    spec,
    step_size,
    tokens,
)

__all__ = ["AttentionSetting", "softmax_sandwich", "dispersion_sandwich", "attention_sandwich"]


def batched_attention(Z, Zp, Q, K, V, gamma):
    """Eq. 3 with a batch of weights: Z (R, m, D), Zp (R, m', D), Q, K, V (R, D, D) -> (R, m, D).

    The same operator as :func:`lloydlib.attention.distance_attention`, vectorised over weights for the
    ascent; every reported ratio is recomputed with distance_attention itself.
    """
    q = Z @ Q.transpose(-1, -2)
    k = Zp @ K.transpose(-1, -2)
    D = ((q[..., :, None, :] - k[..., None, :, :]) ** 2).sum(-1)
    W = torch.softmax(-(gamma / math.sqrt(Q.shape[-2])) * D, dim=-1)
    return W @ (Zp @ V.transpose(-1, -2))


@dataclass(frozen=True)
class AttentionSetting:
    """The hypotheses of Lemmas I.4-I.8: m queries with norms <= rho, m' keys with norms <= rho',
    ||Q||, ||K|| <= Gamma1, ||V|| <= Gamma2, width d_emb, inverse temperature gamma.

    ``tokens="ball"`` allows any tokens within the norm bounds (the lemmas' hypotheses);
    ``tokens="box"`` also keeps every entry in [0, 1], as the tokens of Assumption I.1 are.
    """

    m: int
    m_p: int
    d_emb: int
    gamma: float = 1.0
    Gamma1: float = 1.0
    Gamma2: float = 1.0
    rho: float = 1.0
    rho_p: float = 1.0
    tokens: str = "ball"

    def __post_init__(self):
        for name in ("m", "m_p", "d_emb"):
            object.__setattr__(self, name, check_int(name, getattr(self, name), 1))
        for name in ("gamma", "Gamma1", "Gamma2", "rho", "rho_p"):
            object.__setattr__(self, name, check_positive(name, getattr(self, name)))
        check_choice("tokens", self.tokens, ("ball", "box"))

    def constant(self, lemma: str, *, backend=None):
        """The lemma's constant (kappa2..kappa5) at these quantities."""
        return lemma_constant(
            lemma,
            self.m,
            self.m_p,
            self.rho,
            self.rho_p,
            self.Gamma1,
            self.Gamma2,
            self.gamma,
            self.d_emb,
            backend=backend,
        )

    @property
    def delta(self) -> float:
        """Lemma I.4's bound on the score dispersion at these quantities."""
        return delta(self.rho, self.rho_p, self.Gamma1, self.gamma, self.d_emb)


def _check_setting(setting):
    if not isinstance(setting, AttentionSetting):
        raise TypeError(f"setting must be an AttentionSetting, got {type(setting).__name__} {setting!r}")
    return setting


@one_thread
def softmax_sandwich(
    m: int,
    delta_value: float,
    *,
    restarts: int = 16,
    steps: int = 200,
    lr: float = 0.05,
    random_pairs: int = 512,
    seed: int = 0,
) -> dict:
    """Lemma I.3 on vectors of length m >= 2 with dispersion <= delta: the largest observed
    ||softmax(v) - softmax(v')||_1 / ||v - v'||_1, against the stated exp(delta)/m and the sharp constant.

    Half of the ascent's restarts start near the extreme vectors (one entry delta, the others 0), and
    the first at the pair that attains the sharp constant in the limit.
    Returns ``{"stated": SandwichResult (bound exp(delta)/m), "sharp": SandwichResult (bound
    :func:`~lloydlib.theory.constants.softmax_l1_sharp`), "linf": largest observed ||softmax(v)||_inf,
    "linf_bound": exp(delta)/m}``.
    """
    m = check_int("m", m, 2)
    dv = check_positive("delta_value", delta_value)
    restarts, steps, lr, random_pairs = check_search(restarts, steps, lr, random_pairs)
    g = generator(seed)

    def vec(raw):  # entries in [0, delta]: dispersion <= delta
        return dv * (1 + torch.sin(raw)) / 2  # reaches 0 and delta without saturating

    def ratio(raw):
        v, w = vec(raw["v"]), vec(raw["w"])
        num = (torch.softmax(v, -1) - torch.softmax(w, -1)).abs().sum(-1)
        return quotient(num, (v - w).abs().sum(-1), dv)

    rnd = {
        "v": 4 * torch.randn(random_pairs, m, generator=g, dtype=DTYPE),
        "w": 4 * torch.randn(random_pairs, m, generator=g, dtype=DTYPE),
    }
    with torch.no_grad():
        r_rand = ratio(rnd)
        linf = torch.softmax(vec(rnd["v"]), -1).max()
    raw = {"v": torch.randn(restarts, m, generator=g, dtype=DTYPE)}
    # half the restarts start near the extreme vectors (one entry delta, the others 0), where the
    # Jacobian's l1 norm 2 s_j (1 - s_j) peaks; sin(+-pi/2) = +-1 maps to delta and 0
    half = restarts // 2
    raw["v"][:half] = -math.pi / 2 + 0.1 * raw["v"][:half]
    raw["v"][torch.arange(half), torch.randint(m, (half,), generator=g)] = math.pi / 2
    raw["w"] = raw["v"] + 0.01 * torch.randn(restarts, m, generator=g, dtype=DTYPE)
    # restart 0 is the pair of the sharp constant's proof: v = delta e_1, v' = v - (small) e_1
    raw["v"][0] = -math.pi / 2
    raw["v"][0, 0] = math.pi / 2
    raw["w"][0] = raw["v"][0]
    raw["w"][0, 0] = math.pi / 2 - 0.05
    best = ascend(raw, ratio, steps, lr)
    with torch.no_grad():
        r_asc = ratio(best)
        i = int(r_asc.argmax())
        pair = {"v": vec(best["v"][i]), "v_prime": vec(best["w"][i])}
        # the ||softmax||_inf bound: push one entry to delta and the rest to 0
        linf = max(float(linf), float(torch.softmax(vec(best["v"]), -1).max()))
    out = {}
    for name, bound in (("stated", softmax_bound(dv, m)), ("sharp", softmax_l1_sharp(dv, m))):
        out[name] = SandwichResult(f"Lemma I.3 ({name})", float(bound), float(r_rand.max()), float(r_asc.max()), pair)
    out["linf"], out["linf_bound"] = linf, softmax_bound(dv, m)
    return out


def _init_attention(setting: AttentionSetting, R: int, g, lemma: str, h0: float):
    D, m, mp = setting.d_emb, setting.m, setting.m_p
    raw = {
        "Z": torch.randn(R, m, D, generator=g, dtype=DTYPE),
        "Zp": torch.randn(R, mp, D, generator=g, dtype=DTYPE),
        "Q": torch.randn(R, D, D, generator=g, dtype=DTYPE),
        "K": torch.randn(R, D, D, generator=g, dtype=DTYPE),
        "V": torch.randn(R, D, D, generator=g, dtype=DTYPE),
        "log_h": torch.full((R,), math.log(h0), dtype=DTYPE),
    }
    raw["E"] = torch.randn(*(raw["Zp"].shape if lemma == "I.8" else (R, D, D)), generator=g, dtype=DTYPE)
    if setting.tokens == "ball":  # start near the norm bounds
        raw["Z"] = raw["Z"] * (setting.rho / raw["Z"].norm(dim=-1, keepdim=True))
        raw["Zp"] = raw["Zp"] * (setting.rho_p / raw["Zp"].norm(dim=-1, keepdim=True))
    for key, bound in (("Q", setting.Gamma1), ("K", setting.Gamma1), ("V", setting.Gamma2)):
        raw[key] = raw[key] * (bound / spec(raw[key]))[:, None, None]
    return raw


def _attention_pair(setting: AttentionSetting, lemma: str, raw: dict):
    """The constrained base point and its perturbation from the raw ascent variables."""
    s = setting
    base = {
        "Z": tokens(raw["Z"], s.rho, s.tokens),
        "Zp": tokens(raw["Zp"], s.rho_p, s.tokens),
        "Q": shrink_matrix(raw["Q"], s.Gamma1),
        "K": shrink_matrix(raw["K"], s.Gamma1),
        "V": shrink_matrix(raw["V"], s.Gamma2),
    }
    h = step_size(raw["log_h"])[:, None, None]
    new = dict(base)
    E = raw["E"]
    if lemma == "I.8":
        E = E / norm21(E)[:, None, None]
        moved = base["Zp"] + h * s.rho_p * E
        if s.tokens == "box":  # move within [0,1] entries: perturb the pre-sigmoid tokens' image
            moved = moved.clamp(0, 1)
        new["Zp"] = shrink_tokens(moved, s.rho_p)
    else:
        key, bound = {"I.5": ("V", s.Gamma2), "I.6": ("Q", s.Gamma1), "I.7": ("K", s.Gamma1)}[lemma]
        E = E / spec(E)[:, None, None]
        new[key] = shrink_matrix(base[key] + h * bound * E, bound)
    return base, new


_MOVED = {"I.5": "V", "I.6": "Q", "I.7": "K", "I.8": "Zp"}  # the argument each lemma moves


def _pair_ratio(lemma, base, new, gamma, op, scale):
    out = op(base["Z"], base["Zp"], base["Q"], base["K"], base["V"], gamma)
    out2 = op(new["Z"], new["Zp"], new["Q"], new["K"], new["V"], gamma)
    diff = base[_MOVED[lemma]] - new[_MOVED[lemma]]
    den = norm21(diff) if lemma == "I.8" else spec(diff)
    return quotient(norm21(out - out2), den, scale)


def _library_attention(Z, Zp, Q, K, V, gamma):
    """distance_attention (the library's Eq. 3) applied restart by restart."""
    outs = [distance_attention(Z[i : i + 1], Zp[i : i + 1], Q[i], K[i], V[i], gamma) for i in range(Z.shape[0])]
    return torch.cat(outs, 0)


@one_thread
def attention_sandwich(
    lemma: str,
    setting: AttentionSetting,
    *,
    restarts: int = 16,
    steps: int = 200,
    lr: float = 0.05,
    random_pairs: int = 128,
    seed: int = 0,
    bound: float | None = None,
) -> SandwichResult:
    """Lemmas I.5 (values), I.6 (queries), I.7 (keys), I.8 (key tokens) against their constant.

    The ratio is ||A(Z, Z'; Q, K, V) - A(...')||_{2,1} over ||V - V'||, ||Q - Q'||, ||K - K'|| (spectral)
    or ||Z' - Z''||_{2,1}; both points satisfy the setting's hypotheses. Random pairs use perturbation
    sizes from 1e-4 to 1 (relative to the norm bound); the ascent optimises everything (tokens, weights,
    direction, size) from ``restarts`` random starts. ``bound`` replaces the lemma's constant (to show
    that a wrong constant is caught). The best pair is re-evaluated with distance_attention.
    """
    check_choice("lemma", lemma, LEMMAS)
    setting = _check_setting(setting)
    restarts, steps, lr, random_pairs = check_search(restarts, steps, lr, random_pairs)
    const = float(setting.constant(lemma)) if bound is None else check_positive("bound", bound)
    g = generator(seed)
    gamma = setting.gamma
    scale = {"I.5": setting.Gamma2, "I.6": setting.Gamma1, "I.7": setting.Gamma1, "I.8": setting.rho_p}[lemma]

    def objective(raw):
        base, new = _attention_pair(setting, lemma, raw)
        return _pair_ratio(lemma, base, new, gamma, batched_attention, scale)

    rnd = _init_attention(setting, random_pairs, g, lemma, 1.0)
    rnd["log_h"] = log_steps(random_pairs, g)
    with torch.no_grad():
        base, new = _attention_pair(setting, lemma, rnd)
        i = int(_pair_ratio(lemma, base, new, gamma, batched_attention, scale).argmax())
        r_rand = float(_pair_ratio(lemma, select(base, i), select(new, i), gamma, _library_attention, scale)[0])
    best = ascend(_init_attention(setting, restarts, g, lemma, 1e-3), objective, steps, lr)
    with torch.no_grad():
        base, new = _attention_pair(setting, lemma, best)
        j = int(_pair_ratio(lemma, base, new, gamma, batched_attention, scale).argmax())
        b1, n1 = select(base, j), select(new, j)
        r_asc = float(_pair_ratio(lemma, b1, n1, gamma, _library_attention, scale)[0])
    key = _MOVED[lemma]
    pair = {**{k: v[0] for k, v in b1.items()}, key + "_prime": n1[key][0]}
    return SandwichResult(f"Lemma {lemma}", const, r_rand, r_asc, pair)


@one_thread
def dispersion_sandwich(
    setting: AttentionSetting,
    *,
    restarts: int = 16,
    steps: int = 200,
    lr: float = 0.05,
    random_pairs: int = 128,
    seed: int = 0,
) -> SandwichResult:
    """Lemma I.4: the largest observed score dispersion max_i D(v_i) against delta."""
    s = _check_setting(setting)
    restarts, steps, lr, random_pairs = check_search(restarts, steps, lr, random_pairs)
    g = generator(seed)

    def disp(raw):
        Z, Zp = tokens(raw["Z"], s.rho, s.tokens), tokens(raw["Zp"], s.rho_p, s.tokens)
        Q, K = shrink_matrix(raw["Q"], s.Gamma1), shrink_matrix(raw["K"], s.Gamma1)
        D = ((Z @ Q.transpose(-1, -2))[..., :, None, :] - (Zp @ K.transpose(-1, -2))[..., None, :, :]) ** 2
        v = -(s.gamma / math.sqrt(s.d_emb)) * D.sum(-1)
        return (v.amax(-1) - v.amin(-1)).amax(-1)

    with torch.no_grad():
        r_rand = float(disp(_init_attention(s, random_pairs, g, "I.6", 1.0)).max())
    best = ascend(_init_attention(s, restarts, g, "I.6", 1.0), disp, steps, lr)
    with torch.no_grad():
        r = disp(best)
        j = int(r.argmax())
        pair = {
            "Z": tokens(best["Z"][j], s.rho, s.tokens),
            "Zp": tokens(best["Zp"][j], s.rho_p, s.tokens),
            "Q": shrink_matrix(best["Q"][j], s.Gamma1),
            "K": shrink_matrix(best["K"][j], s.Gamma1),
        }
    return SandwichResult("Lemma I.4", float(s.delta), r_rand, float(r.max()), pair)
