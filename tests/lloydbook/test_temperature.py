"""lloydbook.temperature: Figure 10's findings at one d, stated as parts in the evidence vocabulary."""

import pytest

from lloydbook import temperature
from lloydbook.claims.evidence import OUTCOMES, Evidence
from lloydlib import training


@pytest.fixture(scope="module")
def groups(tmp_path_factory):
    base = training.TrainConfig(d=2, k=3, n=12, steps=20, batch=4, val_tasks=8, eval_every=5, device="cpu")
    cfgs = training.grid(base, tau=[1.0, 0.25, 0.1], embedding=["OH", "BN", "NA"], loss=["NE", "L2"], seed=[0, 1, 2])
    runs = training.train_many(cfgs, cache_dir=tmp_path_factory.mktemp("c"), progress=False)
    return training.group(runs, "d", "tau", "embedding", "loss")


def test_every_finding_of_figure_10_is_stated_with_its_runs_and_parts(groups):
    parts = temperature.fig10_parts(groups, 2, [0.1, 1.0, 0.25], ["OH", "BN", "NA"], ["NE", "L2"])
    assert list(parts) == [
        "l2-lower-train-loss",
        "ne-tau1-fails",
        "tau01-beats-lloyd",
        "larger-tau-faster-worse",
        "larger-tau-ordered",
        "oh-faster-than-bn",
        "oh-bn-similar-final",
    ]
    for name, p in parts.items():
        assert p.evidence and all(isinstance(e, Evidence) and e.outcome in OUTCOMES for e in p.evidence), name
        assert p.statement and p.paper and p.runs, name
    assert len(parts["l2-lower-train-loss"].runs) == 3 * 3 * 2 * 3  # every tau, embedding, loss and seed
    assert {r.config.tau for r in parts["larger-tau-ordered"].runs} == {0.1, 0.25, 1.0}
    assert {r.config.tau for r in parts["larger-tau-faster-worse"].runs} == {0.1, 1.0}
    assert parts["larger-tau-ordered"].evidence[0].text.startswith("2 cells")  # two steps of the grid
    assert "NA above 1" in [e.part for e in parts["tau01-beats-lloyd"].evidence]
    assert "tau=1" in parts["ne-tau1-fails"].statement and "(0.1)" in parts["tau01-beats-lloyd"].statement


def test_without_na_or_enough_settings(groups):
    parts = temperature.fig10_parts(groups, 2, [1.0, 0.1], ["OH", "BN"], ["L2"])
    assert [e.part for e in parts["tau01-beats-lloyd"].evidence] == ["OH and BN below 1 (tau=0.1)"]
    with pytest.raises(ValueError, match="two taus"):
        temperature.fig10_parts(groups, 2, [0.1], ["OH", "BN"], ["L2"])
    with pytest.raises(ValueError, match="OH and BN"):
        temperature.fig10_parts(groups, 2, [1.0, 0.1], ["OH", "NA"], ["L2"])
