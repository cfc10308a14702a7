"""Unit tests of lloydbook.lemmas.searches (chapter 09's searches): the tables' rows, the grids and searches at
tiny sizes (checked by hand or against the formulas they evaluate) and their seeds."""

import math
import re
from types import SimpleNamespace

import mpmath
import numpy as np
import pytest
import torch
from _support import assert_raises_naming

from lloydbook import lemmas
from lloydlib import theory as T
from lloydlib.theory.sandwich import SandwichResult

SW = dict(restarts=1, steps=2, random_pairs=2)  # the least search effort: shapes and bookkeeping only
PAPER = dict(d=4, k=6, n=512, Gamma1=1.0, Gamma2=1.0, gamma=1.0)  # the paper's task (the chapter's `paper`)


def violated(*args, **kwargs):
    """A stand-in for a sandwich that found a counterexample."""
    return SandwichResult("made up", bound=1.0, random=2.0, ascent=0.0, pair={"X": "the pair"})


# ----------------------------------------------------------------------------------------- small helpers
def test_constants_name_every_term_of_table2():
    assert list(lemmas.TERM_NAMES) == lemmas.TERMS
    assert lemmas.TERM_NAMES["rho_p"] == "ρ'" and lemmas.TERM_NAMES["Gamma1"] == "Γ1"
    derived = T.table2_derived()
    assert all(set(row) == set(lemmas.TERMS) for row in derived.values())


def test_log10_of_floats_and_of_numbers_too_large_for_a_float():
    assert lemmas.log10(1000) == pytest.approx(3.0) and isinstance(lemmas.log10(1000), float)
    assert lemmas.log10(0.01) == pytest.approx(-2.0)
    assert lemmas.log10(mpmath.mpf(10) ** 400 * 3) == pytest.approx(400 + math.log10(3))  # float() would overflow
    assert lemmas.log10(0) == -math.inf


# ----------------------------------------------------------------------------------------- tables
def test_paper_constants_rows_and_logs():
    rows, logs = lemmas.paper_constants(**PAPER, tau=0.1)
    assert [r[:2] for r in rows] == [[e, mu] for e in ("OH", "BN") for mu in (1, 2, 3, 4)]
    assert all(len(r) == 11 for r in rows)
    # OH at d=4, k=6: d_E = 5, d_emb = 10; head 1 has m = n = 512 queries of norm sqrt(d) = 2 and m' = k = 6
    # keys of norm sqrt(d_E); delta = (gamma / sqrt(d_emb)) Gamma1^2 (rho + rho')^2 and kappa2 = m rho'
    oh1 = rows[0]
    assert oh1[2:6] == [512, 6, "2.00", f"{math.sqrt(5):.2f}"]
    assert oh1[6] == f"{(2 + math.sqrt(5)) ** 2 / math.sqrt(10):.1f}" == "5.7"
    assert oh1[7] == f"{math.log10(512 * math.sqrt(5)):.1f}" == "3.1"
    assert set(logs) == {"OH", "BN"}
    for emb in ("OH", "BN"):
        d_E, D = T.dims(4, 6, emb)
        log_phi, log_phi_p = logs[emb]
        assert log_phi == pytest.approx(math.log10(T.phi(512, 6, 4, d_E, D, 1.0, 1.0, 1.0)), rel=1e-12)
        kappa1 = T.kappa1(512, 6, 1.0, d_E, 0.1, backend="mpmath")  # phi' = kappa1 phi (Theorem I.2)
        assert log_phi_p == pytest.approx(log_phi + float(mpmath.log10(kappa1)), rel=1e-12)
    assert logs["BN"][0] > logs["OH"][0]  # BN's constant is the larger


def test_paper_constants_bad_arguments_name_them():
    assert_raises_naming(lambda: lemmas.paper_constants(4, 1, 512, 1.0, 1.0, 1.0, 0.1), ValueError, ["k", ">= 2"])
    assert_raises_naming(lambda: lemmas.paper_constants(4, 6, 512, 1.0, 1.0, 1.0, 0.0), ValueError, ["tau", "> 0"])


