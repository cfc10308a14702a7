"""Tests for lloydbook.attention_clustering.summaries: the Monte Carlo check list and the run summaries."""

import math

import pytest
import sympy as sp
import torch

from lloydbook import attention_clustering as acb
from lloydbook.attention_clustering.summaries import _gather, _setting
from lloydbook.tables import Table
from lloydlib import attention_clustering as ac
from lloydlib.construction import exact_transformer
from lloydlib.embeddings import cluster_codes


def small_run(**kw):
    mu = ac.orthonormal_centroids(2, 4, seed=0)
    return mu, ac.train_heads(mu, 0.3, 1 / acb.a_of(0.3), init="manifold", lr=0.2, steps=300, runs=3, seed=1, **kw)


def test_a_of_and_positive():
    assert math.isclose(acb.a_of(0.5), 0.75) and math.isclose(acb.a_of(0.5, 3), 1 / 3 + 0.25)
    S = ac.symbols()
    assert acb.positive(S.sigma**2 * (S.d - 2) + 1)
    assert not acb.positive(S.sigma**2 * (S.d - 2) - 1)
    assert isinstance(acb.positive(sp.Integer(1) + S.d), bool)


def test_monte_carlo_checks():
    mc = acb.MonteCarloChecks()
    values = torch.tensor([0.9, 1.1, 1.0, 1.0], dtype=torch.float64)
    mc.check("mean", "toy", 1.0, values)
    mc.check("off", "toy", 0.0, values)
    assert mc.z[0] == 0.0 and mc.max_z == abs(mc.z[1]) > 10
    assert isinstance(mc.table(), Table) and len(mc.rows) == 2


def test_run_summaries():
    mu, res = small_run()
    assert acb.final(res).shape == (3,)
    assert acb.success(res) == 1.0 and acb.success_at(res, 0) == 0.0
    rate = acb.fitted_rate(res)
    assert 0 < rate < 1
    assert torch.allclose(acb.direction_distance(res, mu), acb.final(res))  # unit heads: same distance
    assert acb.yes(True) == "yes" and acb.yes(False) == "no" and acb.pct(0.25) == "25%"
    assert _setting("sphere", 0.0) == "sphere" and _setting("sphere", 0.1) == "sphere, γ=0.1"


def test_comparison_maps_match_lloyd_and_the_bn_transformer():
    m = ac.sample_mixture(8, 12, 3, 2, 0.3, centroids="random", seed=0)
    ident = ac.ClosedForms(2, "identity")
    T_bn, codes = exact_transformer(3, 2, "BN"), cluster_codes(2, "BN", dtype=torch.float64)
    maps, stats = acb.comparison_maps(m, 0.3, 12, ident, T_bn, codes, 3, seed=1)
    assert list(maps)[:3] == [n for n in maps if n.startswith("identity")]
    assert list(maps)[-2:] == ["nearest true centroid", "T* (labels)"]
    assert all(Y.shape == m.X.shape for Y in maps.values())
    assert stats["bn_gap"] < 1e-12 and stats["separation"] > 0
    assert set(stats["same_cluster"]) == {"kmeans++", "gonzalez"}
    C = torch.arange(12.0).reshape(2, 3, 2)
    assert torch.equal(_gather(C, torch.tensor([[2, 0], [1, 1]])), torch.stack([C[0, [2, 0]], C[1, [1, 1]]]))


def test_plugin_excess_is_paired_against_the_closed_form():
    ident = ac.ClosedForms(2, "identity")
    m = ac.sample_mixture(400, 10, 5, 2, 0.5, centroids="random", seed=2)
    e, se, worst = acb.plugin_excess(m, 5, 0.5, 10, ident)
    c_star = ac.numeric(ident.scale_L, d=5, sigma=0.5, L=10)
    diff = ac.reconstruction_error(m.X, ac.identity_layer(m.X, ac.plugin_scale(m.X))) - ac.reconstruction_error(
        m.X, ac.identity_layer(m.X, c_star)
    )
    exact = ac.numeric(ident.risk_L_opt, d=5, sigma=0.5, L=10)
    assert math.isclose(e, float(diff.mean()) / exact) and math.isclose(se, ac.mean_and_se(diff)[1] / exact)
    assert worst == float(diff.max()) <= 1e-12  # the plug-in scale minimises every prompt's error
    assert e < -4 * se  # and at L = 10 it gains clearly on average


def test_plateau_level_pools_runs_and_the_last_iterations():
    _, res = small_run(record_every=30)
    tail = res.distance[:, res.steps >= 200]
    assert acb.plateau_level(res) == float(tail.median())


def test_comparison_numbers_read_the_settings_the_prose_names():
    P = type("P", (), {"cmp_sigma": [0.3, 1.0], "cmp_L": [20, 100]})
    maps = ("best", "one", "conv")
    res_cmp = {
        (s, L, n): (0.0, 10 * s + L / 100 + j, 0.0) for s in P.cmp_sigma for L in P.cmp_L for j, n in enumerate(maps)
    }
    separation = {(s, L): s + L for s in P.cmp_sigma for L in P.cmp_L}
    same = {
        (s, L, init): s * L + (init == "gonzalez")
        for s in P.cmp_sigma
        for L in P.cmp_L
        for init in ("kmeans++", "gonzalez")
    }
    out = acb.comparison_numbers(res_cmp, separation, same, P, "best", "one", "conv")
    assert (out["cmp-sigma"], out["cmp-L"], out["cmp-sigma-lo"], out["cmp-L-hi"]) == (1.0, 20, 0.3, 100)
    assert (out["cmp-id-den"], out["cmp-lloyd-den"], out["cmp-conv-den"]) == (10.2, 11.2, 12.2)  # sigma=1, L=20
    assert out["cmp-separation"] == 101.0  # largest sigma, largest L
    assert (out["cmp-same-kpp"], out["cmp-same-ff"]) == (
        pytest.approx(30.0),
        pytest.approx(31.0),
    )  # smallest sigma, largest L
    assert (out["cmp-lo-one"], out["cmp-lo-conv"]) == (5.0, 6.0)
    assert len(out) == 12
