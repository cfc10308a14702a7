"""What each claim of the learning chapters is expected to find, stated before its runs are read.

An :class:`Expectation` holds, for one claim id, whether the claim is the paper's (``of_paper``) and,
where a pilot set the expectation at the CPU build's setting, that ``pilot`` verdict and its ``basis``:
which runs the pilot used, and what was seen before it was set. From these:

- at the paper's own setting the expected verdict is the paper's statement: "reproduced" for a claim of
  the paper, "beyond the paper" for one it does not make (:attr:`Expectation.paper`); a pilot is never
  consulted there, so a build at the paper's setting cannot contradict the paper by construction, and
  where the runs disagree, its check fails: that is the finding. Once a failure at the paper's setting has been
  read, ``found_at_paper`` records the verdict those runs gave, with its ``basis``: from then on the row states
  the disagreement, always marked post hoc (its expectation was set after reading its own runs);
- at any other setting it is the pilot's verdict when one is stated, else the paper's statement.

A pilot that read the claim's own runs or models (``post_hoc``) records what they show rather than predicts
it: its rows are marked post hoc in their table and counted apart on the Scorecard
(:data:`lloydbook.claims.POST_HOC`).

The entries live in :mod:`lloydbook.expectations`, one module per chapter; a chapter asks
:meth:`lloydbook.book.Chapter.expect` before it computes, and ``Chapter.decide`` refuses a claim of
those chapters whose expectation was not asked for. ``tests/lloydbook/claims/test_expectations.py``
inspects the registry.
"""

from __future__ import annotations

from dataclasses import dataclass

from .registry import VERDICTS

__all__ = ["Expectation", "PAPER_VERDICT", "expected", "post_hoc"]

#: the expected verdict at the paper's setting: of a claim of the paper, and of one beyond it
PAPER_VERDICT = {True: "reproduced", False: "beyond the paper"}


@dataclass(frozen=True)
class Expectation:
    """``of_paper``: the claim is a statement of the paper (else beyond it). ``pilot``: the verdict a
    pilot set at the CPU build's setting (None: the paper's statement is the expectation there too);
    ``basis``: the pilot's runs and what was seen (required with a pilot); ``post_hoc``: the pilot read the
    claim's own runs or trained models before it was set (only with a pilot). ``found_at_paper``: the verdict the
    runs at the paper's own setting gave where it is not the paper's, recorded after a build read them failing the
    paper's statement (with its ``basis``: the runs, the numbers and the commit of the blind expectation); it is the
    expectation there, post hoc."""

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
        if paper_setting:
            return self.found_at_paper is not None
        return self.post_hoc  # a post-hoc pilot is the expectation off the paper's setting


def expected(registry: dict, claim_id: str, paper_setting: bool) -> str:
    """The verdict ``registry[claim_id]`` expects at the paper's setting or another; a ValueError naming the
    claim when it has no entry."""
    if claim_id not in registry:
        raise ValueError(
            f"no expectation is stated for claim {claim_id!r}: add it to lloydbook.expectations before computing"
        )
    return registry[claim_id].at(paper_setting)


def post_hoc(registry: dict, claim_id: str, paper_setting: bool) -> bool:
    """Whether the verdict :func:`expected` gives for ``claim_id`` there was set after reading its own runs."""
    expected(registry, claim_id, paper_setting)  # the same error for a claim with no entry
    return registry[claim_id].post_hoc_at(paper_setting)
