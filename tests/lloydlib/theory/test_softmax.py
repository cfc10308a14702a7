"""lloydlib.theory.softmax: the sympy derivation of Lemma I.3's exact l1 constant and failure region."""

import math

import pytest
import sympy as sp
import torch
from _support import assert_raises_naming

from lloydlib import theory as T


@pytest.mark.parametrize("m_example", [2, 3])
def test_every_step_of_the_derivation_holds(m_example):
    out = T.softmax_l1_derivation(m_example)
    steps = {k: v for k, v in out.items() if k != "threshold"}
    assert set(steps) == {
        "jacobian", "column_sums", "s_monotone", "peak", "sharp_formula", "sign", "threshold_solves",
        "cap_holds", "region_nonempty", "library_agrees",
    }  # fmt: skip
    assert all(v is True for v in steps.values()), steps
    m = sp.Symbol("m", positive=True)
    assert sp.simplify(out["threshold"].subs(m, 3) - (sp.sqrt(12) - 2)) == 0


def test_threshold_matches_a_brute_force_softmax_ratio():
    # m = 5 keys, one entry delta above the others: the local ratio is 2 s+ (1 - s+) (the exact constant
    # below the cap), and it beats e^delta / m exactly below delta*(5)
    m, eps = 5, 1e-7
    for delta in (0.2, T.softmax_l1_failure_delta(m) - 0.05, T.softmax_l1_failure_delta(m) + 0.05, 1.3):
        v = torch.zeros(m, dtype=torch.float64)
        v[0] = delta
        w = v.clone()
        w[0] -= eps
        ratio = float((torch.softmax(v, 0) - torch.softmax(w, 0)).abs().sum() / eps)
        assert ratio == pytest.approx(T.softmax_l1_sharp(delta, m), rel=1e-5)
        assert (ratio > T.softmax_bound(delta, m)) == (delta < T.softmax_l1_failure_delta(m))
    assert math.exp(1.3) < m - 1  # every delta above is below the cap


def test_bad_m_example_names_the_argument():
    assert_raises_naming(lambda: T.softmax_l1_derivation(1), ValueError, ["m_example", "2", "1"])
    assert_raises_naming(lambda: T.softmax_l1_derivation(2.5), TypeError, ["m_example"])
