"""Figure 13's findings (Leaner paper, Fig. 13: points per training task), each stated once.

:func:`parts` states, for the runs ``G[(n, embedding, loss)]`` (one run a seed, each setting validated at its own
n), the paper's finding (the training n makes little difference) and one beyond the paper (below three points per
cluster, training ends worse), as :class:`lloydbook.findings.Part` s. Chapter 05 decides them on this build's runs,
and :func:`lloydbook.findings.on_paper_sweep` the paper's on its own sweep once a machine recorded it. Each n is compared with the
reference ``n0`` per embedding and regulariser, unpaired: runs of different n see different tasks.
"""

from __future__ import annotations

from .claims.evidence import Evidence, Judge, all_of
from .findings import Part
from .learning import final
from .tables import fmt_list

__all__ = ["N_TOL", "MIN_PPC", "SOURCES", "parts"]

#: Fig. 13's "little difference": medians of the final relative loss within this of the reference n's
N_TOL = 0.05
#: the fewest points per cluster (n / k) at which a layer learns: below it none does, on any embedding
MIN_PPC = 3

#: where the paper states each finding
SOURCES = {
    "n-little-difference": "Leaner paper, Fig. 13",
    "n-too-few-points": "beyond the paper (Fig. 13 below its smallest n)",
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
    same = [n for n in ns if n != n0 and n / k >= min_ppc]
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
            f"The number of points per training task makes little difference: at n={fmt_list(same)} the median final "
            f"relative loss is within {N_TOL:g} of n={n0}'s, for {fmt_list(list(embeddings))} with "
            f"{fmt_list(list(losses))}",
            '"training n in {128, 256, 512, 1024} makes little difference, so training on small n is recommended"',
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
