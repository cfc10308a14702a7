"""Figures 14, 11 and 13 (Leaner paper, Sec. 4 and Figs. 11, 13, 14) at paper scale: their findings, as
:mod:`lloydbook.fig14`, :mod:`lloydbook.fig11` and :mod:`lloydbook.fig13` state them (and chapter 05 decides them on
this build's runs), decided on a GPU machine's runs, at every panel of the paper's figure: Fig. 14 at each of its
temperatures, Fig. 11 at each of its dimensions (11a: d=4, 11b: d=32), Fig. 13 over all its n. A finding beyond the
paper is not decided here: its expectation is not the paper's verdict.
"""

from __future__ import annotations

from .. import fig11, fig13, fig14
from .common import Recorder, check_groups, check_seeds, check_values, first

__all__ = ["record_parts", "fig14_claims", "fig11_claims", "fig13_claims"]


def record_parts(record: Recorder, parts: dict, sources: dict, machine: str, names: dict | None = None) -> None:
    """Record each of the findings ``parts`` (name -> :class:`lloydbook.findings.Part`, the sources of their names in
    ``sources``) with ``record`` as ``shapes-<names[name]>`` (default ``shapes-<name>``), its statement followed by
    where it was decided; skips the findings beyond the paper."""
    for name, part in parts.items():
        if sources[name].startswith("beyond the paper"):
            continue
        record(f"shapes-{(names or {}).get(name, name)}", part, f" ({machine}, paper scale)", source=sources[name])


def fig14_claims(G: dict, *, ds, taus, embeddings, losses, seeds: int, machine: str) -> list[str]:
    """Decide Figure 14's findings (:func:`lloydbook.fig14.parts`) at each tau on the GPU runs ``G`` when every
    (d, tau, embedding, loss) setting has ``seeds`` runs; returns the ids recorded ([] for a partial sweep). ``G``
    maps ``(d, tau, embedding, loss)`` to runs, one per seed. Each finding is recorded as
    ``shapes-<row name>-gpu-<machine>``, the row name that :func:`lloydbook.fig14.named` gives it at that tau (the
    smallest tau's without a suffix, as chapter 05 names them)."""
    G, seeds = check_groups(G), check_seeds(seeds)
    ds, taus = check_values("ds", ds, minimum=2), check_values("taus", taus)
    embeddings = check_values("embeddings", embeddings, ("OH", "BN"))
    losses = check_values("losses", losses, ("NE", "L2"))
    record = Recorder(machine, fig14.SOURCES["d-oh-bn-gap-shrinks"])
    G = first(G, [(d, t, e, l) for d in ds for t in taus for e in embeddings for l in losses], seeds)
    if G is None:
        return []
    for t in sorted(taus):
        parts = fig14.parts(G, ds, t)
        record_parts(record, parts, fig14.SOURCES, machine, {name: fig14.named(name, t, taus) for name in parts})
    return record.ids


def fig11_claims(
    G: dict, *, ds, lrs, embeddings, losses, seeds: int, machine: str, large: dict | None = None
) -> list[str]:
    """Decide Figure 11's findings (:func:`lloydbook.fig11.parts`, the paper's) at each d on the GPU runs ``G`` when
    every (d, lr, embedding, loss) setting has ``seeds`` runs; returns the ids recorded ([] for a partial sweep).
    ``G`` maps ``(d, lr, embedding, loss)`` to runs, one per seed; ``large`` maps each d to the smallest rate the
    paper calls large there (default :data:`lloydbook.fig11.LARGE_LR`: 1 at d=4, 0.1 at d=32). Each finding is
    recorded as ``shapes-<name>-d<d>-gpu-<machine>``."""
    G, seeds = check_groups(G), check_seeds(seeds)
    ds, lrs = check_values("ds", ds), check_values("lrs", lrs, (fig11.DEFAULT_LR,), minimum=3)
    embeddings, losses = check_values("embeddings", embeddings), check_values("losses", losses)
    large = fig11.LARGE_LR if large is None else large
    if not isinstance(large, dict) or any(d not in large for d in ds):
        raise ValueError(f"large must map every d of ds={ds} to the smallest large rate there, got {large!r}")
    for d in ds:
        fig11.large_rates(d, lrs, large[d])  # bad rates fail even on a partial sweep
    record = Recorder(machine, fig11.SOURCES["lr-small-monotone-slow"])
    G = first(G, [(d, lr, e, l) for d in ds for lr in lrs for e in embeddings for l in losses], seeds)
    if G is None:
        return []
    for d in ds:
        parts = fig11.parts(G, d, lrs, embeddings, losses, large=large[d])
        record_parts(record, parts, fig11.SOURCES, machine, {name: f"{name}-d{d}" for name in parts})
    return record.ids


def fig13_claims(
    G: dict, *, ns, n0: int, k: int, embeddings, losses, seeds: int, machine: str, min_ppc: float = fig13.MIN_PPC
) -> list[str]:
    """Decide Figure 13's finding (:func:`lloydbook.fig13.parts`: the training n "makes little difference") on the
    GPU runs ``G`` when every (n, embedding, loss) setting has ``seeds`` runs; returns the ids recorded ([] for a
    partial sweep). ``G`` maps ``(n, embedding, loss)`` to runs, one per seed; ``n0`` (one of ``ns``, the paper's
    default 512) is the reference and ``k`` the clusters, which with ``min_ppc`` tell the n compared
    (``shapes-n-little-difference-gpu-<machine>``)."""
    G, seeds = check_groups(G), check_seeds(seeds)
    ns = check_values("ns", ns, (n0,), minimum=2)
    embeddings, losses = check_values("embeddings", embeddings), check_values("losses", losses)
    record = Recorder(machine, fig13.SOURCES["n-little-difference"])
    G = first(G, [(n, e, l) for n in ns for e in embeddings for l in losses], seeds)
    if G is None:
        return []
    parts = fig13.parts(G, ns, n0, embeddings, losses, k=k, min_ppc=min_ppc)
    record_parts(record, parts, fig13.SOURCES, machine)
    return record.ids
