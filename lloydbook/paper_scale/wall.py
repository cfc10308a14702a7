"""Figure 17 (Leaner paper, Fig. 17) at paper scale: its findings, as :mod:`lloydbook.fig17` states them, decided
on a GPU machine's runs (OH against BN on the wall clock)."""

from __future__ import annotations

from .. import fig17
from ..fig17 import CLEAR, FASTER_CASE, INITIAL, POINTS, SLOWER_CASE, wall_mean, wall_means
from .common import Recorder, check_groups, check_seeds, check_values, first

__all__ = ["SLOWER_CASE", "FASTER_CASE", "CLEAR", "INITIAL", "POINTS", "wall_mean", "wall_means", "fig17_claims"]


def fig17_claims(G: dict, *, cases, ns, seeds: int, machine: str) -> list[str]:
    """Decide Figure 17's findings (:func:`lloydbook.fig17.parts`) on the GPU runs ``G`` when every (d, k, n,
    embedding) setting of ``cases`` ``[(d, k)]``, ``ns`` and OH, BN has ``seeds`` runs; returns the ids recorded
    ([] for a partial sweep). ``G`` maps ``(d, k, n, embedding)`` to runs, one per seed. Each finding is recorded as
    ``learning-<name>-gpu-<machine>``: a claim expecting the paper's verdict, or an open row where its premise fails
    (no embedding's runs left the plateau). A finding whose case is not among ``cases`` is not recorded."""
    G, seeds = check_groups(G), check_seeds(seeds)
    cases, ns = check_values("cases", cases), check_values("ns", ns)
    if SLOWER_CASE not in cases and FASTER_CASE not in cases:
        raise ValueError(f"cases must include {SLOWER_CASE} or {FASTER_CASE} (the paper's Fig. 17), got {cases!r}")
    record = Recorder(machine, fig17.SOURCE)
    G = first(G, [(d, k, n, e) for d, k in cases for n in ns for e in ("OH", "BN")], seeds)
    if G is None:
        return []
    where = f" ({machine}, paper scale, n={', '.join(map(str, ns))})"
    for name, part in fig17.parts(G, cases, ns).items():
        record(f"learning-{name}", part, where)  # an open row where no embedding's runs left the plateau
    return record.ids
