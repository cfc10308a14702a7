"""Unit tests of lloydbook.lemmas.summaries (chapter 09's summaries): the numbers its prose pastes, checked
against the formulas they come from, and the rows of the tables that show its searches."""

import math

import mpmath
import pytest
import sympy as sp
import torch

from lloydbook import lemmas
from lloydbook.book import Chapter, params
from lloydbook.lemmas import searches, summaries
from lloydbook.scales import SCALES
from lloydbook.tables import Table
from lloydlib import theory as T
from lloydlib.theory.sandwich import SandwichResult

PAPER = dict(d=4, k=6, n=512, Gamma1=1.0, Gamma2=1.0, gamma=1.0)  # the paper's task (the chapter's `paper`)


def result(bound, ratio, **pair):
    """A sandwich result whose largest observed ratio is ``ratio``."""
    return SandwichResult("made up", bound=bound, random=ratio, ascent=0.0, pair=pair)


def test_softmax_derivation_table_one_row_per_step_then_threshold_and_grid():
    table = lemmas.softmax_derivation_table({"Jacobian": True, "cap": False, "threshold": sp.sqrt(2)}, (True, 10, 3))
    assert isinstance(table, Table) and table.header == ["step or check", "result"]
    assert table.rows[:2] == [["proof step: Jacobian", "holds"], ["proof step: cap", "FAILS"]]
    assert table.rows[2] == ["\\(e^{\\delta^*(m)}\\)", "\\(\\sqrt{2}\\)"]
    assert table.rows[3][1] == "agrees at 10 points (3 inside the region)"
    assert lemmas.softmax_derivation_table({"threshold": 1}, (False, 4, 0)).rows[1][1].startswith("DISAGREES")


def test_softmax_worst_picks_the_largest_factor_over_the_stated_constant():
    v = torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64)
    sm = {
        (0.5, 3): {"stated": result(1.0, 1.2, v=v, v_prime=v + 0.25), "sharp": result(2.0, 1.2)},
        (1.0, 8): {"stated": result(2.0, 2.2, v=v, v_prime=v), "sharp": result(3.0, 2.2)},  # 1.1 < 1.2
    }
    key, r, table = lemmas.softmax_worst(sm)
    assert key == (0.5, 3) and r is sm[0.5, 3]
    assert table.header == ["m", "δ", "observed / (e^δ/m)", "observed / L*", "v", "v'"]
    assert table.rows == [["3", "0.5", "1.200", "0.600", "0.0000, 0.5000, 1.0000", "0.2500, 0.7500, 1.2500"]]


def test_softmax_head_numbers_are_ohs_first_two_heads():
    heads = lemmas.softmax_heads(**PAPER)
    numbers = lemmas.softmax_head_numbers(heads)
    assert list(numbers) == [f"i3-oh{mu}-{w}" for mu in (1, 2) for w in ("delta", "dstar", "ratio")]
    oh2 = next(r for r in heads if r[:2] == ["OH", 2])
    assert (numbers["i3-oh2-delta"], numbers["i3-oh2-dstar"], numbers["i3-oh2-ratio"]) == tuple(oh2[3:6])
    assert numbers["i3-oh2-delta"] < numbers["i3-oh2-dstar"] and numbers["i3-oh2-ratio"] > 1  # fails in head 2
    assert numbers["i3-oh1-delta"] > numbers["i3-oh1-dstar"]  # holds in head 1


def test_dispersion_table_rows():
    table = lemmas.dispersion_table({"ball": result(2.0, 1.9998), "box": result(2.0, 1.5)})
    assert table.rows == [["ball", "2.0000", "1.9998", "0.9999"], ["box", "2.0000", "1.5000", "0.7500"]]


def test_slack_numbers_by_hand():
    sweep = {
        "I.6": [result(4.0, 2.0), result(1000.0, 1.0)],
        "I.7": [result(5.0, 4.0), result(100.0, 1.0)],
        "I.8": [result(1.0, 1.0), result(10.0, 1.0)],
    }
    numbers = lemmas.slack_numbers(sweep, [0.01, 3.0])
    assert numbers == {
        "k3-cold": 0.5,
        "k4-cold": 0.8,
        "gamma-max": 3.0,
        "slack-I6": pytest.approx(3.0),
        "slack-I7": pytest.approx(2.0),
        "slack-I8": pytest.approx(1.0),
    }


def test_eq170_table_rows_show_each_check():
    x = sp.Symbol("x", positive=True)
    table = lemmas.eq170_table({"c_1 - c_1": sp.Integer(0)}, x**2, -x, (True, False))
    assert table.rows[0] == ["\\(c_1 - c_1\\)", "\\(0\\)"]
    assert table.rows[1] == ["\\(c_4 - 2\\Gamma_1^2c_1(1 + c_1)\\) (nonnegative: yes)", "\\(x^{2}\\)"]
    assert table.rows[2] == ["\\(\\kappa_4 - \\kappa_3\\)", "\\(- x\\)"]
    assert [r[1] for r in table.rows[3:]] == ["holds", "FAILS"]
    assert "(nonnegative: no)" in lemmas.eq170_table({}, -(x**2), x, (True, True)).rows[0][0]


