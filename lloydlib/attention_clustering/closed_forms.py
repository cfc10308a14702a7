"""Closed forms of "Attention-based clustering", derived in sympy from the model (not typed from the summary).

The summary gives three results for the layer T(X)_l = (c/L) sum_k x_k x_k^T A x_l ("Key results",
"Measured effects"): the oracle ratio 1 - 2/d, the identity-QKV ratio
(1 - 2/d)(1 + 2 sigma^2)/(1 + 6 sigma^2 + 12 sigma^4 + 4 d sigma^6), and the parameter-free layer's
unbiasedness, bound sigma^2 (d - 2) and conditional variance. :class:`ClosedForms` derives the population
(L = inf) and finite-L risks, optimal and unbiased scales and conditional variances from the reconstructed
model; :func:`manifold_profile` derives the population risk on the manifold M, which gives PGD's linear
rate. The book's chapter compares each with the summary and with Monte Carlo.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from .._validate import check_choice, check_int
from .heads import FORMS

__all__ = ["symbols", "numeric", "ClosedForms", "manifold_profile"]


class _Symbols(NamedTuple):
    d: object
    sigma: object
    L: object
    c: object
    K: object
    u: object


def symbols() -> _Symbols:
    """The sympy symbols of the closed forms: d, sigma, L, c (positive), K (positive integer), u in [0, 1]."""
    import sympy as sp

    return _Symbols(
        sp.Symbol("d", positive=True),
        sp.Symbol("sigma", positive=True),
        sp.Symbol("L", positive=True),
        sp.Symbol("c", positive=True),
        sp.Symbol("K", positive=True, integer=True),
        sp.Symbol("u", nonnegative=True),
    )


class _Diag(NamedTuple):
    """A d x d matrix diagonal in the basis (mu_1..mu_K, then any basis of the complement):
    p[j] on mu_j, q on the whole complement. Every matrix in the finite-L derivation has this form."""

    p: tuple
    q: object

    def __matmul__(self, other: _Diag) -> _Diag:
        return _Diag(tuple(x * y for x, y in zip(self.p, other.p)), self.q * other.q)


def numeric(expr, **values) -> float:
    """Evaluate a closed form at numbers, e.g. ``numeric(cf.risk_inf_opt, d=10, sigma=0.3)``.

    Keyword names are those of :func:`symbols` (d, sigma, L, c, K, u); a missing one raises.
    """
    import sympy as sp

    S = symbols()._asdict()
    unknown = set(values) - set(S)
    if unknown:
        raise ValueError(f"values must be among {sorted(S)}, got {sorted(unknown)}")
    out = sp.sympify(expr).subs({S[k]: sp.nsimplify(v) if isinstance(v, int) else v for k, v in values.items()})
    free = out.free_symbols
    if free:
        raise ValueError(f"the expression still depends on {sorted(map(str, free))}; give their values")
    return float(out)


class ClosedForms:
    """Closed forms for the layer T(X)_l = (c/L) sum_k x_k x_k^T A x_l (query token among the L keys).

    ``heads`` picks A: "identity" (A = I: the identity-QKV layer, R1 with d orthonormal heads),
    "oracle" (A = P, the projector on span(mu): R1 with the K heads on the centroids) or a pair
    (alpha, beta) for A = alpha P + beta (I - P). ``k`` is the number of centroids: an int, or "K" for
    a symbolic K (only the L = inf members then).

    Derivations (all on the mixture of :mod:`.data`; a = 1/K + sigma^2 and b = sigma^2 are M's eigenvalues
    on span(mu) and on its complement):

    * L = inf (``*_inf``): Mhat -> M, so T -> c M A x; in M's eigenbasis every matrix is diagonal, so
      E||x - T||^2 = tr((I - cMA)^T (I - cMA) M) is K times its value on span(mu) plus (d - K) times its
      value on the complement. The optimal c solves dR/dc = 0.
    * finite L (``*_L``, int k only): expand ||x_l - T_l||^2 and sort the sums over k, k' by which indices
      coincide (with l and with each other); independent tokens contribute M, N = E[||x||^2 x x^T] or
      their single-token moments (see :meth:`_finite`). Single-token moments reduce to expectations over
      g ~ N(0, I_K) (coordinates on span(mu)), S ~ chi^2_{d-K} (the squared noise norm off span(mu))
      and the component Z, using E g^(2m) = (2m-1)!! and E S^m = prod_{t<m} (d - K + 2t).
    """

    def __init__(self, k=2, heads="identity"):
        import sympy as sp

        self._sp = sp
        self.s = symbols()
        if isinstance(k, str):
            if k != "K":
                raise ValueError(f"k must be a positive integer or 'K' (symbolic), got {k!r}")
            self.k = self.s.K
        else:
            self.k = check_int("k", k, 1)
        if isinstance(heads, str):
            check_choice("heads", heads, ("identity", "oracle"))
            self.alpha, self.beta = (1, 1) if heads == "identity" else (1, 0)
        else:
            if not (isinstance(heads, tuple) and len(heads) == 2):
                raise TypeError(f"heads must be 'identity', 'oracle' or a pair (alpha, beta), got {heads!r}")
            self.alpha, self.beta = map(sp.sympify, heads)
        self.heads = heads
        K, s = self.k, self.s.sigma
        self.a = 1 / sp.sympify(K) + s**2
        self.b = s**2

    def _require_int_k(self):
        if not isinstance(self.k, int):
            raise ValueError("finite-L closed forms need an integer k; build ClosedForms(k=2) or k=3")

    # ------------------------------------------------------------------ L = inf
    def _blocks(self, plane, comp):
        """Trace of a matrix that is ``plane`` on span(mu) (K dims) and ``comp`` off it (d - K dims)."""
        return self.k * plane + (self.s.d - self.k) * comp

    @functools.cached_property
    def risk_inf(self):
        """R_inf(c) = E||x - c M A x||^2 (the population risk of :func:`.heads.population_risk` with G = A), in (d, sigma, c[, K])."""
        c, a, b = self.s.c, self.a, self.b
        plane = (1 - c * a * self.alpha) ** 2 * a  # eigenvalue of (I - cMA)^T (I - cMA) M on span(mu)
        comp = (1 - c * b * self.beta) ** 2 * b
        return self._sp.expand(self._blocks(plane, comp))

    @functools.cached_property
    def scale_inf(self):
        """The optimal scale c* = argmin_c R_inf(c)."""
        sp = self._sp
        (cstar,) = sp.solve(sp.diff(self.risk_inf, self.s.c), self.s.c)
        return sp.factor(cstar)

    @functools.cached_property
    def risk_inf_opt(self):
        """R_inf(c*)."""
        return self._sp.factor(self._sp.simplify(self.risk_inf.subs(self.s.c, self.scale_inf)))

    @functools.cached_property
    def optimal_quantizer_risk(self):
        """R(T*) = E||x - mu_Z||^2 = E||sigma xi||^2 = sigma^2 d."""
        return self.s.sigma**2 * self.s.d

    @functools.cached_property
    def ratio_inf(self):
        """R_inf(c*) / R(T*)."""
        return self._sp.factor(self._sp.simplify(self.risk_inf_opt / self.optimal_quantizer_risk))

    @functools.cached_property
    def mean_coef_inf(self):
        """E[T | Z = i] = m mu_i at L = inf: m = c a alpha (T = c M A x and M A mu_i = a alpha mu_i)."""
        return self.s.c * self.a * self.alpha

    @functools.cached_property
    def unbiased_scale_inf(self):
        """The c making the layer unbiased at L = inf (m = 1)."""
        (cu,) = self._sp.solve(self.mean_coef_inf - 1, self.s.c)
        return self._sp.factor(cu)

    @functools.cached_property
    def cond_var_inf(self):
        """tr Cov(T | Z) at L = inf, a function of c: Cov = c^2 M A (sigma^2 I) A M."""
        c, s = self.s.c, self.s.sigma
        return self._sp.expand(c**2 * s**2 * self._blocks(self.a**2 * self.alpha**2, self.b**2 * self.beta**2))

    @functools.cached_property
    def input_cond_var(self):
        """tr Cov(x | Z) = sigma^2 d."""
        return self.s.sigma**2 * self.s.d

    # ------------------------------------------------------------------ finite L
    def _E(self, f, z=None):
        """E over one token of a polynomial ``f(u, S)``; u: its coordinates on mu_1..mu_K, S: chi^2_{d-K}.

        ``z`` fixes the token's component (0-based); ``None`` averages over the K components.
        """
        sp, sig = self._sp, self.s.sigma
        if z is None:
            return sp.expand(sum(self._E(f, j) for j in range(self.k)) / self.k)
        g = sp.symbols(f"g1:{self.k + 1}")
        S = sp.Symbol("S", nonnegative=True)
        u = [(1 if j == z else 0) + sig * g[j] for j in range(self.k)]
        poly = sp.Poly(sp.expand(f(u, S)), *g, S)
        n = self.s.d - self.k

        def gauss(p):
            return 0 if p % 2 else sp.factorial2(p - 1)

        total = 0
        for powers, coef in poly.terms():
            *gp, sp_ = powers
            term = coef
            for p in gp:
                term *= gauss(p)
            for t in range(sp_):
                term *= n + 2 * t
            total += term
        return sp.expand(total)

    def _quad(self, B: _Diag):
        """x^T B x as a function of (u, S): sum_j B.p[j] u_j^2 + B.q sigma^2 S."""
        sig = self.s.sigma
        return lambda u, S: sum(p * uj**2 for p, uj in zip(B.p, u)) + B.q * sig**2 * S

    @functools.cached_property
    def _mats(self):
        self._require_int_k()
        sp, k, sig = self._sp, self.k, self.s.sigma
        ident = _Diag((1,) * k, 1)
        A = _Diag((self.alpha,) * k, self.beta)
        M = _Diag(
            tuple(self._E(lambda u, S, j=j: u[j] ** 2) for j in range(k)),
            sp.cancel(self._E(lambda u, S: sig**2 * S) / (self.s.d - k)),
        )
        norm2 = self._quad(ident)
        N = _Diag(
            tuple(self._E(lambda u, S, j=j: norm2(u, S) * u[j] ** 2) for j in range(k)),
            sp.cancel(self._E(lambda u, S: norm2(u, S) * sig**2 * S) / (self.s.d - k)),
        )
        return ident, A, M, N

    def _finite(self, z=None):
        """:meth:`_finite_terms`, derived once per ``z`` (several closed forms read them)."""
        cache = self.__dict__.setdefault("_finite_cache", {})
        if z not in cache:
            cache[z] = self._finite_terms(z)
        return cache[z]

    def _finite_terms(self, z=None):
        """(R0, B1, B2) with E||x_l - T_l||^2 = R0 - 2c B1 + c^2 B2, conditional on Z_l = z (or averaged).

        Expanding T_l = (c/L) sum_k x_k (x_k^T A x_l):
          E<x_l, T_l>  = (c/L)  sum_k E[(x_l^T x_k)(x_k^T A x_l)]
                         k != l  (L-1 terms): E_l[x_l^T M A x_l]
                         k == l  (1 term):    E[||x||^2 x^T A x]
          E||T_l||^2   = (c/L)^2 sum_{k,k'} E[(x_l^T A x_k)(x_k^T x_k')(x_k'^T A x_l)]
                         k, k', l distinct     ((L-1)(L-2)): E_l[x_l^T A M M A x_l]
                         k == k' != l          (L-1):        E_l[x_l^T A N A x_l]
                         k == l != k' or k' == l != k (2(L-1)): E[(x^T A x)(x^T M A x)]
                         k == k' == l          (1):          E[(x^T A x)^2 ||x||^2]
        """
        ident, A, M, N = self._mats
        L, E, q = self.s.L, (lambda f: self._E(f, z)), self._quad
        R0 = E(q(ident))
        B1 = ((L - 1) * E(q(M @ A)) + E(lambda u, S: q(ident)(u, S) * q(A)(u, S))) / L
        B2 = (
            (L - 1) * (L - 2) * E(q(A @ M @ M @ A))
            + (L - 1) * E(q(A @ N @ A))
            + 2 * (L - 1) * E(lambda u, S: q(A)(u, S) * q(M @ A)(u, S))
            + E(lambda u, S: q(A)(u, S) ** 2 * q(ident)(u, S))
        ) / L**2
        return R0, B1, B2

    @functools.cached_property
    def risk_L(self):
        """R_L(c) = E||x_l - T(X)_l||^2 at finite L, in (d, sigma, L, c)."""
        R0, B1, B2 = self._finite()
        c = self.s.c
        return self._sp.expand(R0 - 2 * c * B1 + c**2 * B2)

    @functools.cached_property
    def scale_L(self):
        """The finite-L optimal scale c*_L = B1 / B2."""
        _, B1, B2 = self._finite()
        return self._sp.factor(B1 / B2)

    @functools.cached_property
    def risk_L_opt(self):
        """R_L(c*_L) = R0 - B1^2 / B2."""
        R0, B1, B2 = self._finite()
        return self._sp.factor(self._sp.together(R0 - B1**2 / B2))

    @functools.cached_property
    def first_order_L(self):
        """r_1 in R_L(c*_L) = R_inf(c*) + r_1 / L + O(1/L^2): with eps = 1/L, R_L(c*_L) is a rational function
        P(eps) / Q(eps) with Q(0) != 0, and r_1 its derivative at eps = 0, (P'(0) Q(0) - P(0) Q'(0)) / Q(0)^2
        (the coefficient of eps in its series, without expanding the series)."""
        sp = self._sp
        eps = sp.Symbol("epsilon", positive=True)
        num, den = (sp.Poly(x, eps) for x in sp.fraction(sp.together(self.risk_L_opt.subs(self.s.L, 1 / eps))))
        p0, p1, q0, q1 = (x.coeff_monomial(m) for x in (num, den) for m in (1, eps))
        if q0 == 0:
            raise ValueError("R_L(c*_L) has no finite limit as L -> inf: no first-order term")
        return sp.factor(sp.simplify((p1 * q0 - p0 * q1) / q0**2))

    @functools.cached_property
    def mean_coef_L(self):
        """E[T_l | Z_l = 1] = m_L mu_1 at finite L, a function of (c, L): the components on the other
        centroids and off span(mu) vanish (odd moments), checked here."""
        sp = self._sp
        ident, A, M, _ = self._mats
        L, c, q = self.s.L, self.s.c, self._quad
        coefs = []
        for j in range(self.k):  # j-th coordinate on span(mu) of E[T | Z = 0]
            own = self._E(lambda u, S, j=j: u[j] * q(A)(u, S), 0)  # E[x_j (x^T A x) | Z = 0]
            ctx = (M @ A).p[j] * (1 if j == 0 else 0)  # (M A E[x | Z = 0])_j
            coefs.append(sp.expand(c / L * ((L - 1) * ctx + own)))
        assert all(sp.simplify(x) == 0 for x in coefs[1:]), coefs
        return sp.factor(coefs[0])

    @functools.cached_property
    def unbiased_scale_L(self):
        """The c making the finite-L layer unbiased (m_L = 1)."""
        (cu,) = self._sp.solve(self.mean_coef_L - 1, self.s.c)
        return self._sp.factor(cu)

    @functools.cached_property
    def cond_var_L(self):
        """tr Cov(T_l | Z_l = 1) at finite L, a function of (c, L): E[||T||^2 | Z] - ||E[T | Z]||^2."""
        _, _, B2 = self._finite(0)
        return self._sp.factor(self._sp.expand(self.s.c**2 * B2 - self.mean_coef_L**2))


@functools.cache
def manifold_profile(k: int = 2, form: str = "R1"):
    """The population (L = inf) risk on the manifold M: returns (f(u), c_max) as sympy expressions in (u, sigma, c).

    With lambda_h = cos(theta_h) mu_h + sin(theta_h) w_h (w_h orthonormal and off span(mu): a point of M),
    the risk is tr M + sum_h f(u_h) with u_h = cos^2 theta_h, for R1 and R2 alike (the decoupling into a
    sum over heads is checked here, not assumed). Derived from tr M - 2c tr(BM) + c^2 tr(B^T B M) with
    explicit head vectors in the 2K-dim span of (mu_h, w_h), where M = diag(a, ..., a, b, ..., b) and
    B = M G (R1) or sum_h (lambda_h^T M lambda_h) lambda_h lambda_h^T (R2).

    f' <= 0 on [0, 1] (so the centroids, u = 1, are the minimisers on M and PGD on M goes there) iff
    c <= c_max, the root of f'(1) = 0: for R1 because f is convex in u; for R2 because
    f'(u) = c (a - b) m (3 c m - 4) with m = b + (a - b) u <= a. Near u = 1, one Riemannian step of size
    eta multiplies each head's angle to its centroid by 1 + 2 eta f'(1): the linear rate.
    """
    import sympy as sp

    k = check_int("k", k, 1)
    check_choice("form", form, FORMS)
    S = symbols()
    c, u = S.c, S.u
    a, b = 1 / sp.Integer(k) + S.sigma**2, S.sigma**2
    us = sp.symbols(f"u1:{k + 1}", nonnegative=True)  # u_h = cos^2 theta_h
    Msub = sp.diag(*([a] * k + [b] * k))  # M on span(mu_1..mu_K, w_1..w_K)
    heads = [
        sp.Matrix([sp.sqrt(us[h]) if i == h else sp.sqrt(1 - us[h]) if i == k + h else 0 for i in range(2 * k)])
        for h in range(k)
    ]
    if form == "R1":
        B = Msub * sum((v * v.T for v in heads), sp.zeros(2 * k))
    else:
        B = sum(((v.T * Msub * v)[0, 0] * v * v.T for v in heads), sp.zeros(2 * k))
    excess = sp.expand(-2 * c * (B * Msub).trace() + c**2 * (B.T * B * Msub).trace())
    zero = {x: 0 for x in us}
    f = sp.expand(excess.subs({**zero, us[0]: u}) - (k - 1) * excess.subs(zero) / k)
    check = sp.expand(excess - sum(f.subs(u, x) for x in us))
    assert check == 0, check
    (cmax,) = [r for r in sp.solve(sp.diff(f, u).subs(u, 1), c) if r != 0]
    return f, sp.factor(cmax)