def test_table3_agreement_on_every_head_and_embedding():
    agree = lemmas.table3_agreement()
    assert set(agree) == {(e, mu) for e in (None, "OH", "BN") for mu in (1, 2, 3, 4)}
    assert all(agree.values())


def test_table3_agreement_sees_a_wrong_stored_entry(monkeypatch):
    stored = T.table3_stored()
    wrong = {**stored, 2: (stored[2][0] + 1, *stored[2][1:])}  # head 2's m off by one
    monkeypatch.setattr(T, "table3_stored", lambda: wrong)
    agree = lemmas.table3_agreement()
    assert [key for key, same in agree.items() if not same] == [(None, 2), ("OH", 2), ("BN", 2)]


def test_table2_rows_show_arrows_and_a_differing_stored_arrow():
    derived = {"a": dict.fromkeys(lemmas.TERMS, 1), "b": dict.fromkeys(lemmas.TERMS, 0)}
    derived["a"]["d_emb"] = -1
    stored = {"a": {**derived["a"], "gamma": 0}}  # "b" has no stored row: nothing to compare
    rows = lemmas.table2_rows(derived, stored, ["a", "b"])
    assert [r[0] for r in rows] == [lemmas.TERM_NAMES[t] for t in lemmas.TERMS]
    assert rows[0] == ["m", "↑", "–"]
    assert rows[lemmas.TERMS.index("gamma")] == ["γ", "↑ (stored –)", "–"]
    assert rows[lemmas.TERMS.index("d_emb")] == ["d_emb", "↓", "–"]
    real = lemmas.table2_rows(T.table2_derived(), T.TABLE2_STORED, ["delta", "kappa2"])
    assert not any("stored" in cell for r in real for cell in r)  # the derived arrows agree with the paper
    assert real[lemmas.TERMS.index("d_emb")][1] == "↓"  # delta = gamma Gamma1^2 (rho + rho')^2 / sqrt(d_emb)


def test_norm_bound_rows_against_lemma_i1_by_hand():
    rows, per_set, violations = lemmas.norm_bound_rows(2, 3, 4, SW, seed=11)
    assert len(rows) == 16 and all(len(r) == 7 for r in rows)  # 2 embeddings x 2 weight scales x 4 token sets
    assert [r[2] for r in rows[:4]] == ["X0", "C0", "X1", "C1"]
    assert violations == [] and set(per_set) == {"X0", "C0", "X1", "C1"}
    assert all(0 < v <= 1 + 1e-9 for v in per_set.values())
    d_E = T.dims(2, 3, "OH")[0]  # 3
    for G2, part in ((1.0, rows[0:4]), (2.0, rows[4:8])):
        bounds = [
            math.sqrt(2),
            math.sqrt(d_E),
            (1 + G2) * math.sqrt(2) + G2 * math.sqrt(d_E),
            (1 + 2 * G2 + 2 * G2**2) * math.sqrt(d_E),
        ]
        assert [r[3] for r in part] == [f"{b:.3f}" for b in bounds]
        assert all(float(r[4]) <= float(r[3]) for r in part)
    assert rows[4][1] == "0.5, 2" and rows[4][5:] == ["–", "–"]  # no ascent at the second weight scale
    assert all(float(r[5]) <= float(r[3]) + 1e-3 for r in rows[:4])
    assert lemmas.norm_bound_rows(2, 3, 4, SW, seed=11) == (rows, per_set, violations)  # seeded


def test_norm_bound_rows_list_every_failed_bound(monkeypatch):
    monkeypatch.setattr(T, "norm_bounds", lambda d, d_E, G2: dict.fromkeys(("X0", "C0", "X1", "C1"), 1e-6))
    _, _, violations = lemmas.norm_bound_rows(2, 3, 4, SW, seed=11)
    assert len(violations) == 16
    emb, name, seen, ascent = violations[-1]
    assert (emb, name) == ("BN", "C1") and seen > 1e-6 and math.isnan(ascent)  # no ascent at Gamma2 = 2


def test_norm_bound_rows_bad_effort_names_it():
    assert_raises_naming(
        lambda: lemmas.norm_bound_rows(2, 3, 4, {**SW, "restarts": 0}, seed=11), ValueError, ["restarts"]
    )


