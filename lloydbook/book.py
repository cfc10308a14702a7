"""Starting a chapter: :func:`setup` returns a :class:`Chapter` that knows its key, its settings at the active
scale and the paper's, glues under its prefix, derives seeds by name and owns its claims (``ch.rows``).

A chapter's key is its notebook's name without the number, ``_`` written ``-`` (``book/06_many_steps.ipynb``
is ``many-steps``): the prefix of its glue names and claim ids (``tests/lloydbook/test_book.py`` checks it)::

    ch = book.setup("shapes")        # seeds everything from LLOYD_SEED, prints scale, device, seed; starts the rows
    P, PAPER = ch.P, ch.paper        # the chapter's settings at LLOYD_SCALE and at the paper's scale
    X, C0 = L.sample_tasks(..., seed=ch.seed("gap-tasks"))
    ch.glue("gap-ne-first", gap[0])  # glued as "shapes-gap-ne-first", not displayed

Every random draw of a chapter derives from its seed value, ``LLOYD_SEED`` (default 0, read by :func:`setup` and
nowhere else): ``ch.seed(name)`` for the draws the chapter makes, and ``ch.judge`` for the bootstrap of the evidence
it decides claims on. Trained runs are data: their seeds are settings, not draws, and do not change with it.
"""

from __future__ import annotations

import os
import random
import re

import numpy as np
import torch

import lloydlib
from lloydlib.checks import check_choice, check_int

from . import claims, expectations
from .claims import evidence
from .claims.seeds import SeededRows
from .glue import glue
from .scales import SCALE_NAMES, Params, params, scale
from .sweeps import at_paper
from .tables import departures, setting_text, settings_table

__all__ = [
    "SCALE_NAMES",
    "CHAPTERS",
    "Chapter",
    "Params",
    "scale",
    "params",
    "device",
    "seed",
    "lloyd_seed",
    "glue",
    "setup",
]

#: chapter key -> the key of its settings in :data:`lloydbook.scales.SCALES` (chapter 05 reads chapter 04's)
CHAPTERS = {
    "lloyd": "lloyd",
    "construction": "construction",
    "leanness": "leanness",
    "learning": "learning",
    "shapes": "learning",
    "many-steps": "steps",
    "families": "families",
    "landscapes": "landscapes",
    "lemmas": "lemmas",
    "attention-clustering": "quantization",
}


