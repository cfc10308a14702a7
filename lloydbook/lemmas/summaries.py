"""The summaries of the chapter "The Lipschitz and norm-bound lemmas" (book/09_lemmas.ipynb): the numbers its
prose pastes (dicts of glue names without the chapter prefix, for one ``ch.glue_many``) and the tables that
show what its searches found."""

from __future__ import annotations

from lloydlib import theory as T

from ..book import params
from ..tables import Table, tex
from .searches import _check_draw, _phi_settings, log10

__all__ = [
    "softmax_derivation_table",
    "softmax_worst",
    "softmax_head_numbers",
    "dispersion_table",
    "slack_numbers",
    "eq170_table",
    "explicit_pair_table",
    "phi_factors",
    "training_settings",
]


def softmax_derivation_table(derivation: dict, grid: tuple) -> Table:
    """The proof of the exact softmax constant step by step (``T.softmax_l1_derivation``: step -> holds, and
    ``threshold``, e^delta*(m)) and the dense grid's verdict (:func:`~.searches.softmax_region_grid`'s
    ``(agree, points, failing points)``), one row each."""
    agree, points, failing = grid
    rows = [[f"proof step: {key}", "holds" if ok else "FAILS"] for key, ok in derivation.items() if key != "threshold"]
    rows.append(["\\(e^{\\delta^*(m)}\\)", tex(derivation["threshold"])])
    check = "dense grid (m = 2..512, δ ∈ [0, 8]): \\(e^\\delta/m < L^*\\) exactly when \\(\\delta < \\delta^*(m)\\)"
    rows.append([check, f"{'agrees' if agree else 'DISAGREES'} at {points} points ({failing} inside the region)"])
    return Table(["step or check", "result"], rows)


def softmax_worst(sm: dict):
    """The grid point of Lemma I.3's searches (``sm[(delta, m)]`` from ``T.softmax_sandwich``) whose observed
    ratio beats the stated constant e^delta/m by the largest factor: ``((delta, m), result, table)``, the
    table showing that factor, the ratio to the exact constant and the counterexample pair (v, v')."""
    (delta, m), r = max(sm.items(), key=lambda kv: kv[1]["stated"].ratio / kv[1]["stated"].bound)
    factors = [f"{r[c].ratio / r[c].bound:.3f}" for c in ("stated", "sharp")]
    pair = [", ".join(f"{x:.4f}" for x in r["stated"].pair[v].tolist()) for v in ("v", "v_prime")]
    header = ["m", "δ", "observed / (e^δ/m)", "observed / L*", "v", "v'"]
    return (delta, m), r, Table(header, [[m, f"{delta:g}", *factors, *pair]])


def softmax_head_numbers(heads) -> dict:
    """What the prose says of Lemma I.3 in OH's heads 1 and 2 (rows of :func:`~.searches.softmax_heads`):
    the dispersion bound ``delta``, the threshold ``dstar`` = delta*(m') and the ``ratio`` exact / stated,
    as ``i3-oh<head>-<what>``."""
    row = {(emb, mu): (dl, ds, ratio) for emb, mu, _, dl, ds, ratio, _ in heads}
    return {f"i3-oh{mu}-{what}": x for mu in (1, 2) for what, x in zip(("delta", "dstar", "ratio"), row["OH", mu])}


def dispersion_table(disp: dict) -> Table:
    """Lemma I.4's sandwich per token setting (``disp[tokens]``, a ``T.dispersion_sandwich`` result): the
    bound delta, the largest dispersion found and their ratio."""
    rows = [[tokens, f"{r.bound:.4f}", f"{r.ratio:.4f}", f"{r.ratio / r.bound:.4f}"] for tokens, r in disp.items()]
    return Table(["tokens", "δ (Lemma I.4)", "largest observed dispersion", "observed / δ"], rows)


def slack_numbers(sweep: dict, gammas) -> dict:
    """What the prose says of the gamma sweeps of Lemmas I.6-I.8 (``sweep[lemma]``, one result per gamma of
    ``gammas``): observed / constant at the smallest gamma for I.6 and I.7 (``k3-cold``, ``k4-cold``), the
    largest gamma (``gamma-max``) and log10(constant / observed) there (``slack-I6``, ``slack-I7``, ``slack-I8``)."""
    out = {"k3-cold": sweep["I.6"][0].ratio / sweep["I.6"][0].bound}
    out["k4-cold"] = sweep["I.7"][0].ratio / sweep["I.7"][0].bound
    out["gamma-max"] = gammas[-1]
    for lemma in ("I.6", "I.7", "I.8"):
        out[f"slack-{lemma.replace('.', '')}"] = log10(sweep[lemma][-1].bound / sweep[lemma][-1].ratio)
    return out


