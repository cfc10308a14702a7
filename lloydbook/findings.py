"""A finding of a paper, stated once and decided on whatever runs are at hand.

A figure's module states each finding once, as a :class:`Part` of the runs it reads; the same parts are decided on
this build's runs, on a sweep recorded at the paper's own setting over many sittings (:class:`RecordedSweep`,
:func:`recorded_parts`) and on a paper-scale sweep once a machine recorded it (:func:`on_paper_sweep`), so no
statement or evidence code exists twice. :func:`decide` makes a part a chapter's row: a claim, or an open row where
it decides nothing (:func:`undecided`).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from itertools import product

import numpy as np
from IPython.display import Markdown

from lloydlib import training

from .claims.evidence import Evidence, verdict_of
from .claims.render import html_text
from .learning import at, paper_decides, setting_of
from .sweeps import at_paper, configs_of, paper_sweeps, recorded_configs, sweep_configs
from .sweeps import recorded as recorded_runs
from .sweeps import tiers as sweep_tiers
from .tables import Table, fmt_list

__all__ = [
    "Part",
    "FIELDS",
    "SEED_SETS",
    "Recorded",
    "by_seed",
    "nan_as_inf",
    "decide",
    "undecided",
    "recorded_groups",
    "seeds_text",
    "missing_text",
    "not_evaluated",
    "not_recorded",
    "recorded_parts",
    "on_paper_sweep",
    "RecordedSweep",
    "evidence_code",
    "setting_pairs",
]

#: the config fields a learning claim's setting names (:func:`lloydbook.learning.setting_of`)
FIELDS = ("n", "d", "k", "tau", "embedding", "loss")
#: the seed sets a recorded sweep's findings are decided on, the largest first (its tiers train seeds 0-4, then 5-9)
SEED_SETS = (tuple(range(10)), tuple(range(5)))


@dataclass(frozen=True)
class Part:
    """One finding on one set of runs: its ``statement`` (without where it was decided), the paper's value
    ``paper``, the ``runs`` it reads and its ``evidence`` (a list of :class:`lloydbook.claims.evidence.Evidence`);
    ``unmet``, why the finding's premise fails on these runs ("" when it holds), which makes it an open row
    whatever its evidence reads."""

    statement: str
    paper: str
    runs: list
    evidence: list
    unmet: str = ""


def by_seed(a: list, b: list) -> tuple[list, list]:
    """Two settings' runs, checked to be the same seeds in the same order (for a paired comparison); runs
    without a config (made-up ones) are taken in the order given."""
    seeds = [[getattr(getattr(r, "config", None), "seed", i) for i, r in enumerate(x)] for x in (a, b)]
    if len(a) != len(b) or seeds[0] != seeds[1]:
        raise ValueError(f"a paired comparison needs the same seeds on both sides, got {seeds[0]} and {seeds[1]}")
    return a, b


def nan_as_inf(values) -> np.ndarray:
    """Per-seed values with NaN (a statistic of a diverged run, e.g. inf - inf) read as +inf."""
    v = np.asarray(values, dtype=float)
    return np.where(np.isnan(v), np.inf, v)


def _where(runs, paper_setting: dict) -> str:
    configs = configs_of(runs)
    ours = {f: list(dict.fromkeys(getattr(c, f) for c in configs)) for f in paper_setting}
    ours = {f: sorted(v) if all(isinstance(x, (int, float)) for x in v) else v for f, v in ours.items()}
    return at(ours, paper_setting)


def decide(
    ch, name: str, part: Part, *, source: str, paper_setting: dict, decides: str, lead: str = "", fields=FIELDS, **more
):
    """Decide ``part`` as the chapter ``ch``'s row ``name`` (without the chapter's prefix): a claim, or an open row
    naming ``decides`` where :func:`undecided`. Its statement is ``lead``, then "At ... (the paper: ...): " for the
    fields of ``paper_setting`` (field -> the paper's value, e.g. ``dict(n=512, steps=10000)``; None, for a finding
    beyond the paper, opens with nothing) where the runs differ from the paper, then the part's statement; its
    setting is that of the runs (``fields`` and ``more``, e.g. ``tasks=64``)."""
    if not isinstance(part, Part):
        raise TypeError(f"part must be a findings.Part, got {type(part).__name__}")
    beyond = str(source).startswith("beyond the paper")
    if not (paper_setting is None and beyond) and (not isinstance(paper_setting, dict) or not paper_setting):
        raise ValueError(
            "paper_setting must map config fields to the paper's values (None only for a finding beyond the paper), "
            f"got {paper_setting!r}"
        )
    opening = "" if paper_setting is None else _where(part.runs, paper_setting)
    # at this finding's paper setting: runs of the paper-scale sweeps whose fields are its paper values (no opening),
    # not models of another figure's paper setting (chapter 06 reads Fig. 10a's n=512 models for Figs. 6, 7 and 12)
    at_setting = at_paper(part.runs) and not opening
    statement, expected = lead + opening + part.statement, ch.expect(name, paper_setting=at_setting)
    setting = setting_of(part.runs, fields, **more)
    row = dict(statement=statement, source=source, paper=part.paper)
    why = undecided(part)
    if why:
        ch.open(name, **row, decides=decides, ours=f"{why[0]} at {setting}: {why[1]}")
    else:
        ch.decide(name, **row, expected=expected, evidence=part.evidence, setting=setting)


def undecided(part: Part) -> tuple[str, str] | None:
    """Why ``part`` decides nothing on its runs: ``("not decided", why its premise fails)`` (:attr:`Part.unmet`),
    ``("undetermined", each piece's outcome and numbers)`` where a piece of its evidence is undetermined (an interval
    across its boundary), else None: an open row, never a failed check."""
    if part.unmet:
        return "not decided", part.unmet
    if verdict_of(part.evidence) == "undetermined":
        return "undetermined", "; ".join(f"{e.part}: {e.outcome} ({e.text})" for e in part.evidence)
    return None


@dataclass(frozen=True)
class Recorded:
    """What a partly recorded sweep can decide: ``groups`` maps a setting's key to the runs of ``seeds`` in seed
    order, for the values ``values`` of the figure's axis whose every setting holds all of ``seeds``; ``seeds`` is
    the largest of the seed sets for which the smallest and the largest value are complete (``()`` and no groups
    when not even one is)."""

    groups: dict
    seeds: tuple
    values: tuple


def recorded_groups(runs, fields, cells: dict, seed_sets=SEED_SETS) -> Recorded:
    """The complete part of the recorded ``runs`` (:class:`Recorded`): ``fields`` are the config fields of a setting's
    key, ``cells`` maps each value of the figure's axis (tau for Fig. 10) to the keys of its settings."""
    if not isinstance(cells, dict) or not cells:
        raise ValueError(f"cells must map each value of the axis to the keys of its settings, got {cells!r}")
    have: dict = {}
    for r in runs:
        have.setdefault(tuple(getattr(r.config, f) for f in fields), {})[r.config.seed] = r
    values = sorted(cells)

    def complete(v, seeds):
        return all(s in have.get(key, {}) for key in cells[v] for s in seeds)

    for seeds in seed_sets:
        if complete(values[0], seeds) and complete(values[-1], seeds):
            done = tuple(v for v in values if complete(v, seeds))
            groups = {key: [have[key][s] for s in seeds] for v in done for key in cells[v]}
            return Recorded(groups, tuple(seeds), done)
    return Recorded({}, (), ())


