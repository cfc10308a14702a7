"""What each claim of the learning chapters is expected to find, stated before its runs are read.

At the paper's own setting a claim expects the paper's statement ("reproduced" for a claim of the paper, "beyond the
paper" for one it does not make), so a build there cannot contradict the paper by construction: where the runs
disagree, its check fails, and that is the finding. Once such a failure has been read, ``found_at_paper`` records the
verdict those runs gave, post hoc. At any other setting it expects a pilot's verdict where one is stated, else the
paper's statement. A pilot that read the claim's own runs or models (``post_hoc``) records what they show rather than
predicts it: its rows are marked post hoc and counted apart on the Scorecard (:data:`lloydbook.claims.POST_HOC`).

The entries live in :mod:`lloydbook.expectations`, one module per chapter; a chapter asks
:meth:`lloydbook.book.Chapter.expect` before it computes, and ``Chapter.decide`` refuses a claim whose expectation
was not asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

from .registry import VERDICTS

__all__ = ["Expectation", "PAPER_VERDICT", "PAPER", "BEYOND", "post_hoc_pilot"]

#: the expected verdict at the paper's setting: of a claim of the paper, and of one beyond it
PAPER_VERDICT = {True: "reproduced", False: "beyond the paper"}


@dataclass(frozen=True)
class Expectation:
    """``of_paper``: the claim is a statement of the paper (else beyond it). ``pilot``: the verdict a pilot set at the
    CPU build's setting (None: the paper's statement is the expectation there too); ``basis``: the pilot's runs and
    what was seen (required with a pilot or ``found_at_paper``); ``post_hoc``: the pilot read the claim's own runs or
    models (only with a pilot). ``found_at_paper``: the verdict the runs at the paper's setting gave where it is not
    the paper's, recorded after a build read them failing the paper's statement; the expectation there, post hoc."""

    of_paper: bool
    pilot: str | None = None
    basis: str = ""
    post_hoc: bool = False
    found_at_paper: str | None = None

    def __post_init__(self):
        if not isinstance(self.of_paper, bool):
            raise TypeError(f"of_paper must be a bool, got {self.of_paper!r}")
        if self.pilot is not None:
            if self.pilot not in VERDICTS[:4]:
                raise ValueError(f"pilot must be None or one of {list(VERDICTS[:4])}, got {self.pilot!r}")
            if not self.basis.strip():
                raise ValueError(f"a pilot verdict ({self.pilot!r}) needs its basis: the runs the pilot used")
        if not isinstance(self.post_hoc, bool):
            raise TypeError(f"post_hoc must be a bool, got {self.post_hoc!r}")
        if self.post_hoc and self.pilot is None:
            raise ValueError("post_hoc marks a pilot that read the claim's own runs; give its pilot verdict and basis")
        if not self.of_paper and self.pilot not in (None, "beyond the paper"):
            raise ValueError(f"a claim beyond the paper expects 'beyond the paper', got pilot {self.pilot!r}")
        if self.found_at_paper is not None:
            if self.found_at_paper not in VERDICTS[:4] or self.found_at_paper == self.paper:
                others = [v for v in VERDICTS[:4] if v != self.paper]
                raise ValueError(f"found_at_paper must be None or one of {others}, got {self.found_at_paper!r}")
            if not self.basis.strip():
                raise ValueError("found_at_paper needs its basis: the runs at the paper's setting and what they showed")

    @property
    def paper(self) -> str:
        """The expected verdict at the paper's setting: the paper's own statement."""
        return PAPER_VERDICT[self.of_paper]

    def at(self, paper_setting: bool) -> str:
        """The expected verdict at the paper's setting (``paper_setting`` True) or at another one."""
        if not isinstance(paper_setting, bool):
            raise TypeError(f"paper_setting must be a bool, got {paper_setting!r}")
        if paper_setting:
            return self.paper if self.found_at_paper is None else self.found_at_paper
        return self.paper if self.pilot is None else self.pilot

    def post_hoc_at(self, paper_setting: bool) -> bool:
        """Whether the verdict :meth:`at` gives there was set after reading the claim's own runs or models."""
        self.at(paper_setting)  # checks paper_setting
        return self.found_at_paper is not None if paper_setting else self.post_hoc


#: a claim of the paper, and one beyond it, that expect the paper's statement at every setting
PAPER, BEYOND = Expectation(of_paper=True), Expectation(of_paper=False)


def post_hoc_pilot(pilot: str, basis: str, *, of_paper: bool = True) -> Expectation:
    """The expectation ``pilot`` set after reading the claim's own runs or models, as ``basis`` says (post hoc)."""
    return Expectation(of_paper=of_paper, pilot=pilot, basis=basis, post_hoc=True)