def eq170_table(identities: dict, extra, k34, grid: tuple) -> Table:
    """The checks behind Eq. 170's form of Theorem I.1's phi, one row each: ``identities`` (TeX of a
    difference -> its sympy simplification, 0 when the identity holds), ``extra`` (c4 - 2 Gamma1^2 c1 (1 + c1),
    factored), ``k34`` (kappa4 - kappa3, factored) and the random grid's two verdicts ``grid``
    (:func:`~.searches.eq170_grid`: Eq. 170 form >= four-term max, max of the 12 terms = four-term max)."""
    rows = [[f"\\({name}\\)", tex(value)] for name, value in identities.items()]
    nonnegative = "yes" if extra.is_nonnegative else "no"
    rows.append([f"\\(c_4 - 2\\Gamma_1^2c_1(1 + c_1)\\) (nonnegative: {nonnegative})", tex(extra)])
    rows.append(["\\(\\kappa_4 - \\kappa_3\\)", tex(k34)])
    rows.append(["Eq. 170 form ≥ four-term max at the random points", "holds" if grid[0] else "FAILS"])
    rows.append(["max of the 12 per-matrix terms = four-term max there", "holds" if grid[1] else "FAILS"])
    return Table(["identity or check", "sympy or grid"], rows)


def _phi_ratio(*args) -> float:
    """phi_sum / phi at Theorem I.1's ``args`` (n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma), both computed with
    mpmath, whose exponent does not overflow: where phi is near the largest float (1.8e308), phi_sum (up to
    12 phi) is not a float, and the float ratio would be inf."""
    return float(T.phi_sum(*args, backend="mpmath") / T.phi(*args, backend="mpmath"))


def explicit_pair_table(ce: dict, d, k, n) -> Table:
    """Theorem I.1's explicit pair (``ce[emb]``, its ratio, from :func:`~.searches.theorem1_searches`) against
    phi and phi_sum in the limit it is built for, gamma Gamma1^2 -> 0 (evaluated at gamma = Gamma1 = 1e-4)."""
    rows = []
    for emb, ratio in ce.items():
        a = (n, k, d, *T.dims(d, k, emb), 1e-4, 1.0, 1e-4)
        rows.append([emb, f"{ratio:.3f}", f"{T.phi(*a):.3f}", f"{ratio / T.phi(*a):.3f}", f"{T.phi_sum(*a):.3f}"])
    return Table(["emb", "explicit pair ratio", "φ (γΓ1² → 0)", "ratio / φ", "φ_sum (γΓ1² → 0)"], rows)


def phi_factors(points: int, seed: int, task: dict) -> dict:
    """phi_sum / phi (Theorem I.1's sum of twelve terms over its four-term maximum): smallest (``lo``) and
    largest (``hi``) over the settings of ``points`` (>= 1) random draws from ``seed`` (>= 0) where phi is
    finite (like :func:`~.searches.eq170_grid`), and at the paper's task ``task`` (d, k, n) with
    gamma = Gamma1 = Gamma2 = 1 for OH (``oh``) and BN (``bn``)."""
    points, seed = _check_draw(points, seed)
    ratios = [_phi_ratio(*args) for args, _ in _phi_settings(points, seed)]
    if not ratios:
        raise ValueError(f"points={points} random settings from seed={seed} hold none with a finite phi; draw more")
    out = {"lo": min(ratios), "hi": max(ratios)}
    d, k, n = task["d"], task["k"], task["n"]
    for emb in ("OH", "BN"):
        out[emb.lower()] = _phi_ratio(n, k, d, *T.dims(d, k, emb), 1.0, 1.0, 1.0)
    return out


def training_settings(P) -> dict:
    """The settings the prose quotes for the OH-against-BN race (``P``: the chapter's settings; ``tr-d``,
    ``tr-k``, ``tr-n``, ``tr-steps``, ``tr-seeds``, the number of seeds) and for the learning chapters' runs
    at this scale and at the paper's (``learn-n``, ``learn-steps``, ``learn-seeds``; ``learn-paper-...``)."""
    out = {f"tr-{key}": P[f"tr_{key}"] for key in ("d", "k", "n", "steps")}
    out["tr-seeds"] = len(P.tr_seeds)
    for tag, scale in (("", P.scale), ("paper-", "paper")):
        learn = params("learning", scale)
        out.update({f"learn-{tag}n": learn.base["n"], f"learn-{tag}steps": learn.base["steps"]})
        out[f"learn-{tag}seeds"] = len(learn.seeds)
    return out
