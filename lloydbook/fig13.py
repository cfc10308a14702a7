"""Figure 13's findings (Leaner paper, Fig. 13: points per training task), each stated once.

:func:`parts` states, on the runs ``G[(n, embedding, loss)]`` (one run a seed, each setting validated at its own n),
the paper's finding (the training n makes little difference) and one beyond the paper (below three points per cluster,
training ends worse). Each n is compared with the reference ``n0`` per embedding and regulariser, unpaired: runs of
different n see different tasks.
"""

from __future__ import annotations

import numpy as np

from . import findings
from .claims.evidence import Evidence, Judge, all_of
from .findings import Part, RecordedSweep
from .learning import final
from .tables import Table, fmt_list

__all__ = ["N_TOL", "MIN_PPC", "SOURCES", "compared", "statements", "parts", "recorded_parts", "levels"]

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
    the reference ``n0`` (one of ``ns``) and ``k`` clusters: name -> :class:`Part`. ``n-little-difference``: as
    :func:`statements` words it, at the n :func:`compared`; ``n-too-few-points`` (beyond the paper): at every n with
    fewer than ``min_ppc`` points per cluster, each (embedding, loss) ends above n0's (undetermined, so an open row,
    when no n of ``ns`` has fewer). Unpaired (different n, different tasks)."""
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
    :data:`MIN_PPC` points per cluster), against ``n0``: name -> :class:`Part`. ``n-little-difference`` reads every n,
    on the largest seed set complete at all of them; until then it is an open row naming the runs still missing."""
    k, ns, embeddings, losses = sweep.fixed("k"), *(sweep.values(f) for f in ("n", "embedding", "loss"))
    if n0 not in ns or ns[0] / k < MIN_PPC:
        raise ValueError(
            f"n0 must be an n of the sweep {sweep.name!r}, whose ns must each have at least {MIN_PPC} points per "
            f"cluster at k={k}; got n0={n0!r} and ns {ns}"
        )

    def parts_of(G, _):
        return parts(G, ns, n0, embeddings, losses, k=k, judge=judge)

    say = statements(compared(ns, n0, k=k), n0, embeddings, losses)
    return findings.recorded_parts(sweep, "n", ("n", "embedding", "loss"), parts_of, say, every=set(say), needs=ns)


def levels(G: dict, ns, embedding: str, losses) -> tuple[Table, dict]:
    """Where ``embedding``'s runs ``G[(n, embedding, loss)]`` end, over ``ns`` and ``losses``: their final relative
    validation losses (Eq. 20) split at the widest gap between any two of them, pooled (a diverged run, +inf, falls
    above it). Returns a :class:`Table` (a row per n and loss: the runs below the gap and above it, with their
    ranges, and the seeds above) and, for a chapter's glue, ``split`` (the gap's midpoint), ``below`` and ``above``
    (the pooled ranges), ``runs``, ``above-runs``, ``diverged``, ``settled`` (over the second half of its training,
    the largest change of a run above the gap, relative to its final loss) and ``everywhere`` (the seeds above the
    gap in every row). It describes; it decides nothing."""
    cells = [(n, embedding, l) for n in ns for l in losses]
    lacking = [c for c in cells if not G.get(c)]
    if lacking:
        raise ValueError(f"G must hold runs of every (n, embedding, loss) of ns and losses; missing {lacking}")
    fins = {c: final(G[c]) for c in cells}
    pooled = np.sort(np.concatenate(list(fins.values())))
    finite = pooled[np.isfinite(pooled)]
    if len(finite) < 2:
        raise ValueError(f"G must hold at least two runs of {embedding} that did not diverge, got {len(finite)}")
    gap = int(np.argmax(np.diff(finite)))
    split = float(finite[gap] + finite[gap + 1]) / 2

    def span(v):
        return f"{v.min():.2f}-{v.max():.2f}" if len(v) else "none"

    rows, upper, everywhere = [], [], None
    for c in cells:
        v, runs = fins[c], G[c]
        upper += [r for r, x in zip(runs, v) if x >= split]
        seeds = [r.config.seed for r, x in zip(runs, v) if x >= split]
        everywhere = set(seeds) if everywhere is None else everywhere & set(seeds)
        rows.append([c[0], c[2], f"{(v < split).sum()} ({span(v[v < split])})", f"{len(seeds)} ({span(v[v >= split])})",
                     fmt_list(seeds) or "none"])  # fmt: skip

    def settled(r):
        v = r.history["val_rel_loss"]
        half = v[len(v) // 2 :]
        return float((half.max() - half.min()) / v[-1])

    said = {"split": f"{split:.2f}", "below": span(pooled[pooled < split]), "above": span(pooled[pooled >= split]),
            "runs": len(pooled), "above-runs": len(upper), "diverged": sum(r.status == "diverged" for r in upper),
            "settled": f"{max(map(settled, upper), default=0.0):.1%}",
            "everywhere": fmt_list(sorted(everywhere)) or "none"}  # fmt: skip
    header = ("n", "loss", "runs below the gap (range)", "runs above it (range)", "seeds above it")
    return Table(header, rows), said
