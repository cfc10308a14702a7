"""Chapter 05 (What shapes learning): expected verdicts (see :mod:`lloydbook.expectations`)."""

from ..claims.expectations import Expectation

PAPER, BEYOND = Expectation(of_paper=True), Expectation(of_paper=False)

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
    "lr-01-d4-not-worse": PAPER,
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
