"""lloydlib.theory.backend: one formula, three backends (numpy, sympy, mpmath), and argument checks."""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from lloydlib.theory import backend as Bk


@Bk.formula
def _toy(B, m, rho, gamma):
    """m * exp(gamma) * sqrt(rho) + max(rho, 1/2): uses exp, sqrt, max and half."""
    return m * B.exp(gamma) * B.sqrt(rho) + B.max(rho, B.half)


def test_formula_keeps_the_signature_and_the_raw_formula():
    assert list(_toy.__signature__.parameters) == ["m", "rho", "gamma", "backend"]
    assert _toy.formula.__name__ == "_toy" and _toy.__doc__.startswith("m * exp")


def test_three_backends_agree():
    num = _toy(2, 0.25, 1.0)
    assert isinstance(num, float)
    assert num == pytest.approx(2 * math.e * 0.5 + 0.5, rel=1e-15)
    mp = _toy(2, 0.25, 1.0, backend="mpmath")
    assert isinstance(mp, mpmath.mpf) and float(mp) == pytest.approx(num, rel=1e-15)
    x = sp.Symbol("x", positive=True)
    expr = _toy(2, x, 1)
    assert isinstance(expr, sp.Basic) and float(expr.subs(x, sp.Rational(1, 4))) == pytest.approx(num, rel=1e-15)
    assert isinstance(_toy(2, 0.25, 1.0, backend="sympy"), sp.Basic)


def test_arrays_broadcast_and_overflow_to_inf_in_numpy_only():
    out = _toy(np.array([1.0, 2.0]), 1.0, 1e-300)
    assert out.shape == (2,) and np.allclose(out, [2.0, 3.0])
    assert _toy(1, 1.0, 1000.0) == math.inf
    assert float(mpmath.log10(_toy(1, 1.0, 1000.0, backend="mpmath"))) == pytest.approx(1000 / math.log(10))


def test_pick_and_prepare():
    assert Bk.pick_backend(None, (1.0, 2)) is Bk.NUMPY
    assert Bk.pick_backend(None, (1.0, sp.Symbol("y"))) is Bk.SYMPY
    assert Bk.pick_backend("mpmath", ()) is Bk.MPMATH
    assert Bk.prepare(Bk.NUMPY, "m", 3) == 3.0
    assert Bk.finish({"a": np.float64(1.5), "b": (np.array(2.0),)}, Bk.NUMPY) == {"a": 1.5, "b": (2.0,)}


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: _toy(0, 1.0, 1.0), "m must be >= 1"),
        (lambda: _toy(1, -1.0, 1.0), "rho must be >= 0"),
        (lambda: _toy(1, 1.0, 0.0), "gamma must be > 0"),
        (lambda: _toy(1, 1.0, math.inf), "gamma must be a finite number"),
        (lambda: _toy(1, math.nan, 1.0), "rho must be a finite number"),
        (lambda: _toy(1, np.array([1.0, -1.0]), 1.0), r"rho\[1\] must be >= 0"),
        (lambda: _toy(1, np.array([]), 1.0), "rho must not be empty"),
        (lambda: _toy(1, 1.0, sp.Integer(-2)), "gamma must be > 0"),
        (lambda: _toy(sp.Rational(1, 2), 1.0, 1.0), "m must be >= 1"),
        (lambda: _toy(1, sp.oo, 1.0), "rho must be a finite real number"),
        (lambda: _toy(1, 1.0, 1.0, backend="torch"), "backend must be one of"),
    ],
)
def test_bad_values_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: _toy("1", 1.0, 1.0), "m must be a real number"),
        (lambda: _toy(True, 1.0, 1.0), "m must be a real number"),
        (lambda: _toy(np.bool_(True), 1.0, 1.0), "m must be a real number"),
        (lambda: _toy(1, np.array(["a"]), 1.0), "rho must be an array of real numbers"),
        (lambda: _toy(1, sp.Symbol("x"), 1.0, backend="numpy"), "needs numbers"),
        (lambda: _toy(1, np.array([1.0, 2.0]), 1.0, backend="mpmath"), "takes scalars"),
    ],
)
def test_bad_types_name_the_argument(call, match):
    with pytest.raises(TypeError, match=match):
        call()
