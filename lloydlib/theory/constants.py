"""The constants of the lemmas of Appendix I of the Leaner paper (and of Props. H.1, H.2 of Appendix H).

Each is written once, as a formula of :mod:`lloydlib.theory.backend`, and evaluates with numpy (floats
or arrays), sympy (expressions) or mpmath (arbitrary precision); see :func:`~lloydlib.theory.backend.formula`.

    dims(d, k, embedding)                                        d_E and d_emb (Leaner paper, Lemma I.1)
    norm_bounds(d, d_E, Gamma2), head_quantities(...)            Lemma I.1 and Table 3 (Appendix I)
    softmax_bound(delta, m), softmax_l1_sharp(delta, m)          Lemma I.3 (from Li et al. 2023, Lemma B.3),
                                                                 as stated and sharp
    softmax_l1_failure_delta(m)                                  the delta below which Lemma I.3's l1
                                                                 constant, as stated, is too small
    delta(rho, rho_p, Gamma1, gamma, d_emb)                      Lemma I.4: (gamma/sqrt(d_emb)) Gamma1^2 (rho+rho')^2
    kappa2(m, rho_p)                                             Lemma I.5: m rho'
    kappa3(m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb)          Lemma I.6
    kappa4(m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb)          Lemma I.7
    kappa5(m, m_p, rho, rho_p, Gamma1, Gamma2, gamma, d_emb)     Lemma I.8
    kappa3_sharpened(...), kappa4_sharpened(...)                 sharper constants for I.6, I.7 (proved in
                                                                 the book's chapter on the lemmas)
    kappa1(n, k, Gamma2, d_E, tau)                               Lemma I.2 (with r* and omega_tau of Prop. H.2)
    smoothing_distance_bound(k, regularizer)                     Appendix H, Prop. H.1
    loss_lipschitz(r_star, tau, k)                               Appendix H, Prop. H.2

Conventions: tokens are rows in lloydlib (the paper writes them as columns); ||.||_{2,1} is the sum of
the token l2 norms; matrix norms are spectral.
"""

from __future__ import annotations

import numbers

import numpy as np
import sympy as sp

from .._validate import check_choice, check_int
from ..losses import REGULARIZERS
from .backend import NUMPY, SYMPY, finish, formula, pick_backend, prepare

__all__ = [
    "EMBEDDINGS",
    "LEMMAS",
    "dims",
    "norm_bounds",
    "head_quantities",
    "delta",
    "softmax_bound",
    "softmax_l1_sharp",
    "softmax_l1_failure_delta",
    "kappa2",
    "kappa3",
    "kappa4",
    "kappa5",
    "kappa3_sharpened",
    "kappa4_sharpened",
    "lemma_constant",
    "r_star",
    "omega_tau",
    "loss_lipschitz",
    "kappa1",
    "smoothing_distance_bound",
    "smoothing_gap_bound",
]

EMBEDDINGS = ("OH", "BN")  # the embeddings Appendix I covers (of lloydlib.embeddings.EMBEDDINGS)
LEMMAS = ("I.5", "I.6", "I.7", "I.8")  # the attention lemmas of Appendix I


def dims(d, k, embedding: str, *, backend=None):
    """(d_E, d_emb) of Lemma I.1 (Leaner paper, Appendix I) for ``embedding`` "OH" or "BN".

    d_E bounds the squared norm of a center token [c; code] with c in [0,1]^d: OH d + 1 (a one-hot code
    has norm 1), BN d + ceil(log2 k) (at most ceil(log2 k) bits are 1). d_emb is the token width:
    OH d + k, BN d + ceil(log2 k). Integer d, k give integers; symbolic d, k give ``ceiling(log(k, 2))``.
    """
    check_choice("embedding", embedding, EMBEDDINGS)
    B = pick_backend(backend, (d, k))
    integers = all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in (d, k))
    d, k = prepare(B, "d", d), prepare(B, "k", k)
    if B is NUMPY and integers:
        d, k = int(d), int(k)
    if embedding == "BN":
        if B is SYMPY:
            bits = sp.ceiling(sp.log(k, 2))
        else:
            if isinstance(k, np.ndarray) or float(k) != int(k):
                raise TypeError(f"k must be an integer for the BN embedding, got {k!r}")
            bits = (check_int("k", int(k), 2) - 1).bit_length()
        return (d + bits, d + bits) if integers and B is NUMPY else finish((d + bits, d + bits), B)
    return (d + 1, d + k) if integers and B is NUMPY else finish((d + 1, d + k), B)


