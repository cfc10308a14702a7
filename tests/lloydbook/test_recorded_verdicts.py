"""The findings decided on the sweeps recorded at the paper's setting (results/recorded/) give one verdict whatever the
bootstrap's seed: a row that a chapter decides only at some seeds is flaky, a bug. Each finding is decided as its
chapter decides it (the same figure function and arguments), by the judges of SEEDS chapter seeds."""

import pytest

from lloydbook import book, fig10, fig11, fig13, fig15, sweeps
from lloydbook.claims.evidence import Judge, verdict_of

#: the chapter seed values each finding is decided at
SEEDS = range(40)
P, PAPER = book.params("learning", "ci"), book.params("learning", "paper")


def fig10a(judge):  # chapter 04's rows <name>-n512
    runs, missing = sweeps.recorded("fig10a-paper")
    d0 = P.tau_ds[0]
    rec = fig10.recorded_groups(runs, d0, PAPER.taus, P.embeddings, P.losses)
    return fig10.recorded_parts(rec, missing, sweeps.tiers("fig10a-paper"), d0, PAPER.taus, P.embeddings, P.losses,
                                judge=judge)  # fmt: skip


def fig15a(judge):  # chapter 05's rows <name>-n512 of Fig. 15b
    runs, missing = sweeps.recorded("fig15a-paper")
    tiers, q = sweeps.tiers("fig15a-paper"), PAPER.fig15a_paper
    ks = sorted({c.k for t in tiers for c in t})
    case = (q["base"]["d"], q["base"]["tau"])
    return fig15.recorded_parts(runs, missing, tiers, case, ks, q["embeddings"], n=q["base"]["n"], judge=judge)


def fig13a(judge):  # chapter 05's row n-little-difference-n128-512
    runs, missing = sweeps.recorded("fig13a-paper")
    tiers, q = sweeps.tiers("fig13a-paper"), PAPER.fig13a_paper
    ns, b = sorted({c.n for t in tiers for c in t}), q["base"]
    return fig13.recorded_parts(runs, missing, tiers, ns, b["n"], q["embeddings"], q["losses"], k=b["k"], judge=judge)


def fig11a(judge):  # chapter 05's rows <name>-n512 of Fig. 11a
    runs, missing = sweeps.recorded("fig11a-paper")
    tiers, q = sweeps.tiers("fig11a-paper"), PAPER.fig11a_paper
    lrs = sorted({c.lr for t in tiers for c in t})
    return fig11.recorded_parts(runs, missing, tiers, q["base"]["d"], lrs, q["embeddings"], q["losses"], judge=judge)


@pytest.mark.parametrize("parts_of, chapter", [(fig10a, "learning"), (fig15a, "shapes"), (fig13a, "shapes"),
                                               (fig11a, "shapes")])  # fmt: skip
def test_every_recorded_finding_has_one_verdict_at_every_bootstrap_seed(parts_of, chapter):
    seen: dict = {}
    for s in SEEDS:
        for name, part in parts_of(Judge.at(s, chapter)).items():
            seen.setdefault(name, {}).setdefault(verdict_of(part.evidence), []).append(s)
    flaky = {name: {v: f"{len(ss)} seeds, e.g. {ss[0]}" for v, ss in got.items()} for name, got in seen.items()
             if len(got) > 1}  # fmt: skip
    assert seen and not flaky, f"decided differently at different chapter seeds: {flaky}"