# ----------------------------------------------------------------------------------------- Lemma I.3
def sharp(delta, m):
    """The exact l1 constant of softmax on {D(v) <= delta} (lloydlib.theory.softmax's docstring)."""
    s = min(math.exp(delta) / (math.exp(delta) + m - 1), 0.5)
    return 2 * s * (1 - s)


def delta_star(m):
    return math.log(max(math.sqrt(2 * m * (m - 1)) - (m - 1), 1.0))


def test_softmax_region_grid_by_brute_force():
    deltas = np.linspace(0.0, 2.0, 41)
    agree, points, fails = lemmas.softmax_region_grid(6, deltas)
    want_points = want_fails = 0
    for m in range(2, 7):
        for dl in deltas:
            fail = sharp(dl, m) > math.exp(dl) / m * (1 + 1e-12)
            want_fails += fail
            if abs(dl - delta_star(m)) > 1e-9 * (1 + dl):
                want_points += 1
                assert fail == (dl < delta_star(m))
    assert (agree, points, fails) == (True, want_points, want_fails)
    assert 0 < fails < points
    assert lemmas.softmax_region_grid(2, [0.0, 1.0]) == (True, 1, 0)  # m = 2: delta*(2) = 0, no failures


def test_softmax_region_grid_default_deltas():
    agree, points, fails = lemmas.softmax_region_grid(4)
    assert agree and 0 < fails and points <= 3 * 801


def test_softmax_heads_against_the_formulas():
    rows = lemmas.softmax_heads(**PAPER)
    assert [r[:2] for r in rows] == [[e, mu] for e in ("OH", "BN") for mu in (1, 2, 3, 4)]
    for emb, mu, mp, dl, dstar, ratio, holds in rows:
        d_E, D = T.dims(4, 6, emb)
        _, mp_want, rho, rhop = T.head_quantities(512, 6, 4, d_E, 1.0)[mu]
        assert mp == int(mp_want)
        assert dl == pytest.approx((rho + rhop) ** 2 / math.sqrt(D))
        assert dstar == pytest.approx(delta_star(mp))
        assert ratio == pytest.approx(sharp(dl, mp) / (math.exp(dl) / mp))
        assert holds == (dl >= dstar) == (ratio <= 1)
    assert [r[6] for r in rows] == [True, False, True, True, True, True, True, True]  # only OH's head 2 fails
    assert_raises_naming(lambda: lemmas.softmax_heads(4, 6, 512, 1.0, -1.0, 1.0), ValueError, ["Gamma2"])


# ----------------------------------------------------------------------------------------- Lemmas I.5-I.8
def test_gamma_sweep_one_result_per_gamma_seeded(capsys):
    out = lemmas.gamma_sweep("I.5", [0.1, 1.0], 2, SW, seed=0)
    assert len(out) == 2 and all(isinstance(r, SandwichResult) for r in out)
    assert all(r.bound == pytest.approx(4.0) for r in out)  # kappa2 = m rho' = 4
    assert all(0 < r.ratio <= r.bound for r in out)
    printed = capsys.readouterr().out
    assert "Lemma I.5: observed / constant over gamma = [0.1, 1.0]:" in printed
    assert f"{out[0].ratio / out[0].bound:.3g}" in printed
    again = lemmas.gamma_sweep("I.5", [0.1, 1.0], 2, SW, seed=0)
    assert [r.ratio for r in again] == [r.ratio for r in out]


def test_gamma_sweep_raises_on_a_counterexample(monkeypatch):
    assert_raises_naming(lambda: lemmas.gamma_sweep("I.9", [1.0], 2, SW, seed=0), ValueError, ["lemma", "I.9"])
    monkeypatch.setattr(T, "attention_sandwich", violated)
    with pytest.raises(AssertionError, match=r"counterexample to Lemma I.6 at gamma=0.5: ratio 2.0 > 1.0"):
        lemmas.gamma_sweep("I.6", [0.5], 2, SW, seed=0)


