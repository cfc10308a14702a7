"""lloydlib.bench.oh_vs_bn: OH against BN, one layer at a time (Figure 1, Table 1)."""

import pytest
import torch

from lloydlib import bench


def test_measure_embeddings_small():
    res = bench.measure_embeddings(3, 6, n=32, batch=2, warmup=1, reps=3)
    assert set(res) == {"OH", "BN"}
    assert res["OH"]["d_emb"] == 9 and res["BN"]["d_emb"] == 6
    assert res["OH"]["extra_dims"] == 6 and res["BN"]["extra_dims"] == 3
    for e in res:
        for m in ("forward", "backward", "eval"):
            assert res[e][m]["n"] == 3 and res[e][m]["median_ms"] > 0
            assert len(res[e]["samples"][m]) == 3
        assert res[e]["memory_bytes"] > 0
        assert 0 < res[e]["memory_bytes_no_attention"] <= res[e]["memory_bytes"]
    ref = bench.measure_embeddings(3, 6, n=32, batch=2, warmup=0, reps=1, impl="reference", memory=False, clock="cpu")
    assert ref["BN"]["memory_bytes"] is None and ref["BN"]["memory_bytes_no_attention"] is None


def test_measure_embeddings_times_only_the_passes_asked_for():
    res = bench.measure_embeddings(3, 6, n=16, batch=1, warmup=0, reps=2, memory=False, passes=("forward", "backward"))
    assert set(res["OH"]["samples"]) == {"forward", "backward"} and "eval" not in res["OH"]
    out = bench.grid([2], [3], n=8, batch=1, warmup=0, reps=1, memory=False, passes=("eval",))
    assert out["config"]["passes"] == ["eval"] and list(out["rows"][0]["BN"]["samples"]) == ["eval"]


def test_measure_embeddings_times_with_the_threads_asked_for_and_restores_them(monkeypatch):
    seen = []
    real = bench.oh_vs_bn._time_passes
    monkeypatch.setattr(bench.oh_vs_bn, "_time_passes", lambda *a: seen.append(torch.get_num_threads()) or real(*a))
    before = torch.get_num_threads()
    bench.measure_embeddings(2, 3, n=8, batch=1, warmup=0, reps=2, memory=False, threads=1)
    assert seen == [1] * 4 and torch.get_num_threads() == before


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(k=1), "k must be >= 2"),
        (dict(clock="gpu"), "clock must be one of"),
        (dict(embeddings=("XX",)), "embeddings"),
        (dict(passes=("forward", "train")), "passes must be one of"),
        (dict(passes=()), "passes must name at least one"),
        (dict(threads=0), "threads"),
    ],
)
def test_measure_embeddings_refuses_bad_arguments(kwargs, words):
    with pytest.raises(ValueError, match=words):
        bench.measure_embeddings(**{"d": 2, "k": 3, "n": 8, "reps": 1, "warmup": 0, **kwargs})


def test_grid_names_hardware_config_and_rows():
    seen = []
    out = bench.grid([2], [3, 4], n=8, batch=1, warmup=0, reps=1, memory=False, progress=seen.append)
    assert out["benchmark"] == "oh-vs-bn" and out["hardware"]["device"] == "cpu"
    assert out["config"]["ks"] == [3, 4] and [(r["d"], r["k"]) for r in out["rows"]] == [(2, 3), (2, 4)]
    assert seen == out["rows"]
    assert bench.TABLE1_KS == (6, 25, 100, 400, 1000) and len(bench.FIGURE1_DS) == len(bench.FIGURE1_KS) == 6
