"""Smoke tests for lloydbook.attention_clustering.figures: each figure draws without error (Agg backend)."""

import matplotlib
import torch

matplotlib.use("Agg")

from lloydbook import attention_clustering as acb  # noqa: E402
from lloydlib import attention_clustering as ac  # noqa: E402


def test_training_figures_draw():
    mu = ac.orthonormal_centroids(2, 4, seed=0)
    kw = dict(lr=0.2, steps=20, runs=2, seed=1, record_every=5)
    pop = {
        (s, f, i): ac.train_heads(mu, s, 1.0, form=f, init=i, **kw)
        for s in (0.3, 1.0)
        for f in ac.FORMS
        for i in ("manifold", "sphere")
    }
    P = type(
        "P",
        (),
        {
            "pgd_steps": 20,
            "lr_scan": [0.1, 0.2],
            "sgd_batch": 10,
            "L_train": 10,
            "d_train": 4,
            "reg_check_step": 10,
            "reg_runs": 2,
        },
    )
    acb.plot_population_pgd(pop, {(f, s): 0.9 for f in ac.FORMS for s in (0.3, 1.0)}, P)
    settings = (("manifold", 0.0), ("sphere", 0.0))
    acb.plot_sgd({(s, f, i, p): pop[s, f, i] for s in (0.3, 1.0) for f in ac.FORMS for i, p in settings}, settings, P)
    acb.plot_noise_floor({(f, s, lr): 0.1 * lr for f in ac.FORMS for s in (0.3, 1.0) for lr in P.lr_scan}, P)
    phis = torch.linspace(0, 1, 3)
    acb.plot_rotation(
        {("R1", 0.1): [(0.0, 0.0)] * 3, ("R2", 0.1): [(0.0, 0.0), (1e-3, 1e-4), (2e-3, 1e-4)]}, phis, P, 0.3
    )
    acb.plot_penalty_scan({0.0: pop[0.3, "R2", "sphere"]}, P)
    acb.plot_three_heads({("R2", "sphere", 0.1): pop[0.3, "R2", "sphere"]})


def test_cloud_and_comparison_figures_draw():
    mu3 = ac.orthonormal_centroids(2, 3, basis=True)
    cloud = ac.sample_mixture(1, 50, 3, 2, 0.3, centroids=mu3, seed=0)
    spread = acb.plot_clouds({"a": cloud.X[0], "b": 0.5 * cloud.X[0], "c": cloud.X[0]}, cloud, mu3)
    assert abs(spread["b"] - spread["a"] / 2) < 1e-12
    P = type("P", (), {"cmp_sigma": [0.3, 1.0]})
    acb.plot_comparison({(s, 20, "a"): (0.5, 0.25, 0.01) for s in P.cmp_sigma}, ["a"], P, 20)


def test_in_context_figure_draws():
    ident, orac = ac.ClosedForms(2, "identity"), ac.ClosedForms(2, "oracle")
    P = type("P", (), {"ic_sigma": [0.5], "ic_d": [4], "ic_L": [10]})
    m = ac.sample_mixture(20, 10, 4, 2, 0.5, centroids="random", seed=0)
    r, ex = acb.in_context_cell(m, 4, 0.5, 10, ident, orac)
    acb.plot_in_context({(4, 0.5, 10): (r, ex, 1.0)}, P, ident, orac)


def test_plugin_excess_figure_draws():
    excess = {(d, s, L): (-1.0 / L, 0.01 / L, -1e-9) for d in (5, 10) for s in (0.3, 1.0) for L in (10, 100)}
    acb.plot_plugin_excess(excess, 0.05)
