"""Shared by the tests of lloydlib.theory: the check that a formula agrees in numpy, sympy and mpmath."""

import numpy as np
import pytest
import sympy as sp


def point(names, rng):
    """Random arguments: counts >= 1, everything else in (0.05, 2)."""
    return {n: (float(rng.integers(1, 9)) if n in ("m", "m_p", "n", "k") else float(rng.uniform(0.05, 2)))
            for n in names}  # fmt: skip


def check_backends_agree(f, names):
    rng = np.random.default_rng(0)
    syms = {n: sp.Symbol(n, positive=True) for n in names}
    expr = f(**syms)
    assert isinstance(expr, sp.Basic)
    for _ in range(5):
        x = point(names, rng)
        num = f(**x)
        sym = float(expr.subs({syms[n]: v for n, v in x.items()}).evalf(30))
        mp = float(f(**x, backend="mpmath"))
        assert isinstance(num, float)
        assert num == pytest.approx(sym, rel=1e-12)
        assert num == pytest.approx(mp, rel=1e-12)


@pytest.fixture
def backends_agree():
    """check_backends_agree(f, names): f's numpy, sympy and mpmath values agree at random points."""
    return check_backends_agree
