"""Figures 3 and 5's findings (Leaner paper: the loss around a trained model, and the smoothing gap), each stated once.

Each function states findings as :class:`lloydbook.findings.Part` s that chapter 08 decides
(:func:`lloydbook.findings.decide`), on the per-seed surfaces of :mod:`lloydbook.landscapes`:
:func:`shape_parts` Fig. 3's shape on the training-loss surfaces (two counts, each one piece of evidence whose text
is the row's numbers: the chapter records them with their check), :func:`rise_parts` Fig. 3's OH against BN on the
mean rises, and :func:`gap_parts` Fig. 5's numbers on each seed's largest gap on the plane. Different d, embeddings
or families are different models, their planes drawn along other directions: every comparison is unpaired.
"""

from __future__ import annotations

import numpy as np

from .claims.evidence import Evidence, above, all_of, below, lower, within
from .findings import Part
from .landscapes import offsets, plane_max, shape_numbers
from .tables import fmt_list

__all__ = ["SOURCES", "FIG5_PAPER", "shape_parts", "rise_parts", "gap_parts"]

#: where the paper states each finding
SOURCES = {
    "unimodal": "Leaner paper, Fig. 3",
    "minimum-at-centre": "beyond the paper (Fig. 3)",
    "oh-bn-similar-large-d": "Leaner paper, Fig. 3",
    "oh-bn-differ-small-d": "Leaner paper, Fig. 3 (and Thm. 3.1 for the direction)",
    "gap-normal": "Leaner paper, Fig. 5",
    "gap-shrinks-with-d": "beyond the paper (Fig. 5 at two dimensions)",
    "gap-cauchy": "Leaner paper, Fig. 5",
    "gap-cauchy-vs-normal": "Leaner paper, Fig. 5",
}

#: Fig. 5's setting as the paper states it (field -> value, None: not stated), against which each finding's statement
#: names ours; the finding beyond the paper compares two d, so only its tau is the paper's
_FIG5 = dict(d=None, k=None, n=None, tau=0.1, steps=None)
FIG5_PAPER = {
    "gap-normal": _FIG5,
    "gap-shrinks-with-d": dict(tau=0.1),
    "gap-cauchy": _FIG5,
    "gap-cauchy-vs-normal": _FIG5,
}


def _keys(name: str, by: dict, embeddings=("OH", "BN")) -> tuple[list, list]:
    """The firsts (d or family) and the embeddings of the keys ``(first, embedding)`` of ``by``, in order."""
    embs = list(dict.fromkeys(e for _, e in by))
    if not by or not set(embeddings) <= set(embs):
        raise ValueError(f"{name} must map (d or family, embedding) with {list(embeddings)} among them, got {list(by)}")
    return list(dict.fromkeys(k for k, _ in by)), embs


def shape_parts(G: dict, S: dict, tau: float) -> dict[str, Part]:
    """Fig. 3's shape on the training-loss surfaces ``S[(d, embedding)]`` (seeds, g, g) of the L2 runs ``G[(d, tau,
    embedding, "L2")]``: name -> :class:`Part`. ``unimodal``: in every surface each strict local minimum but the
    lowest lies above twice the lowest value; ``minimum-at-centre`` (beyond the paper): every surface's lowest point
    is its centre. Each has one :class:`Evidence`, "holds" or "fails" on the count, its text the row's numbers."""
    ds, embs = _keys("S", S, ())
    runs = [r for d in ds for e in embs for r in G[(d, tau, e, "L2")]]
    got, offs = shape_numbers(S), np.concatenate([offsets(s) for s in S.values()])
    g, seeds = np.shape(next(iter(S.values())))[-1], len({r.config.seed for r in runs})
    unimodal = (
        f"surfaces with exactly one strict local minimum: {got['n-unimodal']} of {got['n-surfaces']}; lowest second "
        f"minimum, as a multiple of its surface's lowest value: {got['second-min']:.3g}"
    )
    centred = (
        f"lowest point at the centre in {int(np.sum(offs == 0))} of {len(offs)} surfaces; farthest {int(offs.max())} "
        "grid steps away"
    )
    return {
        "unimodal": Part(
            f"The training-loss surfaces (L2, tau={tau:g}) around trained models are unimodal: in each of the "
            f"{got['n-surfaces']} surfaces (d={fmt_list(ds)}, {fmt_list(embs)}, {seeds} seeds; {g} x {g} grid) every "
            "strict local minimum but the lowest lies at more than twice the lowest value",
            "they look unimodal",
            runs,
            [Evidence("no second basin at low loss", "holds" if got["second-min"] > 2.0 else "fails", unimodal)],
        ),
        "minimum-at-centre": Part(
            "The lowest point of every Fig. 3 surface is its centre, the trained weights (on evaluation tasks no "
            "training stream used)",
            "not stated",
            runs,
            [Evidence("lowest point at the centre", "holds" if offs.max() == 0 else "fails", centred)],
        ),
    }


