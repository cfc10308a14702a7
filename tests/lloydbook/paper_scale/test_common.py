"""lloydbook.paper_scale.common (and what the package's ``__init__`` exports): the claim suffix, the
completeness test, the argument checks, the pairing by seed and the recorder."""

from types import SimpleNamespace

import numpy as np
import pytest

from lloydbook import claims, findings, paper_scale
from lloydbook.claims.evidence import Evidence
from lloydbook.paper_scale import clusters, common, report, shapes, sweeps, tau, wall


def seeded(*seeds):
    """Made-up runs carrying only a config with a seed."""
    return [SimpleNamespace(config=SimpleNamespace(seed=s)) for s in seeds]


def test_init_exports_the_submodules_functions():
    homes = (common, tau, shapes, clusters, wall, sweeps, report)
    for name in paper_scale.__all__:
        owners = [m for m in homes if name in m.__all__]
        assert len(owners) == 1, name
        assert getattr(paper_scale, name) is getattr(owners[0], name)
    assert paper_scale.EXPECTED == "reproduced"


def test_claim_suffix_names_the_machine():
    assert paper_scale.claim_suffix("H200 (NVIDIA)") == "-gpu-h200-nvidia"
    with pytest.raises(ValueError, match="machine"):
        paper_scale.claim_suffix("--")


def test_claim_suffix_slugs():
    assert paper_scale.claim_suffix("a100") == "-gpu-a100"
    assert paper_scale.claim_suffix("  RTX_4090 / 24GB  ") == "-gpu-rtx-4090-24gb"
    assert paper_scale.claim_suffix(3090) == "-gpu-3090"  # str() of what is given
    with pytest.raises(ValueError, match="machine must name the GPU machine"):
        paper_scale.claim_suffix("")


def test_complete_needs_every_key_with_enough_runs():
    G = {("a", 1): [1, 2, 3], ("b", 1): [1, 2]}
    assert paper_scale.complete(G, [("a", 1), ("b", 1)], 2)
    assert not paper_scale.complete(G, [("a", 1), ("b", 1)], 3)  # b has only 2
    assert not paper_scale.complete(G, [("a", 1), ("c", 1)], 1)  # c missing
    assert paper_scale.complete(G, [], 5)  # nothing asked for
    assert paper_scale.complete(G, [("a", 1)], 3)  # more runs than asked are fine


def test_check_seeds_groups_and_values():
    assert common.check_seeds(10) == 10
    with pytest.raises(ValueError, match="seeds must be >= 1, got 0"):
        common.check_seeds(0)
    with pytest.raises(TypeError, match="seeds must be an integer"):
        common.check_seeds(2.5)
    G = {(1,): []}
    assert common.check_groups(G) is G
    with pytest.raises(TypeError, match="G must be a dict"):
        common.check_groups([G])
    # lists inside (settings read from YAML) become tuples, so they compare with keys and constants
    assert common.check_values("cases", [[4, 1.0], (32, 0.1)]) == [(4, 1.0), (32, 0.1)]
    assert common.check_values("taus", (0.1, 1.0), minimum=2) == [0.1, 1.0]
    assert common.check_values("embeddings", ["OH", "BN", "NA"], ("OH", "BN")) == ["OH", "BN", "NA"]
    with pytest.raises(ValueError, match=r"taus must hold at least 2 values, got \[0.1\]"):
        common.check_values("taus", [0.1], minimum=2)
    with pytest.raises(ValueError, match=r"ds must hold at least 1 values"):
        common.check_values("ds", [])
    with pytest.raises(ValueError, match=r"losses must include \['L2'\]"):
        common.check_values("losses", ["NE"], ("L2",))
    for bad in ("OH", b"OH", 4):  # a string is not a list of settings
        with pytest.raises(TypeError, match="embeddings must be a list of settings"):
            common.check_values("embeddings", bad)


def test_by_seed_pairs_only_the_same_seeds_in_order():
    a, b = seeded(0, 1, 2), seeded(0, 1, 2)
    assert findings.by_seed(a, b) == (a, b)
    with pytest.raises(ValueError, match=r"same seeds on both sides, got \[0, 1, 2\] and \[0, 2, 1\]"):
        findings.by_seed(a, seeded(0, 2, 1))
    with pytest.raises(ValueError, match="same seeds"):
        findings.by_seed(a, seeded(0, 1))
    plain = [SimpleNamespace(), SimpleNamespace()]  # no config: taken in the order given
    assert findings.by_seed(plain, plain[::-1]) == (plain, plain[::-1])
    assert findings.by_seed(seeded(0, 1), plain)  # seeds 0, 1 against positions 0, 1


def test_nan_as_inf():
    out = findings.nan_as_inf([1.0, np.nan, np.inf, -2.0])
    np.testing.assert_array_equal(out, [1.0, np.inf, np.inf, -2.0])
    assert out.dtype == float
    np.testing.assert_array_equal(findings.nan_as_inf(np.full(2, np.nan)), [np.inf, np.inf])  # e.g. inf - inf


def test_recorder_records_under_the_machines_suffix(chapter):
    record = common.Recorder("H200 SXM", "Leaner paper, Fig. 99")
    assert record.suffix == "-gpu-h200-sxm" and record.ids == []
    holds = [Evidence("a part", "holds", "numbers")]
    record("learning-made-up", findings.Part("A made-up statement", "holds", [], holds), " (h200)")
    record("learning-other", findings.Part("Another", "holds", [], holds), "", source="Elsewhere")
    assert record.ids == ["learning-made-up-gpu-h200-sxm", "learning-other-gpu-h200-sxm"]
    rows = {c.id: c for c in claims.claims()}
    assert rows[record.ids[0]].verdict == paper_scale.EXPECTED and rows[record.ids[0]].statement.endswith(" (h200)")
    assert rows[record.ids[0]].source == "Leaner paper, Fig. 99" and rows[record.ids[1]].source == "Elsewhere"
    assert "a part: holds (numbers)" in rows[record.ids[0]].ours
    with pytest.raises(AssertionError, match="learning-fails-gpu-h200-sxm"):
        record("learning-fails", findings.Part("S", "p", [], [Evidence("p", "fails", "n")]), "")
    assert len(record.ids) == 2  # a failed check is not kept
    with pytest.raises(ValueError, match="machine"):
        common.Recorder("()", "source")


def test_recorder_opens_a_row_where_the_finding_decides_nothing(chapter):
    """The rule of lloydbook.findings.undecided: an undetermined comparison, or a premise that fails, is an open row
    that says why, never a failed check."""
    record = common.Recorder("h200", "Leaner paper, Fig. 99")
    straddles = [Evidence("a part", "holds", "n"), Evidence("another", "undetermined", "interval [-0.1, 0.2]")]
    record("learning-unsure", findings.Part("S", "p", [], straddles), "", source="Elsewhere")
    record("learning-plateau", findings.Part("T", "p", [], [Evidence("p", "fails", "n")], unmet="no run left it"), "")
    rows = {r.id: r for r in claims.open_rows()}
    unsure, plateau = rows["learning-unsure-gpu-h200"], rows["learning-plateau-gpu-h200"]
    assert unsure.ours == "undetermined: a part: holds (n); another: undetermined (interval [-0.1, 0.2])"
    assert unsure.source == "Elsewhere" and unsure.decides.startswith("more seeds at the paper's setting")
    assert plateau.ours == "not decided: no run left it" and plateau.decides.startswith("longer runs")
    assert record.ids == ["learning-unsure-gpu-h200", "learning-plateau-gpu-h200"] and claims.claims() == []
