"""lloydlib.bench.records: recorded results read back from a folder."""

import json

import pytest

from lloydlib import bench


def test_recorded_reads_results_by_benchmark_and_hardware(tmp_path):
    cpu = {"benchmark": "table1", "hardware": {"cpu": "x"}, "rows": []}
    gpu = {"benchmark": "table1", "hardware": {"cpu": "x", "gpu": "NVIDIA H200"}, "rows": []}
    for name, blob in (
        ("a.json", cpu),
        ("b.json", gpu),
        ("c.json", {"benchmark": "grid", "hardware": {}}),
        ("d.json", [1, 2]),
    ):
        (tmp_path / name).write_text(json.dumps(blob))
    assert [r["file"] for r in bench.recorded("table1", root=tmp_path)] == ["a.json", "b.json"]
    assert [r["file"] for r in bench.recorded("table1", root=tmp_path, gpu_only=True)] == ["b.json"]
    assert bench.recorded("train-step", root=tmp_path) == []
    assert bench.recorded("table1", root=tmp_path / "nowhere") == []
    with pytest.raises(ValueError, match="benchmark"):
        bench.recorded("tabel1", root=tmp_path)
    with pytest.raises(TypeError):
        bench.recorded("table1")  # the folder is required: the library knows no checkout
