"""The searches and table rows of the chapter "The Lipschitz and norm-bound lemmas" (book/09_lemmas.ipynb).

``SW`` arguments are the search effort, ``dict(restarts=..., steps=..., random_pairs=...)``. A function that draws
takes a ``seed`` (an integer >= 0, the chapter's ``ch.seed("<name>")``) and derives every draw from it. Bad
arguments raise a ``TypeError`` or ``ValueError`` (:mod:`lloydlib.checks`) naming the argument, what was expected
and what came.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Iterable

import mpmath
import numpy as np
import sympy as sp
import torch

from lloydlib import theory as T
from lloydlib.checks import check_choice, check_int, check_positive, check_scalar
from lloydlib.tasks import sample_tasks

__all__ = [
    "TERMS",
    "TERM_NAMES",
    "log10",
    "paper_constants",
    "table3_agreement",
    "norm_bound_rows",
    "table2_rows",
    "softmax_region_grid",
    "softmax_heads",
    "attention_sweep",
    "gamma_sweep",
    "head_slack_rows",
    "h1_rows",
    "eq170_grid",
    "theorem1_searches",
    "theorem1_rows",
    "print_pair",
    "lipschitz_measurements",
]

_ARROW = {1: "↑", -1: "↓", 0: "–"}
TERMS = ["m", "m_p", "rho", "rho_p", "Gamma1", "Gamma2", "gamma", "d_emb"]
TERM_NAMES = dict(zip(TERMS, ["m", "m'", "ρ", "ρ'", "Γ1", "Γ2", "γ", "d_emb"]))
_VARIES = ("m", "m_p", "d_emb", "gamma", "rho", "rho_p")  # the settings of T.AttentionSetting a sweep can vary
_BASE = dict(m=4, m_p=4, gamma=1.0, rho=1.0, rho_p=1.0)  # where a sweep holds those it does not vary


def _check_values(name: str, values, check_item=None, *, minimum: int = 1) -> list:
    """``values`` as a list of at least ``minimum`` items, item i checked by ``check_item(f"{name}[{i}]", item)``
    (which returns it converted); a TypeError for a string or a non-iterable, a ValueError for too few."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of values, got {type(values).__name__} {values!r}")
    values = list(values)
    if len(values) < minimum:
        raise ValueError(f"{name} must hold at least {minimum} value(s), got {values!r}")
    return [check_item(f"{name}[{i}]", v) if check_item else v for i, v in enumerate(values)]


def _check_task(d, k, n) -> tuple[int, int, int]:
    """(d, k, n) of a task the sandwiches draw: integers d >= 1, k >= 2 and n >= k (each task needs at least
    k points; with fewer, or with k = 1, a head attends over one key and its observed ratio is 0)."""
    d, k, n = check_int("d", d, 1), check_int("k", k, 2), check_int("n", n, 1)
    if n < k:
        raise ValueError(f"n must be >= k (each task needs at least k points), got n={n} and k={k}")
    return d, k, n


def _check_draw(points, seed) -> tuple[int, int]:
    """(points, seed) of a random grid: at least one point, a seed >= 0 (numpy's generator's range)."""
    return check_int("points", points, 1), check_int("seed", seed, 0)


def log10(x) -> float:
    """log10 of a float or of an mpmath number too large for a float (-inf at 0, inf at inf)."""
    if isinstance(x, bool) or not isinstance(x, (numbers.Real, mpmath.mpf)):
        raise TypeError(f"x must be a real number (int, float or mpmath.mpf), got {type(x).__name__} {x!r}")
    if not x >= 0:  # negative or NaN
        raise ValueError(f"x must be a number >= 0, got {x!r}")
    return float(mpmath.log10(x))


def paper_constants(d, k, n, Gamma1, Gamma2, gamma, tau):
    """The head constants at the paper's task: (rows, logs) with rows [emb, head, m, m', rho, rho',
    delta, log kappa2..5] and logs {emb: (log10 phi, log10 phi')}, computed with mpmath."""
    rows, logs = [], {}
    for emb in ("OH", "BN"):
        d_E, D = T.dims(d, k, emb)
        for mu, (m, mp, rho, rhop) in T.head_quantities(n, k, d, d_E, Gamma2).items():
            a = (rho, rhop, Gamma1, Gamma2, gamma, D)
            dl = T.delta(rho, rhop, Gamma1, gamma, D)
            kappas = [T.kappa2(m, rhop)] + [f(m, *a, backend="mpmath") for f in (T.kappa3, T.kappa4)]
            kappas.append(T.kappa5(m, mp, *a, backend="mpmath"))
            row = [emb, mu, int(m), int(mp), f"{rho:.2f}", f"{rhop:.2f}", f"{dl:.1f}"]
            rows.append(row + [f"{log10(x):.1f}" for x in kappas])
        args = (n, k, d, d_E, D, Gamma1, Gamma2, gamma)
        logs[emb] = (log10(T.phi(*args, backend="mpmath")), log10(T.phi_prime(*args, tau, backend="mpmath")))
    return rows, logs


