"""The findings decided on the sweeps recorded at the paper's setting (results/recorded/) give one verdict whatever the
bootstrap's seed: a row that a chapter decides only at some seeds is flaky, a bug. Each finding is decided as its
chapter decides it (the same figure function and arguments), by the judges of SEEDS chapter seeds."""

import pytest

from lloydbook import book, fig10, fig11, fig13, fig15
from lloydbook.claims.evidence import Judge, verdict_of
from lloydbook.findings import RecordedSweep

#: the chapter seed values each finding is decided at
SEEDS = range(40)
#: Figure 13's findings compare each n with the paper's base n
N0 = book.params("learning", "paper").fig13a_paper["base"]["n"]
#: each recorded sweep's chapter and its findings as that chapter decides them
PARTS = {
    "fig10a-paper": ("learning", lambda sweep, judge: fig10.recorded_parts(sweep, judge=judge)),
    "fig15a-paper": ("shapes", lambda sweep, judge: fig15.recorded_parts(sweep, judge=judge)),
    "fig13a-paper": ("shapes", lambda sweep, judge: fig13.recorded_parts(sweep, N0, judge=judge)),
    "fig11a-paper": ("shapes", lambda sweep, judge: fig11.recorded_parts(sweep, judge=judge)),
}


@pytest.mark.parametrize("name", list(PARTS))
def test_every_recorded_finding_has_one_verdict_at_every_bootstrap_seed(name):
    (chapter, parts_of), sweep, seen = PARTS[name], RecordedSweep.read(name), {}
    for s in SEEDS:
        for row, part in parts_of(sweep, Judge.at(s, chapter)).items():
            seen.setdefault(row, {}).setdefault(verdict_of(part.evidence), []).append(s)
    flaky = {row: {v: f"{len(ss)} seeds, e.g. {ss[0]}" for v, ss in got.items()} for row, got in seen.items()
             if len(got) > 1}  # fmt: skip
    assert seen and not flaky, f"decided differently at different chapter seeds: {flaky}"
