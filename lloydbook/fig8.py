"""Chapter 07's findings on task families (Leaner paper, Figs. 4 and 16, 8 and 18, 9 and 19), each stated once: the
trained-model findings as :class:`lloydbook.findings.Part` s on per-seed values (``(seeds,)`` arrays), each comparing
a per-seed statistic with a level (one Lloyd step, or 0) except the bound's cauchy against each other family
(unpaired); the EMD findings (Figs. 9 and 19) read no run, :func:`emd_rows` gives their rows.
"""

from __future__ import annotations

import numpy as np

from .claims.evidence import Evidence, Judge, all_of
from .families import band_outcome, block_row, isolated_fraction, test_tasks, transfer
from .findings import Part
from .learning import final
from .tables import fmt_list

__all__ = [
    "BAND",
    "PRED_EMBEDDINGS",
    "SOURCES",
    "on_cauchy",
    "block_means",
    "squeeze_parts",
    "same_parts",
    "transfer_parts",
    "bound_parts",
    "correlation_parts",
    "emd_rows",
]

#: "predicts": a strong rank correlation, |rho| >= BAND; "does not": its interval inside (-BAND, BAND)
BAND = 0.5
#: the embeddings the finding on dissimilarity and transfer covers
PRED_EMBEDDINGS = ("OH", "BN")

#: where the paper states each finding
SOURCES = {
    "cauchy-squeeze": "beyond the paper (Leaner paper, App. A lists the cauchy failures as unexplained)",
    **dict.fromkeys(
        ("same-cauchy-fails", "same-tau1", "same-tau01", "same-na-cauchy-fails", "same-na-tau01"),
        "Leaner paper, Figs. 4 and 16",
    ),
    **dict.fromkeys(
        ("transfer-cauchy-trained", "transfer-cauchy-tested", "transfer-block", "tested-cauchy-finite"),
        "Leaner paper, Figs. 8 and 18",
    ),
    "tested-cauchy-na-finite": (
        'beyond the paper (Figs. 8 and 18 show NA; the text\'s "(OH and BN do not diverge)" says nothing of it)'
    ),
    "bound-gap": "Leaner paper, Sec. 3 (Eqs. 7-9)",
    "bound-cauchy-loosest": "Leaner paper, Sec. 3 (Eqs. 7-9) and Fig. 5",
    **dict.fromkeys(("emd-cauchy-isolated", "emd-laplace-closest"), "Leaner paper, Figs. 9 and 19"),
    "emd-small-tasks": "beyond the paper (Figs. 9 and 19 at another task size)",
    "emd-predicts-transfer": "beyond the paper (Figs. 8 and 9 side by side)",
}


def on_cauchy(normal: dict, count: int, d: int, k: int, seeds: dict) -> dict:
    """``(embedding, n)`` -> the one-step relative loss (Eq. 20), ``(seeds,)``, of the models ``normal[embedding]``
    on ``count`` cauchy tasks of ``n`` points (and ``d``, ``k``) drawn from ``seeds[n]``, for each n of ``seeds``."""
    tasks = {n: test_tasks(count, n, d, k, ["cauchy"], seed=s) for n, s in seeds.items()}
    one = {(e, n): transfer({"normal": runs}, tasks[n], 1)[0] for e, runs in normal.items() for n in tasks}
    return {key: o[("normal", "cauchy")] for key, o in one.items()}


def block_means(many: dict, others) -> dict:
    """Per embedding ``e``, the per-seed mean of the T-step ratios ``many[e][(a, b)]`` over ``others`` x ``others``
    (the 4x4 block), ``(seeds,)``."""
    return {e: np.mean([m[(a, b)] for a in others for b in others], axis=0) for e, m in many.items()}


