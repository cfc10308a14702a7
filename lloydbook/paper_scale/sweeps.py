"""The paper-scale sweeps of :func:`lloydbook.sweeps.paper_sweeps`, judged by name on a machine's runs."""

from __future__ import annotations

from lloydlib import training

from ..sweeps import WALL_NS, paper_sweeps, sweep_configs
from .clusters import fig15_claims
from .common import claim_suffix
from .shapes import fig11_claims, fig13_claims, fig14_claims
from .tau import fig10_claims
from .wall import fig17_claims

__all__ = ["FIELDS", "judge", "judge_line", "wall_panels"]


def _fig10(ds: str):
    def claims(G, p, machine):
        kw = dict(taus=p["taus"], embeddings=p["embeddings"], losses=p["losses"], seeds=len(p["seeds"]))
        return [i for d in p[ds] for i in fig10_claims(G, d=d, machine=machine, **kw)]

    return claims


_DTEL = ("d", "tau", "embedding", "loss")

#: sweep name -> (the config fields its findings group its runs by, the keys of their ``G``; its findings
#: decided on a machine's grouped runs ``G`` at the paper's settings ``p``)
_SWEEPS = {
    "fig10": (_DTEL, _fig10("tau_ds")),
    "fig10b": (_DTEL, _fig10("tau_b_ds")),
    "fig14": (_DTEL, lambda G, p, machine: fig14_claims(
        G, ds=p["ds"], taus=p["d_taus"], embeddings=p["d_embeddings"], losses=p["losses"], seeds=len(p["seeds"]),
        machine=machine,
    )),
    "fig11": (("d", "lr", "embedding", "loss"), lambda G, p, machine: fig11_claims(
        G, ds=p["lr_ds"], lrs=p["lrs"], embeddings=p["lr_embeddings"], losses=p["sub_losses"],
        seeds=len(p["lr_seeds"]), machine=machine,
    )),
    "fig13": (("n", "embedding", "loss"), lambda G, p, machine: fig13_claims(
        G, ns=p["ns"], n0=p["base"]["n"], k=p["base"]["k"], min_ppc=p["k_min_ppc"], embeddings=p["n_embeddings"],
        losses=p["sub_losses"], seeds=len(p["n_seeds"]), machine=machine,
    )),
    "fig15": (("d", "tau", "k", "embedding", "loss"), lambda G, p, machine: fig15_claims(
        G, cases=p["k_cases"], ks=p["ks"], embeddings=p["embeddings"], losses=p["sub_losses"],
        seeds=len(p["k_seeds"]), n=p["base"]["n"], machine=machine,
    )),
    "fig17": (("d", "k", "n", "embedding"), lambda G, p, machine: fig17_claims(
        G, cases=p["wall_cases"], ns=WALL_NS, seeds=len(p["seeds"]), machine=machine
    )),
}  # fmt: skip
#: sweep name -> the config fields its findings group its runs by (of the table above)
FIELDS = {name: fields for name, (fields, _) in _SWEEPS.items()}


def judge(name: str, runs, p, machine: str) -> list[str]:
    """Decide the statements of the paper-scale sweep ``name`` (one of
    :data:`lloydbook.sweeps.PAPER_SWEEPS`) on ``runs``, the runs of that sweep a machine recorded (any subset),
    at the settings ``p`` (``book.params("learning", "paper")``); returns the claim ids recorded, [] unless
    every setting has all its seeds."""
    if name not in _SWEEPS:
        raise ValueError(f"name must be one of the paper-scale sweeps {list(_SWEEPS)}, got {name!r}")
    claim_suffix(machine)  # a bad machine name fails even on a partial sweep
    fields, claims = _SWEEPS[name]
    return claims(training.group(list(runs), *fields), p, machine)


def judge_line(name: str, runs, p, machine: str) -> str:
    """:func:`judge` the runs of sweep ``name`` that ``machine`` recorded, and say what came of it in one
    line: the ids judged, "partial (r of c runs): shown, not judged", or "not recorded" (no runs)."""
    runs = list(runs)
    ids = judge(name, runs, p, machine)
    if ids:
        return f"{machine}, {name}: judged at paper scale: {', '.join(ids)}"
    if not runs:
        return f"{machine}, {name}: not recorded"
    total = len(sweep_configs({n: specs for n, specs, _ in paper_sweeps(p)}[name]))
    return f"{machine}, {name}: partial ({len(runs)} of {total} runs): shown, not judged"


def wall_panels(runs) -> tuple[list, list]:
    """Figure 17's columns for :func:`lloydbook.figures.figure` (``x="time"``) from recorded runs: one per
    (d, k, n) present, ``{(embedding, "L2"): runs}``, and their titles."""
    G = training.group(list(runs), "d", "k", "n", "embedding")
    cases = list(dict.fromkeys(key[:3] for key in G))
    cols = [{(e, "L2"): G[(*c, e)] for e in ("OH", "BN") if (*c, e) in G} for c in cases]
    return cols, [f"d={d}, k={k}, n={n}" for d, k, n in cases]