def device() -> torch.device:
    """cuda when available, else cpu."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def seed(value: int = 0) -> int:
    """Seed python, numpy and torch (all devices) with ``value`` (0 <= value < 2**32, numpy's range)."""
    value = check_int("value", value, 0, 2**32 - 1)
    random.seed(value)
    np.random.seed(value)
    torch.manual_seed(value)
    return value


def lloyd_seed() -> int:
    """The chapters' seed value: the environment variable ``LLOYD_SEED``, a non-negative integer below 2**32
    (default 0); anything else raises a ValueError naming it, what was expected and what came."""
    text = os.environ.get("LLOYD_SEED", "0")
    if not re.fullmatch(r"[0-9]+", text.strip()) or int(text) >= 2**32:
        raise ValueError(f"LLOYD_SEED must be a non-negative integer below 2**32 (default 0), got {text!r}")
    return int(text)


class Chapter:
    """A running chapter: its ``key``, settings ``P`` (at the active scale) and ``paper`` (at the paper's), its
    ``rows`` (a :class:`lloydbook.claims.SeededRows`: the rows it records and its ``seed_value``), its ``judge`` of
    stated parts (:class:`lloydbook.claims.evidence.Judge`, drawing from that seed), and the glue, seeds and claims
    that carry its key. Made by :func:`setup`."""

    def __init__(self, key: str, seed_value: int = 0):
        if not isinstance(key, str):
            raise TypeError(f"chapter must be a chapter key (str), one of {sorted(CHAPTERS)}; got {key!r}")
        self.key = check_choice("chapter", key, CHAPTERS)
        seed_value = check_int("seed_value", seed_value, 0, 2**32 - 1)
        self.P = params(CHAPTERS[key])
        self.paper = params(CHAPTERS[key], "paper")
        self.rows = SeededRows(self.key, seed_value)
        self.judge = evidence.Judge.at(seed_value, self.key)
        self._expected: dict[str, str] = {}
        self._post_hoc: dict[str, bool] = {}

    @property
    def scale(self) -> str:
        return self.P.scale

    @property
    def seed_value(self) -> int:
        """The chapter's seed value (``LLOYD_SEED`` in :func:`setup`), which its rows own."""
        return self.rows.seed_value

    def name(self, name: str) -> str:
        """The glue name ``<key>-<name>`` (``name`` without the prefix)."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"name must be a non-empty glue name without the chapter prefix, got {name!r}")
        if name.startswith(self.key + "-"):
            raise ValueError(f"name must not repeat the chapter prefix {self.key + '-'!r}, got {name!r}")
        return f"{self.key}-{name}"

    def glue(self, name: str, value, display: bool = False) -> None:
        """Glue ``value`` as ``<key>-<name>`` (not displayed unless ``display``). Returns None, so that a cell that
        ends with it shows nothing."""
        glue(self.name(name), value, display=display)

    def glue_many(self, values: dict) -> None:
        """Glue every ``name -> value`` of ``values`` (names without the prefix), none displayed. Returns None,
        so that a cell that ends with it shows nothing (a returned dict would be displayed raw)."""
        if not isinstance(values, dict):
            raise TypeError(f"values must be a dict of glue name -> value, got {type(values).__name__}")
        names = {self.name(name): value for name, value in values.items()}  # every name checked before any glue
        for name, value in names.items():
            glue(name, value, display=False)

    def seed(self, name: str) -> int:
        """A seed (0 <= seed < 2**31) for the random draw called ``name`` in this chapter, from its seed value:
        the same at every run and scale, unrelated to every other name's (:meth:`lloydbook.claims.SeededRows.seed`,
        :func:`lloydlib.training.derive_seed`)."""
        return self.rows.seed(name)

    #: the claim id ``<key>-<name>``, formed and checked as a glue name
    claim_id = name

    def record(self, name: str, **row) -> None:
        """:meth:`lloydbook.claims.Rows.record` of the claim ``<key>-<name>`` into this chapter's rows (``ch.rows``
        holds it); glues its verdict as ``v-<name>`` (for the prose). Returns None, so that a cell that ends with it
        shows no bookkeeping."""
        if row.get("verdict") != "background":
            self._check_expected(name, row.get("verdict"), row.get("source", ""))
        claim = self.rows.record(self.claim_id(name), **row, post_hoc=self._post_hoc.get(name, False))
        self.glue(f"v-{name}", claim.verdict)

    def decide(self, name: str, **row) -> None:
        """:func:`lloydbook.claims.evidence.decide` of the claim ``<key>-<name>`` (its verdict stated beforehand
        as ``expected``, its ``evidence`` parts judged, its ``setting``) into this chapter's rows; glues the
        verdict as ``v-<name>``. Returns None (the row is in ``ch.rows``)."""
        self._check_expected(name, row.get("expected"), row.get("source", ""))
        evidence.decide(self.claim_id(name), **row, into=self.rows, post_hoc=self._post_hoc.get(name, False))
        self.glue(f"v-{name}", row["expected"])

    def expect(self, name: str, runs=None, *, paper_setting: bool | None = None) -> str:
        """The verdict the claim ``<key>-<name>`` expects, stated before its evidence is computed
        (:mod:`lloydbook.expectations`): the paper's statement when the claim is decided at the paper's setting,
        else the pilot's, if one is stated (a pilot on the claim's own runs marks its row post hoc). Give the
        ``runs`` (or configs) the claim reads, at the paper's setting when every one is a config of the paper-scale
        sweeps (:func:`lloydbook.sweeps.at_paper`), or, for a claim that reads no training run, ``paper_setting``.
        ``decide`` and ``record`` in the chapters with expectations refuse a claim whose expectation was not asked
        for first."""
        if (runs is None) == (paper_setting is None):
            raise ValueError(f"give exactly one of runs and paper_setting for claim {self.claim_id(name)!r}")
        if runs is not None:
            paper_setting = at_paper(runs)
        elif not isinstance(paper_setting, bool):
            raise TypeError(f"paper_setting must be a bool, got {paper_setting!r}")
        self._expected[name] = expectations.expected(self.claim_id(name), paper_setting)
        self._post_hoc[name] = expectations.post_hoc(self.claim_id(name), paper_setting)
        return self._expected[name]

    def at_paper(self, *names: str) -> bool:
        """Whether this scale's settings ``names`` (keys of ``P``) are the paper's (``paper``): the
        ``paper_setting`` of a claim that reads no training run."""
        if not names:
            raise ValueError("names must name at least one setting of the chapter")
        unknown = [n for n in names if n not in self.P or n not in self.paper]
        if unknown:
            raise ValueError(f"names must be settings of chapter {self.key!r} (keys of P), got {unknown}")
        return all(self.P[n] == self.paper[n] for n in names)

    def _check_expected(self, name: str, verdict, source: str) -> None:
        if self.key not in expectations.CHAPTERS:
            return
        cid = self.claim_id(name)
        if name not in self._expected:
            raise ValueError(f"claim {cid!r}: state its expectation with ch.expect({name!r}, ...) before deciding it")
        if verdict != self._expected[name]:
            raise ValueError(
                f"claim {cid!r} is decided expecting {verdict!r}, but ch.expect stated {self._expected[name]!r}"
            )
        of_paper = expectations.EXPECTATIONS[cid].of_paper
        if str(source).startswith("beyond the paper") == of_paper:
            raise ValueError(
                f"claim {cid!r}: its source {source!r} and lloydbook.expectations (of_paper={of_paper}) disagree on "
                "whether it is the paper's"
            )

    def open(self, name: str, **row) -> None:
        """:meth:`lloydbook.claims.Rows.open_row` ``<key>-<name>`` in this chapter's rows: a paper statement this
        build does not decide, with ``decides`` (the setting and command that would). Glues "open" as
        ``v-<name>``. Returns None (the row is in ``ch.rows``)."""
        open_row = self.rows.open_row(self.claim_id(name), **row)
        self.glue(f"v-{name}", open_row.verdict)

    #: a claim's setting as text: ``setting(n=32, d=[4, 16], k=6, steps=6000, seeds=10)`` is
    #: ``"n=32, d in {4, 16}, k=6; 6,000 steps; 10 seeds"``
    setting = staticmethod(setting_text)

    def settings(self, rows) -> object:
        """The settings table of rows ``(setting, paper, this build)``; glues ``ndepart`` (rows that depart
        from the paper), ``nrows`` and ``scale``. Returns the table (shown as a cell's last value)."""
        rows = [tuple(r) for r in rows]
        bad = [i for i, r in enumerate(rows) if len(r) != 3]
        if bad:
            raise ValueError(f"rows must be (setting, paper, this build) triples; rows {bad} are not: {rows[bad[0]]!r}")
        self.glue_many({"ndepart": len(departures(rows)), "nrows": len(rows), "scale": self.scale})
        return settings_table(rows)

    def table(self) -> None:
        """The chapter's claims table (:func:`lloydbook.claims.table` of its rows): the last code cell. In a chapter
        with expectations, every claim :mod:`lloydbook.expectations` states must have a row by then (a ValueError
        names the missing ones): a claim stated beforehand is never silently dropped."""
        stated = expectations.CHAPTERS.get(self.key, {})
        have = {r.id for r in self.rows.rows()}
        missing = [name for name in stated if self.claim_id(name) not in have]
        if missing:
            raise ValueError(
                f"chapter {self.key!r} has no row for the claims it states in lloydbook.expectations: {missing}"
            )
        claims.table(self.rows)

    def __repr__(self) -> str:
        return f"Chapter({self.key!r}, scale={self.scale!r})"


def setup(chapter: str, seed_value: int | None = None) -> Chapter:
    """Start a chapter: seed everything, print the scale, device and seed, return its :class:`Chapter`.

    The chapter's seed value is ``seed_value``, by default (None) the environment's ``LLOYD_SEED``
    (:func:`lloyd_seed`); python's, numpy's and torch's global generators are seeded with it too.
    """
    source = "LLOYD_SEED" if seed_value is None else "seed_value"
    ch = Chapter(chapter, lloyd_seed() if seed_value is None else seed_value)
    seed(ch.seed_value)
    print(
        f"lloydlib {lloydlib.__version__} | scale={ch.scale} (LLOYD_SCALE) | device={device()} "
        f"| torch {torch.__version__} | seed={ch.seed_value} ({source})"
    )
    return ch