def rise_parts(G: dict, rise: dict, tau: float) -> dict[str, Part]:
    """Fig. 3's OH against BN on the per-seed mean rises ``rise[(d, embedding)]`` (seeds,) of the L2 runs ``G[(d, tau,
    embedding, "L2")]``: name -> :class:`Part`. ``oh-bn-similar-large-d``: at the largest d, OH's and BN's median
    rises differ by less than 10% of the median rise there (OH and BN pooled); ``oh-bn-differ-small-d``: at the
    smallest, BN's rise is above OH's."""
    ds, embs = _keys("rise", rise)
    if len(ds) < 2:
        raise ValueError(f"rise must hold two d, got {ds}")
    lo, hi = min(ds), max(ds)
    runs = {d: [r for e in embs for r in G[(d, tau, e, "L2")]] for d in (lo, hi)}
    tol = 0.1 * float(np.median(np.concatenate([rise[(hi, e)] for e in embs])))
    oh_bn = {d: (rise[(d, "OH")], rise[(d, "BN")], "OH", "BN") for d in (lo, hi)}
    return {
        "oh-bn-similar-large-d": Part(
            f"At d={hi} the OH and BN surfaces are similar: their median rises from the trained weights differ by less "
            "than 10%",
            f"similar at d={hi}",
            runs[hi],
            [within(f"OH and BN within 10% at d={hi}", *oh_bn[hi], tol, paired=False)],
        ),
        "oh-bn-differ-small-d": Part(
            f"At d={lo} the OH and BN surfaces differ: BN's rises more steeply from the trained weights than OH's",
            f'"At d={lo} OH and BN differ; at d={hi} they are similar"',
            runs[lo],
            [lower(f"BN steeper than OH at d={lo}", *oh_bn[lo], paired=False)],
        ),
    }


def gap_parts(FG: dict, DG: dict, F: dict, D: dict, *, tau: float, loss: str, n: int) -> dict[str, Part]:
    """Fig. 5's findings on each seed's largest gap (:func:`lloydbook.landscapes.plane_max`) of the gap surfaces
    (seeds, g, g) ``F[(family, embedding)]`` of the runs ``FG[(family, tau, embedding, loss)]`` and ``D[(d,
    embedding)]`` of the normal-task runs ``DG[(d, tau, embedding, loss)]``, evaluated at ``n`` points per task:
    name -> :class:`Part`. ``gap-normal``: at the smallest d below 0.5 for every embedding; ``gap-shrinks-with-d``
    (beyond the paper): more than 3 times smaller at the largest d; ``gap-cauchy``: above 5 for Cauchy data;
    ``gap-cauchy-vs-normal``: Cauchy's more than 10 times normal's. The factors are decided on the logarithms."""
    (ds, embs), (fams, _) = _keys("D", D), _keys("F", F)
    if len(ds) < 2 or not {"normal", "cauchy"} <= set(fams):
        raise ValueError(f"D must hold two d and F the normal and cauchy families, got d {ds} and families {fams}")
    (lo, hi), top = (min(ds), max(ds)), {key: plane_max(s) for key, s in {**F, **D}.items()}

    def runs(G, firsts):
        return [r for f in firsts for e in embs for r in G[(f, tau, e, loss)]]

    def factor(label, small, large, names, times):  # per embedding: small's log gap below large's by log(times)
        cells = [
            lower(
                e,
                np.log(top[(small, e)]),
                np.log(top[(large, e)]),
                *(f"log {x} {e}" for x in names),
                paired=False,
                margin=float(np.log(times)),
            )
            for e in embs
        ]
        return all_of(label, cells)

    fd, where = FG[("cauchy", tau, embs[0], loss)][0].config.d, f"{loss}, tau={tau:g}"
    return {
        "gap-normal": Part(
            "The smoothing gap on the plane is at most 0.5 for normal data (largest value, "
            f"n={n} test tasks, d={lo}, {where})",
            "<= 0.5 for normal",
            runs(DG, [lo]),
            [all_of("below 0.5", [below(e, top[(lo, e)], 0.5, f"largest gap, {e}") for e in embs])],
        ),
        "gap-shrinks-with-d": Part(
            f"For normal data the largest gap on the plane is more than 3 times smaller at d={hi} than at d={lo} "
            f"(n={n}, {where})",
            "not tested",
            runs(DG, [lo, hi]),
            [factor("a factor above 3", hi, lo, (f"gap d={hi}", f"gap d={lo}"), 3)],
        ),
        "gap-cauchy": Part(
            "The smoothing gap on the plane ranges up to more than 5 for Cauchy data (largest value, "
            f"n={n} test tasks, d={fd}, {where})",
            "up to more than 5 for cauchy",
            runs(FG, ["cauchy"]),
            [all_of("above 5", [above(e, top[("cauchy", e)], 5.0, f"largest gap, {e}") for e in embs])],
        ),
        "gap-cauchy-vs-normal": Part(
            f"Cauchy's largest gap is more than 10 times normal's (the paper's 5 against 0.5), at d={fd}, n={n}",
            "> 5 against <= 0.5: a factor above 10",
            runs(FG, ["normal", "cauchy"]),
            [factor("ratio above 10", "normal", "cauchy", ("normal", "cauchy"), 10)],
        ),
    }
