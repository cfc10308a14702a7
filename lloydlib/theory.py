"""The constants of Appendix I of the Leaner paper, and the "sandwich" that checks them.

Part 1: constants. Every bound of Appendix I is a function here, written **once** as a formula of a
tiny backend (sqrt, exp, log, max, ...) and evaluated with numpy (floats or arrays), sympy (symbols, for
the proofs of the book's chapter) or mpmath (numbers too large for a float, such as exp(3200)):

    delta(rho, rho_p, Gamma1, gamma, d_emb)                      Lemma I.4: (gamma/sqrt(d_emb)) Gamma1^2 (rho+rho')^2
    kappa2(m, rho_p)                                             Lemma I.5: m rho'
    kappa3(m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb)          Lemma I.6
    kappa4(m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb)          Lemma I.7
    kappa5(m, m_p, rho, rho_p, Gamma1, Gamma2, gamma, d_emb)     Lemma I.8
    kappa3_sharpened(...), kappa4_sharpened(...)                 sharper constants for I.6, I.7 (the book)
    kappa1(n, k, Gamma2, d_E, tau)                               Lemma I.2 (with r* and omega_tau of Prop. H.2)
    phi(n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma)              Theorem I.1 (the four-term max)
    phi_eq170(k, d_E, d_emb, Gamma1, Gamma2, gamma)              Theorem I.1 in its c1..c7 form (Eq. 170)
    phi_prime(n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma, tau)   Theorem I.2 = kappa1 * phi
    norm_bounds(d, d_E, Gamma2), head_quantities(...)            Lemma I.1 and Table 3
    softmax_bound(delta, m), softmax_l1_sharp(delta, m)          Lemma I.3, as stated and sharp
    smoothing_distance_bound(k, regularizer)                     Prop. H.1
    loss_lipschitz(r_star, tau, k)                               Prop. H.2

Pass numbers for a float (or numpy arrays for an array); pass sympy symbols, or ``backend="sympy"``, for
an expression; ``backend="mpmath"`` for an arbitrary-precision number. Arguments are checked (counts
>= 1, dimensions and gamma > 0, norms >= 0) and a bad one raises naming it.

Part 2: the sandwich. A proved Lipschitz constant L must lie above every observed ratio
||f(a) - f(a')|| / ||a - a'||. :func:`attention_sandwich` (Lemmas I.5-I.8), :func:`softmax_sandwich`
(Lemma I.3), :func:`dispersion_sandwich` (Lemma I.4), :func:`norm_sandwich` (Lemma I.1) and
:func:`layer_sandwich` (Theorems I.1, I.2) look for the largest ratio, from random pairs and from
gradient ascent on the ratio (float64, torch autograd, many restarts), and re-evaluate the best pair with
the library's own operator (:func:`lloydlib.attention.distance_attention`). A ratio above the constant
is a counterexample and is returned with its pair.

Conventions: tokens are rows (see :mod:`lloydlib.tasks`); Q, K, V are the paper's (d_emb, d_emb)
matrices, applied as ``Z @ W.T``; ||.||_{2,1} is the sum of the token (column) l2 norms; matrix norms
are spectral; ||Theta|| is the largest spectral norm of the twelve matrices.
"""
from __future__ import annotations

import functools
import inspect
import math
import numbers
from dataclasses import dataclass, field

import mpmath
import numpy as np
import sympy as sp
import torch

from ._validate import check_choice, check_int, check_positive, check_tensor
from .attention import distance_attention
from .embeddings import embed_centers, embed_points

__all__ = [
    "BACKENDS", "EMBEDDINGS", "LEMMAS", "REGULARIZERS",
    # constants
    "dims", "norm_bounds", "head_quantities", "delta", "softmax_bound", "softmax_l1_sharp",
    "kappa2", "kappa3", "kappa4", "kappa5", "kappa3_sharpened", "kappa4_sharpened", "lemma_constant",
    "r_star", "omega_tau", "loss_lipschitz", "kappa1", "smoothing_distance_bound", "smoothing_gap_bound",
    "eq170_constants", "phi_coefficients", "phi", "phi_sum", "phi_eq170", "phi_prime", "phi_prime_sum",
    "alpha_informal",
    "TABLE2_STORED", "table3_stored", "table2_derived", "table3_derived", "sign_of_derivative",
    "table3_symbols",
    # sandwich
    "norm21", "random_spectral", "eq4_layer", "one_layer", "AttentionSetting", "SandwichResult",
    "softmax_sandwich", "dispersion_sandwich", "attention_sandwich", "norm_sandwich", "layer_sandwich",
    "phi_counterexample", "loss_sandwich", "loss_vector_sandwich", "smoothing_distances", "local_lipschitz",
]

BACKENDS = ("numpy", "sympy", "mpmath")
EMBEDDINGS = ("OH", "BN")
LEMMAS = ("I.5", "I.6", "I.7", "I.8")
REGULARIZERS = ("NE", "L2")


# ----------------------------------------------------------------------------------------------------
# Part 1: one definition per constant, three backends
# ----------------------------------------------------------------------------------------------------

def _np_max(*xs):
    return functools.reduce(np.maximum, xs)


def _np_where(cond, a, b):
    return np.where(cond, a, b)


def _sp_where(cond, a, b):
    return sp.Piecewise((a, cond), (b, True))


def _mp_where(cond, a, b):
    return a if cond else b


@dataclass(frozen=True)
class _Backend:
    name: str
    sqrt: object
    exp: object
    log: object
    max: object
    where: object
    half: object                # the number 1/2, exact in sympy


_NUMPY = _Backend("numpy", np.sqrt, np.exp, np.log, _np_max, _np_where, 0.5)
_SYMPY = _Backend("sympy", sp.sqrt, sp.exp, sp.log, sp.Max, _sp_where, sp.Rational(1, 2))
_MPMATH = _Backend("mpmath", mpmath.sqrt, mpmath.exp, mpmath.log, max, _mp_where, mpmath.mpf(1) / 2)
_BACKEND = {b.name: b for b in (_NUMPY, _SYMPY, _MPMATH)}

# what each argument must be: counts >= 1, dimensions > 0, norms and bounds >= 0
_KIND = {
    "m": "count", "m_p": "count", "n": "count", "k": "count",
    "d": "positive", "d_E": "positive", "d_emb": "positive", "gamma": "positive", "tau": "positive",
    "rho": "nonnegative", "rho_p": "nonnegative", "Gamma1": "nonnegative", "Gamma2": "nonnegative",
    "delta": "nonnegative", "r_star": "nonnegative", "omega": "positive",
}
_EXPECT = {"count": "a number >= 1", "positive": "a positive finite number",
           "nonnegative": "a finite number >= 0"}


def _bad(name, value, kind):
    return ValueError(f"{name} must be {_EXPECT[kind]}, got {value!r}")


def _check_numeric(name: str, value, kind: str):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.ndarray)):
        raise TypeError(f"{name} must be a real number, a numpy array or a sympy expression, "
                        f"got {type(value).__name__} {value!r}")
    arr = np.asarray(value, dtype=np.float64)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got an array of shape {arr.shape}")
    ok = np.isfinite(arr) & {"count": arr >= 1, "positive": arr > 0, "nonnegative": arr >= 0}[kind]
    if not bool(ok.all()):
        raise _bad(name, value, kind)
    return arr if arr.ndim else float(arr)


def _check_symbolic(name: str, value, kind: str):
    value = sp.sympify(value)
    if value.is_number:
        bad = {"count": (value - 1).is_negative, "positive": value.is_positive is False,
               "nonnegative": value.is_negative}[kind]
        if bad or value.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            raise _bad(name, value, kind)
    return value


def _pick_backend(backend, values):
    if backend is not None:
        return _BACKEND[check_choice("backend", backend, BACKENDS)]
    return _SYMPY if any(isinstance(v, sp.Basic) for v in values) else _NUMPY


def _prepare(B: _Backend, name: str, value):
    kind = _KIND[name]
    if B is _SYMPY:
        return _check_symbolic(name, value, kind)
    if isinstance(value, sp.Basic):
        raise TypeError(f"{name} is a sympy expression but backend={B.name!r} needs numbers; "
                        f"use backend='sympy' (or leave backend unset)")
    value = _check_numeric(name, value, kind)
    if B is _MPMATH:
        if isinstance(value, np.ndarray):
            raise TypeError(f"{name}: backend='mpmath' takes scalars, got an array of shape {value.shape}")
        return mpmath.mpf(value)
    return value


