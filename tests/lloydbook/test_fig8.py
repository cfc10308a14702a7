"""lloydbook.fig8: chapter 07's findings as parts in the evidence vocabulary (same family, transfer, the bound, the
EMD and its correlation with transfer), on made-up runs and values."""

from types import SimpleNamespace

import numpy as np
import pytest
from _made_up_runs import falls, run

from lloydbook import fig8

FAMS, TAUS, EMBS, LOSSES = ("normal", "cauchy", "gumbel", "laplace"), (1.0, 0.1), ("OH", "BN"), ("NE", "L2")


def same_grid():
    """Made-up runs of every (family, tau, embedding, loss): cauchy ends above one Lloyd step, and so does NE at
    tau=1; everything else ends below it."""

    def end(f, t, l):
        return 1.3 if f == "cauchy" or (t == 1.0 and l == "NE") else 0.8

    keys = [(f, t, e, l) for f in FAMS for t in TAUS for e in (*EMBS, "NA") for l in LOSSES]
    return {(f, t, e, l): [run(falls(20, end(f, t, l)), s) for s in range(10)] for f, t, e, l in keys}


def test_same_family_findings_and_nas_where_the_runs_hold_them(judge):
    parts = fig8.same_parts(same_grid(), FAMS, TAUS, EMBS, LOSSES, judge=judge)
    assert list(parts) == ["same-cauchy-fails", "same-tau1", "same-tau01", "same-na-cauchy-fails", "same-na-tau01"]
    assert all(e.outcome == "holds" for p in parts.values() for e in p.evidence)
    fails = parts["same-cauchy-fails"]
    assert [e.part for e in fails.evidence] == ["tau=1", "tau=0.1"] and len(fails.runs) == 2 * 2 * 2 * 10
    assert [c.part for c in fails.evidence[0].cells] == ["OH:NE", "OH:L2", "BN:NE", "BN:L2"]
    ne = parts["same-tau1"].evidence[1]
    assert ne.part == "NE does not" and [c.part for c in ne.cells] == [
        "gumbel OH",
        "gumbel BN",
        "laplace OH",
        "laplace BN",
    ]
    assert parts["same-tau01"].statement.startswith("At tau=0.1, every embedding")
    assert [c.part for c in parts["same-na-tau01"].evidence[0].cells][:2] == ["normal NA:NE", "normal NA:L2"]
    assert set(parts) | {"cauchy-squeeze"} <= set(fig8.SOURCES)


def grid_values(cauchy_trained=2.0, block=0.9, to_cauchy=1.2):
    """Made-up T-step ratios and log changes per embedding: ``{e: {(train, test): (seeds,)}}``."""
    seeds = np.linspace(-0.01, 0.01, 10)

    def ratio(a, b):
        return cauchy_trained if a == "cauchy" else to_cauchy if b == "cauchy" else block

    many = {e: {(a, b): ratio(a, b) + seeds for a in FAMS for b in FAMS} for e in EMBS}
    grow = {e: {(a, b): (0.5 if a == "cauchy" else -0.5) + seeds for a in FAMS for b in FAMS} for e in EMBS}
    return many, grow


def test_transfer_findings_on_made_up_grids(judge):
    trained = {e: {f: [run(falls(20), s) for s in range(10)] for f in FAMS} for e in EMBS}
    many, grow = grid_values()
    na = ({f: trained["OH"][f] for f in FAMS}, grow["OH"])
    parts = fig8.transfer_parts(trained, many, grow, T=20, tau=0.1, loss="L2", na=na, judge=judge)
    assert list(parts)[-1] == "tested-cauchy-na-finite" and all(name in fig8.SOURCES for name in parts)
    trained_on = parts["transfer-cauchy-trained"]
    assert [e.outcome for e in trained_on.evidence] == ["holds", "holds"] and len(trained_on.runs) == 80
    assert trained_on.evidence[0].cells[0].part == "OH on normal"
    assert [e.part for e in parts["transfer-cauchy-tested"].evidence[0].cells] == ["OH", "BN"]
    block = parts["transfer-block"]
    assert "within normal, gumbel and laplace, the models" in block.statement
    assert [e.outcome for e in block.evidence] == ["holds"] * 2
    assert block.unmet.startswith("at Lloyd's level, the side of 1")
    assert "this draw: OH block mean of the T-step ratio 0.900" in block.unmet
    na_part = parts["tested-cauchy-na-finite"]
    assert [e.outcome for e in na_part.evidence] == ["holds", "holds"] and len(na_part.runs) == 40
    assert np.allclose(fig8.block_means(many, ["normal", "gumbel"])["BN"], 0.9 + np.linspace(-0.01, 0.01, 10))