def seeds_text(seeds) -> str:
    """Seeds in words: ``"seeds 0-4"`` for a run of three or more, else ``"seed 3"`` or ``"seeds 1, 4"``."""
    seeds = sorted(seeds)
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"seeds {seeds[0]}-{seeds[-1]}"
    return ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(map(str, seeds))


def missing_text(configs, axis: str) -> str:
    """The ``configs`` in words, grouped by the value of the field ``axis``, embedding and loss: ``"tau=1 OH:NE
    seeds 0-4; tau=0.1 BN:L2 seed 3"`` (settings in the order given); "none" for none."""
    groups: dict = {}
    for c in configs:
        groups.setdefault((getattr(c, axis), c.embedding, c.loss), []).append(c.seed)
    if not groups:
        return "none"
    return "; ".join(f"{axis}={v:g} {e}:{l} {seeds_text(seeds)}" for (v, e, l), seeds in groups.items())


def not_evaluated(sources: dict, runs, why: str, statements: dict | None = None) -> dict[str, Part]:
    """The findings ``sources`` (name -> where the paper states it) left undecided on ``runs`` (the runs or configs
    they would read) for the reason ``why``: name -> a :class:`Part` whose one piece of evidence ("the models it
    reads") is undetermined and says why (an open row, never a verdict). ``statements`` (name -> (statement, the
    paper's value), as the figure's module words the finding) gives each row its words; without it a row is named
    by its source and name."""
    runs, statements = list(runs), statements or {}
    if not runs or not str(why).strip():
        raise ValueError(f"runs and why must say what is not evaluated and why, got {len(runs)} runs and {why!r}")
    if not isinstance(statements, dict):
        raise TypeError(f"statements must be a dict (name -> (statement, the paper's value)), got {statements!r}")
    return {
        name: Part(
            *statements.get(name, (f"{source}: {name}", "as on this build's models")),
            runs,
            [Evidence("the models it reads", "undetermined", why)],
        )
        for name, source in sources.items()
    }


