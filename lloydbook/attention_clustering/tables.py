"""The tables of the chapter "Attention-based clustering" (HTML, with math)."""

from __future__ import annotations

import torch

from lloydlib import attention_clustering as ac

from ..tables import Table, tex
from .summaries import _setting, direction_distance, final, success, success_at, yes

__all__ = [
    "closed_form_table",
    "in_context_table",
    "pgd_table",
    "sgd_table",
    "penalty_table",
    "update_table",
    "three_heads_table",
    "comparison_table",
    "plateau_table",
]


def _table(rows: list[dict]) -> Table:
    """A :class:`Table` from rows written as {column title: cell}, every row with the same titles in order."""
    return Table(list(rows[0]), [list(row.values()) for row in rows])


def closed_form_table(forms: dict) -> Table:
    """Optimal scale, risk and ratio at L = inf for each named :class:`~lloydlib.attention_clustering.ClosedForms`."""
    rows = [[name, tex(cf.scale_inf), tex(cf.risk_inf_opt), tex(cf.ratio_inf)] for name, cf in forms.items()]
    header = ["layer", "optimal scale \\(c^*\\)", "risk \\(R_\\infty(c^*)\\)", "ratio to \\(R(T^*) = \\sigma^2 d\\)"]
    return Table(header, rows)


def in_context_table(grid: dict, prompts: dict, ident) -> Table:
    """The grid's risks as ratios to sigma^2 d; ``grid[d, sigma, L] = (risks, exact, sigma^2 d)``."""
    rows = [
        {
            "d": d,
            "σ": sigma,
            "L": L,
            "prompts": prompts[d, sigma, L],
            "identity (MC)": f"{r['ident'][0] / ref:.3f}",
            "identity (exact, L)": f"{ex['ident'] / ref:.3f}",
            "identity (L=∞)": f"{ac.numeric(ident.ratio_inf, d=d, sigma=sigma):.3f}",
            "oracle heads": f"{r['oracle'][0] / ref:.3f}",
            "PCA": f"{r['pca'][0] / ref:.3f}",
            "nearest centroid": f"{r['nc'][0] / ref:.3f}",
            "T*": f"{r['tstar'][0] / ref:.3f}",
        }
        for (d, sigma, L), (r, ex, ref) in grid.items()
    ]
    return _table(rows)


def pgd_table(pop: dict, rate: dict, fitted: dict) -> Table:
    """Exact population PGD: from M (distance, violation, rates) and from the sphere (plane, centroids)."""
    rows = []
    for (sigma, form, init), res in pop.items():
        if init != "manifold":
            continue
        sph = pop[sigma, form, "sphere"]
        rows.append(
            {
                "σ": f"σ={sigma}",
                "form": form,
                "from M: final distance (max)": f"{float(final(res).max()):.1e}",
                "max violation of M": f"{float(res.violation.max()):.1e}",
                "predicted rate 1 + 2η f'(1)": f"{rate[form, sigma]:.6f}",
                "fitted rate": f"{fitted[form, sigma]:.6f}",
                "from sphere: distance to the plane": f"{float(sph.subspace[:, -1].max()):.1e}",
                "from sphere: distance to centroids": f"{float(final(sph).min()):.2f} – {float(final(sph).max()):.2f}",
            }
        )
    return _table(rows)


def sgd_table(sgd: dict) -> Table:
    """Stochastic PGD per (sigma, form, init, penalty): final distances, successes and violation of M."""
    rows = [
        {
            "σ": f"σ={sigma}",
            "form": form,
            "initialisation": _setting(init, pen),
            "final distance (median)": f"{float(final(res).median()):.3g}",
            "range over runs": f"{float(final(res).min()):.3g} – {float(final(res).max()):.3g}",
            "fraction < 0.1": f"{success(res):.2f}",
            "M violation (median)": f"{float(res.violation[:, -1].median()):.1e}",
        }
        for (sigma, form, init, pen), res in sgd.items()
    ]
    return _table(rows)


def penalty_table(scan: dict, check_at: int, P) -> Table:
    """The penalty scan: successes at record ``check_at`` and at the end, final distance and orthogonality."""
    rows = [
        {
            "γ": pen,
            f"fraction within 0.1 at iteration {P.reg_check_step}": f"{success_at(r, check_at):.2f}",
            f"at iteration {P.reg_steps}": f"{success(r):.2f}",
            "final distance (median)": f"{float(final(r).median()):.3g}",
            "final |<λ1, λ2>| (median)": f"{float(ac.orthogonality_penalty(r.Lam).sqrt().median()):.1e}",
        }
        for pen, r in scan.items()
    ]
    return _table(rows)


def update_table(upd: dict, mu: torch.Tensor) -> Table:
    """Per (form, update): the final distance, that of the directions lambda / |lambda|, and |lambda|."""
    rows = [
        {
            "form": form,
            "update": update,
            "distance (median)": f"{float(final(r).median()):.3g}",
            "distance of the directions λ/|λ|": f"{float(direction_distance(r, mu).median()):.3g}",
            "|λ| (median)": f"{float(r.Lam.norm(dim=-1).median()):.2f}",
        }
        for (form, update), r in upd.items()
    ]
    return _table(rows)


def three_heads_table(pop3: dict, three: dict) -> Table:
    """Three heads: exact PGD from M3 (``pop3[form]``), then stochastic PGD (``three[form, init, penalty]``)."""
    rows = [[f"exact PGD, {form}", "M3", f"{float(final(r).max()):.1e}", "", ""] for form, r in pop3.items()]
    rows += [
        [
            f"stochastic PGD, {form}",
            _setting(init, pen),
            f"{float(final(r).median()):.3g}",
            f"{float(final(r).max()):.3g}",
            f"{success(r):.2f}",
        ]
        for (form, init, pen), r in three.items()
    ]
    return Table(["training", "initialisation", "final distance (median)", "max over runs", "fraction < 0.1"], rows)


def comparison_table(res_cmp: dict, names, P) -> Table:
    """Reconstruction / denoising risk of every map, as fractions of sigma^2 d, per (sigma, L)."""
    cells = [(s, L) for s in P.cmp_sigma for L in P.cmp_L]
    rows = [
        [name] + [f"{res_cmp[s, L, name][0]:.3f} / {res_cmp[s, L, name][1]:.3f}" for s, L in cells] for name in names
    ]
    return Table(["map  (reconstruction / denoising, ÷ σ²d)"] + [f"σ={s}, L={L}" for s, L in cells], rows)


def plateau_table(plateau: dict, ratio_sigma: dict, within: dict, seed_plateau: dict) -> Table:
    """The plateaus of stochastic PGD from M against the summary's: ``plateau[sigma, form]`` (the level),
    ``within[sigma, form]`` (inside the half-decade band), ``seed_plateau[sigma]`` (the summary's value) and
    the ratio of the sigma = 1 plateau to the sigma = 0.3 one per form (``ratio_sigma[form]``, the summary's 10)."""
    rows = [
        [f"σ={sigma}", form, f"{level:.4f}", f"{seed_plateau[sigma]:g}", yes(within[sigma, form])]
        for (sigma, form), level in plateau.items()
    ]
    rows += [["σ=1 / σ=0.3", form, f"{r:.2f}", "10", ""] for form, r in ratio_sigma.items()]
    return Table(["plateau", "form", "ours", "seed summary", "within half a decade"], rows)
