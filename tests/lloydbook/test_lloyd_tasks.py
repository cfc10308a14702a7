"""Tests of lloydbook.lloyd_tasks: the scikit-learn comparison, the two rescalings and the figures."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import lloydlib as L  # noqa: E402
from lloydbook import lloyd_tasks as lt  # noqa: E402


@pytest.fixture
def tasks():
    return L.sample_tasks(3, 40, 2, 3, seed=1, dtype=torch.float64)


def test_sklearn_agreement_counts_and_deviation(tasks):
    X, C = tasks
    max_dev, compared, skipped = lt.sklearn_agreement(X, C, 3)
    assert compared + skipped == X.shape[0]
    assert compared >= 1 and max_dev <= 1e-10


def test_sklearn_agreement_skips_empty_clusters(tasks):
    X, C = tasks
    C = C.clone()
    C[:, 2] = 50.0  # no point is near this center: its cluster is empty at the first step
    max_dev, compared, skipped = lt.sklearn_agreement(X, C, 2)
    assert (max_dev, compared, skipped) == (0.0, 0, X.shape[0])


def test_appendix_d_rescale_keeps_lloyd(tasks):
    X, C = tasks
    stretch = torch.tensor([3.0, 0.5], dtype=torch.float64)
    Xr, Cr = X * stretch - 2.0, C * stretch - 2.0
    Xa, Ca, lo, v = lt.appendix_d_rescale(Xr, Cr)
    assert Xa.shape == Xr.shape and Ca.shape == Cr.shape and lo.shape == (3, 1, 2) and v.shape == (3, 1, 1)
    both = torch.cat([Xa, Ca], 1)
    assert float(both.min()) >= 0.0 and torch.allclose(both.amax((1, 2)), torch.ones(3, dtype=torch.float64))
    Cr_T, _ = L.lloyd(Xr, Cr, 5)
    Ca_T, _ = L.lloyd(Xa, Ca, 5)
    assert torch.allclose(Ca_T, (Cr_T - lo) / v, atol=1e-12)
    assert bool((L.assign(Xa, Ca_T) == L.assign(Xr, Cr_T)).all())


def test_minmax_with_centers_maps_points_and_centers_alike(tasks):
    X, _ = tasks
    Xr = X * torch.tensor([5.0, 0.1], dtype=torch.float64) + 1.0
    Cr = Xr[:, :3]  # centers on data points land on the scaled data points
    Xm, Cm = lt.minmax_with_centers(Xr, Cr)
    assert torch.allclose(Xm.amin(1), torch.zeros(3, 2, dtype=torch.float64))
    assert torch.allclose(Xm.amax(1), torch.ones(3, 2, dtype=torch.float64))
    assert torch.allclose(Cm, Xm[:, :3], atol=1e-12)


def test_quartile_band_draws_the_median():
    fig, ax = plt.subplots()
    curves = np.arange(12.0).reshape(4, 3)
    line = lt.quartile_band(ax, curves, label="x")
    np.testing.assert_allclose(line.get_ydata(), np.median(curves, axis=0))
    assert len(ax.collections) == 1
    plt.close(fig)


def test_figures_have_their_panels():
    objs = {f: torch.rand(4, 6, dtype=torch.float64) + 1 for f in L.FAMILIES[:2]}
    figs = [
        (lt.plot_objective_bands(objs, "t"), 2),
        (lt.plot_init_bands(objs, torch.ones(4, dtype=torch.float64), "t"), 1),
        (lt.plot_families(L.FAMILIES, 30, seed=7), len(L.FAMILIES)),
        (lt.plot_variants([("a", {}), ("b", {"scale": 0.2})], 30, seed=11), 2),
        (lt.plot_minmax_example(40, steps=3, seed=5), 2),
    ]
    for fig, panels in figs:
        assert len(fig.axes) == panels
        plt.close(fig)


def test_median_ratios_start_and_end_against_the_best():
    best = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64)
    init_obj = {
        "random": torch.tensor([[3.0, 1.5, 1.0], [4.0, 2.0, 2.0], [8.0, 8.0, 4.0]], dtype=torch.float64),
        "kmeans++": torch.tensor([[2.0, 1.0, 1.0], [6.0, 4.0, 3.0], [4.0, 4.0, 4.0]], dtype=torch.float64),
    }
    out = lt.median_ratios(init_obj, best)
    assert out == {"init0-random": 2.0, "initT-random": 1.0, "init0-kmeans++": 2.0, "initT-kmeans++": 1.0}
    assert all(isinstance(v, float) for v in out.values())
    out = lt.median_ratios({"gonzalez": init_obj["kmeans++"][:, [0, 2]] * torch.tensor([[1.0], [2.0], [3.0]])}, best)
    assert out == {"init0-gonzalez": 3.0, "initT-gonzalez": 3.0}  # ratios 2, 6, 3 and 1, 3, 3: medians 3 and 3
    with pytest.raises(ValueError, match=r"init_obj\['random'\].*tasks = 3"):
        lt.median_ratios({"random": init_obj["random"][:2]}, best)
