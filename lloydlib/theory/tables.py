"""Tables 2 and 3 of the Leaner paper (Appendix I), as stored there and as derived symbolically (sympy).

* Table 2 marks, for each quantity (m, m', rho, rho', Gamma1, Gamma2, gamma, d_emb), whether each bound
  (delta of Lemma I.4, kappa2..kappa5 of Lemmas I.5-I.8) grows or shrinks with it. Its arrows are garbled
  in the text of the paper we read; :data:`TABLE2_STORED` holds them rebuilt from the formulas, and
  :func:`table2_derived` derives them as signs of partial derivatives.
* Table 3 gives, head by head, the (m, m', rho, rho') of the four heads of Eq. 4; :func:`table3_stored`
  holds it as printed, :func:`table3_derived` derives it from Lemma I.1.
"""

from __future__ import annotations

import sympy as sp

from .constants import EMBEDDINGS, delta, dims, head_quantities, kappa2, kappa3, kappa4, kappa5, softmax_bound

__all__ = [
    "TABLE2_STORED",
    "table2_symbols",
    "sign_of_derivative",
    "table2_derived",
    "table3_symbols",
    "table3_stored",
    "table3_derived",
]

# Table 2 of the Leaner paper, Appendix I (its arrows are garbled in the text and rebuilt from the formulas):
# +1 the bound grows with the term, -1 it shrinks, 0 it does not depend on it.
TABLE2_STORED = {
    "delta":  {"m": 0, "m_p": 0, "rho": 1, "rho_p": 1, "Gamma1": 1, "Gamma2": 0, "gamma": 1, "d_emb": -1},
    "kappa2": {"m": 1, "m_p": 0, "rho": 0, "rho_p": 1, "Gamma1": 0, "Gamma2": 0, "gamma": 0, "d_emb": 0},
    "kappa3": {"m": 1, "m_p": 0, "rho": 1, "rho_p": 1, "Gamma1": 1, "Gamma2": 1, "gamma": 1, "d_emb": -1},
    "kappa4": {"m": 1, "m_p": 0, "rho": 1, "rho_p": 1, "Gamma1": 1, "Gamma2": 1, "gamma": 1, "d_emb": -1},
    "kappa5": {"m": 1, "m_p": -1, "rho": 1, "rho_p": 1, "Gamma1": 1, "Gamma2": 1, "gamma": 1, "d_emb": -1},
}  # fmt: skip


def table2_symbols() -> dict:
    """The positive symbols m, m_p, rho, rho_p, Gamma1, Gamma2, gamma, d_emb of Table 2, by name."""
    names = ("m", "m_p", "rho", "rho_p", "Gamma1", "Gamma2", "gamma", "d_emb")
    latex = ("m", "m'", r"\rho", r"\rho'", r"\Gamma_1", r"\Gamma_2", r"\gamma", r"d_{\mathsf{emb}}")
    return {n: sp.Symbol(tex, positive=True) for n, tex in zip(names, latex)}


def sign_of_derivative(expr, x) -> int:
    """+1, -1 or 0: the sign of d expr / d x for all positive symbols, proved by sympy.

    ``expr`` is a positive sympy expression and ``x`` a sympy Symbol; the sign is that of
    d log(expr) / dx, a sum of terms that sympy can sign. Raises if sympy cannot decide (the sign would
    change within the domain).
    """
    if not isinstance(expr, sp.Expr) or not isinstance(x, sp.Symbol):
        raise TypeError(
            f"expr must be a sympy expression and x a sympy Symbol, got {type(expr).__name__} and {type(x).__name__}"
        )
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
    s = table2_symbols()
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


def table3_symbols() -> dict:
    """The positive symbols n, k, d, d_E, Gamma2 of Table 3, as a dict by name."""
    return {
        name: sp.Symbol(latex, positive=True)
        for name, latex in (("n", "n"), ("k", "k"), ("d", "d"), ("d_E", "d_E"), ("Gamma2", r"\Gamma_2"))
    }


def table3_stored() -> dict:
    """Table 3 as printed in the Leaner paper (Appendix I): {mu: (m, m', rho, rho')} in the symbols
    n, k, d, d_E, Gamma2 of :func:`table3_symbols`."""
    s = table3_symbols()
    n, k, d, dE, G2 = s["n"], s["k"], s["d"], s["d_E"], s["Gamma2"]
    return {
        1: (n, k, sp.sqrt(d), sp.sqrt(dE)),
        2: (n, n, sp.sqrt(d), sp.sqrt(d)),
        3: (k, n, sp.sqrt(dE), (1 + G2) * sp.sqrt(d) + G2 * sp.sqrt(dE)),
        4: (k, k, sp.sqrt(dE), sp.sqrt(dE)),
    }


def table3_derived(embedding: str | None = None) -> dict:
    """Table 3 derived from Lemma I.1 (:func:`~lloydlib.theory.constants.head_quantities`), symbolically.

    ``embedding=None`` keeps d_E as a symbol; "OH" or "BN" substitutes its d_E in terms of d and k.
    """
    s = table3_symbols()
    rows = head_quantities(s["n"], s["k"], s["d"], s["d_E"], s["Gamma2"])
    if embedding is None:
        return rows
    if embedding not in EMBEDDINGS:
        raise ValueError(f"embedding must be None or one of {list(EMBEDDINGS)}, got {embedding!r}")
    dE, _ = dims(s["d"], s["k"], embedding)
    return {mu: tuple(sp.sympify(v).subs(s["d_E"], dE) for v in row) for mu, row in rows.items()}
