"""Chapter 07 (Distribution families and task dissimilarity): expected verdicts (see
:mod:`lloydbook.expectations`)."""

from ..claims.expectations import BEYOND, PAPER, post_hoc_pilot

#: the same-family claims read the runs' own validation losses: no pilot on other tasks could set them
_SEEN = (
    "earlier trainings of these same configurations (n=32, d=4, k=6; 3,000 steps; 10 seeds) had been read: the "
    "row records what such runs show, not a blind prediction"
)
#: the transfer claims evaluate the trained models on test tasks
_TRANSFER = (
    "a pilot on other test tasks (families.PILOT_SEED) with the same trained models (n=32, d=4, k=6): it tests "
    "the sampling of the test tasks, not training"
)

EXPECT = {
    "cauchy-squeeze": BEYOND,
    "same-cauchy-fails": post_hoc_pilot("partly", _SEEN),
    "same-tau1": post_hoc_pilot("partly", _SEEN),
    "same-tau01": post_hoc_pilot("not reproduced", _SEEN),
    # NA in Fig. 16's same-family statements: the paper's, stated before the NA family runs were trained (issue 26,
    # item 4). Known beforehand: the normal-family NA runs at tau=0.1 with L2 are chapter 05's Fig. 15 runs at k=6, and
    # chapter 04's NA runs (normal, 6,000 steps) end above one Lloyd step at tau=0.1; no other NA family run was read
    "same-na-cauchy-fails": PAPER,
    "same-na-tau01": post_hoc_pilot(
        "not reproduced",
        "the expectation was first the paper's ('reproduced', committed before these runs trained) and was "
        "changed after reading these same runs (the sweep families-na: n=32, d=4, k=6, NA at tau=0.1, 3,000 "
        "steps, 10 seeds), where NA ends above one Lloyd step on every family: a pilot on the same runs, which "
        "records what they show, not a prediction",
    ),
    "transfer-cauchy-trained": post_hoc_pilot(
        "partly",
        _TRANSFER + "; it also rests on what earlier builds of this chapter showed on its own test tasks",
    ),
    "transfer-cauchy-tested": post_hoc_pilot("not reproduced", _TRANSFER),
    "transfer-block": PAPER,  # the paper's, for when it is decided: an open row at every seed today (chapter 07)
    # issue 26 items 3, 4 (stated before the runs were read for them): "(OH and BN do not diverge)" tested on cauchy;
    # the bound of Eqs. 7-9 per family (held-out k-means loss at most the smoothed training loss, below it by no more
    # than the smoothing gap C on held-out tasks) and the paper's explanation of the cauchy failure by it (cauchy's
    # train/held-out gap, relative to its held-out loss, the largest of the five families)
    "tested-cauchy-finite": PAPER,
    # NA under cauchy test tasks is beyond the paper, whose "(OH and BN do not diverge)" is silent on it (issue 35,
    # item 4): its first form ("tested-cauchy-na", "NA diverges") expected the paper's verdict before these models were
    # evaluated on test tasks, and was scored "not reproduced" after; the statement now says what they show: those trained
    # on the other families do not diverge, those trained on cauchy do
    "tested-cauchy-na-finite": post_hoc_pilot(
        "beyond the paper",
        "written after the chapter's evaluation of these models on its own cauchy test tasks (the sweep "
        "families-na: n=32, d=4, k=6, NA, L2, tau=0.1, 3,000 steps, 10 seeds; T=20, 128 cauchy tasks) had been "
        "read, where only the models trained on cauchy made their objective worse: it records what these models "
        "show on these tasks, not a prediction",
        of_paper=False,
    ),
    "bound-gap": PAPER,
    "bound-cauchy-loosest": PAPER,
    "emd-cauchy-isolated": PAPER,
    "emd-laplace-closest": PAPER,
    "emd-small-tasks": BEYOND,
    "emd-predicts-transfer": BEYOND,
}