def squeeze_parts(normal: dict, squeeze: dict, on_cauchy: dict, *, judge: Judge) -> dict[str, Part]:
    """``cauchy-squeeze`` (beyond the paper): the bulk-width ratio cauchy / normal ``squeeze[n]`` at the largest n is
    below a fifth of that at the smallest, and the models ``normal[e]`` (trained on normal tasks) beat one Lloyd step
    on cauchy tasks at every n (``on_cauchy[(e, n)]``, :func:`on_cauchy`)."""
    missing = [(e, n) for e in normal for n in squeeze if (e, n) not in on_cauchy]
    if len(squeeze) < 2 or missing:
        raise ValueError(
            f"need two n in squeeze, each in on_cauchy per embedding; got {list(squeeze)}, missing {missing}"
        )
    lo, hi = min(squeeze), max(squeeze)
    widths = f"bulk width cauchy/normal {squeeze[lo]:.3f} at n={lo}, {squeeze[hi]:.3f} at n={hi}"
    beats = [judge.below(f"{e} n={n}", on_cauchy[(e, n)], 1.0, "relative loss") for e in normal for n in squeeze]
    part = Part(
        f"Min-max scaling squeezes cauchy tasks more as n grows (bulk width relative to normal tasks below a fifth at "
        f"n={hi} of that at n={lo}), yet the layer trained on normal tasks still beats one Lloyd step on cauchy tasks "
        "at every n",
        "not examined",
        [r for runs in normal.values() for r in runs],
        [
            Evidence("squeeze grows with n", "holds" if squeeze[hi] < squeeze[lo] / 5 else "fails", widths),
            all_of("normal-trained layer beats Lloyd's on cauchy", beats),
        ],
    )
    return {"cauchy-squeeze": part}


def same_parts(G: dict, families, taus, embeddings, losses, *, judge: Judge) -> dict[str, Part]:
    """Figs. 4 and 16 on the runs ``G`` (``(family, tau, embedding, loss)`` -> runs validated on their family, NA's
    among them), each part on medians of the final relative validation loss against one Lloyd step (1):
    ``same-cauchy-fails``, ``same-tau1`` and ``same-tau01`` for ``embeddings``, ``same-na-cauchy-fails`` and
    ``same-na-tau01`` for NA."""
    if "cauchy" not in families or len(set(taus)) < 2 or not {"NE", "L2"} <= set(losses):
        raise ValueError(f"need cauchy, two taus, NE and L2; got families {families}, taus {taus}, losses {losses}")
    hi, lo, others = max(taus), min(taus), [f for f in families if f != "cauchy"]

    def runs(fams, ts, embs):
        return [r for t in ts for f in fams for e in embs for l in losses for r in G[(f, t, e, l)]]

    def cells(test, label, fams, t, embs, ls, what="final"):  # each (f, e, l) against one Lloyd step
        keys = [(f, t, e, l) for f in fams for e in embs for l in ls]
        return [test(label.format(f=k[0], e=k[2], l=k[3]), final(G[k]), 1.0, what) for k in keys]

    def cauchy_fails(embs, who, which):  # "on cauchy, none below 1", at both temperatures
        fails = [
            all_of(f"tau={t:g}", cells(judge.above, "{e}:{l}", ["cauchy"], t, embs, losses, "cauchy")) for t in (hi, lo)
        ]
        statement = (
            f"Trained and validated on cauchy tasks, {who} one Lloyd step (median final relative validation loss "
            f"above 1, {which}), at both temperatures"
        )
        return Part(statement, "cauchy fails to generalise", runs(["cauchy"], (hi, lo), embs), fails)

    def beat_lloyd(embs, who):  # "at the smallest tau, all below 1 but on cauchy"
        beats = all_of("beats Lloyd's", cells(judge.below, "{f} {e}:{l}", others, lo, embs, losses))
        statement = f"At tau={lo:g}, {who} beats one Lloyd step on every family but cauchy"
        return Part(statement, "everything except cauchy beats Lloyd's", runs(others, (lo,), embs), [beats])

    return {
        "same-cauchy-fails": cauchy_fails(embeddings, "no model beats", "every embedding and regulariser"),
        "same-tau1": Part(
            f"At tau={hi:g}, L2 with OH or BN beats one Lloyd step on every family but cauchy; NE does not beat it on "
            "gumbel and laplace",
            "L2 beats Lloyd's; NE fails on gumbel and laplace",
            runs(families, (hi,), embeddings),
            [
                all_of("L2 beats Lloyd's", cells(judge.below, "{f} {e}", others, hi, embeddings, ["L2"])),
                all_of("NE does not", cells(judge.above, "{f} {e}", ["gumbel", "laplace"], hi, embeddings, ["NE"])),
            ],
        ),
        "same-tau01": beat_lloyd(embeddings, "every embedding and regulariser"),
        "same-na-cauchy-fails": cauchy_fails(["NA"], "NA does not beat", "both regularisers"),
        "same-na-tau01": beat_lloyd(["NA"], "NA with either regulariser"),
    }


