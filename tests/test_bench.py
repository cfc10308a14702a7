"""lloydlib.bench: the reference form computes the same function, the measures are well defined, the CLI
prints JSON naming the hardware. (Speed itself is measured by ``python -m lloydlib bench``, not tested.)"""
import json

import pytest
import torch

import lloydlib as L
from lloydlib import bench
from lloydlib.losses import training_loss
from lloydlib.model import LearnableTransformer


@pytest.mark.parametrize("embedding", ["OH", "BN", "NA"])
@pytest.mark.parametrize("bias", [True, False])
def test_reference_form_equals_lloydlib_values_and_gradients(embedding, bias):
    X, C = L.sample_tasks(3, 40, 3, 5, seed=1, dtype=torch.float64)
    torch.manual_seed(0)
    ours = LearnableTransformer(3, 5, embedding, bias=bias, dtype=torch.float64)
    ref = bench.ReferenceTransformer(3, 5, embedding, bias=bias, dtype=torch.float64).load_from(ours)
    a = training_loss(X, ours(X, C), 0.1)
    b = bench.reference_loss(X, ref(X, C), 0.1)
    torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-10)
    a.backward()
    b.backward()
    for mu, head in enumerate(ref.heads):
        for kind in "QKV":
            torch.testing.assert_close(getattr(head, kind.lower()).weight.grad, getattr(ours, kind).grad[mu],
                                       atol=1e-9, rtol=1e-7)


def test_reference_loss_is_the_NE_training_loss():
    X, C = L.sample_tasks(4, 30, 2, 3, seed=2, dtype=torch.float64)
    for tau in (0.1, 1.0):
        torch.testing.assert_close(bench.reference_loss(X, C, tau), training_loss(X, C, tau, "NE"))
        torch.testing.assert_close(bench.lloydlib_loss(X, C, tau), training_loss(X, C, tau, "NE"))


def test_summarize():
    s = bench.summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s["median_ms"], s["q1_ms"], s["q3_ms"], s["min_ms"], s["n"]) == (3.0, 2.0, 4.0, 1.0, 5)
    assert s["spread"] == pytest.approx(2 / 3)
    assert bench.summarize([7.0])["median_ms"] == 7.0
    with pytest.raises(ValueError, match="at least one"):
        bench.summarize([])


def test_peak_memory_is_deterministic_and_grows_with_the_input():
    def step(n):
        X, C = L.sample_tasks(2, n, 4, 5, seed=0)
        model = LearnableTransformer(4, 5, "OH")
        return lambda: bench.lloydlib_loss(X, model(X, C)).backward()

    small, large = step(64), step(256)
    a, b = bench.peak_memory(small), bench.peak_memory(small)
    assert a == b > 0
    assert bench.peak_memory(large) > a
    # a tensor allocated and freed inside counts; one kept alive before does not
    assert bench.peak_memory(lambda: torch.empty(1000, 1000)) >= 4_000_000


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
    ref = bench.measure_embeddings(3, 6, n=32, batch=2, warmup=0, reps=1, impl="reference", memory=False)
    assert ref["BN"]["memory_bytes"] is None


def test_hardware_names_the_machine():
    hw = bench.hardware()
    assert {"cpu", "cpu_cores", "torch_threads", "torch", "device"} <= set(hw)
    assert hw["device"] == "cpu" and hw["torch"] == torch.__version__


def test_cli_train_step_json(capsys):
    rc = bench.main(["train-step", "--n", "24", "--d", "2", "--k", "3", "--batch", "2", "--warmup", "1",
                     "--reps", "2", "--no-compile", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lloydlib_ms_per_step"] > 0 and out["reference_ms_per_step"] > 0
    assert out["speedup"] == pytest.approx(out["reference_ms_per_step"] / out["lloydlib_ms_per_step"])
    assert out["config"]["n"] == 24 and out["config"]["embedding"] == "BN" and out["compile"] is False
    assert out["compile_warmup_seconds"] is None and "cpu" in out["hardware"]
    assert len(out["samples_ms"]["lloydlib"]) == 2


def test_cli_grid_json_and_file(capsys, tmp_path):
    path = tmp_path / "grid.json"
    rc = bench.main(["grid", "--d", "2 3", "--k", "4", "--n", "16", "--batch", "1", "--warmup", "0",
                     "--reps", "2", "--json", "--out", str(path)])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert json.loads(path.read_text()) == out
    assert [(r["d"], r["k"]) for r in out["rows"]] == [(2, 4), (3, 4)]
    assert out["config"]["n"] == 16 and out["benchmark"] == "grid"
    rc = bench.main(["table1", "--k", "6", "--n", "16", "--batch", "1", "--warmup", "0", "--reps", "1",
                     "--no-memory"])
    assert rc == 0
    assert "OH/BN" in capsys.readouterr().out


def test_cli_bad_input(capsys):
    assert bench.main(["grid", "--k", "1", "--n", "8", "--reps", "1", "--warmup", "0"]) == 2
    assert "k must be >= 2" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["train-step", "--embedding", "XX"])


def test_main_module_dispatches_bench(capsys):
    from lloydlib.__main__ import main
    assert main(["bench", "train-step", "--n", "12", "--d", "2", "--k", "2", "--batch", "1", "--warmup", "0",
                 "--reps", "1", "--no-compile", "--json"]) == 0
    assert "reference_ms_per_step" in json.loads(capsys.readouterr().out)


def test_recorded_reads_results_by_benchmark_and_hardware(tmp_path):
    cpu = {"benchmark": "table1", "hardware": {"cpu": "x"}, "rows": []}
    gpu = {"benchmark": "table1", "hardware": {"cpu": "x", "gpu": "NVIDIA H200"}, "rows": []}
    for name, blob in (("a.json", cpu), ("b.json", gpu), ("c.json", {"benchmark": "grid", "hardware": {}}),
                       ("d.json", [1, 2])):
        (tmp_path / name).write_text(json.dumps(blob))
    assert [r["file"] for r in bench.recorded("table1", root=tmp_path)] == ["a.json", "b.json"]
    assert [r["file"] for r in bench.recorded("table1", root=tmp_path, gpu_only=True)] == ["b.json"]
    assert bench.recorded("train-step", root=tmp_path) == []
    with pytest.raises(ValueError, match="benchmark"):
        bench.recorded("tabel1", root=tmp_path)


def test_committed_gpu_results_name_their_gpu():
    for kind in ("table1", "grid", "train-step"):
        for blob in bench.recorded(kind, gpu_only=True):
            assert blob["hardware"]["gpu"] and blob["hardware"]["device"].startswith("cuda"), blob["file"]