def test_attention_sweep_one_result_per_value_seeded():
    out = lemmas.attention_sweep("I.5", "m_p", [1, 2], 2, SW, seed=0)
    assert all(r.bound == pytest.approx(4.0) for r in out)  # kappa2 = m rho' = 4, whatever m' is
    assert all(0 < r.ratio <= r.bound * (1 + 1e-9) for r in out)
    again = lemmas.attention_sweep("I.5", "m_p", [1, 2], 2, SW, seed=0)
    assert [r.ratio for r in again] == [r.ratio for r in out]


def test_attention_sweep_raises_on_a_counterexample(monkeypatch):
    monkeypatch.setattr(T, "attention_sandwich", violated)
    with pytest.raises(AssertionError, match="counterexample to Lemma I.7 at m=3: ratio 2.0 > 1.0"):
        lemmas.attention_sweep("I.7", "m", [3], 2, SW, seed=0)


def test_head_slack_rows_at_table3s_quantities():
    rows, slacks = lemmas.head_slack_rows(2, 3, 4, SW, seed=40)
    assert [r[:2] for r in rows] == [[e, mu] for e in ("OH", "BN") for mu in (1, 2, 3, 4)]
    assert len(slacks) == 3 * len(rows) and all(s >= -1e-6 for s in slacks)  # constant >= observed
    d_E, D = T.dims(2, 3, "OH")
    _, _, rho, rhop = T.head_quantities(4, 3, 2, d_E, 1.0)[1]
    assert rows[0][2] == f"{(rho + rhop) ** 2 / math.sqrt(D):.2f}"
    assert rows[0][3:] == [f"{s:.1f}" for s in slacks[:3]]
    assert lemmas.head_slack_rows(2, 3, 4, SW, seed=40) == (rows, slacks)  # seeded


def test_head_slack_rows_raise_on_a_counterexample(monkeypatch):
    monkeypatch.setattr(T, "attention_sandwich", violated)
    with pytest.raises(AssertionError, match="counterexample to Lemma I.6, OH head 1"):
        lemmas.head_slack_rows(2, 3, 4, SW, seed=40)


# ----------------------------------------------------------------------------------------- Prop. H.1
def test_h1_rows_hold_with_the_stated_bounds():
    rows, ok, ne_loose = lemmas.h1_rows((2, 3), seed=53)
    assert ok is True
    assert [r[:2] for r in rows] == [[2, "L2"], [2, "NE"], [3, "L2"], [3, "NE"]]
    for k_, reg, bound, seen, root in rows:
        assert bound == f"{T.smoothing_distance_bound(k_, reg):.4f}"
        assert float(seen) <= float(bound) and root == f"{math.sqrt(1 - 1 / k_):.4f}"
    assert rows[0][2] == "0.7071"  # L2 at k = 2: sqrt(1 - 1/2), reached
    assert len(ne_loose) == 2 and all(x >= 1 for x in ne_loose)
    assert lemmas.h1_rows((2, 3), seed=53) == (rows, ok, ne_loose)  # seeded


# ----------------------------------------------------------------------------------------- Theorem I.1
def test_eq170_grid_and_what_it_detects(monkeypatch):
    assert lemmas.eq170_grid(30, seed=1) == (True, True)
    with monkeypatch.context() as mp:
        mp.setattr(T, "phi_eq170", lambda *a: 0.0)  # an Eq. 170 form below phi
        assert lemmas.eq170_grid(5, seed=1) == (False, True)
    with monkeypatch.context() as mp:
        mp.setattr(T, "phi_coefficients", lambda *a: {"one term": 0.0})  # a max that is not phi
        assert lemmas.eq170_grid(5, seed=1) == (True, False)