def _grid(trained: dict) -> tuple[list, list]:
    """The embeddings and training families of ``trained`` (``{embedding: {train family: runs}}``), checked."""
    embs = list(trained)
    fams = list(trained[embs[0]]) if embs else []
    if "cauchy" not in fams or any(list(trained[e]) != fams for e in embs):
        raise ValueError(f"trained must map each embedding to the same families, cauchy among them; got {trained!r}")
    return embs, fams


def transfer_parts(
    trained: dict, many: dict, grow: dict, *, T: int, tau: float, loss: str, na: tuple, judge: Judge
) -> dict[str, Part]:
    """Figs. 8 and 18 on the grid's models ``trained`` (``{embedding: {train family: runs}}``, at ``tau`` with
    ``loss``) after ``T`` re-embedding steps: ``many[e]`` and ``grow[e]`` (:func:`lloydbook.families.transfer`) map
    ``(train, test)`` to the T-step ratio to Lloyd's and the log change of the model's own objective; ``na``, the NA
    models' ``(runs, grow)`` (``{train family: runs}``, ``{(train, "cauchy"): (seeds,)}``). Returns
    ``transfer-cauchy-trained``, ``transfer-cauchy-tested``, ``transfer-block`` (an open row at every draw,
    :attr:`lloydbook.findings.Part.unmet`), ``tested-cauchy-finite`` and ``tested-cauchy-na-finite`` (beyond the
    paper)."""
    embs, fams = _grid(trained)
    others, coded, every = [f for f in fams if f != "cauchy"], [e for e in embs if e != "NA"], ", ".join(embs)
    na_runs, na_grow = na

    def runs(es):
        return [r for f in fams for e in es for r in trained[e][f]]

    def from_cauchy(part, values, *how):
        return all_of(part, [judge.above(f"{e} on {b}", values[e][("cauchy", b)], *how) for e in embs for b in others])

    def onto_cauchy(test, values, e, *how):
        return all_of(e, [test(f"{e} from {a}", values[e][(a, "cauchy")], *how) for a in fams])

    block = block_means(many, others)
    block_ev = [judge.below(e, block[e], 1.0, "block mean of the T-step ratio") for e in embs]
    diverges = "diverges: objective at step T above the initial one"
    tested = [onto_cauchy(judge.above, many, e, 1.0, "T-step ratio") for e in embs]
    na_falls = [judge.below(a, na_grow[(a, "cauchy")], 0.0, "log objective") for a in others]
    return {
        "transfer-cauchy-trained": Part(
            f"Models trained on cauchy diverge on every other family: after T={T} re-embedding steps their loss is "
            f"above Lloyd's, and above their own initial loss (OH and BN, {loss}, tau={tau:g})",
            "models trained on cauchy diverge everywhere",
            runs(embs),
            [
                from_cauchy("worse than Lloyd's", many, 1.0, "T-step ratio"),
                from_cauchy(diverges, grow, 0.0, "log objective, step T over step 0"),
            ],
        ),
        "transfer-cauchy-tested": Part(
            f"Tested on cauchy tasks, the models trained on any family (cauchy included) do not beat Lloyd's after "
            f"T={T} steps, for every embedding ({every})",
            "testing on cauchy is not competitive",
            runs(embs),
            [all_of("not below Lloyd's on cauchy", tested)],
        ),
        "transfer-block": Part(
            f"Trained and tested within {', '.join(others[:-1])} and {others[-1]}, the models beat Lloyd's after T={T} "
            "steps on average over the 4x4 block (per seed, the mean of the 16 cells' T-step ratios is below 1), for "
            f"every embedding ({every})",
            "the 4x4 block generalises and beats Lloyd's",
            runs(embs),
            block_ev,
            "at Lloyd's level, the side of 1 its interval falls on depends on the draw of test tasks (this draw: "
            + "; ".join(f"{e.part} {e.text}" for e in block_ev)
            + ")",
        ),
        "tested-cauchy-finite": Part(
            f"Tested on cauchy tasks, the OH and BN models trained on any family do not diverge: after T={T} steps "
            f"their objective is below their initial one ({loss}, tau={tau:g})",
            '"Testing on cauchy is not competitive (OH and BN do not diverge)"',
            runs(coded),
            [onto_cauchy(judge.below, grow, e, 0.0, "log objective") for e in coded],
        ),
        "tested-cauchy-na-finite": Part(
            f"Tested on cauchy tasks, the NA models trained on the other families do not diverge either (after T={T} "
            f"steps their objective is below their initial one), while those trained on cauchy make it worse "
            f"({loss}, tau={tau:g})",
            '"(OH and BN do not diverge)": silent on NA',
            [r for rs in na_runs.values() for r in rs],
            [
                all_of("NA from the other families", na_falls),
                judge.above("NA from cauchy", na_grow[("cauchy", "cauchy")], 0.0, "log objective"),
            ],
        ),
    }


