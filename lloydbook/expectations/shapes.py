"""Chapter 05 (What shapes learning): expected verdicts (see :mod:`lloydbook.expectations`)."""

from ..claims.expectations import BEYOND, PAPER, post_hoc_pilot

EXPECT = {
    "d-bound-tightens": PAPER,
    "d-oh-bn-gap-shrinks": PAPER,
    "d-ne-l2-gap-shrinks": PAPER,
    # Fig. 14 at tau=0.25 and Fig. 11 at eta=0.1 (d=4 and d=32): the paper's statements, stated before those runs
    # were trained (issue 26, item 4); at d=4 the paper names only eta=1 as non-monotone and worse
    "d-oh-bn-gap-shrinks-tau025": PAPER,
    "d-ne-l2-gap-shrinks-tau025": PAPER,
    "lr-small-monotone-slow": PAPER,
    "lr-large-nonmonotone-worse": PAPER,
    "lr-large-d32": PAPER,
    # the paper names no rate at d=4 but eta=1 (issue 35, item 4): this row states what its runs show, beyond the
    # paper. Its first form ("lr-01-d4-not-worse") expected the paper's verdict, read as "eta=0.1 is not a large rate
    # at d=4", before its runs trained; it was changed after reading them, so it is post hoc
    "lr-01-d4-large": post_hoc_pilot(
        "beyond the paper",
        "set after reading these same runs (the sweep fig11 at n=32, d=4, eta in {0.01, 0.1}, OH and BN with L2, "
        "3,000 steps): with 10 seeds eta=0.1 was already non-monotone (median largest rise 0.256) and its excess "
        "over eta=0.01 undecided; the seeds were raised to 20, which found it worse by more than 0.05. It records "
        "what they show, not a prediction",
        of_paper=False,
    ),
    "n-little-difference": PAPER,
    "n-too-few-points": BEYOND,
    # Fig. 13a at the paper's own n of 128, 256 and 512 (d=4, k=6, tau=0.1, 10,000 steps; its n=1024 is left to a
    # GPU), decided on the recorded sweep fig13a-paper trained on the CPU: the paper's statement, which covers these n,
    # stated before any of its n < 512 runs was trained (its n=512 runs are fig10a-paper's at tau=0.1, whose final
    # losses chapter 04 reads, never against another n)
    "n-little-difference-n128-512": PAPER,
    # Fig. 11a at the paper's own setting (n=512, d=4, k=6, tau=0.1, eta in {0.001, 0.01, 0.1, 1}, 5,000 steps), decided
    # on the recorded sweep fig11a-paper trained on the CPU: the paper's statements, and for eta=0.1 (which the paper
    # does not name at d=4) what this build's n=32 runs found, beyond the paper; stated before any of its runs trained
    "lr-small-monotone-slow-n512": PAPER,
    "lr-large-nonmonotone-worse-n512": PAPER,
    "lr-01-d4-large-n512": BEYOND,
    "k-bn-degrades": PAPER,
    "k-oh-insensitive": post_hoc_pilot(
        "not reproduced",
        "earlier trainings of this sweep at the CPU setting (n=32, d=4, k in {6, 10, 16}; 3,000 steps) had "
        "shown OH's loss growing with k: the row records what such runs show, not a blind prediction",
    ),
    "k-bn-below-na": PAPER,
    # Fig. 15b at the paper's own setting (n=512, d=4, tau=0.1, k in {6, 10, 16, 25}, L2, 10,000 steps), decided on
    # the recorded sweep fig15a-paper trained on the CPU: the paper's statements, stated before any of its k > 6 runs
    # was trained (its k=6 runs are fig10a-paper's, whose Fig. 15 statistics no row had read)
    "k-bn-degrades-n512": PAPER,
    # its row reads one panel of the paper's Fig. 15 (d=4, tau=0.1) at the paper's n and steps, so it is not at the
    # paper's whole setting and its expectation off it is a pilot's: the paper's statement, expected blind in 9d07b55,
    # failed on the complete sweep; the verdict those runs gave is the row's expectation now, post hoc
    "k-oh-insensitive-n512": post_hoc_pilot(
        "not reproduced",
        "set after reading these same runs: the paper's statement, expected blind in 9d07b55, failed on the "
        "complete sweep fig15a-paper (n=512, d=4, tau=0.1, L2, 10,000 steps, seeds 0-9, every OH run stable): OH's "
        "median final relative loss 0.881 at k=6, 0.891 at k=10, 0.916 at k=16 and 0.953 at k=25; k=25 - k=6 "
        "+0.071, 90% interval [+0.057, +0.080], outside the 0.05 tolerance (at k=10 and 16 within it). The "
        "interval's low end stayed above 0.05 under 300 bootstrap seeds (lowest +0.056)",
    ),
    "k-bn-below-na-n512": PAPER,
    # Figs. 14, 11, 13 and 15 on their paper-scale sweeps once a machine has recorded all of one
    # (lloydbook.findings.on_paper_sweep): the paper's statements, stated before any run of those sweeps was recorded
    # (Fig. 14 at tau=0.1 and 0.25; Fig. 11 at d=4 and d=32; Fig. 15 over all four panels)
    **{
        f"{name}-paper": PAPER
        for name in (
            "d-oh-bn-gap-shrinks",
            "d-ne-l2-gap-shrinks",
            "d-oh-bn-gap-shrinks-tau025",
            "d-ne-l2-gap-shrinks-tau025",
            "lr-small-monotone-slow",
            "lr-large-nonmonotone-worse",
            "lr-small-monotone-slow-d32",
            "lr-large-nonmonotone-worse-d32",
            "n-little-difference",
            "k-bn-degrades",
            "k-oh-insensitive",
            "k-bn-below-na",
            "k-oh-unstable",
        )
    },
}
