"""The tables of the chapter "Attention-based clustering" (HTML, with math)."""

from __future__ import annotations

import torch

from lloydlib import attention_clustering as ac

from ..tables import Table, tex
from .summaries import direction_distance, final, setting, success, success_at

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


def closed_form_table(forms: dict) -> Table:
    """Optimal scale, risk and ratio at L = inf for each named :class:`~lloydlib.attention_clustering.ClosedForms`."""
    rows = [[name, tex(cf.scale_inf), tex(cf.risk_inf_opt), tex(cf.ratio_inf)] for name, cf in forms.items()]
    header = ["layer", "optimal scale \\(c^*\\)", "risk \\(R_\\infty(c^*)\\)", "ratio to \\(R(T^*) = \\sigma^2 d\\)"]
    return Table(header, rows)


def in_context_table(grid: dict, prompts: dict, ident) -> Table:
    """The grid's risks as ratios to sigma^2 d; ``grid[d, sigma, L] = (risks, exact, sigma^2 d)``."""
    rows = []
    for (d, sigma, L), (r, ex, ref) in grid.items():
        inf = ac.numeric(ident.ratio_inf, d=d, sigma=sigma)
        rows.append(
            [
                d,
                sigma,
                L,
                prompts[d, sigma, L],
                f"{r['ident'][0] / ref:.3f}",
                f"{ex['ident'] / ref:.3f}",
                f"{inf:.3f}",
                f"{r['oracle'][0] / ref:.3f}",
                f"{r['pca'][0] / ref:.3f}",
                f"{r['nc'][0] / ref:.3f}",
                f"{r['tstar'][0] / ref:.3f}",
            ]
        )
    header = [
        "d",
        "σ",
        "L",
        "prompts",
        "identity (MC)",
        "identity (exact, L)",
        "identity (L=∞)",
        "oracle heads",
        "PCA",
        "nearest centroid",
        "T*",
    ]
    return Table(header, rows)


def pgd_table(pop: dict, rate: dict, fitted: dict) -> Table:
    """Exact population PGD: from M (distance, violation, rates) and from the sphere (plane, centroids)."""
    rows = []
    for (sigma, form, init), res in pop.items():
        if init != "manifold":
            continue
        sph = pop[sigma, form, "sphere"]
        rows.append(
            [
                f"σ={sigma}",
                form,
                f"{float(final(res).max()):.1e}",
                f"{float(res.violation.max()):.1e}",
                f"{rate[form, sigma]:.6f}",
                f"{fitted[form, sigma]:.6f}",
                f"{float(sph.subspace[:, -1].max()):.1e}",
                f"{float(final(sph).min()):.2f} – {float(final(sph).max()):.2f}",
            ]
        )
    return Table(
        [
            "σ",
            "form",
            "from M: final distance (max)",
            "max violation of M",
            "predicted rate 1 + 2η f'(1)",
            "fitted rate",
            "from sphere: distance to the plane",
            "from sphere: distance to centroids",
        ],
        rows,
    )


def sgd_table(sgd: dict) -> Table:
    rows = [
        [
            f"σ={sigma}",
            form,
            setting(init, pen),
            f"{float(final(res).median()):.3g}",
            f"{float(final(res).min()):.3g} – {float(final(res).max()):.3g}",
            f"{success(res):.2f}",
            f"{float(res.violation[:, -1].median()):.1e}",
        ]
        for (sigma, form, init, pen), res in sgd.items()
    ]
    return Table(
        [
            "σ",
            "form",
            "initialisation",
            "final distance (median)",
            "range over runs",
            "fraction < 0.1",
            "M violation (median)",
        ],
        rows,
    )


def penalty_table(scan: dict, check_at: int, P) -> Table:
    rows = [
        [
            pen,
            f"{success_at(r, check_at):.2f}",
            f"{success(r):.2f}",
            f"{float(final(r).median()):.3g}",
            f"{float(ac.orthogonality_penalty(r.Lam).sqrt().median()):.1e}",
        ]
        for pen, r in scan.items()
    ]
    return Table(
        [
            "γ",
            f"fraction within 0.1 at iteration {P.reg_check_step}",
            f"at iteration {P.reg_steps}",
            "final distance (median)",
            "final |<λ1, λ2>| (median)",
        ],
        rows,
    )


def update_table(upd: dict, mu: torch.Tensor) -> Table:
    rows = [
        [
            form,
            update,
            f"{float(final(r).median()):.3g}",
            f"{float(direction_distance(r, mu).median()):.3g}",
            f"{float(r.Lam.norm(dim=-1).median()):.2f}",
        ]
        for (form, update), r in upd.items()
    ]
    return Table(["form", "update", "distance (median)", "distance of the directions λ/|λ|", "|λ| (median)"], rows)


def three_heads_table(pop3: dict, three: dict) -> Table:
    rows = [[f"exact PGD, {form}", "M3", f"{float(r.distance[:, -1].max()):.1e}", "", ""] for form, r in pop3.items()]
    rows += [
        [
            f"stochastic PGD, {form}",
            setting(init, pen),
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
        [f"σ={sigma}", form, f"{level:.4f}", f"{seed_plateau[sigma]:g}", "yes" if within[sigma, form] else "no"]
        for (sigma, form), level in plateau.items()
    ]
    rows += [["σ=1 / σ=0.3", form, f"{r:.2f}", "10", ""] for form, r in ratio_sigma.items()]
    return Table(["plateau", "form", "ours", "seed summary", "within half a decade"], rows)
