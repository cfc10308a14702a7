"""The learning chapters' GPU sections: the commands that train the paper-scale sweeps, and what a machine
recorded of them, shown beside this build's runs and judged (:func:`.sweeps.judge_line`).

A chapter names its sweeps by their registry names (:data:`lloydbook.sweeps.PAPER_SWEEPS`)::

    paper_scale.gpu_commands(PAPER, ("fig10", "fig10b", "fig17"))  # a table of shell commands
    paper_scale.gpu_section(("fig10", "fig10b", "fig17"), PAPER, {"fig10": runs, "fig10b": runs})
"""

from __future__ import annotations

import html
from pathlib import Path

from IPython.display import display

from lloydlib import training

from .. import figures, results
from ..learning import comparison_table, find_runs
from ..results import RECORDED_STORE
from ..sweeps import paper_sweeps, sweep_commands, sweep_configs
from ..tables import Table
from .sweeps import FIELDS, judge_line, wall_panels

__all__ = ["gpu_commands", "gpu_section"]


def _sweeps(p, names) -> dict:
    sweeps = {name: (specs, unstacked) for name, specs, unstacked in paper_sweeps(p)}
    unknown = [n for n in names if n not in sweeps]
    if unknown:
        raise ValueError(f"names must be paper-scale sweeps {list(sweeps)}, got {unknown}")
    return {n: sweeps[n] for n in names}


def _code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


def gpu_commands(p, names, cache: str = RECORDED_STORE) -> Table:
    """The shell commands that train the paper-scale sweeps ``names`` (at the paper's settings ``p``) into
    ``cache`` (default :data:`lloydbook.results.RECORDED_STORE`, ``results/recorded/<machine>``, a machine's
    folder to be committed), one row per command (:func:`lloydbook.sweeps.sweep_commands`), as HTML code."""
    rows = [(name, _code(line)) for name, spec in _sweeps(p, names).items() for line in sweep_commands(*spec, cache)]
    return Table(("sweep", f"command (then commit {_code(cache + '/')})"), rows)


def _value(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _fig10_figure(found, p, machine: str) -> None:
    """Figure 10 of a machine's recorded runs, one figure per d, one column per tau recorded at that d."""
    G = training.group(found, *FIELDS["fig10"])
    for d in dict.fromkeys(key[0] for key in G):
        taus = [t for t in p["taus"] if any((d, t, e, l) in G for e in p["embeddings"] for l in p["losses"])]
        cols = [
            {(e, l): G[(d, t, e, l)] for e in p["embeddings"] for l in p["losses"] if (d, t, e, l) in G} for t in taus
        ]
        figures.figure(cols, [f"d={d}, tau={t:g}" for t in taus], f"Figure 10 from {machine} (paper scale), d={d}")


def gpu_section(names, p, ours: dict | None = None, *, dirs=None) -> Table:
    """What every GPU machine recorded of the paper-scale sweeps ``names``, at the paper's settings ``p``.

    For every machine folder of ``dirs`` (default: the GPU machines' folders under ``results/recorded/``,
    :func:`lloydbook.results.gpu_run_dirs`) and every sweep of ``names`` it holds runs of: shows the recorded runs beside
    this build's (a :func:`lloydbook.learning.comparison_table`, for the sweeps in ``ours``, which maps a
    sweep's name to this build's runs of it, matched on the sweep's fields :data:`.sweeps.FIELDS`), draws
    Figure 10 or 17 from them, and judges the sweep (:func:`.sweeps.judge_line`: a complete sweep records
    its claims ``<id>-gpu-<machine>``, a partial one judges nothing).

    Returns one row per (machine, sweep): the machine folder, its hardware, the sweep and what came of it;
    a single row saying so when no GPU results are committed.
    """
    sweeps, ours = _sweeps(p, names), ours or {}
    dirs = results.gpu_run_dirs() if dirs is None else [Path(d) for d in dirs]
    rows = []
    for root in dirs:
        for name, (specs, _) in sweeps.items():
            found = find_runs(sweep_configs(specs), root)
            hardware = found[0].info.get("hardware", "not recorded") if found else "-"
            if found and name in ours:
                fields = FIELDS[name]
                mine = training.group(list(ours[name]), *fields)
                display(
                    comparison_table(
                        found,
                        fields,
                        lambda c, fields=fields: [_value(getattr(c, f)) for f in fields],
                        lambda c, fields=fields, mine=mine: mine.get(tuple(getattr(c, f) for f in fields)),
                        (*fields, "GPU, paper scale", "this build"),
                    )
                )
            if found and name.startswith("fig10"):
                _fig10_figure(found, p, root.name)
            if found and name == "fig17":
                cols, titles = wall_panels(found)
                figures.figure(cols, titles, f"Figure 17 from {root.name} (paper scale)", x="time", ylim=(0.8, 2.5))
            line = judge_line(name, found, p, root.name)
            rows.append((root.name, hardware, name, line.split(": ", 1)[1]))
    if not dirs:
        rows.append(
            ("none", "-", ", ".join(names), "no recorded results are committed (nothing under results/recorded/)")
        )
    return Table(("machine", "hardware", "sweep", "recorded runs"), rows)
