"""Figure 15 (Leaner paper, Fig. 15 and Thm. 3.1) at paper scale: its findings, as :mod:`lloydbook.fig15` states
them (and chapter 05 decides them on this build's runs), decided on a GPU machine's runs at every panel."""

from __future__ import annotations

from .. import fig15
from .common import Recorder, check_groups, check_seeds, check_values, first
from .shapes import record_parts

__all__ = ["fig15_claims"]


def fig15_claims(G: dict, *, cases, ks, embeddings, losses, seeds: int, machine: str, n: int) -> list[str]:
    """Decide Figure 15's findings (:func:`lloydbook.fig15.parts`) on the GPU runs ``G`` when every (d, tau, k,
    embedding, loss) setting of the ``cases`` ``[(d, tau)]`` has ``seeds`` runs; returns the ids recorded ([] for a
    partial sweep). ``G`` maps ``(d, tau, k, embedding, loss)`` to runs, one per seed, at ``n`` points per task
    (trained without gradient clipping, as ``lloydbook.sweeps.paper_sweeps`` trains them). Each finding whose panels
    are among ``cases`` and ``ks`` is recorded as ``shapes-<name>-gpu-<machine>``, over all those panels."""
    G, seeds = check_groups(G), check_seeds(seeds)
    cases, ks = check_values("cases", cases), check_values("ks", ks, minimum=2)
    embeddings = check_values("embeddings", embeddings, ("OH", "BN"))
    losses = check_values("losses", losses, ("L2",))
    record = Recorder(machine, fig15.SOURCES["k-bn-degrades"])
    G = first(G, [(d, t, k, e, l) for d, t in cases for k in ks for e in embeddings for l in losses], seeds)
    if G is None:
        return []
    record_parts(record, fig15.parts(G, cases, ks, embeddings, losses, n=n), fig15.SOURCES, machine)
    return record.ids