@formula
def norm_bounds(B, d, d_E, Gamma2):
    """Lemma I.1 (Appendix I): bounds on the token norms of one layer of Eq. 4, for x_i, c_j in [0,1]^d.

    Returns a dict: ``X0`` = sqrt(d) (point tokens), ``C0`` = sqrt(d_E) (center tokens),
    ``X1`` = (1+Gamma2) sqrt(d) + Gamma2 sqrt(d_E) (point tokens after the first sublayer),
    ``C1`` = (1 + 2 Gamma2 + 2 Gamma2^2) sqrt(d_E) (the layer's center tokens, as the paper states it),
    ``C1_composed`` = C0 + Gamma2 X1 + Gamma2 C0 (the same triangle inequality without the final
    sqrt(d) <= sqrt(d_E) step), ``X1_theorem`` = (1 + 2 Gamma2) sqrt(d_E) (the key-norm bound that the
    proof of Theorem I.1 uses for head 3).
    Each attention head outputs a convex combination of V z'_j, so it adds at most Gamma2 max ||z'_j||.
    """
    X0, C0 = B.sqrt(d), B.sqrt(d_E)
    X1 = X0 + Gamma2 * C0 + Gamma2 * X0  # residual + head 1 (keys C0) + head 2 (keys X0)
    return {
        "X0": X0,
        "C0": C0,
        "X1": X1,
        "C1": (1 + 2 * Gamma2 + 2 * Gamma2**2) * C0,
        "C1_composed": C0 + Gamma2 * X1 + Gamma2 * C0,  # residual + head 3 (keys X1) + head 4 (keys C0)
        "X1_theorem": (1 + 2 * Gamma2) * C0,
    }


@formula
def head_quantities(B, n, k, d, d_E, Gamma2):
    """Table 3 (Appendix I): {mu: (m, m', rho, rho')} for the four heads of Eq. 4, from :func:`norm_bounds`.

    Head 1 A(X0, C0), head 2 A(X0, X0), head 3 A(C0, X1), head 4 A(C0, C0): m queries with norms
    <= rho, m' keys with norms <= rho'.
    """
    nb = norm_bounds.formula(B, d, d_E, Gamma2)
    return {
        1: (n, k, nb["X0"], nb["C0"]),
        2: (n, n, nb["X0"], nb["X0"]),
        3: (k, n, nb["C0"], nb["X1"]),
        4: (k, k, nb["C0"], nb["C0"]),
    }


@formula
def delta(B, rho, rho_p, Gamma1, gamma, d_emb):
    """Lemma I.4 (Appendix I): the score dispersion bound (gamma / sqrt(d_emb)) Gamma1^2 (rho + rho')^2."""
    return gamma / B.sqrt(d_emb) * Gamma1**2 * (rho + rho_p) ** 2


@formula
def softmax_bound(B, delta, m):
    """Lemma I.3 (Appendix I, from Li et al. 2023, Lemma B.3) as stated: exp(delta) / m bounds
    ||softmax(v)||_inf and, as stated, the l1->l1 Lipschitz constant of softmax over vectors v of
    length m with dispersion <= delta."""
    return B.exp(delta) / m


@formula
def softmax_l1_sharp(B, delta, m):
    """The exact l1->l1 Lipschitz constant of softmax on {v in R^m : max v - min v <= delta}.

    The Jacobian diag(s) - s s^T has l1 operator norm max_j 2 s_j (1 - s_j), and s_j ranges up to
    s+ = e^delta / (e^delta + m - 1); so the constant is 1/2 if s+ >= 1/2 (e^delta >= m - 1), else
    2 s+ (1 - s+) = 2 e^delta (m - 1) / (e^delta + m - 1)^2. For m >= 3 and small delta this exceeds
    :func:`softmax_bound` (up to a factor 2): Lemma I.3's second inequality, as stated, is false there.
    """
    E = B.exp(delta)
    return B.where(E >= m - 1, B.half, 2 * E * (m - 1) / (E + m - 1) ** 2)