def table3_agreement() -> dict:
    """Table 3 derived (Lemma I.1 propagated through Eq. 4) against stored: {(embedding, mu): same}, for a
    symbolic d_E (embedding None) and with OH's and BN's d_E substituted."""
    stored, s3 = T.table3_stored(), T.table3_symbols()
    agree = {}
    for emb in (None, "OH", "BN"):
        derived = T.table3_derived(emb)
        dE = T.dims(s3["d"], s3["k"], emb)[0] if emb else s3["d_E"]
        for mu in (1, 2, 3, 4):
            agree[(emb, mu)] = all(
                sp.simplify(sp.sympify(a) - sp.sympify(b).subs(s3["d_E"], dE)) == 0
                for a, b in zip(derived[mu], stored[mu])
            )
    return agree


def norm_bound_rows(d, k, n, SW, seed):
    """Lemma I.1 on sampled tasks (two weight scales) and by ascent (Gamma1 = Gamma2 = 1); the tasks are drawn
    from ``seed``, the weights from ``seed + 1``, the ascent's starts from ``seed + 2``.

    Returns (rows, per_set, violations): per_set[name] is the largest norm / bound seen for tokens
    ``name``; violations lists (emb, name, seen, ascent) wherever a bound failed.
    """
    seed = check_int("seed", seed, 0)
    rows, per_set, violations = [], {}, []
    X, C = sample_tasks(8, n, d, k, seed=seed, dtype=torch.float64)
    g = torch.Generator().manual_seed(seed + 1)
    for emb in ("OH", "BN"):
        d_E, D = T.dims(d, k, emb)
        for G1, G2 in ((1.0, 1.0), (0.5, 2.0)):
            nb = T.norm_bounds(d, d_E, G2)
            Q, K, V = (T.random_spectral((4, D, D), s, generator=g) for s in (G1, G1, G2))
            _, tokens = T.one_layer(X, C, Q, K, V, emb, 1.0, return_tokens=True)
            sand = T.norm_sandwich(d, k, n, emb, Gamma1=G1, Gamma2=G2, seed=seed + 2, **SW) if G2 == 1.0 else None
            for name, Z in zip(("X0", "C0", "X1", "C1"), tokens):
                seen = float(Z.norm(dim=-1).max())
                asc = sand[name].ratio if sand else float("nan")
                if not (seen <= nb[name] * (1 + 1e-12) and not (sand and sand[name].violated)):
                    violations.append((emb, name, seen, asc))
                per_set[name] = max(per_set.get(name, 0.0), seen / nb[name], np.nan_to_num(asc / nb[name]))
                ascent = [f"{asc:.3f}", f"{asc / nb[name]:.3f}"] if sand else ["–", "–"]
                rows.append([emb, f"{G1:g}, {G2:g}", name, f"{nb[name]:.3f}", f"{seen:.3f}", *ascent])
    return rows, per_set, violations


def table2_rows(derived, stored, columns):
    """Rows of Table 2: one per term, an arrow per bound (a column of ``columns``, a key of ``derived``), with
    the stored arrow where they differ."""
    missing = [c for c in columns if c not in derived]
    if missing:
        raise ValueError(f"columns must be bounds of derived ({sorted(derived)}), got {missing} that are not")
    rows = []
    for t in TERMS:
        cells = []
        for c in columns:
            a = _ARROW[derived[c][t]]
            if c in stored and derived[c][t] != stored[c][t]:
                a += f" (stored {_ARROW[stored[c][t]]})"
            cells.append(a)
        rows.append([TERM_NAMES[t]] + cells)
    return rows


