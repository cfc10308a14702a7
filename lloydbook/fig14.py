"""Figure 14's findings (Leaner paper, Figs. 2b and 14, read through Thm. 3.1), each stated once, at one temperature.

:func:`parts` states, on the runs ``G[(d, tau, embedding, loss)]`` (one run a seed) at one tau, that the gap between
OH and BN and the gap between NE and L2 shrink as d grows; a row is named by :func:`named`. Each gap is a per-seed
number that pairs OH with BN (or NE with L2) by seed, the same tasks (:func:`oh_bn_gap`, :func:`ne_l2_gap`); the gaps
at the smallest and the largest d are compared unpaired: runs of different d see different tasks.
"""

from __future__ import annotations

import numpy as np

from .claims.evidence import Judge
from .findings import Part, by_seed, nan_as_inf
from .learning import auc, final_train

__all__ = ["SOURCES", "oh_bn_gap", "ne_l2_gap", "named", "statements", "parts"]

#: where the paper states each finding
SOURCES = {
    "d-oh-bn-gap-shrinks": "Leaner paper, Figs. 2b and 14 and Thm. 3.1",
    "d-ne-l2-gap-shrinks": "Leaner paper, Figs. 2b and 14",
}


def oh_bn_gap(G: dict, d: int, tau: float) -> np.ndarray:
    """Fig. 14's convergence gap between OH and BN at (d, tau): per seed ``|auc(BN) - auc(OH)|`` with L2
    (:func:`lloydbook.learning.auc`; OH and BN of one seed paired), shape ``(seeds,)``; +inf where a run
    diverged. ``G`` maps ``(d, tau, embedding, loss)`` to runs, one per seed."""
    oh, bn = by_seed(G[(d, tau, "OH", "L2")], G[(d, tau, "BN", "L2")])
    with np.errstate(invalid="ignore"):  # both diverged: inf - inf, read as +inf below
        return nan_as_inf(np.abs(auc(bn) - auc(oh)))


def ne_l2_gap(G: dict, d: int, tau: float) -> np.ndarray:
    """Fig. 14's gap between the regularisers at (d, tau): per (embedding, seed), OH then BN,
    ``(T_NE - T_L2) / T_L2`` of the final training loss T (NE and L2 of one seed paired), shape
    ``(2 * seeds,)``; +inf where a run diverged. ``G`` as for :func:`oh_bn_gap`."""
    gaps = []
    for e in ("OH", "BN"):
        ne, l2 = (final_train(r) for r in by_seed(G[(d, tau, e, "NE")], G[(d, tau, e, "L2")]))
        with np.errstate(invalid="ignore"):
            gaps.append((ne - l2) / l2)
    return nan_as_inf(np.concatenate(gaps))


def named(name: str, tau: float, taus) -> str:
    """The row name of the finding ``name`` decided at ``tau``, one of the temperatures ``taus``: ``name`` at the
    smallest, else ``<name>-tau<tau without its point>`` (``d-oh-bn-gap-shrinks-tau025`` at 0.25)."""
    return name if tau == min(taus) else f"{name}-tau{tau:g}".replace(".", "")


#: name -> (between what, the per-seed gap, the (embedding, loss) cells it reads, how it is measured)
_GAPS = {
    "d-oh-bn-gap-shrinks": (
        "OH and BN",
        oh_bn_gap,
        (("OH", "L2"), ("BN", "L2")),
        "|BN - OH| in mean relative validation loss over training, L2",
    ),
    "d-ne-l2-gap-shrinks": (
        "NE and L2",
        ne_l2_gap,
        tuple((e, l) for e in ("OH", "BN") for l in ("NE", "L2")),
        "(NE - L2) / L2 in final training loss",
    ),
}


def statements(tau: float) -> dict[str, tuple[str, str]]:
    """Figure 14's findings at ``tau``: name -> (statement, the paper's value), the words of :func:`parts`."""
    return {
        name: (f"The gap between {pair} shrinks as d grows ({how}, tau={tau:g})", "gap shrinks with d")
        for name, (pair, _, _, how) in _GAPS.items()
    }


def parts(G: dict, ds, tau: float, *, judge: Judge) -> dict[str, Part]:
    """Figure 14's findings at ``tau`` on the runs ``G`` (``(d, tau, embedding, loss)`` -> runs, one per seed, with
    OH and BN, NE and L2 at every d of ``ds``): name -> :class:`Part`, each gap (:func:`oh_bn_gap`,
    :func:`ne_l2_gap`) smaller at the largest d than at the smallest. Unpaired across d (different tasks)."""
    ds = sorted(ds)
    if len(ds) < 2:
        raise ValueError(f"ds must hold at least 2 dimensions to compare, got {ds!r}")
    dmin, dmax = ds[0], ds[-1]
    out, say = {}, statements(tau)
    for name, (_, gap, cells, _) in _GAPS.items():
        out[name] = Part(
            *say[name],
            [r for d in (dmin, dmax) for e, l in cells for r in G[(d, tau, e, l)]],
            [
                judge.lower(
                    f"smaller at d={dmax} than at d={dmin}",
                    gap(G, dmax, tau),
                    gap(G, dmin, tau),
                    f"d={dmax}",
                    f"d={dmin}",
                    paired=False,
                )
            ],
        )
    return out