@formula
def softmax_l1_failure_delta(B, m):
    """delta*(m) = log(sqrt(2 m (m-1)) - (m-1)) for m >= 3, else 0: Lemma I.3's l1 constant exp(delta)/m,
    as stated, is smaller than the exact :func:`softmax_l1_sharp` exactly when delta < delta*(m).

    Below the cap (e^delta < m - 1) the exact constant is 2 E (m-1) / (E + m - 1)^2 with E = e^delta, and
    2 E (m-1) / (E + m - 1)^2 > E / m  <=>  (E + m - 1)^2 < 2 m (m-1)  <=>  E < sqrt(2 m (m-1)) - (m-1);
    at the cap the exact constant 1/2 is at most E/m, since E/m >= (m-1)/m >= 1/2. For m >= 3,
    1 < sqrt(2 m (m-1)) - (m-1) < m - 1, so the region is the non-empty 0 <= delta < delta*(m); for
    m <= 2 it is empty (delta*(2) = 0). :func:`lloydlib.theory.softmax.softmax_l1_derivation` derives
    all of this with sympy. delta*(m) grows like log((sqrt 2 - 1) m).
    """
    return B.log(B.max(B.sqrt(2 * m * (m - 1)) - (m - 1), 1))


def scale(B, gamma, d_emb):
    """c = gamma / sqrt(d_emb), the factor of the scores in Eq. 3."""
    return gamma / B.sqrt(d_emb)


@formula
def kappa2(B, m, rho_p):
    """Lemma I.5 (value stability, Appendix I): kappa2 = m rho'."""
    return m * rho_p


