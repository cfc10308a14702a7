"""lloydbook.landscape_findings: Figures 3 and 5's findings as parts in the evidence vocabulary, on made-up surfaces
and rises (one a seed) of made-up runs."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from lloydbook import landscape_findings as LF
from lloydlib.model import LearnableTransformer
from lloydlib.training import TrainConfig

DS, EMBS, SEEDS = (4, 32), ("OH", "BN"), range(10)


def runs(d=4):
    return [SimpleNamespace(config=SimpleNamespace(seed=s, d=d)) for s in SEEDS]


def bowls(shift=0, ripple=False, g=5):
    """Per seed a bowl on a g x g grid, its lowest point ``shift`` steps from the centre; ``ripple``: a second
    strict local minimum in a corner at 1.5 (seed s: 1.5 / (1 + 0.01 s) times the lowest value)."""
    x = np.arange(g) - g // 2 - shift
    S = np.stack([1.0 + 0.01 * s + np.add.outer(x**2, x**2) for s in SEEDS])
    if ripple:
        S[:, 0, 0], S[:, 0, 1], S[:, 1, 0], S[:, 1, 1] = 1.5, 20.0, 20.0, 20.0
    return S


def test_shape_parts_count_every_surface():
    G = {(d, 0.1, e, "L2"): runs(d) for d in DS for e in EMBS}
    good = LF.shape_parts(G, {(d, e): bowls() for d in DS for e in EMBS}, 0.1)
    assert list(good) == ["unimodal", "minimum-at-centre"] and len(good["unimodal"].runs) == 40
    assert "(L2, tau=0.1)" in good["unimodal"].statement
    say = LF.fig3_statements(DS, 0.1, EMBS)
    assert good["unimodal"].statement == say["unimodal"][0] + " (40 surfaces: 10 seeds; 5 x 5 grid)"
    assert "in every surface (d=4, 32, OH, BN)" in good["unimodal"].statement
    assert (good["minimum-at-centre"].statement, good["minimum-at-centre"].paper) == say["minimum-at-centre"]
    assert [p.evidence[0].outcome for p in good.values()] == ["holds", "holds"]
    assert good["unimodal"].evidence[0].text.startswith("surfaces with exactly one strict local minimum: 40 of 40")
    bad = LF.shape_parts(G, {(d, e): bowls(shift=1, ripple=d == 4) for d in DS for e in EMBS}, 0.1)
    assert [p.evidence[0].outcome for p in bad.values()] == ["fails", "fails"]
    assert (
        "lowest second minimum, as a multiple of its surface's lowest value: 1.38" in bad["unimodal"].evidence[0].text
    )
    assert (
        bad["minimum-at-centre"]
        .evidence[0]
        .text.endswith("at the centre in 0 of 40 surfaces; farthest 1 grid steps away")
    )


def test_rise_parts_similar_at_the_largest_d_and_bn_steeper_at_the_smallest(judge):
    G = {(d, 0.1, e, "L2"): runs(d) for d in DS for e in EMBS}
    rise = {(d, e): np.linspace(1.0, 1.1, 10) + (0.5 if (d, e) == (4, "BN") else 0) for d in DS for e in EMBS}
    parts = LF.rise_parts(G, rise, 0.1, judge=judge)
    similar, differ = parts["oh-bn-similar-large-d"], parts["oh-bn-differ-small-d"]
    assert [e.part for e in similar.evidence] == ["OH and BN within 10% at d=32"]
    assert [e.part for e in differ.evidence] == ["BN steeper than OH at d=4"]
    assert [similar.evidence[0].outcome, differ.evidence[0].outcome] == ["holds", "holds"]
    assert "tolerance 0.105" in similar.evidence[0].text and "unpaired" in differ.evidence[0].text
    assert {r.config.d for r in similar.runs} == {32} and len(differ.runs) == 20
    assert (
        list(parts) == ["oh-bn-similar-large-d", "oh-bn-differ-small-d"]
        and differ.paper == '"At d=4 OH and BN differ; at d=32 they are similar"'
    )
    alone = LF.rise_parts(G, {(4, e): rise[(4, e)] for e in EMBS}, 0.1, large=False, judge=judge)  # models at one d
    differ = alone["oh-bn-differ-small-d"]
    assert (differ.statement, differ.paper) == LF.fig3_statements([4], 0.1, EMBS)["oh-bn-differ-small-d"]
    assert list(alone) == ["oh-bn-differ-small-d"] and alone["oh-bn-differ-small-d"] == differ


def test_gap_parts_decide_the_papers_numbers_on_each_seeds_largest_gap(judge):
    FG = {(f, 0.1, e, "L2"): runs(4) for f in ("normal", "cauchy") for e in EMBS}
    DG = {(d, 0.1, e, "L2"): runs(d) for d in DS for e in EMBS}
    F = {(f, e): bowls() * (20.0 if f == "cauchy" else 1.0) for f in ("normal", "cauchy") for e in EMBS}
    D = {(d, e): bowls() * (1.0 if d == 4 else 0.1) for d in DS for e in EMBS}
    parts = LF.gap_parts(FG, DG, F, D, tau=0.1, loss="L2", n=512, judge=judge)
    assert list(parts) == [n for n in LF.SOURCES if n.startswith("gap")] == list(LF.FIG5_PAPER)
    outcomes = {name: [e.outcome for e in p.evidence] for name, p in parts.items()}
    assert outcomes == {
        "gap-normal": ["fails"],  # about 9 on the plane, not below 0.5
        "gap-shrinks-with-d": ["holds"],  # 10 times smaller at d=32
        "gap-cauchy": ["holds"],
        "gap-cauchy-vs-normal": ["holds"],  # 20 times normal's
    }
    assert "(largest value, n=512 test tasks, d=4, L2, tau=0.1)" in parts["gap-cauchy"].statement
    assert "more than 3 times smaller at d=32 than at d=4 (n=512" in parts["gap-shrinks-with-d"].statement
    cells = parts["gap-shrinks-with-d"].evidence[0].cells
    assert (
        [c.part for c in cells] == ["OH", "BN"]
        and "log gap d=32 OH" in cells[0].text
        and "margin 1.099" in cells[0].text
    )
    assert len(parts["gap-cauchy-vs-normal"].runs) == 40 and {r.config.d for r in parts["gap-normal"].runs} == {4}
    assert (
        LF.gap_normal(DG, {(4, e): D[(4, e)] for e in EMBS}, 4, tau=0.1, loss="L2", n=512, judge=judge)
        == parts["gap-normal"]
    )
    with pytest.raises(ValueError, match=r"D must hold d=8, got the keys \[\(4, 'OH'\)"):
        LF.gap_normal(DG, D, 8, tau=0.1, loss="L2", n=512, judge=judge)


def test_bad_inputs_name_the_argument(judge):
    G = {(d, 0.1, e, "L2"): runs(d) for d in DS for e in EMBS}
    with pytest.raises(
        ValueError, match=r"rise must map \(d or family, embedding\) with \['OH', 'BN'\].*got \[\(4, 'OH'\)"
    ):
        LF.rise_parts(G, {(4, "OH"): np.ones(10), (32, "OH"): np.ones(10)}, 0.1, judge=judge)
    with pytest.raises(ValueError, match="rise must hold two d, got \\[4\\]"):
        LF.rise_parts(G, {(4, e): np.ones(10) for e in EMBS}, 0.1, judge=judge)
    with pytest.raises(ValueError, match="S must map"):
        LF.shape_parts(G, {}, 0.1)
    F = {("normal", e): bowls() for e in EMBS}
    D = {(d, e): bowls() for d in DS for e in EMBS}
    with pytest.raises(
        ValueError, match=r"F the normal and cauchy families, got d \[4, 32\] and families \['normal'\]"
    ):
        LF.gap_parts({}, G, F, D, tau=0.1, loss="L2", n=512, judge=judge)


def test_on_models_states_each_finding_on_models_of_one_d(judge):
    def model_run(e, seed, d=2):
        torch.manual_seed(seed)
        config = TrainConfig(d=d, k=3, n=12, steps=10, batch=4, tau=0.1, embedding=e, loss="L2", seed=seed)
        return SimpleNamespace(config=config, model=LearnableTransformer(d, 3, e, gamma=1.0), status="done")

    runs = {e: [model_run(e, s) for s in range(3)] for e in EMBS}
    counts = dict(loss_tasks=1, planes=2, rise_tasks=1, gap_tasks=1)
    seeds = dict(tasks=1, rise_tasks=2, gap_tasks=3, directions=4, planes=[5, 6])
    grids = dict(grid=5, rise_grid=3, gap_grid=3)
    kw = dict(counts=counts, seeds=seeds, radius=1.0, grids=grids, gap_n=24, precision="float64")
    parts, surf = LF.on_models(runs, **kw, judge=judge)
    assert list(parts) == list(LF.ON_MODELS) and set(LF.ON_MODELS) <= set(LF.SOURCES)
    assert surf["shape"][(2, "OH")].shape == (3, 5, 5) and surf["gap"][(2, "BN")].shape == (3, 3, 3)
    assert surf["rise"][(2, "OH")].shape == (3,) and "d=2" in parts["gap-normal"].statement
    assert "n=24 test tasks" in parts["gap-normal"].statement and len(parts["oh-bn-differ-small-d"].runs) == 6
    gap_only, drawn = LF.on_models(
        runs, **{**kw, "counts": {**counts, "loss_tasks": None, "planes": None}}, judge=judge
    )
    assert list(gap_only) == ["gap-normal"] and list(drawn) == ["gap"]
    assert np.array_equal(drawn["gap"][(2, "OH")], surf["gap"][(2, "OH")])
    _, single = LF.on_models(runs, **{**kw, "precision": "float32"}, judge=judge)  # the same surfaces, rounded
    assert np.allclose(single["gap"][(2, "OH")], surf["gap"][(2, "OH")], rtol=1e-4)
    assert not np.array_equal(single["shape"][(2, "BN")], surf["shape"][(2, "BN")])
    with pytest.raises(ValueError, match=r"runs must map each embedding to its runs, got \[\('OH', 0\)\]"):
        LF.on_models({"OH": []}, **kw, judge=judge)
    with pytest.raises(ValueError, match="runs must be L2 models of one setting"):
        LF.on_models({**runs, "BN": [model_run("BN", 0, d=3)]}, **kw, judge=judge)