def not_recorded(sources: dict, lacking, axis: str = "tau", statements: dict | None = None) -> dict[str, Part]:
    """The findings ``sources`` where the recorded models they read are not all at hand (``lacking``, their configs,
    named by :func:`missing_text` on ``axis``): :func:`not_evaluated` naming them (worded by ``statements``)."""
    lacking = list(lacking)
    if not lacking:
        raise ValueError("lacking must hold the configs of the models not at hand, got none")
    return not_evaluated(sources, lacking, f"not recorded in this checkout: {missing_text(lacking, axis)}", statements)


def recorded_parts(sweep, axis: str, key, parts_of, statements: dict, *, every=(), needs=(), reads=None) -> dict:
    """A figure's findings on the recorded ``sweep`` (:class:`RecordedSweep`) over the values of its field ``axis``:
    name -> :class:`Part`, one per finding of ``statements`` (name -> (statement, the paper's value)).

    The runs are grouped by the config fields ``key`` (:func:`recorded_groups`, every setting of the sweep's values);
    where the values decided hold ``needs``, ``parts_of(groups, values)`` gives the findings' parts. A found finding
    stands unless it reads every value of the axis (its name in ``every``) and not all are decided. Any other is a
    Part reading the first tier's configs (every tier's, for a name in ``every``; of those, the ones ``reads[name]``,
    a test of a config, keeps) whose one piece of evidence is undetermined and names the missing configs among them
    (an open row, never a verdict, at the setting it will be decided at)."""
    values = sweep.values(axis)
    cells = {v: list(product(*([v] if f == axis else sweep.values(f) for f in key))) for v in values}
    rec = recorded_groups(sweep.runs, key, cells)
    found = parts_of(rec.groups, rec.values) if rec.values and set(needs) <= set(rec.values) else {}
    out, reads = {}, reads or {}
    for name, (statement, paper) in statements.items():
        if name in found and (rec.values == tuple(values) or name not in every):
            out[name] = found[name]
            continue
        runs = [c for tier in sweep.tiers for c in tier] if name in every else list(sweep.tiers[0])
        runs = [c for c in runs if reads.get(name, bool)(c)]
        lacking = [c for c in sweep.missing if c in runs]
        text = f"{len(runs) - len(lacking)} of {len(runs)} recorded; missing: {missing_text(lacking, axis)}"
        out[name] = Part(statement, paper, runs, [Evidence("the runs it reads", "undetermined", text)])
    return out