def _finish(out, B: _Backend):
    if isinstance(out, dict):
        return {key: _finish(val, B) for key, val in out.items()}
    if isinstance(out, tuple):
        return tuple(_finish(val, B) for val in out)
    if B is _NUMPY and isinstance(out, (np.ndarray, np.generic, numbers.Real)) and np.ndim(out) == 0:
        return float(out)
    return out


def _formula(f):
    """Turn ``f(B, **numbers)`` into a public function: checks its arguments, picks the backend.

    The public function has ``f``'s signature without ``B`` plus a keyword ``backend`` (None: sympy if
    any argument is a sympy object, numpy otherwise). ``public.formula`` is ``f`` itself, so formulas
    can call each other inside one backend.
    """
    params = list(inspect.signature(f).parameters.values())[1:]
    signature = inspect.Signature(params)

    @functools.wraps(f)
    def public(*args, backend=None, **kwargs):
        bound = signature.bind(*args, **kwargs)
        B = _pick_backend(backend, bound.arguments.values())
        values = {name: _prepare(B, name, v) for name, v in bound.arguments.items()}
        with np.errstate(over="ignore"):          # a float overflows to inf; backend="mpmath" does not
            return _finish(f(B, **values), B)

    public.__signature__ = inspect.Signature(
        params + [inspect.Parameter("backend", inspect.Parameter.KEYWORD_ONLY, default=None)])
    public.formula = f
    return public


def dims(d, k, embedding: str, *, backend=None):
    """(d_E, d_emb) of Lemma I.1 for ``embedding`` "OH" or "BN".

    d_E bounds the squared norm of a center token [c; code] with c in [0,1]^d: OH d + 1 (a one-hot code
    has norm 1), BN d + ceil(log2 k) (at most ceil(log2 k) bits are 1). d_emb is the token width:
    OH d + k, BN d + ceil(log2 k). Symbolic d, k give ``ceiling(log(k, 2))``.
    """
    check_choice("embedding", embedding, EMBEDDINGS)
    B = _pick_backend(backend, (d, k))
    integers = all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in (d, k))
    d, k = _prepare(B, "d", d), _prepare(B, "k", k)
    if B is _NUMPY and integers:
        d, k = int(d), int(k)
    if embedding == "BN":
        if B is _SYMPY:
            bits = sp.ceiling(sp.log(k, 2))
        else:
            if isinstance(k, np.ndarray) or float(k) != int(k) or int(k) < 2:
                raise ValueError(f"k must be an integer >= 2 for the BN embedding, got {k!r}")
            bits = (int(k) - 1).bit_length()
        return (d + bits, d + bits) if integers and B is _NUMPY else _finish((d + bits, d + bits), B)
    return (d + 1, d + k) if integers and B is _NUMPY else _finish((d + 1, d + k), B)


@_formula
def norm_bounds(B, d, d_E, Gamma2):
    """Lemma I.1: bounds on the token norms of one layer of Eq. 4, for x_i, c_j in [0,1]^d.

    Returns a dict: ``X0`` = sqrt(d) (point tokens), ``C0`` = sqrt(d_E) (center tokens),
    ``X1`` = (1+Gamma2) sqrt(d) + Gamma2 sqrt(d_E) (point tokens after the first sublayer),
    ``C1`` = (1 + 2 Gamma2 + 2 Gamma2^2) sqrt(d_E) (the layer's center tokens, as the paper states it),
    ``C1_composed`` = C0 + Gamma2 X1 + Gamma2 C0 (the same triangle inequality without the final
    sqrt(d) <= sqrt(d_E) step), ``X1_theorem`` = (1 + 2 Gamma2) sqrt(d_E) (the key-norm bound that the
    proof of Theorem I.1 uses for head 3).
    Each attention head outputs a convex combination of V z'_j, so it adds at most Gamma2 max ||z'_j||.
    """
    X0, C0 = B.sqrt(d), B.sqrt(d_E)
    X1 = X0 + Gamma2 * C0 + Gamma2 * X0             # residual + head 1 (keys C0) + head 2 (keys X0)
    return {"X0": X0, "C0": C0, "X1": X1,
            "C1": (1 + 2 * Gamma2 + 2 * Gamma2 ** 2) * C0,
            "C1_composed": C0 + Gamma2 * X1 + Gamma2 * C0,   # residual + head 3 (keys X1) + head 4 (keys C0)
            "X1_theorem": (1 + 2 * Gamma2) * C0}


@_formula
def head_quantities(B, n, k, d, d_E, Gamma2):
    """Table 3: {mu: (m, m', rho, rho')} for the four heads of Eq. 4, from :func:`norm_bounds`.

    Head 1 A(X0, C0), head 2 A(X0, X0), head 3 A(C0, X1), head 4 A(C0, C0): m queries with norms
    <= rho, m' keys with norms <= rho'.
    """
    nb = norm_bounds.formula(B, d, d_E, Gamma2)
    return {1: (n, k, nb["X0"], nb["C0"]), 2: (n, n, nb["X0"], nb["X0"]),
            3: (k, n, nb["C0"], nb["X1"]), 4: (k, k, nb["C0"], nb["C0"])}


@_formula
def delta(B, rho, rho_p, Gamma1, gamma, d_emb):
    """Lemma I.4: the score dispersion bound (gamma / sqrt(d_emb)) Gamma1^2 (rho + rho')^2."""
    return gamma / B.sqrt(d_emb) * Gamma1 ** 2 * (rho + rho_p) ** 2


@_formula
def softmax_bound(B, delta, m):
    """Lemma I.3 as stated: exp(delta) / m bounds ||softmax(v)||_inf and, as stated, the l1->l1
    Lipschitz constant of softmax over vectors v of length m with dispersion <= delta."""
    return B.exp(delta) / m


@_formula
def softmax_l1_sharp(B, delta, m):
    """The exact l1->l1 Lipschitz constant of softmax on {v in R^m : max v - min v <= delta}.

    The Jacobian diag(s) - s s^T has l1 operator norm max_j 2 s_j (1 - s_j), and s_j ranges up to
    s+ = e^delta / (e^delta + m - 1); so the constant is 1/2 if s+ >= 1/2 (e^delta >= m - 1), else
    2 s+ (1 - s+) = 2 e^delta (m - 1) / (e^delta + m - 1)^2. For m >= 3 and small delta this exceeds
    :func:`softmax_bound` (up to a factor 2): Lemma I.3's second inequality, as stated, is false there.
    """
    E = B.exp(delta)
    return B.where(E >= m - 1, B.half, 2 * E * (m - 1) / (E + m - 1) ** 2)


def _c(B, gamma, d_emb):
    return gamma / B.sqrt(d_emb)


@_formula
def kappa2(B, m, rho_p):
    """Lemma I.5 (value stability): kappa2 = m rho'."""
    return m * rho_p