def bound_parts(trained: dict, terms: dict, *, tau: float, loss: str, judge: Judge) -> dict[str, Part]:
    """The bound of Eqs. 7-9 per family on the grid's models ``trained`` (as for :func:`transfer_parts`) with their
    terms ``terms[(family, embedding)]`` (:func:`lloydbook.families.bound_terms`): ``bound-gap`` (the slack is above 0
    and below the smoothing gap C on every family) and ``bound-cauchy-loosest`` (the slack over the held-out loss is
    larger on cauchy than on each other family, unpaired)."""
    embs = list(dict.fromkeys(e for _, e in terms))
    others = [f for f in dict.fromkeys(f for f, _ in terms) if f != "cauchy"]
    if any(("cauchy", e) not in terms for e in embs):
        raise ValueError(f"terms must hold (cauchy, embedding) for every embedding, got {list(terms)}")
    rel = {c: t["slack"] / t["loss"] for c, t in terms.items()}
    runs, which = [r for f, e in terms for r in trained[e][f]], f"({', '.join(embs)}, {loss}, tau={tau:g})"
    slack = [judge.above(f"{f} {e}", t["slack"], 0.0, "slack") for (f, e), t in terms.items()]
    inside = [judge.above(f"{f} {e}", t["gap"] - t["slack"], 0.0, "C - slack") for (f, e), t in terms.items()]

    def loosest(e):  # the slack over the held-out loss, each other family's against cauchy's
        return all_of(
            e, [judge.lower(f"{e}: {f}", rel[(f, e)], rel[("cauchy", e)], f, "cauchy", paired=False) for f in others]
        )

    return {
        "bound-gap": Part(
            "On every family the bound of Eqs. 7-9 holds with the smoothing gap as its slack: the final models' "
            r"held-out $k$-means loss is below their smoothed training loss, by less than the smoothing gap "
            rf"$C^\tau_\Omega$ on held-out tasks {which}",
            r"$E[L] \le$ training $\tilde L + \epsilon \le$ training $L + C^\tau_\Omega + \epsilon$",
            runs,
            [all_of("held-out loss below the training loss", slack), all_of("slack below C", inside)],
        ),
        "bound-cauchy-loosest": Part(
            "The bound is loosest on cauchy, the paper's account of its failure: the slack relative to the held-out "
            f"k-means loss is larger on cauchy than on each other family {which}",
            "cauchy fails to generalise: its smoothing gap (above 5 in Fig. 5) leaves the bound loose",
            runs,
            [loosest(e) for e in embs],
        ),
    }