def softmax_region_grid(m_max=512, deltas=None):
    """Lemma I.3's l1 constant on a dense grid, m = 2..m_max and ``deltas``: is the stated e^delta/m below
    the exact constant exactly when delta < delta*(m)? Returns (agree, points, failing points); points
    within 1e-9 (relative) of the boundary are left out. ``deltas`` defaults to 801 values in [0, 8]; ``m_max``
    is an integer >= 2, ``deltas`` a non-empty sequence of finite numbers >= 0."""
    m_max = check_int("m_max", m_max, 2)
    if deltas is None:
        deltas = np.linspace(0.0, 8.0, 801)
    deltas = _check_values("deltas", deltas, lambda name, v: check_scalar(name, v, min_val=0))
    ms = np.arange(2, m_max + 1, dtype=float)[:, None]
    dl = np.asarray(deltas, dtype=float)[None, :]
    fails = T.softmax_l1_sharp(dl + 0 * ms, ms + 0 * dl) > T.softmax_bound(dl + 0 * ms, ms + 0 * dl)
    dstar = T.softmax_l1_failure_delta(ms)
    clear = np.abs(dl - dstar) > 1e-9 * (1 + dl)
    return bool((fails == (dl < dstar))[clear].all()), int(clear.sum()), int(fails.sum())


def softmax_heads(d, k, n, Gamma1, Gamma2, gamma):
    """Lemma I.3 where Appendix I applies it: per embedding and head (Table 3's quantities), the softmax
    runs over m' keys with dispersion bound delta (Lemma I.4). Rows [emb, head, m', delta, delta*(m'),
    exact / stated constant, holds?]; ``holds`` is delta >= delta*(m')."""
    rows = []
    for emb in ("OH", "BN"):
        d_E, D = T.dims(d, k, emb)
        for mu, (_, mp, rho, rhop) in T.head_quantities(n, k, d, d_E, Gamma2).items():
            dl = T.delta(rho, rhop, Gamma1, gamma, D)
            dstar = T.softmax_l1_failure_delta(mp)
            ratio = T.softmax_l1_sharp(dl, mp) / T.softmax_bound(dl, mp)
            rows.append([emb, mu, int(mp), dl, dstar, ratio, bool(dl >= dstar)])
    return rows


def _phi_settings(points: int, seed: int):
    """Random settings of Theorem I.1's phi: yields ((n, k, d, d_E, d_emb, Gamma1, Gamma2, gamma), phi) for each
    of ``points`` draws where phi is finite (k in [2, 40), n in [2, 600), d in [0.5, 40], d_E - d in [0, 8],
    d_emb in [1, 60], Gamma1, Gamma2, gamma in [0.01, 2])."""
    rng = np.random.default_rng(seed)
    for _ in range(points):
        k_, n_ = int(rng.integers(2, 40)), int(rng.integers(2, 600))
        d_ = float(rng.uniform(0.5, 40))
        dE = d_ + float(rng.uniform(0, 8))
        D_ = float(rng.uniform(1, 60))
        g1, g2, ga = (float(x) for x in rng.uniform(0.01, 2, 3))
        ph = T.phi(n_, k_, d_, dE, D_, g1, g2, ga)
        if math.isfinite(ph):
            yield (n_, k_, d_, dE, D_, g1, g2, ga), ph


def attention_sweep(lemma, vary, values, d_emb, SW, seed):
    """The sandwich of ``lemma`` as one setting ``vary`` (one of :data:`_VARIES`) takes ``values`` (a non-empty
    sequence, each value checked by ``T.AttentionSetting``), the others at m = m' = 4, rho = rho' = 1,
    gamma = 1: one SandwichResult per value; raises on a counterexample."""
    check_choice("vary", vary, _VARIES)
    out = []
    for v in _check_values("values", values):
        r = T.attention_sandwich(lemma, T.AttentionSetting(**{**_BASE, "d_emb": d_emb, vary: v}), seed=seed, **SW)
        if r.violated:
            raise AssertionError(
                f"counterexample to Lemma {lemma} at {vary}={v}: ratio {r.ratio} > {r.bound}\n{r.pair}"
            )
        out.append(r)
    return out


def gamma_sweep(lemma, gammas, d_emb, SW, seed):
    """:func:`attention_sweep` over gamma (``gammas``, a non-empty sequence of numbers > 0), printing observed /
    constant."""
    gammas = _check_values("gammas", gammas, check_positive)
    out = attention_sweep(lemma, "gamma", gammas, d_emb, SW, seed)
    print(f"Lemma {lemma}: observed / constant over gamma = {list(gammas)}:")
    print("  ", " ".join(f"{r.ratio / r.bound:.3g}" for r in out))
    return out


