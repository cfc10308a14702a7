"""Unit tests of lloydbook.many_steps: evaluation of a setting over seeds, per-seed statistics, shifts,
evaluation sizes and the figures."""

import math
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest
import torch

from lloydbook import many_steps as M
from lloydlib.model import LearnableTransformer
from lloydlib.training import TrainConfig

matplotlib.use("Agg")
TS = 10_000  # the tests' evaluation seed (a chapter names its own: ch.seed("eval-tasks"))


def fake_run(seed, embedding="BN", theorem=False):
    """A Run-like object with a small float32 model for (d, k) = (2, 3), trained at n = 12."""
    config = TrainConfig(d=2, k=3, n=12, steps=10, batch=4, embedding=embedding, seed=seed)
    torch.manual_seed(seed)
    model = LearnableTransformer(2, 3, embedding, gamma=math.inf if theorem else 1.0)
    if theorem:
        model.load_theorem_weights()
    return SimpleNamespace(config=config, model=model, status="done")


def test_evaluate_shapes_seeds_and_pairing():
    runs = [fake_run(0), fake_run(1)]
    cur = M.evaluate(runs, 3, tasks=5, modes=("reembed", "iterate"), task_seed=TS)
    assert set(cur) == {"reembed", "iterate", "lloyd"}
    assert all(v.shape == (2, 4) for v in cur.values())
    # step 0 is the initial centers, the same for the model and Lloyd's (the same tasks, paired by seed)
    np.testing.assert_allclose(cur["reembed"][:, 0], cur["lloyd"][:, 0])
    np.testing.assert_allclose(cur["iterate"][:, 1], cur["reembed"][:, 1], rtol=1e-4)
    assert cur["lloyd"][0, 0] != cur["lloyd"][1, 0]  # each seed has its own tasks
    again = M.evaluate(runs[1:], 3, tasks=5, task_seed=TS)
    np.testing.assert_array_equal(again["lloyd"][0], cur["lloyd"][1])  # repeatable
    other = M.evaluate(runs[1:], 3, tasks=5, task_seed=TS + 1)
    assert other["lloyd"][0, 0] != cur["lloyd"][1, 0]


def test_theorem_weights_close_the_gap():
    cur = M.evaluate([fake_run(0, "OH", theorem=True)], 4, tasks=6, task_seed=TS)
    np.testing.assert_allclose(M.gap(cur, 4), 0.0, atol=1e-5)


def test_evaluate_options():
    runs = [fake_run(0)]
    big = M.evaluate(runs, 2, tasks=3, n=40, task_seed=TS)
    small = M.evaluate(runs, 2, tasks=3, task_seed=TS)
    assert big["lloyd"][0, 0] > small["lloyd"][0, 0]  # more points, a larger summed objective
    for init in ("gonzalez", "kmeans++"):
        assert M.evaluate(runs, 1, tasks=3, init=init, task_seed=TS)["lloyd"].shape == (1, 2)
    wide = M.evaluate(runs, 0, tasks=8, shift="scale doubled", task_seed=TS)
    assert wide["lloyd"].shape == (1, 1)
    with pytest.raises(ValueError, match="runs"):
        M.evaluate([], 2, tasks=3, task_seed=TS)
    with pytest.raises(ValueError, match="modes"):
        M.evaluate(runs, 2, tasks=3, modes=("loop",), task_seed=TS)
    with pytest.raises(ValueError, match="tasks"):
        M.evaluate(runs, 2, tasks=0, task_seed=TS)
    with pytest.raises(ValueError, match="n"):
        M.evaluate(runs, 2, tasks=2, n=2, task_seed=TS)  # fewer points than clusters
    with pytest.raises(ValueError, match="shift"):
        M.evaluate(runs, 2, tasks=2, shift="rotated", task_seed=TS)


def test_a_cache_shares_draws_and_lloyd_across_settings_with_the_same_numbers():
    settings = [[fake_run(0), fake_run(1)], [fake_run(0, "OH"), fake_run(1, "OH")], [fake_run(0, "NA")]]
    cache = {}
    for runs in settings:
        for kw in (dict(modes=("reembed", "iterate")), dict(n=20, shift="anisotropic"), dict(init="kmeans++")):
            alone = M.evaluate(runs, 3, tasks=4, task_seed=TS, **kw)
            shared = M.evaluate(runs, 3, tasks=4, task_seed=TS, cache=cache, **kw)
            assert list(shared) == list(alone)
            for m in alone:
                np.testing.assert_array_equal(shared[m], alone[m])
    # one draw and one Lloyd curve per seed and case, whatever the embedding
    assert len([key for key in cache if key[0] != "lloyd"]) == len(cache) // 2 == 2 * 3
    left_out = M.evaluate(settings[0], 3, tasks=4, modes=("iterate",), lloyd=False, task_seed=TS, cache=cache)
    assert list(left_out) == ["iterate"] and left_out["iterate"].shape == (2, 4)
    moved = M.data_rewrite(settings[0], tasks=4, task_seed=TS, cache=cache)
    np.testing.assert_array_equal(moved, M.data_rewrite(settings[0], tasks=4, task_seed=TS))
    with pytest.raises(TypeError, match="cache"):
        M.evaluate(settings[0], 3, tasks=4, task_seed=TS, cache=[])


