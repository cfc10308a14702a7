"""A finding of a paper, stated once and decided on whatever runs are at hand.

A figure's module (:mod:`lloydbook.fig10`) states each finding of the figure once, as a function of the runs it
reads: given the runs ``G`` of one sweep it returns a :class:`Part` per finding (the statement, the paper's value,
the runs read and the evidence, in the vocabulary of :mod:`lloydbook.claims.evidence`). The same parts are decided
on this build's runs, on a store trained at the paper's own setting, and on a GPU machine's runs, so no statement
or evidence code exists twice. :func:`decide` turns a part into a chapter's row, deriving what every row needs
from the runs it read:

- the opening "At n=32, 6,000 steps (the paper: n=512, 10,000 steps): " where the runs are not at the paper's
  setting (:func:`lloydbook.learning.at`, from the runs' own configs against the paper's values);
- the expected verdict (:meth:`lloydbook.book.Chapter.expect`: the paper's at its setting, else the pilot's);
- the setting (:func:`lloydbook.learning.setting_of`);
- claim or open row: a claim (``ch.decide``, whose check asserts the expected verdict) when no part is
  undetermined, else an open row (never an assertion, never a verdict), as when the finding's premise fails on these
  runs (:attr:`Part.unmet`), with ``decides``, what would decide it.

:func:`setting_pairs` lays the verdicts of one finding at two settings side by side. A chapter whose claim cells
only name a finding shows the code that states it with :func:`evidence_code`: the source that ran, in a collapsed
cell, so the reader can open the evidence behind every row and it cannot drift from what was decided.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
from IPython.display import Markdown

from .claims.evidence import verdict_of
from .claims.render import html_text
from .learning import at, setting_of
from .tables import Table

__all__ = ["Part", "FIELDS", "by_seed", "nan_as_inf", "decide", "evidence_code", "setting_pairs"]

#: the config fields a learning claim's setting names (:func:`lloydbook.learning.setting_of`)
FIELDS = ("n", "d", "k", "tau", "embedding", "loss")


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
    configs = [getattr(r, "config", r) for r in runs]
    ours = {f: list(dict.fromkeys(getattr(c, f) for c in configs)) for f in paper_setting}
    ours = {f: sorted(v) if all(isinstance(x, (int, float)) for x in v) else v for f, v in ours.items()}
    return at(ours, paper_setting)


def decide(
    ch, name: str, part: Part, *, source: str, paper_setting: dict, decides: str, lead: str = "", fields=FIELDS, **more
):
    """Decide ``part`` as the chapter ``ch``'s row ``name`` (without the chapter's prefix): a claim when no part of
    its evidence is undetermined, else an open row naming ``decides``. Its statement is ``lead``, then "At ... (the
    paper: ...): " for the fields of ``paper_setting`` (field -> the paper's value, e.g. ``dict(n=512,
    steps=10000)``; None, for a finding beyond the paper, opens with nothing) where the runs differ from the paper,
    then the part's statement; its setting is that of the runs
    (``fields``, by default :data:`FIELDS`, and ``more``, e.g. ``tasks=64``). Returns None (the row is in
    ``ch.rows``)."""
    if not isinstance(part, Part):
        raise TypeError(f"part must be a findings.Part, got {type(part).__name__}")
    beyond = str(source).startswith("beyond the paper")
    if not (paper_setting is None and beyond) and (not isinstance(paper_setting, dict) or not paper_setting):
        raise ValueError(
            "paper_setting must map config fields to the paper's values (None only for a finding beyond the paper), "
            f"got {paper_setting!r}"
        )
    opening = "" if paper_setting is None else _where(part.runs, paper_setting)
    statement, expected = lead + opening + part.statement, ch.expect(name, part.runs)
    setting = setting_of(part.runs, fields, **more)
    row = dict(statement=statement, source=source, paper=part.paper)
    if part.unmet:
        ch.open(name, **row, decides=decides, ours=f"not decided at {setting}: {part.unmet}")
    elif verdict_of(part.evidence) == "undetermined":
        parts = "; ".join(f"{e.part}: {e.outcome} ({e.text})" for e in part.evidence)
        ch.open(name, **row, decides=decides, ours=f"undetermined at {setting}: {parts}")
    else:
        ch.decide(name, **row, expected=expected, evidence=part.evidence, setting=setting)


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