def _kappa3_core(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    return 2 * _c(B, gamma, d_emb) * m * Gamma1 * Gamma2 * rho * rho_p * (rho + rho_p)


def _kappa4_core(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    return 2 * _c(B, gamma, d_emb) * m * Gamma1 * Gamma2 * rho_p ** 2 * (rho + rho_p)


@_formula
def kappa3(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    """Lemma I.6 (query stability): 2 (gamma/sqrt(d_emb)) m Gamma1 Gamma2 rho rho' (rho+rho') exp(delta)."""
    return _kappa3_core(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb) * B.exp(
        delta.formula(B, rho, rho_p, Gamma1, gamma, d_emb))


@_formula
def kappa4(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    """Lemma I.7 (key stability): 2 (gamma/sqrt(d_emb)) m Gamma1 Gamma2 rho'^2 (rho+rho') exp(delta)."""
    return _kappa4_core(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb) * B.exp(
        delta.formula(B, rho, rho_p, Gamma1, gamma, d_emb))


@_formula
def kappa3_sharpened(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    """The sharp constant of Lemma I.6: 2 (gamma/sqrt(d_emb)) m Gamma1 Gamma2 rho rho'^2
    = kappa3 exp(-delta) rho' / (rho + rho') (proof in the book).

    Moving Q moves every score of a query by the same amount plus 2c <K(z'_l - z_bar), dQ z>, so the
    output moves by 2c V Cov_s(Z') K^T dQ z, with Cov_s the keys' covariance under the attention weights
    (norm <= rho'^2). Two groups of keys at +-rho' w, equally weighted, attain it.
    """
    return 2 * _c(B, gamma, d_emb) * m * Gamma1 * Gamma2 * rho * rho_p ** 2


@_formula
def kappa4_sharpened(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    """kappa4 without its factor exp(delta): also a valid constant for Lemma I.7 (proof in the book).

    The softmax Jacobian J = diag(s) - s s^T maps the score change u to s_l (u_l - u_bar), whose
    l1 norm is the s-mean absolute deviation of u, at most max |u_l|; the paper's route through Lemma
    I.3 pays exp(delta)/m' times m' max |u_l| instead.
    """
    return _kappa4_core(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb)


@_formula
def kappa5(B, m, m_p, rho, rho_p, Gamma1, Gamma2, gamma, d_emb):
    """Lemma I.8 (key-token stability): (m Gamma2 / m') (1 + 2 (gamma/sqrt(d_emb)) Gamma1^2 rho' (rho+rho')) exp(delta)."""
    c = _c(B, gamma, d_emb)
    return (m * Gamma2 / m_p * (1 + 2 * c * Gamma1 ** 2 * rho_p * (rho + rho_p))
            * B.exp(delta.formula(B, rho, rho_p, Gamma1, gamma, d_emb)))


@_formula
def r_star(B, Gamma2, d_E):
    """The bound r* = 4 (1+Gamma2)^4 d_E on the squared point-to-output-center distances (Lemma I.2)."""
    return 4 * (1 + Gamma2) ** 4 * d_E


@_formula
def omega_tau(B, delta, tau, k):
    """Softmax's input-stability constant of Prop. H.2: omega_tau = exp(delta / tau) / k."""
    return B.exp(delta / tau) / k


@_formula
def loss_lipschitz(B, r_star, tau, k):
    """Prop. H.2 (NE): |L~(r) - L~(r')| <= (1 + r* omega_tau / tau) ||r - r'||_1 on [0, r*]^k."""
    return 1 + r_star * omega_tau.formula(B, r_star, tau, k) / tau


@_formula
def kappa1(B, n, k, Gamma2, d_E, tau):
    """Lemma I.2: kappa1 = 4 n (1+Gamma2)^2 sqrt(d_E) (1 + r* omega_tau / tau), r* = 4 (1+Gamma2)^4 d_E."""
    rs = r_star.formula(B, Gamma2, d_E)
    return 4 * n * (1 + Gamma2) ** 2 * B.sqrt(d_E) * loss_lipschitz.formula(B, rs, tau, k)


@_formula
def _distance_L2(B, k):
    return B.sqrt(1 - 1 / k)


@_formula
def _distance_NE(B, k):
    return B.sqrt(2 * B.log(k))


def smoothing_distance_bound(k, regularizer: str, *, backend=None):
    """Prop. H.1: ||e_{argmin r} - P_Omega(-r/tau)||_2 <= sqrt(1 - 1/k) (L2) or sqrt(2 log k) (NE).

    Both are sqrt(2 (max Omega - min Omega)) over the simplex, for Omega 1-strongly convex.
    """
    check_choice("regularizer", regularizer, REGULARIZERS)
    return (_distance_L2 if regularizer == "L2" else _distance_NE)(k, backend=backend)


@_formula
def _gap_L2(B, k, tau):
    return tau * (1 - 1 / k) / 2


@_formula
def _gap_NE(B, k, tau):
    return tau * B.log(k)


def smoothing_gap_bound(k, tau, regularizer: str, *, backend=None):
    """Per point, L~ - L <= tau (max Omega - min Omega): tau (1 - 1/k) / 2 (L2), tau log k (NE)."""
    check_choice("regularizer", regularizer, REGULARIZERS)
    return (_gap_L2 if regularizer == "L2" else _gap_NE)(k, tau, backend=backend)


@_formula
def eq170_constants(B, Gamma1, Gamma2):
    """The constants c1..c7 of Theorem I.1 (Eq. 170), as a dict ``{"c1": ..., ..., "c7": ...}``."""
    c1 = 1 + 2 * Gamma2
    c4 = 4 * Gamma1 ** 2 * c1 ** 2
    c5 = 4 * Gamma1 * Gamma2 ** 2
    return {"c1": c1, "c2": 4 * Gamma1 * Gamma2 * c1 ** 3, "c3": 4 * Gamma1 ** 2 * (1 + Gamma2) ** 2,
            "c4": c4, "c5": c5, "c6": c4 * c5, "c7": 4 * Gamma1 ** 2 * ((1 + Gamma2) ** 2 + 1)}


def _heads(B, n, k, d, d_E, Gamma2):
    """The (m, m', rho, rho') that the proof of Theorem I.1 uses (head 3 keys: sqrt(d_E)(1+2 Gamma2))."""
    nb = norm_bounds.formula(B, d, d_E, Gamma2)
    return {1: (n, k, nb["X0"], nb["C0"]), 2: (n, n, nb["X0"], nb["X0"]),
            3: (k, n, nb["C0"], nb["X1_theorem"]), 4: (k, k, nb["C0"], nb["C0"])}


@_formula
def phi_coefficients(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma):
    """Per-matrix sensitivities of the layer's centers, from Lemmas I.5-I.8 (proof of Theorem I.1).

    ``{"Q1": .., "K1": .., "V1": .., ..., "V4": ..}``: ||C(Theta) - C(Theta')||_{2,1} <=
    sum_W coefficient[W] ||W - W'||. Heads 1 and 2 act through X1, which head 3 reads as keys, so their
    coefficients carry the key-token factor kappa5 of head 3.
    """
    h = _heads(B, n, k, d, d_E, Gamma2)
    k5 = kappa5.formula(B, *h[3], Gamma1, Gamma2, gamma, d_emb)
    out = {}
    for mu, (m, m_p, rho, rho_p) in h.items():
        factor = k5 if mu in (1, 2) else 1
        out[f"Q{mu}"] = factor * kappa3.formula(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb)
        out[f"K{mu}"] = factor * kappa4.formula(B, m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb)
        out[f"V{mu}"] = factor * kappa2.formula(B, m, rho_p)
    return out


@_formula
def phi(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma):
    """Theorem I.1 as stated: phi = max{kappa5 kappa4(head 1), kappa5 kappa2(head 1), kappa4(head 3),
    kappa2(head 3)}, with kappa5 that of head 3 (the four terms left of Eq. 170's maximum)."""
    co = phi_coefficients.formula(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma)
    return B.max(co["K1"], co["V1"], co["K3"], co["V3"])


@_formula
def phi_sum(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma):
    """The sum of the twelve :func:`phi_coefficients`: a valid constant for Theorem I.1 when
    ||Theta - Theta'|| is the largest of the twelve spectral norms (the paper's norm)."""
    return sum(phi_coefficients.formula(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma).values())


@_formula
def phi_eq170(B, k, d_E, d_emb, Gamma1, Gamma2, gamma):
    """Theorem I.1's phi in the c1..c7 form of Eq. 170 (our reconstruction from the four-term max).

    With c = gamma / sqrt(d_emb):
    max{ k d_E^{3/2} e^{c7 c d_E} (c5 c + c6 c^2 d_E),  k Gamma2 sqrt(d_E) (1 + c4 c d_E) e^{c3 c d_E},
         c2 c k d_E^{3/2} e^{c3 c d_E},  c1 k sqrt(d_E) }.
    Each term bounds the matching term of :func:`phi` from above (using sqrt(d) <= sqrt(d_E) and
    1 + c1 <= 2 c1), which the book checks symbolically.
    """
    cs = eq170_constants.formula(B, Gamma1, Gamma2)
    c = _c(B, gamma, d_emb)
    r = B.sqrt(d_E)
    return B.max(k * d_E * r * B.exp(cs["c7"] * c * d_E) * (cs["c5"] * c + cs["c6"] * c ** 2 * d_E),
                 k * Gamma2 * r * (1 + cs["c4"] * c * d_E) * B.exp(cs["c3"] * c * d_E),
                 cs["c2"] * c * k * d_E * r * B.exp(cs["c3"] * c * d_E),
                 cs["c1"] * k * r)


@_formula
def phi_prime(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma, tau):
    """Theorem I.2 (Theorem 3.1): phi' = kappa1 phi, the Lipschitz constant of the loss in Theta."""
    return (kappa1.formula(B, n, k, Gamma2, d_E, tau)
            * phi.formula(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma))


@_formula
def phi_prime_sum(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma, tau):
    """kappa1 * :func:`phi_sum`: Theorem I.2's constant with the corrected phi."""
    return (kappa1.formula(B, n, k, Gamma2, d_E, tau)
            * phi_sum.formula(B, n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma))


@_formula
def alpha_informal(B, n, k, d_E, d_emb, gamma, tau, omega):
    """Theorem 3.1's informal Lipschitz constant, up to its O(.) constant, with omega_tau given:

    (k n omega / tau) max{1, gamma^2} sqrt(d_E) max{1, (d_E / sqrt(d_emb))^2} exp(gamma d_E / sqrt(d_emb)).
    OH: d_E = d + 1, d_emb = d + k; BN: d_E = d_emb = d + ceil(log2 k).
    """
    return (k * n * omega / tau * B.max(1, gamma ** 2) * B.sqrt(d_E) * B.max(1, d_E ** 2 / d_emb)
            * B.exp(gamma * d_E / B.sqrt(d_emb)))


def lemma_constant(lemma: str, m, m_p, rho, rho_p, Gamma1, Gamma2, gamma, d_emb, *, backend=None):
    """The constant of ``lemma`` ("I.5" kappa2, "I.6" kappa3, "I.7" kappa4, "I.8" kappa5)."""
    check_choice("lemma", lemma, LEMMAS)
    if lemma == "I.5":
        return kappa2(m, rho_p, backend=backend)
    if lemma == "I.8":
        return kappa5(m, m_p, rho, rho_p, Gamma1, Gamma2, gamma, d_emb, backend=backend)
    f = kappa3 if lemma == "I.6" else kappa4
    return f(m, rho, rho_p, Gamma1, Gamma2, gamma, d_emb, backend=backend)


# Table 2 of the brief (its arrows were garbled in the text and rebuilt from the formulas):
# +1 the bound grows with the term, -1 it shrinks, 0 it does not depend on it.
TABLE2_STORED = {
    "delta":  {"m": 0, "m_p": 0, "rho": 1, "rho_p": 1, "Gamma1": 1, "Gamma2": 0, "gamma": 1, "d_emb": -1},
    "kappa2": {"m": 1, "m_p": 0, "rho": 0, "rho_p": 1, "Gamma1": 0, "Gamma2": 0, "gamma": 0, "d_emb": 0},
    "kappa3": {"m": 1, "m_p": 0, "rho": 1, "rho_p": 1, "Gamma1": 1, "Gamma2": 1, "gamma": 1, "d_emb": -1},
    "kappa4": {"m": 1, "m_p": 0, "rho": 1, "rho_p": 1, "Gamma1": 1, "Gamma2": 1, "gamma": 1, "d_emb": -1},
    "kappa5": {"m": 1, "m_p": -1, "rho": 1, "rho_p": 1, "Gamma1": 1, "Gamma2": 1, "gamma": 1, "d_emb": -1},
}


def _symbols():
    names = ("m", "m_p", "rho", "rho_p", "Gamma1", "Gamma2", "gamma", "d_emb")
    latex = ("m", "m'", r"\rho", r"\rho'", r"\Gamma_1", r"\Gamma_2", r"\gamma", r"d_{\mathsf{emb}}")
    return {n: sp.Symbol(l, positive=True) for n, l in zip(names, latex)}


def sign_of_derivative(expr, x) -> int:
    """+1, -1 or 0: the sign of d expr / d x for all positive symbols, proved by sympy.

    expr is positive, so the sign is that of d log(expr) / dx, a sum of terms that sympy can sign.
    Raises if sympy cannot decide (the sign would change within the domain).
    """
    if not isinstance(expr, sp.Expr) or not isinstance(x, sp.Symbol):
        raise TypeError(f"expr must be a sympy expression and x a sympy Symbol, got "
                        f"{type(expr).__name__} and {type(x).__name__}")
    if not expr.has(x):
        return 0
    g = sp.expand(sp.diff(sp.expand_log(sp.log(expr), force=True), x))
    if g.is_positive:
        return 1
    if g.is_negative:
        return -1
    raise ValueError(f"the sign of d/d{x} of {expr} is not constant over positive arguments: {g}")


def table2_derived() -> dict:
    """Table 2 derived: {bound: {term: sign of the partial derivative}} over positive arguments.

    Bounds: delta (Lemma I.4), the Lemma I.3 bound exp(delta)/m' (its vector has m' entries in
    attention), kappa2..kappa5 (Lemmas I.5-I.8). The kappas depend on (rho, rho', Gamma1, gamma, d_emb)
    also through exp(delta).
    """
    s = _symbols()
    args = (s["rho"], s["rho_p"], s["Gamma1"], s["Gamma2"], s["gamma"], s["d_emb"])
    dl = delta(s["rho"], s["rho_p"], s["Gamma1"], s["gamma"], s["d_emb"])
    exprs = {
        "delta": dl,
        "softmax (I.3)": softmax_bound(dl, s["m_p"]),
        "kappa2": kappa2(s["m"], s["rho_p"]),
        "kappa3": kappa3(s["m"], *args),
        "kappa4": kappa4(s["m"], *args),
        "kappa5": kappa5(s["m"], s["m_p"], *args),
    }
    return {name: {t: sign_of_derivative(e, x) for t, x in s.items()} for name, e in exprs.items()}


def table3_symbols():
    """The positive symbols n, k, d, d_E, Gamma2 of Table 3, as a dict by name."""
    return {name: sp.Symbol(latex, positive=True) for name, latex in
            (("n", "n"), ("k", "k"), ("d", "d"), ("d_E", "d_E"), ("Gamma2", r"\Gamma_2"))}


def table3_stored() -> dict:
    """Table 3 as stored in the brief: {mu: (m, m', rho, rho')} in the symbols n, k, d, d_E, Gamma2."""
    s = table3_symbols()
    n, k, d, dE, G2 = s["n"], s["k"], s["d"], s["d_E"], s["Gamma2"]
    return {1: (n, k, sp.sqrt(d), sp.sqrt(dE)), 2: (n, n, sp.sqrt(d), sp.sqrt(d)),
            3: (k, n, sp.sqrt(dE), (1 + G2) * sp.sqrt(d) + G2 * sp.sqrt(dE)),
            4: (k, k, sp.sqrt(dE), sp.sqrt(dE))}


def table3_derived(embedding: str | None = None) -> dict:
    """Table 3 derived from Lemma I.1 (:func:`head_quantities`), symbolically.

    ``embedding=None`` keeps d_E as a symbol; "OH" or "BN" substitutes its d_E in terms of d and k.
    """
    s = table3_symbols()
    rows = head_quantities(s["n"], s["k"], s["d"], s["d_E"], s["Gamma2"])
    if embedding is None:
        return rows
    dE, _ = dims(s["d"], s["k"], embedding)
    return {mu: tuple(sp.sympify(v).subs(s["d_E"], dE) for v in row) for mu, row in rows.items()}


# ----------------------------------------------------------------------------------------------------
# Part 2: the sandwich (torch, float64)
# ----------------------------------------------------------------------------------------------------

DTYPE = torch.float64
_RTOL = 1e-7          # a ratio this close above a constant is rounding, not a counterexample
_MIN_STEP = 1e-6      # pairs closer than this (relative to the argument's bound) are not counted


def _quotient(num, den, scale):
    """num / den where den >= _MIN_STEP * scale, else 0: a secant over a smaller step measures the
    rounding of float64, not the function (an ascent would otherwise climb on rounding noise)."""
    ok = den >= _MIN_STEP * scale
    return torch.where(ok, num / torch.where(ok, den, torch.ones_like(den)), torch.zeros_like(num))


def norm21(A: torch.Tensor) -> torch.Tensor:
    """||A||_{2,1}: the sum of the l2 norms of the tokens (rows of the last two dims); shape A.shape[:-2]."""
    A = check_tensor("A", A)
    if A.dim() < 2:
        raise ValueError(f"A must have at least 2 dimensions (tokens, width), got shape {tuple(A.shape)}")
    return A.norm(dim=-1).sum(-1)


def _spec(W: torch.Tensor) -> torch.Tensor:
    return torch.linalg.matrix_norm(W, ord=2)


def random_spectral(shape, norm: float, *, generator: torch.Generator | None = None,
                    dtype=DTYPE) -> torch.Tensor:
    """A Gaussian matrix (or batch of matrices) of shape ``shape`` rescaled to spectral norm ``norm``."""
    norm = float(norm)
    if not (math.isfinite(norm) and norm >= 0):
        raise ValueError(f"norm must be a finite number >= 0, got {norm!r}")
    if len(shape) < 2:
        raise ValueError(f"shape must have at least 2 dimensions, got {tuple(shape)}")
    G = torch.randn(*shape, generator=generator, dtype=dtype)
    return G * (norm / _spec(G)[..., None, None])


def _shrink_matrix(W, bound):
    """W scaled into the spectral ball of radius ``bound`` (unchanged inside it)."""
    s = _spec(W)
    return W * torch.clamp(bound / s.clamp_min(1e-300), max=1.0)[..., None, None]


def _shrink_tokens(Z, bound):
    r = Z.norm(dim=-1, keepdim=True)
    return Z * torch.clamp(bound / r.clamp_min(1e-300), max=1.0)


def _tokens(raw, bound, regime):
    """Tokens with norms <= bound; regime "box" also keeps every entry in [0, 1] (Assumption I.1)."""
    Z = torch.sigmoid(raw) if regime == "box" else raw
    return _shrink_tokens(Z, bound)


def _attn(Z, Zp, Q, K, V, gamma):
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
        check_int("m", self.m, 1)
        check_int("m_p", self.m_p, 1)
        check_int("d_emb", self.d_emb, 1)
        check_positive("gamma", self.gamma)
        for name in ("Gamma1", "Gamma2", "rho", "rho_p"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
                    math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive finite number, got {value!r}")
        check_choice("tokens", self.tokens, ("ball", "box"))

    def constant(self, lemma: str, *, backend=None):
        """The lemma's constant (kappa2..kappa5) at these quantities."""
        return lemma_constant(lemma, self.m, self.m_p, self.rho, self.rho_p, self.Gamma1, self.Gamma2,
                              self.gamma, self.d_emb, backend=backend)

    @property
    def delta(self) -> float:
        return delta(self.rho, self.rho_p, self.Gamma1, self.gamma, self.d_emb)


@dataclass
class SandwichResult:
    """The outcome of a sandwich: the proved constant and the largest ratios seen below it.

    ``random`` is the largest ratio over random pairs, ``ascent`` over gradient ascent (each
    re-evaluated with the library's operator); ``ratio`` the larger of the two; ``pair`` holds the
    tensors of the best pair (a counterexample when ``violated``); ``slack`` = bound / ratio.
    """
    name: str
    bound: float
    random: float
    ascent: float
    pair: dict = field(repr=False, default_factory=dict)

    @property
    def ratio(self) -> float:
        return max(self.random, self.ascent)

    @property
    def violated(self) -> bool:
        """ratio > bound by more than float64 rounding of a secant (steps >= 1e-6): 1e-7 relative."""
        return self.ratio > self.bound * (1 + _RTOL)

    @property
    def slack(self) -> float:
        return self.bound / self.ratio if self.ratio > 0 else math.inf


def _generator(seed):
    g = torch.Generator().manual_seed(check_int("seed", seed, 0))
    return g


def _one_thread(f):
    """Run ``f`` on one intra-op thread (restored afterwards).

    The searches apply thousands of operations to tiny tensors; with several threads each of them pays
    a synchronisation far larger than the work (milliseconds instead of microseconds on a busy machine).
    """
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return f(*args, **kwargs)
        finally:
            torch.set_num_threads(before)
    return wrapper


def _ascend(raw: dict, objective, steps: int, lr: float):
    """Adam ascent of ``objective(raw) -> (R,)`` per restart; returns the best raw values per restart."""
    for t in raw.values():
        t.requires_grad_(True)
    opt = torch.optim.Adam(list(raw.values()), lr=lr)
    best = torch.full((next(iter(raw.values())).shape[0],), -math.inf, dtype=DTYPE)
    best_raw = {k: v.detach().clone() for k, v in raw.items()}
    for _ in range(steps + 1):
        value = objective(raw)
        with torch.no_grad():
            ok = torch.isfinite(value)
            better = ok & (value > best)
            best = torch.where(better, value, best)
            for key, v in raw.items():
                best_raw[key][better] = v.detach()[better]
        opt.zero_grad()
        (-torch.where(ok, torch.log(value.clamp_min(1e-300)), torch.zeros_like(value)).sum()).backward()
        opt.step()
    return best_raw


# --- Lemma I.3 ---------------------------------------------------------------------------------------

@_one_thread
def softmax_sandwich(m: int, delta_value: float, *, restarts: int = 16, steps: int = 200, lr: float = 0.05,
                     random_pairs: int = 512, seed: int = 0) -> dict:
    """Lemma I.3 on vectors of length m with dispersion <= delta: the largest observed
    ||softmax(v) - softmax(v')||_1 / ||v - v'||_1, against the stated exp(delta)/m and the sharp constant.

    Half of the ascent's restarts start near the extreme vectors (one entry delta, the others 0), and
    the first at the pair that attains the sharp constant in the limit.
    Returns ``{"stated": SandwichResult (bound exp(delta)/m), "sharp": SandwichResult (bound
    :func:`softmax_l1_sharp`), "linf": largest observed ||softmax(v)||_inf, "linf_bound": exp(delta)/m}``.
    """
    m = check_int("m", m, 2)
    dv = check_positive("delta_value", delta_value)
    g = _generator(seed)

    def vec(raw):                                     # entries in [0, delta]: dispersion <= delta
        return dv * (1 + torch.sin(raw)) / 2          # reaches 0 and delta without saturating

    def ratio(raw):
        v, w = vec(raw["v"]), vec(raw["w"])
        num = (torch.softmax(v, -1) - torch.softmax(w, -1)).abs().sum(-1)
        return _quotient(num, (v - w).abs().sum(-1), dv)

    rnd = {"v": 4 * torch.randn(random_pairs, m, generator=g, dtype=DTYPE),
           "w": 4 * torch.randn(random_pairs, m, generator=g, dtype=DTYPE)}
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
    best = _ascend(raw, ratio, steps, lr)
    with torch.no_grad():
        r_asc = ratio(best)
        i = int(r_asc.argmax())
        pair = {"v": vec(best["v"][i]), "v_prime": vec(best["w"][i])}
        # the ||softmax||_inf bound: push one entry to delta and the rest to 0
        linf = max(float(linf), float(torch.softmax(vec(best["v"]), -1).max()))
    out = {}
    for name, bound in (("stated", softmax_bound(dv, m)), ("sharp", softmax_l1_sharp(dv, m))):
        out[name] = SandwichResult(f"Lemma I.3 ({name})", float(bound), float(r_rand.max()), float(r_asc.max()),
                                   pair)
    out["linf"], out["linf_bound"] = linf, softmax_bound(dv, m)
    return out


# --- Lemmas I.4-I.8 ----------------------------------------------------------------------------------

def _init_attention(setting: AttentionSetting, R: int, g, lemma: str, h0: float):
    D, m, mp = setting.d_emb, setting.m, setting.m_p
    raw = {"Z": torch.randn(R, m, D, generator=g, dtype=DTYPE),
           "Zp": torch.randn(R, mp, D, generator=g, dtype=DTYPE),
           "Q": torch.randn(R, D, D, generator=g, dtype=DTYPE),
           "K": torch.randn(R, D, D, generator=g, dtype=DTYPE),
           "V": torch.randn(R, D, D, generator=g, dtype=DTYPE),
           "log_h": torch.full((R,), math.log(h0), dtype=DTYPE)}
    raw["E"] = torch.randn(*(raw["Zp"].shape if lemma == "I.8" else (R, D, D)), generator=g, dtype=DTYPE)
    if setting.tokens == "ball":   # start near the norm bounds
        raw["Z"] = raw["Z"] * (setting.rho / raw["Z"].norm(dim=-1, keepdim=True))
        raw["Zp"] = raw["Zp"] * (setting.rho_p / raw["Zp"].norm(dim=-1, keepdim=True))
    for key, bound in (("Q", setting.Gamma1), ("K", setting.Gamma1), ("V", setting.Gamma2)):
        raw[key] = raw[key] * (bound / _spec(raw[key]))[:, None, None]
    return raw


def _attention_pair(setting: AttentionSetting, lemma: str, raw: dict):
    """The constrained base point and its perturbation from the raw ascent variables."""
    s = setting
    Z = _tokens(raw["Z"], s.rho, s.tokens)
    Zp = _tokens(raw["Zp"], s.rho_p, s.tokens)
    Q = _shrink_matrix(raw["Q"], s.Gamma1)
    K = _shrink_matrix(raw["K"], s.Gamma1)
    V = _shrink_matrix(raw["V"], s.Gamma2)
    h = torch.exp(raw["log_h"].clamp(math.log(1e-6), math.log(4.0)))[:, None, None]
    base = {"Z": Z, "Zp": Zp, "Q": Q, "K": K, "V": V}
    new = dict(base)
    E = raw["E"]
    if lemma == "I.8":
        E = E / norm21(E)[:, None, None]
        if s.tokens == "box":      # move within [0,1] entries: perturb the pre-sigmoid tokens' image
            new["Zp"] = _shrink_tokens((Zp + h * s.rho_p * E).clamp(0, 1), s.rho_p)
        else:
            new["Zp"] = _shrink_tokens(Zp + h * s.rho_p * E, s.rho_p)
    else:
        key, bound = {"I.5": ("V", s.Gamma2), "I.6": ("Q", s.Gamma1), "I.7": ("K", s.Gamma1)}[lemma]
        E = E / _spec(E)[:, None, None]
        new[key] = _shrink_matrix(base[key] + h * bound * E, bound)
    return base, new


def _pair_ratio(lemma, base, new, gamma, op, scale):
    out = op(base["Z"], base["Zp"], base["Q"], base["K"], base["V"], gamma)
    out2 = op(new["Z"], new["Zp"], new["Q"], new["K"], new["V"], gamma)
    num = norm21(out - out2)
    key = {"I.5": "V", "I.6": "Q", "I.7": "K", "I.8": "Zp"}[lemma]
    diff = base[key] - new[key]
    den = norm21(diff) if lemma == "I.8" else _spec(diff)
    return _quotient(num, den, scale)


def _library_attention(Z, Zp, Q, K, V, gamma):
    """distance_attention (the library's Eq. 3) applied restart by restart."""
    outs = [distance_attention(Z[i:i + 1], Zp[i:i + 1], Q[i], K[i], V[i], gamma) for i in range(Z.shape[0])]
    return torch.cat(outs, 0)


def _check_attention_args(lemma, setting):
    check_choice("lemma", lemma, LEMMAS)
    if not isinstance(setting, AttentionSetting):
        raise TypeError(f"setting must be an AttentionSetting, got {type(setting).__name__} {setting!r}")


@_one_thread
def attention_sandwich(lemma: str, setting: AttentionSetting, *, restarts: int = 16, steps: int = 200,
                       lr: float = 0.05, random_pairs: int = 128, seed: int = 0,
                       bound: float | None = None) -> SandwichResult:
    """Lemmas I.5 (values), I.6 (queries), I.7 (keys), I.8 (key tokens) against their constant.

    The ratio is ||A(Z, Z'; Q, K, V) - A(...')||_{2,1} over ||V - V'||, ||Q - Q'||, ||K - K'|| (spectral)
    or ||Z' - Z''||_{2,1}; both points satisfy the setting's hypotheses. Random pairs use perturbation
    sizes from 1e-4 to 1 (relative to the norm bound); the ascent optimises everything (tokens, weights,
    direction, size) from ``restarts`` random starts. ``bound`` replaces the lemma's constant (to show
    that a wrong constant is caught). The best pair is re-evaluated with distance_attention.
    """
    _check_attention_args(lemma, setting)
    restarts = check_int("restarts", restarts, 1)
    steps = check_int("steps", steps, 0)
    random_pairs = check_int("random_pairs", random_pairs, 1)
    g = _generator(seed)
    gamma = setting.gamma
    scale = {"I.5": setting.Gamma2, "I.6": setting.Gamma1, "I.7": setting.Gamma1, "I.8": setting.rho_p}[lemma]

    def objective(raw):
        base, new = _attention_pair(setting, lemma, raw)
        return _pair_ratio(lemma, base, new, gamma, _attn, scale)

    rnd = _init_attention(setting, random_pairs, g, lemma, 1.0)
    rnd["log_h"] = math.log(1e-4) + (math.log(1.0) - math.log(1e-4)) * torch.rand(random_pairs, generator=g,
                                                                                      dtype=DTYPE)
    with torch.no_grad():
        base, new = _attention_pair(setting, lemma, rnd)
        r_rand = _pair_ratio(lemma, base, new, gamma, _attn, scale)
        i = int(r_rand.argmax())
        sel = lambda d: {k: v[i:i + 1] for k, v in d.items()}
        r_rand_lib = float(_pair_ratio(lemma, sel(base), sel(new), gamma, _library_attention, scale)[0])
    raw = _init_attention(setting, restarts, g, lemma, 1e-3)
    best = _ascend(raw, objective, steps, lr)
    with torch.no_grad():
        base, new = _attention_pair(setting, lemma, best)
        r_asc = _pair_ratio(lemma, base, new, gamma, _attn, scale)
        j = int(r_asc.argmax())
        b1, n1 = {k: v[j:j + 1] for k, v in base.items()}, {k: v[j:j + 1] for k, v in new.items()}
        r_asc_lib = float(_pair_ratio(lemma, b1, n1, gamma, _library_attention, scale)[0])
    key = {"I.5": "V", "I.6": "Q", "I.7": "K", "I.8": "Zp"}[lemma]
    pair = {**{k: v[0] for k, v in b1.items()}, key + "_prime": n1[key][0]}
    const = float(setting.constant(lemma)) if bound is None else float(bound)
    return SandwichResult(f"Lemma {lemma}", const, r_rand_lib, r_asc_lib, pair)


@_one_thread
def dispersion_sandwich(setting: AttentionSetting, *, restarts: int = 16, steps: int = 200, lr: float = 0.05,
                        random_pairs: int = 128, seed: int = 0) -> SandwichResult:
    """Lemma I.4: the largest observed score dispersion max_i D(v_i) against delta."""
    if not isinstance(setting, AttentionSetting):
        raise TypeError(f"setting must be an AttentionSetting, got {type(setting).__name__} {setting!r}")
    g = _generator(seed)
    s = setting

    def disp(raw):
        Z, Zp = _tokens(raw["Z"], s.rho, s.tokens), _tokens(raw["Zp"], s.rho_p, s.tokens)
        Q, K = _shrink_matrix(raw["Q"], s.Gamma1), _shrink_matrix(raw["K"], s.Gamma1)
        D = ((Z @ Q.transpose(-1, -2))[..., :, None, :] - (Zp @ K.transpose(-1, -2))[..., None, :, :]) ** 2
        v = -(s.gamma / math.sqrt(s.d_emb)) * D.sum(-1)
        return (v.amax(-1) - v.amin(-1)).amax(-1)

    with torch.no_grad():
        r_rand = float(disp(_init_attention(s, random_pairs, g, "I.6", 1.0)).max())
    best = _ascend(_init_attention(s, restarts, g, "I.6", 1.0), disp, steps, lr)
    with torch.no_grad():
        r = disp(best)
        j = int(r.argmax())
        pair = {"Z": _tokens(best["Z"][j], s.rho, s.tokens), "Zp": _tokens(best["Zp"][j], s.rho_p, s.tokens),
                "Q": _shrink_matrix(best["Q"][j], s.Gamma1), "K": _shrink_matrix(best["K"][j], s.Gamma1)}
    return SandwichResult("Lemma I.4", float(s.delta), r_rand, float(r.max()), pair)


# --- the layer of Eq. 4: Lemma I.1, Theorems I.1 and I.2 -------------------------------------------

def eq4_layer(Xbar: torch.Tensor, Cbar: torch.Tensor, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor,
              gamma: float = 1.0):
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


def one_layer(X: torch.Tensor, C: torch.Tensor, Q, K, V, embedding: str, gamma: float = 1.0,
              *, return_tokens: bool = False):
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
    a = lambda mu, Z, Zp: _attn(Z, Zp, Q[:, mu], K[:, mu], V[:, mu], gamma)
    Xbar1 = Xbar + a(0, Xbar, Cbar) + a(1, Xbar, Xbar)
    Cbar1 = Cbar + a(2, Cbar, Xbar1) + a(3, Cbar, Cbar)
    return Xbar1, Cbar1


def _library_layer(Xbar, Cbar, Q, K, V, gamma):
    outs = [eq4_layer(Xbar[i:i + 1], Cbar[i:i + 1], Q[i], K[i], V[i], gamma) for i in range(Xbar.shape[0])]
    return torch.cat([o[0] for o in outs]), torch.cat([o[1] for o in outs])


def _check_layer_args(d, k, n, embedding, gamma, Gamma1, Gamma2):
    d, k, n = check_int("d", d, 1), check_int("k", k, 2), check_int("n", n, 1)
    check_choice("embedding", embedding, EMBEDDINGS)
    check_positive("gamma", gamma)
    for name, v in (("Gamma1", Gamma1), ("Gamma2", Gamma2)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (math.isfinite(v) and v >= 0):
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    return d, k, n


def _init_layer(R, n, k, d, D, g, Gamma1, Gamma2, data_scale=3.0):
    raw = {"X": data_scale * torch.randn(R, n, d, generator=g, dtype=DTYPE),
           "C": data_scale * torch.randn(R, k, d, generator=g, dtype=DTYPE)}
    for key, bound in (("Q", Gamma1), ("K", Gamma1), ("V", Gamma2)):
        W = torch.randn(R, 4, D, D, generator=g, dtype=DTYPE)
        raw[key] = W * (bound / _spec(W))[..., None, None]
    return raw


def _layer_tokens(raw, embedding, Gamma1, Gamma2):
    X, C = torch.sigmoid(raw["X"]), torch.sigmoid(raw["C"])       # Assumption I.1: entries in [0,1]
    Xbar, Cbar = embed_points(X, C.shape[1], embedding), embed_centers(C, embedding)
    Q, K = _shrink_matrix(raw["Q"], Gamma1), _shrink_matrix(raw["K"], Gamma1)
    V = _shrink_matrix(raw["V"], Gamma2)
    return X, C, Xbar, Cbar, Q, K, V


@_one_thread
def norm_sandwich(d: int, k: int, n: int, embedding: str, *, gamma: float = 1.0, Gamma1: float = 1.0,
                  Gamma2: float = 1.0, restarts: int = 16, steps: int = 200, lr: float = 0.05,
                  random_pairs: int = 64, seed: int = 0) -> dict:
    """Lemma I.1 on forward passes of Eq. 4: the largest token norm of X0, C0, X1, C1 against the bound.

    Random tasks (entries of X, C uniform in [0,1]) with random weights of spectral norms Gamma1,
    Gamma2, then gradient ascent on each norm over data and weights. Returns {"X0": SandwichResult, ...};
    a SandwichResult's random/ascent fields hold norms, its bound the Lemma I.1 bound
    (C1: the paper's (1 + 2 Gamma2 + 2 Gamma2^2) sqrt(d_E)).
    """
    d, k, n = _check_layer_args(d, k, n, embedding, gamma, Gamma1, Gamma2)
    d_E, D = dims(d, k, embedding)
    nb = norm_bounds(d, d_E, Gamma2)
    g = _generator(seed)

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
            r_rand = norms(rnd, which)
            i = int(r_rand.argmax())
            r_rand = float(norms({kk: v[i:i + 1] for kk, v in rnd.items()}, which, _library_layer)[0])
        best = _ascend(_init_layer(restarts, n, k, d, D, g, Gamma1, Gamma2), lambda r: norms(r, which),
                       steps, lr)
        with torch.no_grad():
            r = norms(best, which)
            j = int(r.argmax())
            one = {kk: v[j:j + 1] for kk, v in best.items()}
            r_lib = float(norms(one, which, _library_layer)[0])
            X, C, *_, Q, K, V = _layer_tokens(one, embedding, Gamma1, Gamma2)
        out[which] = SandwichResult(f"Lemma I.1 {which}", float(nb[which]), r_rand, r_lib,
                                    {"X": X[0], "C": C[0], "Q": Q[0], "K": K[0], "V": V[0]})
    return out


def _theta_norm(dQ, dK, dV):
    """||Theta - Theta'||: the largest spectral norm of the twelve differences, per restart."""
    return torch.cat([_spec(dQ), _spec(dK), _spec(dV)], dim=-1).amax(-1)


@_one_thread
def layer_sandwich(d: int, k: int, n: int, embedding: str, *, target: str = "output", gamma: float = 1.0,
                   Gamma1: float = 1.0, Gamma2: float = 1.0, tau: float = 0.1, regularizer: str = "NE",
                   restarts: int = 16, steps: int = 200, lr: float = 0.05, random_pairs: int = 64,
                   seed: int = 0, bound: float | None = None) -> SandwichResult:
    """Theorem I.1 (``target="output"``: ||F(Theta) - F(Theta')||_{2,1}) or Theorem I.2 (``"loss"``:
    |L~(X, F(Theta)) - L~(X, F(Theta'))|) over ||Theta - Theta'|| (largest spectral norm of the twelve).

    Data X, C in [0,1]^d (Assumption I.1), weights within Gamma1, Gamma2 (Assumption I.2). The bound is
    phi (output) or phi' = kappa1 phi (loss) unless ``bound`` is given. Random pairs and gradient ascent
    over data, weights, direction and size; the best pair is re-evaluated with :func:`eq4_layer`.
    """
    from .losses import smoothed_loss

    d, k, n = _check_layer_args(d, k, n, embedding, gamma, Gamma1, Gamma2)
    check_choice("target", target, ("output", "loss"))
    tau = check_positive("tau", tau)
    check_choice("regularizer", regularizer, REGULARIZERS)
    d_E, D = dims(d, k, embedding)
    g = _generator(seed)

    def init(R, h0):
        raw = _init_layer(R, n, k, d, D, g, Gamma1, Gamma2)
        for key in ("dQ", "dK", "dV"):
            raw[key] = torch.randn(R, 4, D, D, generator=g, dtype=DTYPE)
        raw["log_h"] = torch.full((R,), math.log(h0), dtype=DTYPE)
        return raw

    def pair(raw):
        X, C, Xbar, Cbar, Q, K, V = _layer_tokens(raw, embedding, Gamma1, Gamma2)
        dirs = [raw[key] for key in ("dQ", "dK", "dV")]
        scale = _theta_norm(*dirs)[:, None, None, None]
        h = torch.exp(raw["log_h"].clamp(math.log(1e-6), math.log(4.0)))[:, None, None, None]
        Q2 = _shrink_matrix(Q + h * max(Gamma1, 1e-3) * dirs[0] / scale, Gamma1)
        K2 = _shrink_matrix(K + h * max(Gamma1, 1e-3) * dirs[1] / scale, Gamma1)
        V2 = _shrink_matrix(V + h * max(Gamma2, 1e-3) * dirs[2] / scale, Gamma2)
        return X, C, Xbar, Cbar, (Q, K, V), (Q2, K2, V2)

    def ratio(raw, layer=_batched_layer):
        X, C, Xbar, Cbar, th, th2 = pair(raw)
        F1 = layer(Xbar, Cbar, *th, gamma)[1][..., :d]
        F2 = layer(Xbar, Cbar, *th2, gamma)[1][..., :d]
        if target == "output":
            num = norm21(F1 - F2)
        else:
            num = (smoothed_loss(X, F1, tau, regularizer) - smoothed_loss(X, F2, tau, regularizer)).abs()
        den = _theta_norm(*(a - b for a, b in zip(th, th2)))
        return _quotient(num, den, max(Gamma1, Gamma2, 1e-3))

    rnd = init(random_pairs, 1.0)
    rnd["log_h"] = math.log(1e-4) + (math.log(1.0) - math.log(1e-4)) * torch.rand(random_pairs, generator=g,
                                                                                      dtype=DTYPE)
    with torch.no_grad():
        r = ratio(rnd)
        i = int(r.argmax())
        r_rand = float(ratio({kk: v[i:i + 1] for kk, v in rnd.items()}, _library_layer)[0])
    best = _ascend(init(restarts, 1e-3), ratio, steps, lr)
    with torch.no_grad():
        r = ratio(best)
        j = int(r.argmax())
        one = {kk: v[j:j + 1] for kk, v in best.items()}
        r_lib = float(ratio(one, _library_layer)[0])
        X, C, _, _, th, th2 = pair(one)
    if bound is None:
        args = (n, k, d, d_E, D, Gamma1, Gamma2, gamma)
        bound = phi(*args) if target == "output" else phi_prime(*args, tau)
    best_pair = {"X": X[0], "C": C[0], "Q": th[0][0], "K": th[1][0], "V": th[2][0],
                 "Q_prime": th2[0][0], "K_prime": th2[1][0], "V_prime": th2[2][0]}
    return SandwichResult(f"Theorem I.{1 if target == 'output' else 2}", float(bound), r_rand, r_lib, best_pair)


def phi_counterexample(d: int, k: int, n: int, embedding: str, *, Gamma1: float = 1.0, Gamma2: float = 1.0,
                       gamma: float = 1.0, h: float = 1e-6):
    """An explicit pair (Theta, Theta') against Theorem I.1's four-term max, when gamma Gamma1^2 is small.

    All points at 1_d, all centers at 1_d; Q = K = 0, so every head averages uniformly and the heads'
    value matrices compound: V1, V2 write along x_bar, V3 reads it into the first data coordinate y.
    The direction moves V1, V2, V3 and V4 at once (each by spectral norm h), and every contribution adds
    up along y, so that ||F(Theta) - F(Theta')||_{2,1} / h -> k (1 + 2 Gamma2) (||x_bar|| + ||c_bar||),
    which exceeds phi -> k (1 + 2 Gamma2) sqrt(d_E) as gamma Gamma1^2 -> 0: the single-matrix
    constants add, they do not take a maximum.

    Returns ``(ratio, X, C, (Q, K, V), (Q', K', V'))`` with the ratio computed by :func:`one_layer`.
    """
    d, k, n = _check_layer_args(d, k, n, embedding, gamma, Gamma1, Gamma2)
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
    V[0] = Gamma2 * torch.outer(xh, ch)            # V1 c_bar = Gamma2 ||c_bar|| x_hat
    V[1] = Gamma2 * torch.outer(xh, xh)            # V2 x_bar = Gamma2 ||x_bar|| x_hat
    V[2] = Gamma2 * torch.outer(y, xh)             # V3 x_hat = Gamma2 y
    dV = torch.zeros_like(V)
    dV[0], dV[1] = torch.outer(xh, ch), torch.outer(xh, xh)
    dV[2], dV[3] = torch.outer(y, xh), torch.outer(y, ch)
    Vp = V - h * dV                                 # inside the ball ||V_mu'|| <= Gamma2
    F1 = one_layer(X, C, Z, Z, V, embedding, gamma)
    F2 = one_layer(X, C, Z, Z, Vp, embedding, gamma)
    ratio = float(norm21(F1 - F2)[0]) / float(_theta_norm(Z, Z, V - Vp))
    return ratio, X, C, (Z, Z, V), (Z, Z, Vp)


# --- the loss: Lemma I.2, Props. H.1 and H.2 -------------------------------------------------------

def _smoothed_vector(r, tau, regularizer):
    """L~(r) = <P_Omega(-r/tau), r> for vectors r (..., k)."""
    if regularizer == "NE":
        P = torch.softmax(-r / tau, dim=-1)
    else:
        from entmax import sparsemax
        P = sparsemax(-r / tau, dim=-1)
    return (P * r).sum(-1)


@_one_thread
def loss_vector_sandwich(k: int, r_star_value: float, tau: float, *, restarts: int = 16, steps: int = 200,
                         lr: float = 0.05, random_pairs: int = 512, seed: int = 0) -> SandwichResult:
    """Prop. H.2 (NE): |L~(r) - L~(r')| / ||r - r'||_1 for r, r' in [0, r*]^k against 1 + r* omega_tau / tau
    (omega_tau = exp(r*/tau) / k, the dispersion of r being at most r*)."""
    k = check_int("k", k, 2)
    rs = check_positive("r_star_value", r_star_value)
    tau = check_positive("tau", tau)
    g = _generator(seed)

    def vec(raw):
        return rs * (1 + torch.sin(raw)) / 2

    def ratio(raw):
        r, r2 = vec(raw["r"]), vec(raw["w"])
        num = (_smoothed_vector(r, tau, "NE") - _smoothed_vector(r2, tau, "NE")).abs()
        return _quotient(num, (r - r2).abs().sum(-1), rs)

    rnd = {"r": 3 * torch.randn(random_pairs, k, generator=g, dtype=DTYPE),
           "w": 3 * torch.randn(random_pairs, k, generator=g, dtype=DTYPE)}
    with torch.no_grad():
        r_rand = float(ratio(rnd).max())
    raw = {"r": 3 * torch.randn(restarts, k, generator=g, dtype=DTYPE)}
    raw["w"] = raw["r"] + 0.01 * torch.randn(restarts, k, generator=g, dtype=DTYPE)
    best = _ascend(raw, ratio, steps, lr)
    with torch.no_grad():
        r = ratio(best)
        j = int(r.argmax())
    return SandwichResult("Prop. H.2", float(loss_lipschitz(rs, tau, k)), r_rand, float(r.max()),
                          {"r": vec(best["r"][j]), "r_prime": vec(best["w"][j])})


def smoothing_distances(r: torch.Tensor, tau: float, regularizer: str) -> torch.Tensor:
    """Prop. H.1's left side ||e_{argmin r} - P_Omega(-r / tau)||_2 for distance vectors r (..., k)."""
    r = check_tensor("r", r)
    tau = check_positive("tau", tau)
    check_choice("regularizer", regularizer, REGULARIZERS)
    if regularizer == "NE":
        P = torch.softmax(-r / tau, dim=-1)
    else:
        from entmax import sparsemax
        P = sparsemax(-r / tau, dim=-1)
    hard = torch.nn.functional.one_hot(r.argmin(-1), r.shape[-1]).to(r.dtype)
    return (hard - P).norm(dim=-1)


@_one_thread
def loss_sandwich(d: int, k: int, n: int, embedding: str, *, Gamma2: float = 1.0, tau: float = 1.0,
                  regularizer: str = "NE", restarts: int = 16, steps: int = 200, lr: float = 0.05,
                  random_pairs: int = 64, seed: int = 0) -> SandwichResult:
    """Lemma I.2: |L~(X, F) - L~(X, F')| / ||F - F'||_{2,1} against kappa1, for X in [0,1]^d and output
    centers F, F' whose norms obey Lemma I.1 (<= (1 + 2 Gamma2 + 2 Gamma2^2) sqrt(d_E))."""
    from .losses import smoothed_loss

    d, k, n = _check_layer_args(d, k, n, embedding, 1.0, 1.0, Gamma2)
    tau = check_positive("tau", tau)
    check_choice("regularizer", regularizer, REGULARIZERS)
    d_E, _ = dims(d, k, embedding)
    cb = float(norm_bounds(d, d_E, Gamma2)["C1"])
    g = _generator(seed)

    def init(R, h0):
        return {"X": 3 * torch.randn(R, n, d, generator=g, dtype=DTYPE),
                "F": cb * torch.randn(R, k, d, generator=g, dtype=DTYPE) / math.sqrt(d),
                "E": torch.randn(R, k, d, generator=g, dtype=DTYPE),
                "log_h": torch.full((R,), math.log(h0), dtype=DTYPE)}

    def ratio(raw):
        X = torch.sigmoid(raw["X"])
        F = _shrink_tokens(raw["F"], cb)
        E = raw["E"] / norm21(raw["E"])[:, None, None]
        h = torch.exp(raw["log_h"].clamp(math.log(1e-6), math.log(4.0)))[:, None, None]
        F2 = _shrink_tokens(F + h * cb * E, cb)
        num = (smoothed_loss(X, F, tau, regularizer) - smoothed_loss(X, F2, tau, regularizer)).abs()
        return _quotient(num, norm21(F - F2), cb)

    rnd = init(random_pairs, 1.0)
    rnd["log_h"] = math.log(1e-4) + (math.log(1.0) - math.log(1e-4)) * torch.rand(random_pairs, generator=g,
                                                                                      dtype=DTYPE)
    with torch.no_grad():
        r_rand = float(ratio(rnd).max())
    best = _ascend(init(restarts, 1e-3), ratio, steps, lr)
    with torch.no_grad():
        r = ratio(best)
        j = int(r.argmax())
        pair = {"X": torch.sigmoid(best["X"][j]), "F": _shrink_tokens(best["F"][j], cb)}
    return SandwichResult("Lemma I.2", float(kappa1(n, k, Gamma2, d_E, tau)), r_rand, float(r.max()), pair)


@_one_thread
def local_lipschitz(X: torch.Tensor, C: torch.Tensor, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor,
                    embedding: str, *, gamma: float = 1.0, tau: float = 0.1,
                    regularizer: str = "NE") -> torch.Tensor:
    """The local Lipschitz constant of each task's loss in Theta, in the paper's norm: (batch,).

    For L(Theta) = L~(X_b, F(X_b, C_b; Theta)), the smallest alpha with |dL[Delta]| <= alpha max_W ||Delta_W||
    is the dual norm of the gradient, sum over the twelve matrices of the nuclear norms of dL/dW.
    Q, K, V (4, d_emb, d_emb) are shared by all tasks.
    """
    from .losses import smoothed_loss

    X = check_tensor("X", X, 3)
    tau = check_positive("tau", tau)
    check_choice("regularizer", regularizer, REGULARIZERS)
    out = []
    for b in range(X.shape[0]):
        W = [w.detach().clone().requires_grad_(True) for w in (Q, K, V)]
        F = one_layer(X[b:b + 1], C[b:b + 1], *W, embedding, gamma)
        grads = torch.autograd.grad(smoothed_loss(X[b:b + 1], F, tau, regularizer).sum(), W)
        out.append(sum(torch.linalg.matrix_norm(gw, ord="nuc").sum() for gw in grads))
    return torch.stack(out)