def on_paper_sweep(ch, sweep: str, fields, parts_of, sources: dict, statements: dict, suffix: str = "-paper") -> str:
    """Decide a figure's findings on the paper-scale sweep ``sweep`` (one of :data:`lloydbook.sweeps.PAPER_SWEEPS`), as
    the machines under ``results/recorded/`` recorded it, as the chapter ``ch``'s rows ``<name><suffix>``.

    ``sources`` maps each row name to where the paper states its finding (one beyond the paper is left out: the paper
    states nothing to expect). Once every run is recorded, ``parts_of(G)`` on ``G = lloydlib.training.group(runs,
    *fields)`` gives row name -> :class:`Part`, each decided by :func:`decide`; until then each row is open, in the
    words of ``statements`` (row name -> (statement, the paper's value)), saying how many runs are recorded. Returns
    what came of it, in words."""
    found = {name: specs for name, specs, _ in paper_sweeps()}
    if sweep not in found:
        raise ValueError(f"sweep must be one of the paper-scale sweeps {list(found)}, got {sweep!r}")
    if not callable(parts_of) or not isinstance(sources, dict) or not sources:
        raise TypeError(
            f"parts_of must be a function of the grouped runs and sources a dict of row names, got "
            f"{type(parts_of).__name__} and {sources!r}"
        )
    paper = {n: src for n, src in sources.items() if not str(src).startswith("beyond the paper")}
    if not isinstance(statements, dict):
        raise TypeError(f"statements must be a dict (row name -> (statement, paper's value)), got {statements!r}")
    if not set(paper) <= set(statements):
        raise ValueError(f"statements must word the rows {sorted(paper)}, got {statements!r}")
    configs = sweep_configs(found[sweep])
    runs, missing = recorded_configs(configs)
    if runs and not missing:
        parts = parts_of(training.group(runs, *fields))
        if not set(paper) <= set(parts) <= set(sources):
            raise ValueError(f"parts_of must give the rows {sorted(paper)} of sources (no other), got {sorted(parts)}")
        said = f"complete ({len(runs)} runs, trained on {_trained_on(runs)})"
    else:
        said = f"{len(runs)} of {len(configs)} runs recorded"
        why = Evidence("the sweep's runs", "undetermined", f"{said} under results/recorded/")
        parts = {name: Part(*statements[name], configs, [why]) for name in paper}
    where = dict(lead=f"At the paper's setting (the sweep {sweep}): ", decides=paper_decides(sweep, fields))
    for name in paper:  # the runs are the paper's setting: its n and steps, so no opening "At ... (the paper: ...)"
        own = {f: sorted({getattr(c, f) for c in configs_of(parts[name].runs)}) for f in ("n", "steps")}
        decide(ch, name + suffix, parts[name], source=paper[name], paper_setting=own, **where)
    return f"{said}: rows {', '.join(ch.claim_id(n + suffix) for n in paper)}"


def _trained_on(runs) -> str:
    """The model in each run's ``info["hardware"]`` (``"AMD EPYC"``), "a machine that did not record its hardware"
    where it is missing, "no machine yet" for no runs."""
    named = {str(r.info.get("hardware") or "a machine that did not record its hardware").split(",")[0] for r in runs}
    return fmt_list(sorted(named)) if named else "no machine yet"


