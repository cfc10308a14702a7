"""Tests of scripts/record_table1_repeats.py, the repeats of chapter 03's CPU Table 1 measurement."""

import json

import pytest
from _support import load_script

from lloydbook import leanness as lean
from lloydbook.scales import params

record = load_script("record_table1_repeats")


def test_each_repeat_is_the_chapters_measurement_on_its_own_seed(monkeypatch, tmp_path):
    calls = []

    def grid(ds, ks, **kw):
        calls.append((ds, ks, kw))
        rows = [
            {"d": 32, "k": k, **{e: {"samples": {"forward": [2.0] * 25, "backward": [2.0] * 25}} for e in ("OH", "BN")}}
            for k in ks
        ]
        return {"benchmark": "oh-vs-bn", "hardware": {"cpu": "x"}, "config": dict(kw), "rows": rows}

    monkeypatch.setattr(record.bench, "grid", grid)
    record.main(["--scale", "ci", "--repeats", "2", "--first-seed", "3", "--out", str(tmp_path)])
    P = params("leanness", "ci")
    assert [kw["seed"] for *_, kw in calls] == [3, 4]
    ds, ks, kw = calls[0]
    assert ds == [32] and ks == P.table1_ks and kw["impl"] == "reference" and kw["passes"] == lean.T1_PASSES
    assert (kw["n"], kw["batch"], kw["reps"], kw["clock"]) == (P.n, P.table1_batch, P.table1_reps, P.clock)
    blob = json.loads((tmp_path / "seed-04.json").read_text())
    assert (
        blob["benchmark"] == "table1"
        and blob["config"]["scale"] == "ci"
        and set(blob["load_average"])
        == {
            "before",
            "after",
        }
    )
    with pytest.raises(SystemExit):
        record.main(["--scale", "paper", "--out", str(tmp_path)])
