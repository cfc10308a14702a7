"""Chapter 08 (Loss landscapes): expected verdicts (see :mod:`lloydbook.expectations`)."""

from ..claims.expectations import BEYOND, PAPER, post_hoc_pilot

#: a pilot on other tasks and directions (landscapes.PILOT_EVAL_SEED, PILOT_DIRECTION_SEED)
_PILOT = (
    "a pilot on other evaluation tasks and directions (landscapes.PILOT_EVAL_SEED, PILOT_DIRECTION_SEED) with the "
    "same trained models (chapter 05's and 07's n=32, k=6 runs): it tests the sampling of tasks and directions, "
    "not training"
)

EXPECT = {
    "unimodal": PAPER,
    "minimum-at-centre": BEYOND,
    "oh-bn-similar-large-d": PAPER,
    "oh-bn-differ-small-d": PAPER,
    "gap-normal": post_hoc_pilot("not reproduced", _PILOT),
    "gap-shrinks-with-d": BEYOND,
    "gap-cauchy": PAPER,
    "gap-cauchy-vs-normal": post_hoc_pilot("not reproduced", _PILOT),
    # Fig. 3's d=4 half and Fig. 5's normal data on the models trained at n=512 for 10,000 steps (the recorded sweep
    # fig10a-paper at tau=0.1, L2, OH and BN: d=4, k=6, Fig. 3's own setting at d=4): the paper's statements, stated
    # before any of these models was evaluated for them
    "unimodal-n512": PAPER,
    "minimum-at-centre-n512": BEYOND,
    "oh-bn-differ-small-d-n512": PAPER,
    # its blind expectation was the paper's statement (19d6071); on these models the largest gap was about six times
    # the paper's 0.5, as on this build's models, so the row is decided "not reproduced", set after reading them
    "gap-normal-n512": post_hoc_pilot(
        "not reproduced",
        "set after reading these same models (fig10a-paper at tau=0.1: n=512, d=4, k=6, 10,000 steps; OH and BN "
        "with L2, 10 seeds each): the paper's statement, committed as the expectation before they were evaluated, "
        "failed its check there. On 2 normal test tasks of n=512 (9 x 9 grid) the largest gap on the plane had "
        "median 3.12 for OH, 90% interval [2.94, 3.26], at the book's draw, and 3.33 [3.09, 3.54] at another draw "
        "of tasks and directions; BN's was above 0.5 at both. It records what they show",
    ),
}