@dataclass(frozen=True)
class RecordedSweep:
    """A sweep recorded over many sittings under ``results/recorded/``, as a chapter decides it: ``runs``, the runs
    recorded, and ``missing``, the configs not recorded yet (:func:`lloydbook.sweeps.recorded`); ``tiers``, its
    configs in priority order (:func:`lloydbook.sweeps.tiers`). :meth:`read` reads it."""

    name: str
    runs: list
    missing: list
    tiers: list

    @classmethod
    def read(cls, name: str, **where) -> RecordedSweep:
        """The recorded sweep ``name`` (with ``where``, the configs matching) as the checkout's stores hold it."""
        return cls(name, *recorded_runs(name, **where), sweep_tiers(name, **where))

    def values(self, field: str) -> list:
        """The values of the config field ``field`` over every tier: numbers ascending, names in the sweep's order."""
        if any(not hasattr(c, field) for tier in self.tiers for c in tier[:1]):
            raise ValueError(f"field must be a config field of the sweep {self.name!r}, got {field!r}")
        seen = list(dict.fromkeys(getattr(c, field) for tier in self.tiers for c in tier))
        return seen if any(isinstance(v, str) for v in seen) else sorted(seen)

    def fixed(self, field: str):
        """The one value of ``field`` over the sweep; a ValueError where the sweep varies it."""
        vals = self.values(field)
        if len(vals) != 1:
            raise ValueError(f"field must be one that the sweep {self.name!r} holds fixed, got {field!r} with {vals}")
        return vals[0]

    @property
    def on(self) -> str:
        """The machines that trained its runs, in words (``"AMD EPYC, NVIDIA H200"``)."""
        return _trained_on(self.runs)

    @property
    def decides(self) -> str:
        """What would decide an open row on it: the command that records the rest, or, once every run is recorded and
        the row is open all the same, more seeds than the sweep's."""
        if self.missing:
            return f"python -m lloydbook.record {self.name} --budget SECONDS --workers 1, then commit results/recorded/"
        seeds = {c.seed for tier in self.tiers for c in tier}
        return (
            f"more seeds than the {len(seeds)} of {self.name} ({seeds_text(seeds)}), every run of which is recorded: on "
            "them this finding decides nothing (the row says why)"
        )

    def counts(self, prefix: str) -> dict:
        """``{"<prefix>-recorded": runs recorded, "<prefix>-runs": runs in all}``, for a chapter's glue."""
        return {f"{prefix}-recorded": len(self.runs), f"{prefix}-runs": len(self.runs) + len(self.missing)}

    def drawn(self, axis: str) -> tuple[dict, list]:
        """``(G, values)``: its runs grouped by ``(axis value, embedding, loss)`` (:func:`lloydlib.training.group`)
        and the values of ``axis`` at which every embedding x loss of the sweep holds a run (any seeds)."""
        G = training.group(self.runs, axis, "embedding", "loss") if self.runs else {}
        cells = [(e, l) for e in self.values("embedding") for l in self.values("loss")]
        return G, [v for v in self.values(axis) if all((v, *c) in G for c in cells)]


def setting_pairs(rows, names, suffix: str = "-n512") -> tuple[Table, str]:
    """The verdict of each claim ``<name>`` of ``rows`` (a chapter's :class:`lloydbook.claims.Rows`) beside that of
    ``<name><suffix>``, the same finding decided at another setting (the paper's own, say): a :class:`Table`
    (statement, then each row's verdict and what it read) and, in words, the names whose verdicts differ (an open
    row differs from no verdict: it decides nothing), or "none". Names are without the chapter prefix."""
    by_id = {r.id: r for r in rows.rows()}
    table, differ = [], []
    for name in names:
        ids = (f"{rows.chapter}-{name}", f"{rows.chapter}-{name}{suffix}")
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise ValueError(f"names must name rows of chapter {rows.chapter!r} at both settings; missing {missing}")
        a, b = (by_id[i] for i in ids)
        table.append([f"<code>{name}</code>", a.verdict, b.verdict, html_text(b.ours)])
        if "open" not in (a.verdict, b.verdict) and a.verdict != b.verdict:
            differ.append(f"{name} ({a.verdict} -> {b.verdict})")
    header = ("statement", "this build's verdict", f"verdict at {suffix.strip('-')}", f"what {suffix.strip('-')} read")
    return Table(header, table), "; ".join(differ) or "none"


def evidence_code(fn) -> Markdown:
    """The source of ``fn`` (a function that states findings, such as :func:`lloydbook.fig10.parts`) as a Python
    code block in Markdown, which the book renders highlighted: the evidence code a chapter ran, not a copy."""
    if not callable(fn):
        raise TypeError(f"fn must be the function that states the findings, got {type(fn).__name__}")
    return Markdown(f"```python\n{inspect.getsource(fn).rstrip()}\n```")
