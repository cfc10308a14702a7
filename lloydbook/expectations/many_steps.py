"""Chapter 06 (Many steps and new inputs): expected verdicts (see :mod:`lloydbook.expectations`)."""

from ..claims.expectations import BEYOND, PAPER, post_hoc_pilot

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
    "n-generalises": post_hoc_pilot(
        "partly",
        "a pilot on other evaluation tasks (many_steps.PILOT_SEED + s) with the same models (chapter 04's "
        "n=32, d=4, k=6 runs): it tests the sampling of the evaluation tasks, not training",
    ),
    # Figs. 6, 7 and 12 on the models trained at n=512 for 10,000 steps (the recorded sweep fig10a-paper at tau=0.1:
    # d=4, k=6, the paper's Fig. 10a setting, not Fig. 6's d=32, k=10): the paper's statements, stated before any of
    # these models was evaluated for them
    "iterate-diverges-n512": PAPER,
    "reembed-beats-lloyd-n512": PAPER,
    "na-improves-not-lloyd-n512": PAPER,
    "shifts-beat-lloyd-n512": PAPER,
    # its blind expectation was the paper's statement (57d983c); on these models "better later" failed (the gap to
    # Lloyd's at step 20 was +0.055, 90% interval [+0.054, +0.059] over 20 runs), so the row is decided "partly", and
    # that expectation was set after reading them: post hoc
    "scale-doubled-n512": post_hoc_pilot(
        "partly",
        "set after reading these same models (fig10a-paper at tau=0.1: n=512, d=4, k=6, 10,000 steps; OH and BN "
        "with L2, 10 seeds each): the paper's statement, committed as the expectation before they were evaluated, "
        "failed its check there. With 128 tasks per seed worse at first held (mean gap over steps 1-5 +0.013, "
        "interval [+0.008, +0.016]) and better later failed (gap at step 20 +0.055, [+0.054, +0.059]); with 64, "
        "at three draws of the tasks (LLOYD_SEED 0-2), the same (gap at step 20 +0.053 to +0.056): these models "
        "stay behind Lloyd's on tasks at twice their training scale. It records what they show",
    ),
    "n-generalises-n512": PAPER,
    "v-overwrites-x-n512": PAPER,
}
