"""lloydlib.theory.tables: Tables 2 and 3 of Appendix I, stored and derived symbolically."""

import pytest
import sympy as sp

from lloydlib import theory as T


def test_table2_derived_matches_stored():
    derived = T.table2_derived()
    for bound, row in T.TABLE2_STORED.items():
        assert derived[bound] == row, bound
    # the softmax bound of Lemma I.3 shrinks with the number of keys
    assert derived["softmax (I.3)"]["m_p"] == -1


@pytest.mark.parametrize("embedding", [None, "OH", "BN"])
def test_table3_derived_matches_stored(embedding):
    stored = T.table3_stored()
    derived = T.table3_derived(embedding)
    s = T.table3_symbols()
    dE = T.dims(s["d"], s["k"], embedding)[0] if embedding else s["d_E"]
    for mu in (1, 2, 3, 4):
        for a, b in zip(derived[mu], stored[mu]):
            assert sp.simplify(sp.sympify(a) - sp.sympify(b).subs(s["d_E"], dE)) == 0


def test_sign_of_derivative():
    x, y = sp.symbols("x y", positive=True)
    assert T.sign_of_derivative(x**2 * sp.exp(x), x) == 1
    assert T.sign_of_derivative(y / x, x) == -1
    assert T.sign_of_derivative(y, x) == 0
    assert set(T.table2_symbols()) == {"m", "m_p", "rho", "rho_p", "Gamma1", "Gamma2", "gamma", "d_emb"}


def test_bad_input():
    x = sp.Symbol("x", positive=True)
    with pytest.raises(TypeError, match="expr must be a sympy expression"):
        T.sign_of_derivative(1.0, x)
    with pytest.raises(TypeError, match="x a sympy Symbol"):
        T.sign_of_derivative(x, 2 * x)
    with pytest.raises(ValueError, match="is not constant"):
        T.sign_of_derivative((x - 1) ** 2 + 1, x)
    with pytest.raises(ValueError, match="embedding must be None or one of"):
        T.table3_derived("NA")