def head_slack_rows(d, k, n, SW, seed):
    """Lemmas I.6-I.8 at the quantities of Table 3 (gamma = 1, Gamma1 = Gamma2 = 1): (rows, slacks), the
    slacks being log10(constant / largest observed ratio); raises on a counterexample. Integers d >= 1,
    k >= 2, n >= k; the searches of Lemma I.6, I.7 and I.8 start from ``seed``, ``seed + 1`` and ``seed + 2``."""
    d, k, n = _check_task(d, k, n)
    seed = check_int("seed", seed, 0)
    rows, slacks = [], []
    for emb in ("OH", "BN"):
        d_E, D = T.dims(d, k, emb)
        for mu, (m, mp, rho, rhop) in T.head_quantities(n, k, d, d_E, 1.0).items():
            tokens = "ball" if mu == 3 else "box"
            S = T.AttentionSetting(m=int(m), m_p=int(mp), d_emb=D, rho=float(rho), rho_p=float(rhop), tokens=tokens)
            cells = []
            for c, lemma in enumerate(("I.6", "I.7", "I.8")):
                r = T.attention_sandwich(lemma, S, seed=seed + c, **SW)
                if r.violated:
                    raise AssertionError(f"counterexample to Lemma {lemma}, {emb} head {mu}:\n{r.pair}")
                slacks.append(log10(r.bound / r.ratio))
                cells.append(f"{slacks[-1]:.1f}")
            rows.append([emb, mu, f"{S.delta:.2f}"] + cells)
    return rows, slacks


def h1_rows(ks, seed):
    """Prop. H.1 on random distance vectors (drawn from ``seed``) at four scales plus a near tie: (rows, all hold,
    NE slacks), a row per k of ``ks`` (a non-empty sequence of integers >= 2: at k = 1 both bounds and distances
    are 0)."""
    ks = _check_values("ks", ks, lambda name, v: check_int(name, v, 2))
    g = torch.Generator().manual_seed(check_int("seed", seed, 0))
    rows, ok, ne_loose = [], True, []
    for k_ in ks:
        r = torch.randn(4096, k_, generator=g, dtype=torch.float64)
        near_tie = torch.zeros(1, k_, dtype=torch.float64)
        near_tie[0, 1:] = 1e-9  # argmin unique, P_Omega almost uniform
        samples = [torch.cat([r * s, near_tie]) for s in (0.01, 0.1, 1.0, 10.0)]
        for reg in ("L2", "NE"):
            seen = max(float(T.smoothing_distances(x, 1.0, reg).max()) for x in samples)
            bound = T.smoothing_distance_bound(k_, reg)
            ok &= seen <= bound * (1 + 1e-12)
            if reg == "NE":
                ne_loose.append(bound / seen)
            rows.append([k_, reg, f"{bound:.4f}", f"{seen:.4f}", f"{math.sqrt(1 - 1 / k_):.4f}"])
    return rows, ok, ne_loose


def eq170_grid(points, seed):
    """At ``points`` (>= 1) random settings drawn from ``seed`` (>= 0) where phi is finite: (Eq. 170 form >=
    four-term max everywhere, max of the 12 terms = four-term max)."""
    points, seed = _check_draw(points, seed)
    eq170_ok = dominance_ok = True
    for (n_, k_, d_, dE, D_, g1, g2, ga), ph in _phi_settings(points, seed):
        eq170_ok &= T.phi_eq170(k_, dE, D_, g1, g2, ga) >= ph * (1 - 1e-12)
        co = T.phi_coefficients(n_, k_, d_, dE, D_, g1, g2, ga)
        dominance_ok &= math.isclose(max(co.values()), ph, rel_tol=1e-12)
    return bool(eq170_ok), bool(dominance_ok)


def theorem1_searches(d, k, n, gammas, SW, seed):
    """Theorem I.1's sandwich at (Gamma1 = 1, each gamma) and (Gamma1 = 0.01, gamma = 1), each search from
    ``seed``, and the explicit pair.

    Returns (thm1, ce): thm1[(emb, Gamma1, gamma)] = (SandwichResult, phi_sum, phi in Eq. 170 form),
    ce[emb] = the explicit pair's ratio. Integers d >= 1, k >= 2, n >= k; ``gammas`` a sequence of numbers > 0."""
    d, k, n = _check_task(d, k, n)
    seed = check_int("seed", seed, 0)
    gammas = _check_values("gammas", gammas, check_positive, minimum=0)
    thm1, ce = {}, {}
    for emb in ("OH", "BN"):
        d_E, D = T.dims(d, k, emb)
        ce[emb] = T.phi_counterexample(d, k, n, emb, Gamma1=1.0)[0]
        for G1, ga in [(1.0, g_) for g_ in gammas] + [(0.01, 1.0)]:
            r = T.layer_sandwich(d, k, n, emb, Gamma1=G1, gamma=ga, seed=seed, **SW)
            thm1[(emb, G1, ga)] = (r, T.phi_sum(n, k, d, d_E, D, G1, 1.0, ga), T.phi_eq170(k, d_E, D, G1, 1.0, ga))
    return thm1, ce


