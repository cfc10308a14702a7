"""The constants of Theorems I.1 and I.2 of the Leaner paper (Appendix I), and of its Theorem 3.1.

Written once as formulas of :mod:`lloydlib.theory.backend` (numpy, sympy or mpmath), from the lemma
constants of :mod:`lloydlib.theory.constants`:

    phi_coefficients(n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma)  the twelve per-matrix terms of the proof
    phi(...)                                                      Theorem I.1 (the four-term max)
    phi_sum(...)                                                  Theorem I.1 corrected (their sum)
    eq170_constants(Gamma1, Gamma2), phi_eq170(k, d_E, ...)       Theorem I.1 in its c1..c7 form (Eq. 170)
    phi_prime(..., tau), phi_prime_sum(..., tau)                  Theorem I.2 = kappa1 * phi (resp. phi_sum)
    alpha_informal(n, k, d_E, d_emb, gamma, tau, omega)           Theorem 3.1 (Sec. 3), up to its O(.)
"""

from __future__ import annotations

from .backend import formula
from .constants import kappa1, kappa2, kappa3, kappa4, kappa5, norm_bounds, scale

__all__ = [
    "eq170_constants",
    "phi_coefficients",
    "phi",
    "phi_sum",
    "phi_eq170",
    "phi_prime",
    "phi_prime_sum",
    "alpha_informal",
]


@formula
def eq170_constants(B, Gamma1, Gamma2):
    """The constants c1..c7 of Theorem I.1 (Eq. 170), as a dict ``{"c1": ..., ..., "c7": ...}``."""
    c1 = 1 + 2 * Gamma2
    c4 = 4 * Gamma1**2 * c1**2
    c5 = 4 * Gamma1 * Gamma2**2
    return {
        "c1": c1,
        "c2": 4 * Gamma1 * Gamma2 * c1**3,
        "c3": 4 * Gamma1**2 * (1 + Gamma2) ** 2,
        "c4": c4,
        "c5": c5,
        "c6": c4 * c5,
        "c7": 4 * Gamma1**2 * ((1 + Gamma2) ** 2 + 1),
    }


def _heads(B, n, k, d, d_E, Gamma2):
    """The (m, m', rho, rho') that the proof of Theorem I.1 uses (head 3 keys: sqrt(d_E)(1+2 Gamma2))."""
    nb = norm_bounds.formula(B, d, d_E, Gamma2)
    return {
        1: (n, k, nb["X0"], nb["C0"]),
        2: (n, n, nb["X0"], nb["X0"]),
        3: (k, n, nb["C0"], nb["X1_theorem"]),
        4: (k, k, nb["C0"], nb["C0"]),
    }


@formula
def phi_coefficients(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma):
    """Per-matrix sensitivities of the layer's centers, from Lemmas I.5-I.8 (proof of Theorem I.1).

    ``{"Q1": .., "K1": .., "V1": .., ..., "V4": ..}``: ||C(Theta) - C(Theta')||_{2,1} <=
    sum_W coefficient[W] ||W - W'||. Heads 1 and 2 act through X1, which head 3 reads as keys, so their
    coefficients carry the key-token factor kappa5 of head 3.
    """
    h = _heads(B, n, k, d, d_E, Gamma2)
    k5 = kappa5.formula(B, *h[3], Gamma1, Gamma2, gamma, d_emb)
    out = {}
    for mu, (m, _, rho, rho_p) in h.items():
        factor = k5 if mu in (1, 2) else 1
        out[f"Q{mu}"] = factor * kappa3.formula(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb)
        out[f"K{mu}"] = factor * kappa4.formula(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb)
        out[f"V{mu}"] = factor * kappa2.formula(B, m, rho_p)
    return out


@formula
def phi(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma):
    """Theorem I.1 as stated: phi = max{kappa5 kappa4(head 1), kappa5 kappa2(head 1), kappa4(head 3),
    kappa2(head 3)}, with kappa5 that of head 3 (the four terms left of Eq. 170's maximum)."""
    co = phi_coefficients.formula(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma)
    return B.max(co["K1"], co["V1"], co["K3"], co["V3"])


@formula
def phi_sum(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma):
    """The sum of the twelve :func:`phi_coefficients`: a valid constant for Theorem I.1 when
    ||Theta - Theta'|| is the largest of the twelve spectral norms (the paper's norm)."""
    return sum(phi_coefficients.formula(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma).values())


@formula
def phi_eq170(B, k, d_E, d_emb, Gamma1, Gamma2, gamma):
    """Theorem I.1's phi in the c1..c7 form of Eq. 170 (our reconstruction from the four-term max).

    With c = gamma / sqrt(d_emb):
    max{ k d_E^{3/2} e^{c7 c d_E} (c5 c + c6 c^2 d_E),  k Gamma2 sqrt(d_E) (1 + c4 c d_E) e^{c3 c d_E},
         c2 c k d_E^{3/2} e^{c3 c d_E},  c1 k sqrt(d_E) }.
    Each term bounds the matching term of :func:`phi` from above (using sqrt(d) <= sqrt(d_E) and
    1 + c1 <= 2 c1), which the book checks symbolically.
    """
    cs = eq170_constants.formula(B, Gamma1, Gamma2)
    c = scale(B, gamma, d_emb)
    r = B.sqrt(d_E)
    return B.max(
        k * d_E * r * B.exp(cs["c7"] * c * d_E) * (cs["c5"] * c + cs["c6"] * c**2 * d_E),
        k * Gamma2 * r * (1 + cs["c4"] * c * d_E) * B.exp(cs["c3"] * c * d_E),
        cs["c2"] * c * k * d_E * r * B.exp(cs["c3"] * c * d_E),
        cs["c1"] * k * r,
    )


@formula
def phi_prime(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma, tau):
    """Theorem I.2 (the full form of Theorem 3.1): phi' = kappa1 phi, the Lipschitz constant of the loss
    in Theta."""
    return kappa1.formula(B, n, k, Gamma2, d_E, tau) * phi.formula(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma)


@formula
def phi_prime_sum(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma, tau):
    """kappa1 * :func:`phi_sum`: Theorem I.2's constant with the corrected phi."""
    return kappa1.formula(B, n, k, Gamma2, d_E, tau) * phi_sum.formula(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma)


@formula
def alpha_informal(B, n, k, d_E, d_emb, gamma, tau, omega):
    """Theorem 3.1's (Leaner paper, Sec. 3) informal Lipschitz constant, up to its O(.) constant, with
    omega_tau given:

    (k n omega / tau) max{1, gamma^2} sqrt(d_E) max{1, (d_E / sqrt(d_emb))^2} exp(gamma d_E / sqrt(d_emb)).
    OH: d_E = d + 1, d_emb = d + k; BN: d_E = d_emb = d + ceil(log2 k).
    """
    return (
        k
        * n
        * omega
        / tau
        * B.max(1, gamma**2)
        * B.sqrt(d_E)
        * B.max(1, d_E**2 / d_emb)
        * B.exp(gamma * d_E / B.sqrt(d_emb))
    )
