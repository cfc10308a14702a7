"""Lemma I.3 of the Leaner paper (Appendix I; from Li et al. 2023, Lemma B.3), derived with sympy.

The lemma, as Appendix I states it: if v, v' in R^m have dispersions D(v), D(v') <= delta
(D(v) = max_i v_i - min_i v_i), then ||softmax(v)||_inf <= e^delta / m and
||softmax(v) - softmax(v')||_1 <= (e^delta / m) ||v - v'||_1.

:func:`softmax_l1_derivation` proves, step by step, what the book's chapter "The Lipschitz and norm-bound
lemmas" states about the second inequality: the exact l1 -> l1 constant on {D(v) <= delta} is
2 s (1 - s) with s = min(e^delta / (e^delta + m - 1), 1/2)
(:func:`~lloydlib.theory.constants.softmax_l1_sharp`), and it exceeds e^delta / m exactly when m >= 3
and delta < delta*(m) = log(sqrt(2 m (m-1)) - (m-1))
(:func:`~lloydlib.theory.constants.softmax_l1_failure_delta`).
"""

from __future__ import annotations

import sympy as sp

from .._validate import check_int
from .constants import softmax_bound, softmax_l1_failure_delta, softmax_l1_sharp

__all__ = ["softmax_l1_derivation"]


def _zero(expr) -> bool:
    return sp.simplify(expr) == 0


def softmax_l1_derivation(m_example: int = 4) -> dict:
    """Each step of the exact l1 constant of softmax and of the failure region, as a sympy fact.

    ``m_example`` (>= 2) is the length of the vector on which the Jacobian steps are derived with
    symbolic entries; the other steps hold for a symbolic m. Returns ``{step: bool}`` (every value True
    when the derivation goes through) plus ``"threshold"``, the sympy expression of
    E* = e^{delta*} = sqrt(2 m (m-1)) - (m-1):

    * ``jacobian``: d softmax_i / d v_j = s_i (delta_ij - s_j) (J = diag(s) - s s^T);
    * ``column_sums``: column j of J has absolute sum 2 s_j (1 - s_j) (diagonal > 0, off-diagonal < 0);
    * ``s_monotone``: s_1 grows with v_1 and falls with every other v_i, so under D(v) <= delta it is
      largest, s+ = e^delta / (e^delta + m - 1), with v_1 = delta above all the others;
    * ``peak``: 2 s (1 - s) grows on [0, 1/2] and peaks at s = 1/2, so the constant is 2 s (1 - s) at
      s = min(s+, 1/2), i.e. 1/2 once e^delta >= m - 1;
    * ``sharp_formula``: 2 s+ (1 - s+) = 2 E (m-1) / (E + m - 1)^2 (E = e^delta), the form of
      :func:`~lloydlib.theory.constants.softmax_l1_sharp`;
    * ``sign``: 2 E (m-1)/(E+m-1)^2 - E/m = E (2 m (m-1) - (E+m-1)^2) / (m (E+m-1)^2), positive exactly
      when E < E*;
    * ``threshold_solves``: E* solves 2 E (m-1)/(E+m-1)^2 = E/m;
    * ``cap_holds``: at the cap (E >= m - 1), 1/2 <= E/m for m >= 2: (m-1)/m - 1/2 = (m-2)/(2m);
    * ``region_nonempty``: (E* + m - 1)^2 - m^2 = m (m-2) and 4 (m-1)^2 - (E* + m - 1)^2 = 2 (m-1)(m-2),
      so for m >= 3, 1 < E* < m - 1: the failure region 0 <= delta < log E* is not empty and lies below
      the cap (for m = 2, E* = 1 and it is empty);
    * ``library_agrees``: the library's three functions give the same expressions for symbolic delta, m.
    """
    m_ex = check_int("m_example", m_example, 2)
    v = sp.symbols(f"v1:{m_ex + 1}", real=True)
    e = [sp.exp(x) for x in v]
    S = sum(e)
    s = [x / S for x in e]
    J = sp.Matrix(m_ex, m_ex, lambda i, j: sp.diff(s[i], v[j]))
    out = {}
    out["jacobian"] = all(
        _zero(J[i, j] - s[i] * ((1 if i == j else 0) - s[j])) for i in range(m_ex) for j in range(m_ex)
    )
    signs = all(
        (J[i, j].is_negative if i != j else sp.factor(J[i, j]).is_positive) for i in range(m_ex) for j in range(m_ex)
    )
    col = [sum(sp.Abs(sp.factor(J[i, j])) for i in range(m_ex)) for j in range(m_ex)]
    out["column_sums"] = signs and all(_zero(col[j] - 2 * s[j] * (1 - s[j])) for j in range(m_ex))
    out["s_monotone"] = bool(sp.factor(sp.diff(s[0], v[0])).is_positive) and all(
        bool(sp.factor(sp.diff(s[0], x)).is_negative) for x in v[1:]
    )

    d, m, E, t = sp.symbols("delta m E t", positive=True)
    s_plus = sp.exp(d) / (sp.exp(d) + m - 1)
    # s_1 with v_1 = delta and every other entry 0: the largest weight under D(v) <= delta
    out["s_monotone"] &= _zero(s[0].subs({v[0]: d, **{x: 0 for x in v[1:]}}) - s_plus.subs(m, m_ex))
    g = 2 * t * (1 - t)
    out["peak"] = sp.solve(sp.diff(g, t), t) == [sp.Rational(1, 2)] and sp.diff(g, t, 2) == -4
    out["sharp_formula"] = _zero((2 * s_plus * (1 - s_plus)).subs(sp.exp(d), E) - 2 * E * (m - 1) / (E + m - 1) ** 2)
    diff = 2 * E * (m - 1) / (E + m - 1) ** 2 - E / m
    out["sign"] = _zero(diff - E * (2 * m * (m - 1) - (E + m - 1) ** 2) / (m * (E + m - 1) ** 2))
    roots = [r for r in sp.solve(sp.Eq((E + m - 1) ** 2, 2 * m * (m - 1)), E)]
    threshold = sp.sqrt(2 * m * (m - 1)) - (m - 1)
    out["threshold_solves"] = any(_zero(r - threshold) for r in roots) and _zero(diff.subs(E, threshold))
    out["cap_holds"] = _zero((m - 1) / m - sp.Rational(1, 2) - (m - 2) / (2 * m))
    # E* > 1 <=> 2 m (m-1) > m^2 <=> m (m-2) > 0;  E* < m - 1 <=> 2 m (m-1) < 4 (m-1)^2 <=> 2 (m-1)(m-2) > 0
    out["region_nonempty"] = _zero((threshold + (m - 1)) ** 2 - m**2 - m * (m - 2)) and _zero(
        4 * (m - 1) ** 2 - (threshold + (m - 1)) ** 2 - 2 * (m - 1) * (m - 2)
    )
    lib_sharp = softmax_l1_sharp(d, m)
    below_cap = lib_sharp.args[1][0] if isinstance(lib_sharp, sp.Piecewise) else lib_sharp
    out["library_agrees"] = (
        _zero(below_cap - 2 * sp.exp(d) * (m - 1) / (sp.exp(d) + m - 1) ** 2)
        and _zero(softmax_bound(d, m) - sp.exp(d) / m)
        and _zero(softmax_l1_failure_delta(m) - sp.log(sp.Max(threshold, 1)))
    )
    out["threshold"] = threshold
    return out