def test_explicit_pair_table_against_phi_in_the_weak_attention_limit():
    table = lemmas.explicit_pair_table({"OH": 10.0, "BN": 12.0}, 2, 3, 4)
    assert [r[0] for r in table.rows] == ["OH", "BN"]
    d_E, D = T.dims(2, 3, "BN")
    phi = T.phi(4, 3, 2, d_E, D, 1e-4, 1.0, 1e-4)
    assert table.rows[1] == [
        "BN",
        "12.000",
        f"{phi:.3f}",
        f"{12 / phi:.3f}",
        f"{T.phi_sum(4, 3, 2, d_E, D, 1e-4, 1.0, 1e-4):.3f}",
    ]


def test_phi_factors_random_and_at_the_paper_task():
    fac = lemmas.phi_factors(30, 1, PAPER)
    assert list(fac) == ["lo", "hi", "oh", "bn"]
    assert 1 - 1e-12 <= fac["lo"] <= fac["hi"] <= 12
    assert lemmas.phi_factors(30, 1, PAPER) == fac and lemmas.phi_factors(30, 2, PAPER)["lo"] != fac["lo"]
    first = lemmas.phi_factors(1, 1, PAPER)  # the first draw of the same seed: inside the range
    assert first["lo"] == first["hi"] and fac["lo"] <= first["lo"] <= fac["hi"]
    for emb in ("OH", "BN"):
        d_E, D = T.dims(4, 6, emb)
        a = (512, 6, 4, d_E, D, 1.0, 1.0, 1.0)
        assert fac[emb.lower()] == pytest.approx(T.phi_sum(*a) / T.phi(*a), rel=1e-9)
        assert 1 <= fac[emb.lower()] <= 12


# A setting that the chapter's draw at book seed 3 holds (Chapter("lemmas", 3).seed("phi-factor"), the 209th
# finite one): phi = 1.13e308 is a float, phi_sum = 2.16e308 is not (issue 36: "phi_sum/phi from 1.41 to inf")
OVERFLOWING = (
    448,
    5,
    22.60735251144724,
    27.06543787484464,
    56.1512416995452,
    1.9142522370228445,
    1.6676455593024373,
    1.6329052846254921,
)


def high_precision_ratio(args, dps=60):
    with mpmath.workdps(dps):
        return float(T.phi_sum(*args, backend="mpmath") / T.phi(*args, backend="mpmath"))


def test_phi_factors_where_phi_sum_overflows_a_float(monkeypatch):
    phi = T.phi(*OVERFLOWING)
    assert math.isfinite(phi) and phi > 1e308 and T.phi_sum(*OVERFLOWING) == math.inf  # the float ratio: inf
    want = high_precision_ratio(OVERFLOWING)
    assert want == pytest.approx(1.9154541275359362, rel=1e-15)
    monkeypatch.setattr(summaries, "_phi_settings", lambda points, seed: iter([(OVERFLOWING, phi)]))
    fac = lemmas.phi_factors(1, 0, PAPER)
    assert fac["lo"] == fac["hi"] == pytest.approx(want, rel=1e-13)


def test_phi_factors_at_the_draw_that_overflowed():
    seed = Chapter("lemmas", 3).seed("phi-factor")  # the chapter's draw with book.setup's seed set to 3
    settings = [args for args, _ in searches._phi_settings(400, seed)]
    assert OVERFLOWING in settings
    ratios = [high_precision_ratio(args, dps=30) for args in settings]
    fac = lemmas.phi_factors(400, seed, PAPER)
    lo, hi = fac["lo"], fac["hi"]
    assert math.isfinite(hi) and 1 <= lo <= hi <= 12  # was (1.41, inf)
    assert (lo, hi) == (pytest.approx(min(ratios), rel=1e-13), pytest.approx(max(ratios), rel=1e-13))


def test_training_settings_quote_the_race_and_the_learning_chapters():
    P = params("lemmas", "ci")
    out = lemmas.training_settings(P)
    assert out["tr-d"] == P.tr_d and out["tr-steps"] == P.tr_steps and out["tr-seeds"] == len(P.tr_seeds)
    for tag, scale in (("", "ci"), ("paper-", "paper")):
        learn = SCALES["learning"][scale]
        assert out[f"learn-{tag}n"] == learn["base"]["n"] and out[f"learn-{tag}steps"] == learn["base"]["steps"]
        assert out[f"learn-{tag}seeds"] == len(learn["seeds"])
    assert len(out) == 11 and all(isinstance(v, int) and not math.isnan(v) for v in out.values())