def test_bound_and_correlation_findings(judge):
    trained = {e: {f: [run(falls(20), s) for s in range(10)] for f in FAMS} for e in EMBS}
    ones = np.ones(10) + np.linspace(0, 0.01, 10)
    slack = {f: (3 if f == "cauchy" else 1) * ones for f in FAMS}  # relative to the loss, largest on cauchy
    terms = {(f, e): {"slack": slack[f], "loss": 10 * ones, "gap": 5 * ones} for f in FAMS for e in EMBS}
    parts = fig8.bound_parts(trained, terms, tau=0.1, loss="L2", judge=judge)
    assert [e.outcome for p in parts.values() for e in p.evidence] == ["holds"] * 4
    assert parts["bound-cauchy-loosest"].evidence[0].cells[0].part == "OH: normal"
    assert parts["bound-gap"].statement.endswith("on held-out tasks (OH, BN, L2, tau=0.1)")
    corr = {"OH": dict(rho=0.1, low=-0.2, high=0.3, pairs=12), "BN": dict(rho=0.8, low=0.6, high=0.9, pairs=12)}
    ((name, part),) = fig8.correlation_parts(trained, corr, T=20).items()
    assert name == "emd-predicts-transfer" and [e.outcome for e in part.evidence] == ["holds", "fails"]
    assert part.evidence[0].text == "rho +0.100, 90% interval [-0.200, +0.300], tolerance 0.5 (12 family pairs)"
    assert fig8.SOURCES[name].startswith("beyond the paper")


def emd_matrix(spread, laplace_at=0.6, cauchy_at=1.0, per=3):
    """A made-up EMD matrix: |x_i - x_j| for tasks on a line, each family's ``per`` tasks around its place."""
    where = {"normal": 0.0, "gumbel": 0.1, "laplace": laplace_at, "cauchy": cauchy_at}
    x = np.array([where[f] + (spread if f == "cauchy" else 0.01) * i for f in FAMS for i in range(per)])
    return np.abs(x[:, None] - x[None, :]), [f for f in FAMS for _ in range(per)]


def test_emd_rows_and_the_numbers_the_text_quotes():
    rows, numbers = fig8.emd_rows([emd_matrix(0.001)] * 2, [emd_matrix(0.2)], (32, 4, 6))
    assert list(rows) == ["emd-cauchy-isolated", "emd-laplace-closest", "emd-small-tasks"]
    assert all(r["check"] for r in rows.values()) and "(n, d, k = 32, 4, 6)" in rows["emd-small-tasks"]["statement"]
    assert rows["emd-laplace-closest"]["ours"].startswith("closest to cauchy: laplace over 2 matrices")
    assert numbers["sep-paper"] > numbers["sep-small"] > 1 and set(numbers) == {"sep-small", "sep-paper", "iso-small"}
    far, _ = fig8.emd_rows([emd_matrix(0.001, laplace_at=0.05)], [emd_matrix(0.2)], (32, 4, 6))
    assert not far["emd-laplace-closest"]["check"]  # gumbel is nearer cauchy than laplace


def test_squeeze_finding(judge):
    normal = {e: [run(falls(20), s) for s in range(10)] for e in EMBS}
    on_cauchy = {(e, n): 0.8 + np.linspace(0, 0.01, 10) for e in EMBS for n in (32, 512)}
    ((name, part),) = fig8.squeeze_parts(normal, {32: 0.5, 512: 0.05}, on_cauchy, judge=judge).items()
    assert name == "cauchy-squeeze" and [e.outcome for e in part.evidence] == ["holds", "holds"]
    assert "at n=512 of that at n=32" in part.statement and len(part.runs) == 20
    ((_, wide),) = fig8.squeeze_parts(normal, {32: 0.5, 512: 0.2}, on_cauchy, judge=judge).items()
    assert wide.evidence[0].outcome == "fails"


def test_bad_inputs_name_the_argument(judge):
    with pytest.raises(ValueError, match="need cauchy, two taus, NE and L2; got families"):
        fig8.same_parts(same_grid(), FAMS, TAUS, EMBS, ("L2",), judge=judge)
    with pytest.raises(ValueError, match="need cauchy, two taus"):
        fig8.same_parts(same_grid(), ("normal", "gumbel"), TAUS, EMBS, LOSSES, judge=judge)
    many, grow = grid_values()
    no_cauchy = {e: {f: [run(falls(20), 0)] for f in ("normal", "gumbel")} for e in EMBS}
    with pytest.raises(ValueError, match="trained must map each embedding to the same families, cauchy among them"):
        fig8.transfer_parts(no_cauchy, many, grow, T=20, tau=0.1, loss="L2", na=({}, {}), judge=judge)
    with pytest.raises(ValueError, match=r"terms must hold \(cauchy, embedding\)"):
        fig8.bound_parts({}, {("normal", "OH"): {}}, tau=0.1, loss="L2", judge=judge)
    with pytest.raises(ValueError, match="need matrices at both sizes over families with cauchy and laplace"):
        fig8.emd_rows([emd_matrix(0.001)], [], (32, 4, 6))
    missing = r"need two n in squeeze, each in on_cauchy per embedding; got \[32, 512\], missing \[\('OH', 512\)\]"
    with pytest.raises(ValueError, match=missing):
        fig8.squeeze_parts({"OH": [SimpleNamespace()]}, {32: 0.5, 512: 0.1}, {("OH", 32): np.ones(3)}, judge=judge)