def test_shift_tasks():
    c = TrainConfig(d=2, k=3, n=12, steps=10, batch=4)
    base = M.shift_tasks(c, None)
    assert base == dict(family="normal", scale=0.1, isotropic=True, equal_weights=True)
    assert M.shift_tasks(c, "scale halved")["scale"] == pytest.approx(0.05)
    assert M.shift_tasks(c, "scale doubled")["scale"] == pytest.approx(0.2)
    assert M.shift_tasks(c, "anisotropic") == {**base, "isotropic": False}
    assert M.shift_tasks(c, "unequal weights") == {**base, "equal_weights": False}


def test_gap_and_rise():
    cur = {
        "reembed": np.array([[1.0, 0.5, 0.2], [1.0, 0.6, math.inf]]),
        "lloyd": np.array([[1.0, 0.7, 0.3], [1.0, 0.7, 0.3]]),
    }
    np.testing.assert_allclose(M.gap(cur, 1), [-0.2, -0.1])
    assert M.gap(cur, 2).tolist()[1] == math.inf
    np.testing.assert_allclose(M.mean_gap(cur, 0, 1), [-0.1, -0.05])
    assert M.mean_gap(cur)[1] == math.inf and M.mean_gap(cur)[0] == pytest.approx(-0.15)
    with pytest.raises(ValueError, match="end"):
        M.mean_gap(cur, 1, 3)
    with pytest.raises(ValueError, match="start"):
        M.mean_gap(cur, 2, 1)
    np.testing.assert_allclose(M.rise(cur, "reembed", 0, 1), [-0.5, -0.4])
    assert M.rise(cur, "reembed", 1, 2)[1] == math.inf


def test_init_numbers_name_each_init_and_pool_the_settings():
    def curves(model_end, lloyd_end):  # two seeds, steps 0..2
        return {
            "reembed": np.array([[1.0, 0.8, model_end], [1.0, 0.8, model_end + 0.2]]),
            "lloyd": np.array([[1.0, 0.9, lloyd_end], [1.0, 0.9, lloyd_end]]),
        }

    C = {("random", "a"): curves(0.2, 0.4), ("random", "b"): curves(0.4, 0.4), ("kmeans++", "a"): curves(0.5, 0.3)}
    got = M.init_numbers(C, ("random", "kmeans++"), ["a"], 2)
    # random: mean gaps over steps 1-2 of the two seeds -0.15, -0.05; kmeans++: 0.05, 0.15
    expected = {"lloydT-random": 0.4, "modelT-random": 0.3, "gapinit-random": -0.1}
    expected |= {"lloydT-kmeanspp": 0.3, "modelT-kmeanspp": 0.6, "gapinit-kmeanspp": 0.1}
    assert got == pytest.approx(expected)
    pooled = M.init_numbers(C, ("random",), ["a", "b"], 2)
    assert pooled["modelT-random"] == pytest.approx(0.4)  # median of 0.2, 0.4, 0.4, 0.6
    assert set(pooled) == {"lloydT-random", "modelT-random", "gapinit-random"}


def test_eval_ns():
    assert M.eval_ns(512, [0.25, 0.5, 2, 4]) == [128, 256, 1024, 2048]  # the paper's Fig. 12
    assert M.eval_ns(32, [0.25, 0.5, 2, 4]) == [8, 16, 64, 128]
    assert M.eval_ns(32, [1.0]) == []


def test_figures_draw(monkeypatch):
    import matplotlib.pyplot as plt

    shown = []
    monkeypatch.setattr(plt, "show", lambda: shown.append(plt.gcf()))
    curves = np.array([[1.0, 0.5, 0.4], [1.1, 0.6, math.inf]])
    M.panels([[{"OH:L2 re-embed": curves, "Lloyd's": curves}], [{"BN:NE": curves}]], [["a"], ["b"]], "t")
    M.gap_panels([[{"BN:L2": curves - 1.0}, {"OH:NE": curves}]], [["a", "b"]], "t")
    assert len(shown) == 2
    assert len(shown[1].axes) == 2
    plt.close("all")


def test_paper_models_are_the_captions_setting():
    assert {k: M.PAPER_MODELS[k] for k in ("n", "d", "k", "tau", "steps")} == dict(
        n=512, d=32, k=10, tau=0.1, steps=10000
    )
    assert M.eval_ns(M.PAPER_MODELS["n"], M.PAPER_MODELS["n_ratios"]) == [128, 256, 1024, 2048]


def test_data_rewrite_is_zero_for_the_theorem_and_positive_for_learned_weights():
    exact = M.data_rewrite([fake_run(0, theorem=True)], tasks=3, task_seed=TS)
    learned = M.data_rewrite([fake_run(0), fake_run(1, embedding="NA")], tasks=3, task_seed=TS)
    assert exact.shape == (1,) and exact[0] == pytest.approx(0.0, abs=1e-6)
    assert learned.shape == (2,) and (learned > 0).all() and np.isfinite(learned).all()
    diverged = SimpleNamespace(**{**vars(fake_run(2)), "status": "diverged"})
    assert math.isinf(M.data_rewrite([diverged], tasks=3, task_seed=TS)[0])
