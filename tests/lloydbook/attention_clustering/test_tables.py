"""Tests for lloydbook.attention_clustering.tables: every table has one cell per header entry."""

from lloydbook import attention_clustering as acb
from lloydbook.tables import Table
from lloydlib import attention_clustering as ac


def test_closed_form_and_in_context_tables():
    ident, orac = ac.ClosedForms(2, "identity"), ac.ClosedForms(2, "oracle")
    t = acb.closed_form_table({"identity": ident, "oracle": orac})
    assert isinstance(t, Table) and len(t.rows) == 2 and "\\(" in t.rows[0][1]
    m = ac.sample_mixture(20, 10, 4, 2, 0.5, centroids="random", seed=0)
    r, ex = acb.in_context_cell(m, 4, 0.5, 10, ident, orac)
    assert set(r) == {"ident", "oracle", "pca", "nc", "tstar"} and set(ex) == {"ident", "oracle"}
    t = acb.in_context_table({(4, 0.5, 10): (r, ex, 1.0)}, {(4, 0.5, 10): 20}, ident)
    assert len(t.rows) == 1 and t.rows[0][3] == "20"


def test_training_tables():
    mu = ac.orthonormal_centroids(2, 4, seed=0)
    kw = dict(lr=0.2, steps=20, runs=2, seed=1)
    pop = {
        (0.3, f, i): ac.train_heads(mu, 0.3, 1.0, form=f, init=i, **kw)
        for f in ac.FORMS
        for i in ("manifold", "sphere")
    }
    rate = {(f, 0.3): 0.9 for f in ac.FORMS}
    assert len(acb.pgd_table(pop, rate, rate).rows) == 2
    sgd = {(0.3, f, "manifold", 0.0): pop[0.3, f, "manifold"] for f in ac.FORMS}
    t = acb.sgd_table(sgd)
    assert t.header[:3] == ["σ", "form", "initialisation"] and t.rows[1][:3] == ["σ=0.3", ac.FORMS[1], "manifold"]
    scan = {0.0: pop[0.3, "R2", "sphere"], 0.1: pop[0.3, "R1", "sphere"]}
    P = type("P", (), {"reg_check_step": 10, "reg_steps": 20})
    assert len(acb.penalty_table(scan, 1, P).rows) == 2
    assert len(acb.update_table({("R1", "riemannian"): pop[0.3, "R1", "manifold"]}, mu).rows) == 1
    three = {("R2", "sphere", 0.1): pop[0.3, "R2", "sphere"]}
    t = acb.three_heads_table({"R1": pop[0.3, "R1", "manifold"]}, three)
    assert len(t.rows) == 2 and t.rows[1][1] == "sphere, γ=0.1"
    res_cmp = {(0.3, 20, "a"): (0.5, 0.25, 0.01)}
    P = type("P", (), {"cmp_sigma": [0.3], "cmp_L": [20]})
    assert acb.comparison_table(res_cmp, ["a"], P).rows == [["a", "0.500 / 0.250"]]


def test_plateau_table_one_row_per_level_then_the_ratios():
    plateau = {(0.3, "R1"): 0.02, (1.0, "R1"): 0.5}
    within = {(0.3, "R1"): True, (1.0, "R1"): False}
    t = acb.plateau_table(plateau, {"R1": 25.0}, within, acb.SEED_PLATEAU)
    assert t.header == ["plateau", "form", "ours", "seed summary", "within half a decade"]
    assert t.rows == [
        ["σ=0.3", "R1", "0.0200", "0.01", "yes"],
        ["σ=1.0", "R1", "0.5000", "0.1", "no"],
        ["σ=1 / σ=0.3", "R1", "25.00", "10", ""],
    ]