def correlation_parts(trained: dict, corr: dict, *, T: int) -> dict[str, Part]:
    """``emd-predicts-transfer`` (beyond the paper) on the grid's models ``trained`` (as for :func:`transfer_parts`)
    of :data:`PRED_EMBEDDINGS`: per embedding, the interval of the rank correlation ``corr[e]`` between the EMD and
    the degradation of transfer (:func:`lloydbook.families.transfer_correlation`) lies inside (-:data:`BAND`, BAND)."""
    _, fams = _grid(trained)
    text = "rho {rho:+.3f}, 90% interval [{low:+.3f}, {high:+.3f}], tolerance {band:g} ({pairs} family pairs)"
    evidence = [Evidence(e, band_outcome(corr[e], BAND), text.format(**corr[e], band=BAND)) for e in PRED_EMBEDDINGS]
    part = Part(
        "The EMD between two families' tasks does not predict how much a model loses when it transfers between them: "
        f"the 90% bootstrap interval of the Spearman rank correlation lies inside (-{BAND:g}, {BAND:g}) (T={T}, "
        f"{', '.join(PRED_EMBEDDINGS)})",
        "not examined",
        [r for f in fams for e in PRED_EMBEDDINGS for r in trained[e][f]],
        evidence,
    )
    return {"emd-predicts-transfer": part}


def emd_rows(paper_size: list, our_size: list, our_task) -> tuple[dict, dict]:
    """Figs. 9 and 19's findings on EMD matrices ``[(M, labels)]`` (:func:`lloydbook.families.emd_draws`, then the
    Fig. 19-size one) at the paper's task size and at ``our_task`` ``(n, d, k)``: ``({name: its row's statement,
    paper, ours and check (for ``ch.record``)}, {glue name: a median the text quotes})`` for ``emd-cauchy-isolated``,
    ``emd-laplace-closest`` and ``emd-small-tasks`` (beyond the paper)."""
    labels = list(dict.fromkeys(paper_size[0][1])) if paper_size and our_size else []
    if not {"cauchy", "laplace"} <= set(labels):
        raise ValueError(f"need matrices at both sizes over families with cauchy and laplace, got families {labels}")
    others = [f for f in labels if f != "cauchy"]
    iso, iso_small = ([isolated_fraction(M, lab) for M, lab in s] for s in (paper_size, our_size))
    rows = [block_row(M, lab) for M, lab in paper_size]
    closest = [min(others, key=r.get) for r in rows]
    margin = [sorted(r[f] for f in others)[1] / r["laplace"] for r in rows]
    ours = [block_row(M, lab) for M, lab in our_size]  # sep: nearest other family's mean EMD over the within-cauchy
    sep = {s: [min(r[f] for f in others) / r["cauchy"] for r in rs] for s, rs in (("paper", rows), ("ours", ours))}
    at_paper = "At the paper's task size, "
    out = {
        "emd-cauchy-isolated": dict(
            statement=at_paper + "every cauchy task's median EMD to the other cauchy tasks is below its median EMD "
            "to the tasks of each other family, in every draw",
            paper="cauchy tasks are similar only to other cauchy tasks",
            ours=f"fraction of cauchy tasks isolated: min {min(iso):.3f} over {len(iso)} matrices",
            check=bool(min(iso) == 1.0),
        ),
        "emd-laplace-closest": dict(
            statement=at_paper + "laplace has the smallest mean EMD to the cauchy tasks among the other four "
            "families, in every draw",
            paper="laplace is the least dissimilar to cauchy",
            ours=f"closest to cauchy: {', '.join(sorted(set(closest)))} over {len(rows)} matrices; runner-up / laplace "
            f"at least {min(margin):.3f}",
            check=bool(all(c == "laplace" for c in closest)),
        ),
        "emd-small-tasks": dict(
            statement=f"At the CPU build's training size (n, d, k = {fmt_list(list(our_task))}) cauchy tasks are "
            "still the most dissimilar family (nearest other family's mean EMD above the within-cauchy mean in every "
            "draw), but far less so than at the paper's size (every draw's ratio below every paper-size draw's)",
            paper="not examined",
            ours=f"nearest-other / within-cauchy mean EMD: {min(sep['ours']):.2f} to {max(sep['ours']):.2f} at our "
            f"size, {min(sep['paper']):.1f} to {max(sep['paper']):.1f} at the paper's; cauchy tasks isolated at our "
            f"size: {min(iso_small):.2f} to {max(iso_small):.2f}",
            check=bool(min(sep["ours"]) > 1 and max(sep["ours"]) < min(sep["paper"])),
        ),
    }
    medians = {"sep-small": sep["ours"], "sep-paper": sep["paper"], "iso-small": iso_small}
    return out, {name: float(np.median(v)) for name, v in medians.items()}
