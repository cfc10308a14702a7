"""Figure 13's findings (Leaner paper, Fig. 13: points per training task), each stated once.

:func:`parts` states, for the runs ``G[(n, embedding, loss)]`` (one run a seed, each setting validated at its own
n), the paper's finding (the training n makes little difference) and one beyond the paper (below three points per
cluster, training ends worse), as :class:`lloydbook.findings.Part` s (:func:`statements` gives the paper's words).
Chapter 05 decides them on this build's runs, :func:`recorded_parts` the paper's on the recorded sweep
``fig13a-paper`` (the paper's n but 1024, trained on the CPU), and :func:`lloydbook.findings.on_paper_sweep` on its
own sweep once a machine recorded it. Each n is compared with the reference ``n0`` per embedding and regulariser,
unpaired: runs of different n see different tasks.
"""

from __future__ import annotations

from . import findings
from .claims.evidence import Evidence, Judge, all_of
from .findings import Part, RecordedSweep
from .learning import final
from .tables import fmt_list

__all__ = ["N_TOL", "MIN_PPC", "SOURCES", "compared", "statements", "parts", "recorded_parts"]

#: Fig. 13's "little difference": medians of the final relative loss within this of the reference n's
N_TOL = 0.05
#: the fewest points per cluster (n / k) at which a layer learns: below it none does, on any embedding
MIN_PPC = 3

#: where the paper states each finding
SOURCES = {
    "n-little-difference": "Leaner paper, Fig. 13",
    "n-too-few-points": "beyond the paper (Fig. 13 below its smallest n)",
}


def compared(ns, n0: int, *, k: int, min_ppc: float = MIN_PPC) -> list:
    """The n of ``ns`` that Figure 13's finding compares with ``n0``: every other n with at least ``min_ppc`` points
    per cluster at ``k``, in order (the ``same`` of :func:`statements`)."""
    return [n for n in sorted(ns) if n != n0 and n / k >= min_ppc]


def statements(same, n0: int, embeddings, losses) -> dict[str, tuple[str, str]]:
    """The paper's finding of Figure 13 in words, as (statement, the paper's value), compared at the n of ``same``
    against ``n0``, for the ``embeddings`` with the ``losses``: name -> that pair (the words of :func:`parts`)."""
    return {
        "n-little-difference": (
            f"The number of points per training task makes little difference: at n={fmt_list(list(same))} the median "
            f"final relative loss is within {N_TOL:g} of n={n0}'s, for {fmt_list(list(embeddings))} with "
            f"{fmt_list(list(losses))}",
            '"training n in {128, 256, 512, 1024} makes little difference, so training on small n is recommended"',
        )
    }


def parts(
    G: dict, ns, n0: int, embeddings, losses, *, k: int, min_ppc: float = MIN_PPC, judge: Judge
) -> dict[str, Part]:
    """Figure 13's findings on the runs ``G`` (``(n, embedding, loss)`` -> runs, one per seed) over the ``ns``, with
    the reference ``n0`` (one of ``ns``) and ``k`` clusters: name -> :class:`Part`. ``n-little-difference``: at every
    other n with at least ``min_ppc`` points per cluster, each (embedding, loss)'s median final relative loss is
    within :data:`N_TOL` of n0's; ``n-too-few-points`` (beyond the paper): at every n with fewer, it ends above n0's
    (undetermined, so an open row, when no n of ``ns`` has fewer). Unpaired (different n, different tasks)."""
    ns = sorted(ns)
    if n0 not in ns or n0 / k < min_ppc:
        raise ValueError(f"n0 must be one of ns={ns} with at least {min_ppc} points per cluster at k={k}, got {n0!r}")
    same = compared(ns, n0, k=k, min_ppc=min_ppc)
    fewer = [n for n in ns if n / k < min_ppc]
    if not same:
        raise ValueError(f"ns must hold an n besides n0={n0} with at least {min_ppc} points per cluster, got {ns}")
    cells = [(e, l) for e in embeddings for l in losses]

    def runs(group):
        return [r for n in group for e, l in cells for r in G[(n, e, l)]]

    def each(e, l, n):  # n0's final relative losses and n's
        return final(G[(n0, e, l)]), final(G[(n, e, l)]), f"n={n0}", f"n={n}"

    out = {
        "n-little-difference": Part(
            *statements(same, n0, embeddings, losses)["n-little-difference"],
            runs([n0, *same]),
            [
                all_of(
                    f"{e}:{l} within {N_TOL:g}",
                    [judge.within(f"n={n}", *each(e, l, n), N_TOL, paired=False) for n in same],
                )
                for e, l in cells
            ],
        )
    }
    if fewer:
        worse = [
            all_of(f"{e}:{l} worse", [judge.lower(f"n={n}", *each(e, l, n), paired=False) for n in fewer])
            for e, l in cells
        ]
    else:
        text = f"no n of {fmt_list(ns)} has fewer than {min_ppc:g} points per cluster at k={k}"
        worse = [Evidence("an n with fewer points per cluster", "undetermined", text)]
    few = f"n={fmt_list(fewer)}" if fewer else f"n < {min_ppc * k:g}"
    out["n-too-few-points"] = Part(
        f"Below the paper's range, training on {few} points per task (fewer than {min_ppc:g} per cluster at k={k}) "
        f"ends worse than on n={n0}",
        "not tested (n >= 128)",
        runs([*fewer, n0]),
        worse,
    )
    return out


def recorded_parts(sweep: RecordedSweep, n0: int, *, judge: Judge) -> dict[str, Part]:
    """Figure 13's finding of the paper on the recorded ``sweep`` (at its one k, over its ns, each with at least
    :data:`MIN_PPC` points per cluster, embeddings and losses), against ``n0``: name -> :class:`Part`
    (:func:`lloydbook.findings.recorded_parts`). ``n-little-difference`` reads every n, on the largest seed set complete
    at all of them; until then it is an open row naming the runs still missing. (``n-too-few-points`` is beyond the
    paper's n; no recorded n has too few.)"""
    k, ns, embeddings, losses = sweep.fixed("k"), *(sweep.values(f) for f in ("n", "embedding", "loss"))
    if n0 not in ns or ns[0] / k < MIN_PPC:
        raise ValueError(
            f"n0 must be an n of the sweep {sweep.name!r}, whose ns must each have at least {MIN_PPC} points per "
            f"cluster at k={k}; got n0={n0!r} and ns {ns}"
        )
    cells = {n: [(n, e, l) for e in embeddings for l in losses] for n in ns}
    rec = findings.recorded_groups(sweep.runs, ("n", "embedding", "loss"), cells)
    complete = rec.values == tuple(ns)
    found = parts(rec.groups, ns, n0, embeddings, losses, k=k, judge=judge) if complete else {}
    say = statements(compared(ns, n0, k=k), n0, embeddings, losses)
    kw = dict(every=set(say), complete=complete, missing=sweep.missing, tiers=sweep.tiers, axis="n")
    return findings.recorded_parts({n: p for n, p in found.items() if n in say}, say, **kw)
