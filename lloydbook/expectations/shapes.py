"""Chapter 05 (What shapes learning): expected verdicts (see :mod:`lloydbook.expectations`)."""

from ..claims.expectations import Expectation

PAPER, BEYOND = Expectation(of_paper=True), Expectation(of_paper=False)

EXPECT = {
    "d-bound-tightens": PAPER,
    "d-oh-bn-gap-shrinks": PAPER,
    "d-ne-l2-gap-shrinks": PAPER,
    "lr-small-monotone-slow": PAPER,
    "lr-large-nonmonotone-worse": PAPER,
    "n-little-difference": PAPER,
    "n-too-few-points": BEYOND,
    "k-bn-degrades": PAPER,
    "k-oh-insensitive": Expectation(
        of_paper=True,
        pilot="not reproduced",
        basis=(
            "earlier trainings of this sweep at the CPU setting (n=32, d=4, k in {6, 10, 16}; 3,000 steps) had "
            "shown OH's loss growing with k: the row records what such runs show, not a blind prediction"
        ),
    ),
    "k-bn-below-na": PAPER,
}