def theorem1_rows(thm1):
    """Rows of the Theorem I.1 table: observed ratio against phi, phi (Eq. 170) and phi_sum."""
    return [
        [emb, G1, ga, *(f"{x:.3g}" for x in (r.ratio, r.bound, p170, ps)), "VIOLATED" if r.violated else "holds"]
        for (emb, G1, ga), (r, ps, p170) in thm1.items()
    ]


@contextlib.contextmanager
def _print_options(**options):
    """Inside the block, torch prints with ``options`` (of ``torch.set_printoptions``); after it, even on an
    error, with torch's options as they were (torch 2.1, the oldest the package allows, has no public way)."""
    keys = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")
    saved = {key: getattr(torch._tensor_str.PRINT_OPTS, key) for key in keys}
    torch.set_printoptions(**options)
    try:
        yield
    finally:
        torch.set_printoptions(**saved)


def print_pair(r) -> None:
    """Print a layer pair (X, C and the norms of the twelve matrices and of their differences), ``r.pair`` of
    a ``T.layer_sandwich`` result, at 3 digits without scientific notation; torch's print options are
    restored after."""
    keys = ("X", "C") + tuple(f"{m}{p}" for m in "QKV" for p in ("", "_prime"))
    pair = getattr(r, "pair", None)
    if not isinstance(pair, dict) or not all(key in pair for key in keys):
        raise TypeError(f"r must be a layer sandwich's result whose .pair holds {list(keys)}, got {r!r}")
    with _print_options(precision=3, sci_mode=False):
        print("X =", pair["X"], "\nC =", pair["C"])
        for kind in ("Q", "K", "V"):
            W, W2 = pair[kind], pair[kind + "_prime"]
            norm = torch.linalg.matrix_norm(W, ord=2).numpy().round(4)
            gap = torch.linalg.matrix_norm(W - W2, ord=2).numpy().round(6)
            print(f"||{kind}_mu|| =", norm, f" ||{kind}_mu - {kind}'_mu|| =", gap)


def lipschitz_measurements(ds, k, n, tasks, seed):
    """OH against BN at each d: measured local Lipschitz constants at random unit-norm weights (drawn from
    ``seed``; the tasks at d from ``seed + d``), and the log10 BN/OH gaps of phi' and of Theorem 3.1's alpha
    (omega_tau = 1).

    Returns (lip, bound_gap, alpha_gap): lip[(d, emb)] an array over the ``tasks`` tasks. ``ds`` is a
    non-empty sequence of integers >= 1, ``tasks`` an integer >= 1 (``k`` and ``n`` are checked by the tasks)."""
    ds = _check_values("ds", ds, lambda name, v: check_int(name, v, 1))
    tasks, seed = check_int("tasks", tasks, 1), check_int("seed", seed, 0)
    lip, bound_gap, alpha_gap = {}, [], []
    g = torch.Generator().manual_seed(seed)
    for d in ds:
        X, C = sample_tasks(tasks, n, d, k, seed=seed + d, dtype=torch.float64)
        phi_p, alpha = {}, {}
        for emb in ("OH", "BN"):
            d_E, D = T.dims(d, k, emb)
            vals = []
            for b in range(tasks):
                Q, K, V = (T.random_spectral((4, D, D), 1.0, generator=g) for _ in range(3))
                vals.append(float(T.local_lipschitz(X[b : b + 1], C[b : b + 1], Q, K, V, emb, tau=0.1)[0]))
            lip[(d, emb)] = np.array(vals)
            phi_p[emb] = log10(T.phi_prime(n, k, d, d_E, D, 1.0, 1.0, 1.0, 0.1, backend="mpmath"))
            alpha[emb] = log10(T.alpha_informal(n, k, d_E, D, 1.0, 0.1, 1.0))
        bound_gap.append(phi_p["BN"] - phi_p["OH"])
        alpha_gap.append(alpha["BN"] - alpha["OH"])
    return lip, bound_gap, alpha_gap