def test_theorem1_searches_and_rows():
    thm1, ce = lemmas.theorem1_searches(2, 3, 4, [1.0], SW, seed=61)
    assert list(thm1) == [("OH", 1.0, 1.0), ("OH", 0.01, 1.0), ("BN", 1.0, 1.0), ("BN", 0.01, 1.0)]
    for (emb, G1, ga), (r, phi_sum, phi170) in thm1.items():
        d_E, D = T.dims(2, 3, emb)
        assert r.bound == pytest.approx(T.phi(4, 3, 2, d_E, D, G1, 1.0, ga))
        assert phi_sum == pytest.approx(T.phi_sum(4, 3, 2, d_E, D, G1, 1.0, ga))
        assert phi170 == pytest.approx(T.phi_eq170(3, d_E, D, G1, 1.0, ga))
        assert 0 < r.ratio <= phi_sum and r.bound <= phi_sum
    assert ce == {e: pytest.approx(T.phi_counterexample(2, 3, 4, e, Gamma1=1.0)[0]) for e in ("OH", "BN")}
    again, _ = lemmas.theorem1_searches(2, 3, 4, [1.0], SW, seed=61)
    assert [v[0].ratio for v in again.values()] == [v[0].ratio for v in thm1.values()]  # seeded
    rows = lemmas.theorem1_rows(thm1)
    assert len(rows) == 4 and rows[0][:3] == ["OH", 1.0, 1.0] and rows[0][3] == f"{thm1[('OH', 1.0, 1.0)][0].ratio:.3g}"


def test_theorem1_rows_by_hand():
    thm1 = {
        ("OH", 1.0, 0.5): (SandwichResult("t", 12345.6, 3.14159, 1.0), 2e5, 7.0),
        ("BN", 0.01, 1.0): (SandwichResult("t", 18.0, 1.0, 20.0), 47.9, 18.0),
    }
    assert lemmas.theorem1_rows(thm1) == [
        ["OH", 1.0, 0.5, "3.14", "1.23e+04", "7", "2e+05", "holds"],
        ["BN", 0.01, 1.0, "20", "18", "18", "47.9", "VIOLATED"],
    ]


def test_print_pair_prints_the_spectral_norms(capsys):
    eye = torch.eye(3, dtype=torch.float64).expand(4, 3, 3)
    bump = torch.zeros(4, 3, 3, dtype=torch.float64)
    bump[:, 0, 0] = 0.5
    pair = {"X": torch.zeros(1, 2), "C": torch.ones(1, 2)}
    for kind, scale in (("Q", 1.0), ("K", 2.0), ("V", 3.0)):
        pair[kind], pair[kind + "_prime"] = scale * eye, scale * eye + bump
    lemmas.print_pair(SimpleNamespace(pair=pair))  # restores torch's print options (test_searches_checks.py)
    out = capsys.readouterr().out
    assert out.startswith("X =") and "\nC =" in out
    assert re.search(r"\|\|K_mu\|\| = \[2\. 2\. 2\. 2\.\]\s+\|\|K_mu - K'_mu\|\| = \[0\.5 0\.5 0\.5 0\.5\]", out)
    assert "||V_mu|| = [3. 3. 3. 3.]" in out


# ----------------------------------------------------------------------------------------- Theorem 3.1
def test_lipschitz_measurements_shapes_gaps_and_seed():
    lip, bound_gap, alpha_gap = lemmas.lipschitz_measurements([2, 3], 3, 4, 2, seed=80)
    assert set(lip) == {(d, e) for d in (2, 3) for e in ("OH", "BN")}
    assert all(v.shape == (2,) and np.isfinite(v).all() and (v > 0).all() for v in lip.values())
    assert len(bound_gap) == len(alpha_gap) == 2
    for j, d in enumerate((2, 3)):
        (dO, DO), (dB, DB) = T.dims(d, 3, "OH"), T.dims(d, 3, "BN")
        phi_p = [T.phi_prime(4, 3, d, dE, D, 1.0, 1.0, 1.0, 0.1, backend="mpmath") for dE, D in ((dB, DB), (dO, DO))]
        assert bound_gap[j] == pytest.approx(float(mpmath.log10(phi_p[0]) - mpmath.log10(phi_p[1])))
        alpha = [T.alpha_informal(4, 3, dE, D, 1.0, 0.1, 1.0) for dE, D in ((dB, DB), (dO, DO))]
        assert alpha_gap[j] == pytest.approx(math.log10(alpha[0]) - math.log10(alpha[1]))
    again = lemmas.lipschitz_measurements([2, 3], 3, 4, 2, seed=80)[0]
    assert all(np.array_equal(again[key], lip[key]) for key in lip)  # seeded
