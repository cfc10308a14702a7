"""Chapter 06 (Many steps and new inputs): expected verdicts (see :mod:`lloydbook.expectations`)."""

from ..claims.expectations import Expectation

PAPER, BEYOND = Expectation(of_paper=True), Expectation(of_paper=False)

EXPECT = {
    "iterate-diverges": PAPER,
    "reembed-beats-lloyd": PAPER,
    "na-improves-not-lloyd": PAPER,
    "inits-lose-to-lloyd": BEYOND,
    "shifts-beat-lloyd": PAPER,
    "scale-doubled": PAPER,
    # issue 26 items 3, 4 (stated before the runs were read for them): Appendix C's remark on the learned value maps
    # (the point tokens' data rows move by more than 5% of their norm after one layer), and NA under Fig. 7's
    # shifts and at Fig. 12's n, read with App. C's "NA improves but stays worse than Lloyd's"
    "v-overwrites-x": PAPER,
    "shifts-na": PAPER,
    "n-na": PAPER,
    "n-generalises": Expectation(
        of_paper=True,
        pilot="partly",
        post_hoc=True,
        basis=(
            "a pilot on other evaluation tasks (many_steps.PILOT_SEED + s) with the same models (chapter 04's "
            "n=32, d=4, k=6 runs): it tests the sampling of the evaluation tasks, not training"
        ),
    ),
}
