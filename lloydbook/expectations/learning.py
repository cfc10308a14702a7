"""Chapter 04 (Learning one Lloyd step): expected verdicts (see :mod:`lloydbook.expectations`)."""

from ..claims.expectations import Expectation

PAPER, BEYOND = Expectation(of_paper=True), Expectation(of_paper=False)

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
}
