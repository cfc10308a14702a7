"""Figure 10 (Leaner paper, Figs. 2a and 10) at paper scale: its findings, as :mod:`lloydbook.fig10` states them,
decided on a GPU machine's runs."""

from __future__ import annotations

from .. import fig10
from .common import Recorder, check_groups, check_seeds, check_values, first

__all__ = ["fig10_claims"]


def fig10_claims(G: dict, *, d: int, taus, embeddings, losses, seeds: int, machine: str) -> list[str]:
    """Decide Figure 10's findings (:func:`lloydbook.fig10.parts`, as chapter 04 decides them on this build's runs)
    on the GPU runs ``G`` at ``d``, when every (tau, embedding, loss) setting has ``seeds`` runs; returns the ids
    recorded ([] for a partial sweep). ``G`` maps ``(d, tau, embedding, loss)`` to the runs of that setting, one per
    seed. Each finding is recorded as ``learning-<name>-d<d>-gpu-<machine>`` (the d keeps Figs. 10a and 10b apart)."""
    G, seeds = check_groups(G), check_seeds(seeds)
    taus = check_values("taus", taus, minimum=2)
    embeddings = check_values("embeddings", embeddings, ("OH", "BN"))
    losses = check_values("losses", losses, ("L2",))
    record = Recorder(machine, fig10.SOURCE)
    G = first(G, [(d, t, e, l) for t in taus for e in embeddings for l in losses], seeds)
    if G is None:
        return []
    for name, part in fig10.parts(G, d, taus, embeddings, losses).items():
        record(f"learning-{name}-d{d}", part, f" ({machine}, paper scale, d={d})")
    return record.ids