def _kappa3_core(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    return 2 * scale(B, gamma, d_emb) * m * Gamma1 * Gamma2 * rho * rho_p * (rho + rho_p)


def _kappa4_core(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    return 2 * scale(B, gamma, d_emb) * m * Gamma1 * Gamma2 * rho_p**2 * (rho + rho_p)


@formula
def kappa3(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    """Lemma I.6 (query stability): 2 (gamma/sqrt(d_emb)) m Gamma1 Gamma2 rho rho' (rho+rho') exp(delta)."""
    return _kappa3_core(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb) * B.exp(
        delta.formula(B, rho, rho_p, Gamma1, gamma, d_emb)
    )


@formula
def kappa4(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    """Lemma I.7 (key stability): 2 (gamma/sqrt(d_emb)) m Gamma1 Gamma2 rho'^2 (rho+rho') exp(delta)."""
    return _kappa4_core(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb) * B.exp(
        delta.formula(B, rho, rho_p, Gamma1, gamma, d_emb)
    )


@formula
def kappa3_sharpened(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    """The sharp constant of Lemma I.6: 2 (gamma/sqrt(d_emb)) m Gamma1 Gamma2 rho rho'^2
    = kappa3 exp(-delta) rho' / (rho + rho') (proved in the book's chapter on the lemmas).

    Moving Q moves every score of a query by the same amount plus 2c <K(z'_l - z_bar), dQ z>, so the
    output moves by 2c V Cov_s(Z') K^T dQ z, with Cov_s the keys' covariance under the attention weights
    (norm <= rho'^2). Two groups of keys at +-rho' w, equally weighted, attain it.
    """
    return 2 * scale(B, gamma, d_emb) * m * Gamma1 * Gamma2 * rho * rho_p**2


@formula
def kappa4_sharpened(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    """kappa4 without its factor exp(delta): also a valid constant for Lemma I.7 (proved in the book).

    The softmax Jacobian J = diag(s) - s s^T maps the score change u to s_l (u_l - u_bar), whose
    l1 norm is the s-mean absolute deviation of u, at most max |u_l|; the paper's route through Lemma
    I.3 pays exp(delta)/m' times m' max |u_l| instead.
    """
    return _kappa4_core(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb)


@formula
def kappa5(B, m, m_p, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    """Lemma I.8 (key-token stability): (m Gamma2 / m') (1 + 2 (gamma/sqrt(d_emb)) Gamma1^2 rho' (rho+rho')) exp(delta)."""
    c = scale(B, gamma, d_emb)
    return (
        m
        * Gamma2
        / m_p
        * (1 + 2 * c * Gamma1**2 * rho_p * (rho + rho_p))
        * B.exp(delta.formula(B, rho, rho_p, Gamma1, gamma, d_emb))
    )


def lemma_constant(lemma: str, m, m_p, rho, rho_p, Gamma1, Gamma2, gamma, d_emb, *, backend=None):
    """The constant of ``lemma`` (Appendix I: "I.5" kappa2, "I.6" kappa3, "I.7" kappa4, "I.8" kappa5)."""
    check_choice("lemma", lemma, LEMMAS)
    if lemma == "I.5":
        return kappa2(m, rho_p, backend=backend)
    if lemma == "I.8":
        return kappa5(m, m_p, rho, rho_p, Gamma1, Gamma2, gamma, d_emb, backend=backend)
    f = kappa3 if lemma == "I.6" else kappa4
    return f(m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb, backend=backend)


@formula
def r_star(B, Gamma2, d_E):
    """The bound r* = 4 (1+Gamma2)^4 d_E on the squared point-to-output-center distances (Lemma I.2)."""
    return 4 * (1 + Gamma2) ** 4 * d_E


@formula
def omega_tau(B, delta, tau, k):
    """Softmax's input-stability constant of Prop. H.2 (Appendix H): omega_tau = exp(delta / tau) / k."""
    return B.exp(delta / tau) / k


@formula
def loss_lipschitz(B, r_star, tau, k):
    """Prop. H.2 (Appendix H, NE): |L~(r) - L~(r')| <= (1 + r* omega_tau / tau) ||r - r'||_1 on [0, r*]^k."""
    return 1 + r_star * omega_tau.formula(B, r_star, tau, k) / tau


@formula
def kappa1(B, n, k, Gamma2, d_E, tau):
    """Lemma I.2 (Appendix I): kappa1 = 4 n (1+Gamma2)^2 sqrt(d_E) (1 + r* omega_tau / tau),
    r* = 4 (1+Gamma2)^4 d_E."""
    rs = r_star.formula(B, Gamma2, d_E)
    return 4 * n * (1 + Gamma2) ** 2 * B.sqrt(d_E) * loss_lipschitz.formula(B, rs, tau, k)


@formula
def _distance_L2(B, k):
    return B.sqrt(1 - 1 / k)


@formula
def _distance_NE(B, k):
    return B.sqrt(2 * B.log(k))


def smoothing_distance_bound(k, regularizer: str, *, backend=None):
    """Prop. H.1 (Appendix H, from Blondel et al.): ||e_{argmin r} - P_Omega(-r/tau)||_2 <= sqrt(1 - 1/k)
    (L2) or sqrt(2 log k) (NE).

    Both are sqrt(2 (max Omega - min Omega)) over the simplex, for Omega 1-strongly convex.
    """
    check_choice("regularizer", regularizer, REGULARIZERS)
    return (_distance_L2 if regularizer == "L2" else _distance_NE)(k, backend=backend)


@formula
def _gap_L2(B, k, tau):
    return tau * (1 - 1 / k) / 2


@formula
def _gap_NE(B, k, tau):
    return tau * B.log(k)


def smoothing_gap_bound(k, tau, regularizer: str, *, backend=None):
    """Per point, L~ - L <= tau (max Omega - min Omega), the smoothing gap C^tau_Omega of the Leaner
    paper's Eqs. 7-9: tau (1 - 1/k) / 2 (L2), tau log k (NE)."""
    check_choice("regularizer", regularizer, REGULARIZERS)
    return (_gap_L2 if regularizer == "L2" else _gap_NE)(k, tau, backend=backend)
