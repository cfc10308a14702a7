"""Chapter 04 (Learning one Lloyd step): expected verdicts (see :mod:`lloydbook.expectations`)."""

from ..claims.expectations import BEYOND, PAPER, post_hoc_pilot

EXPECT = {
    "upper-bound": PAPER,
    "l2-tighter": PAPER,
    "bound-limits": PAPER,
    "l2-lower-train-loss": PAPER,
    "ne-tau1-fails": PAPER,
    "ne-tau1-collapse": BEYOND,
    "tau01-beats-lloyd": PAPER,
    "larger-tau-faster-worse": PAPER,
    "oh-faster-than-bn": PAPER,
    "oh-bn-similar-final": PAPER,
    "wallclock-bn-step-cheaper": PAPER,
    # Fig. 17's two findings (lloydbook.fig17): the paper's statements, stated (issue 35) before their evidence was
    # ever computed in this build, where they were open rows; decided only where their premise holds (a run left
    # the plateau above one Lloyd step), else open
    "wallclock-bn-slower": PAPER,
    "wallclock-bn-initially-faster": PAPER,
    # Fig. 10 at every tau of the paper (d=4) and Fig. 10b (d=32): the paper's statements, stated before the runs of
    # tau 0.25 and 0.14 and of d=32 were trained (issue 26, item 4)
    "larger-tau-ordered": PAPER,
    "d32-l2-lower-train-loss": PAPER,
    "d32-ne-tau1-fails": post_hoc_pilot(
        "not reproduced",
        "the expectation was first the paper's ('reproduced', committed before these runs trained) and was "
        "changed after reading these same runs (the sweep fig10b: n=32, d=32, k=6, NE at tau=1, 3,000 steps, 10 "
        "seeds), where no embedding ends 10% above its best and OH ends below one Lloyd step: a pilot on the "
        "same runs, which records what they show, not a prediction",
    ),
    "d32-tau01-beats-lloyd": PAPER,
    "d32-larger-tau-faster-worse": PAPER,
    "d32-larger-tau-ordered": PAPER,
    "d32-oh-faster-than-bn": PAPER,
    "d32-oh-bn-similar-final": PAPER,
    # Fig. 2a/10a at the paper's own setting (n=512, d=4, k=6, B=32, 10,000 steps), decided on the recorded sweep
    # fig10a-paper trained on the CPU (issue 34, item 6): the paper's statements, stated before any of its runs was read
    "l2-lower-train-loss-n512": PAPER,
    "ne-tau1-fails-n512": PAPER,
    "tau01-beats-lloyd-n512": PAPER,
    "larger-tau-faster-worse-n512": PAPER,
    "larger-tau-ordered-n512": PAPER,
    "oh-faster-than-bn-n512": PAPER,
    "oh-bn-similar-final-n512": PAPER,
    # Attention dropout left on at evaluation, as the authors' code does (issue 34, item 7): beyond the paper, which
    # does not mention dropout. Stated before any model was scored with dropout on: models trained without dropout
    # score worse with it on, in every (embedding, regulariser) cell at the smallest tau, at n=32 and at n=512. The
    # basis is an a-priori argument (zero-mean noise on the output centers raises a quadratic loss) and the authors'
    # checkpoints (trained with dropout 0.01), where dropout on was worse by 0.007-0.040 at tau=0.1
    # (../shared/papers/kmeans-trf-agreement.md); none of this book's models had been scored so.
    "dropout-eval-worse": BEYOND,
    "dropout-eval-worse-n512": BEYOND,
    # Figs. 10b and 17 on their paper-scale sweeps (fig10b, fig17) once a machine has recorded all of either
    # (lloydbook.findings.on_paper_sweep): the paper's statements, stated before any run of those sweeps was recorded;
    # Fig. 10b's are the twins <name>-paper of the d32- rows above (added below)
    "wallclock-bn-slower-paper": PAPER,
    "wallclock-bn-initially-faster-paper": PAPER,
}
EXPECT.update({f"{name}-paper": PAPER for name in list(EXPECT) if name.startswith("d32-")})
