"""What every paper-scale verdict shares: the claim suffix, the completeness test, argument checks and
the recorder that decides each statement with the paper's verdict as its expectation."""

from __future__ import annotations

import re

from lloydlib.checks import check_int

from ..claims.evidence import decide
from ..claims.registry import open_row
from ..findings import Part, undecided

__all__ = [
    "EXPECTED",
    "claim_suffix",
    "complete",
    "first",
    "check_seeds",
    "check_values",
    "check_groups",
    "Recorder",
]

#: the expectation of every paper-scale claim, fixed before any run is read: the paper's own verdict
EXPECTED = "reproduced"


def claim_suffix(machine: str) -> str:
    """``-gpu-<machine>`` in claim-id form (lower case, runs of other characters as one hyphen)."""
    slug = re.sub(r"[^a-z0-9]+", "-", str(machine).lower()).strip("-")
    if not slug:
        raise ValueError(f"machine must name the GPU machine with at least one letter or digit, got {machine!r}")
    return f"-gpu-{slug}"


def complete(G: dict, keys, seeds: int) -> bool:
    """Whether every setting in ``keys`` has at least ``seeds`` runs in ``G``."""
    return all(len(G.get(key, ())) >= seeds for key in keys)


def first(G: dict, keys, seeds: int) -> dict | None:
    """``G`` with every setting cut to its first ``seeds`` runs when every setting in ``keys`` has that many (a
    complete sweep), else None (a partial sweep, which judges nothing)."""
    return {key: runs[:seeds] for key, runs in G.items()} if complete(G, keys, seeds) else None


def check_seeds(seeds) -> int:
    """``seeds``, the runs every setting of a complete sweep holds: an integer >= 1."""
    return check_int("seeds", seeds, 1)


def check_groups(G) -> dict:
    """``G``, a dict from a setting's key to its runs (as ``lloydlib.training.group`` returns it)."""
    if not isinstance(G, dict):
        raise TypeError(f"G must be a dict from setting keys to lists of runs, got {type(G).__name__}")
    return G


def check_values(name: str, values, needed=(), *, minimum: int = 1) -> list:
    """``values`` as a list of at least ``minimum`` items that holds every item of ``needed``."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a list of settings, got {type(values).__name__} {values!r}")
    values = [tuple(v) if isinstance(v, list) else v for v in values]
    if len(values) < minimum:
        raise ValueError(f"{name} must hold at least {minimum} values, got {values!r}")
    missing = [v for v in needed if v not in values]
    if missing:
        raise ValueError(f"{name} must include {list(needed)} (the paper's statement compares them), got {values!r}")
    return values


class Recorder:
    """Records claims ``<name>-gpu-<machine>`` with :func:`lloydbook.claims.evidence.decide` (into the active
    chapter's rows, :func:`lloydbook.claims.activate`), expecting :data:`EXPECTED`, or open rows (:meth:`open`, and
    for a finding that decides nothing on these runs), and keeps their ids in ``ids``."""

    def __init__(self, machine: str, source: str):
        self.suffix, self.source, self.ids = claim_suffix(machine), source, []

    def __call__(self, name: str, part: Part, where: str, *, source: str | None = None) -> None:
        """The finding ``part`` (a :class:`lloydbook.findings.Part`) as the row ``<name>-gpu-<machine>``, its statement
        followed by ``where`` (the machine and setting): a claim, or an open row where the part decides nothing on
        these runs (:func:`lloydbook.findings.undecided`: its premise fails, or a comparison is undetermined)."""
        statement, source = part.statement + where, source or self.source
        why = undecided(part)
        if why:
            decides = "longer runs" if why[0] == "not decided" else "more seeds"
            ours = f"{why[0]}: {why[1]}"
            decides = f"{decides} at the paper's setting on this machine"
            self.open(name, statement=statement, paper=part.paper, decides=decides, ours=ours, source=source)
            return
        cid = f"{name}{self.suffix}"
        decide(cid, statement=statement, source=source, paper=part.paper, expected=EXPECTED, evidence=part.evidence)
        self.ids.append(cid)

    def open(
        self, name: str, *, statement: str, paper: str, decides: str, ours: str, source: str | None = None
    ) -> None:
        """An open row ``<name>-gpu-<machine>``: a finding these runs cannot decide (``ours`` says why)."""
        cid = f"{name}{self.suffix}"
        open_row(cid, statement=statement, source=source or self.source, paper=paper, decides=decides, ours=ours)
        self.ids.append(cid)
