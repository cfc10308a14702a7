"""A chapter's rows: the claims it checks (:meth:`Rows.record`) and the paper statements it cannot decide
(:meth:`Rows.open_row`).

Rows are data (:class:`Row`, turned into JSON by :meth:`Row.to_dict`); the chapter's table and the Scorecard
are drawn from them (:mod:`lloydbook.claims.render`, :mod:`lloydbook.claims.sphinx`). Each chapter owns its
rows, a :class:`Rows` (``ch.rows`` of :class:`lloydbook.book.Chapter`), and whatever records a row is given them.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["VERDICTS", "OPEN", "POST_HOC", "Row", "Rows", "counts", "slug"]

#: the verdicts of a claim (defined for readers in book/intro.md)
VERDICTS = ("reproduced", "partly", "not reproduced", "beyond the paper", "background")
#: what an open row shows instead of a verdict: a paper statement this build does not decide
OPEN = "open"
#: what the counts call a claim whose expected verdict was set after its own runs or models were read: counted apart
#: from the claims whose expectation was stated blind, whatever its verdict
POST_HOC = "post hoc"

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Row:
    """One row of a chapter's table; ``paper`` and ``ours`` are already text.

    ``kind`` is "claim" (``verdict`` one of :data:`VERDICTS`, its check held when it was recorded) or "open"
    (``verdict`` is :data:`OPEN`; ``decides`` names the setting and the command that would decide it). ``setting`` is
    where the claim was decided (n, d, k, steps, seeds ...), or "" (a theorem checked exactly, say). ``post_hoc``: the
    expected verdict was set after the claim's own runs or models had been read; tables mark it, counts keep it apart.
    """

    id: str
    statement: str
    source: str
    paper: str
    ours: str
    verdict: str
    setting: str = ""
    kind: str = "claim"
    decides: str = ""
    post_hoc: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Row:
        """The row of :meth:`to_dict`'s dict; unknown or missing fields raise a ValueError naming them."""
        names = set(cls.__dataclass_fields__)
        required = {"id", "statement", "source", "paper", "ours", "verdict"}
        if not isinstance(data, dict) or not required <= set(data) <= names:
            got = sorted(data) if isinstance(data, dict) else type(data).__name__
            raise ValueError(
                f"a claims row must have the fields {sorted(required)} (and at most {sorted(names)}), got {got}"
            )
        return cls(**data)


def slug(text: str) -> str:
    """A verdict as a glue-key and CSS-class word: spaces become hyphens."""
    return text.replace(" ", "-")


def _check_text(name: str, value, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} {value!r}")
    if not empty and not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return value.strip()


def _check_key(name: str, value) -> str:
    _check_text(name, value, empty=True)  # a str
    if not _ID.match(value):
        raise ValueError(
            f"{name} must be lowercase letters and digits joined by single hyphens "
            f"(like 'lloyd-monotone'), got {value!r}"
        )
    return value


def _format_value(name: str, value) -> str:
    """A claim's value as text: strings as given, integers exactly, other reals with 4 significant digits."""
    if isinstance(value, str):
        return _check_text(name, value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a str or a real number (int, float), got {type(value).__name__} "
            f"{value!r}; for a tensor or array pass float(x) or a formatted string"
        )
    if isinstance(value, numbers.Integral):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}; a claim cannot rest on NaN or infinity")
    return f"{value:.4g}"


def _common(key: str, id, statement, source, paper, ours) -> dict:
    """The checked fields every row of the chapter ``key`` has."""
    id = _check_key("id", id)
    if not id.startswith(key + "-"):
        raise ValueError(f"id must start with the chapter key and a hyphen ({key + '-'!r}), got {id!r}")
    return dict(
        id=id,
        statement=_check_text("statement", statement),
        source=_check_text("source", source),
        paper=_format_value("paper", paper),
        ours=_format_value("ours", ours),
    )


def counts(of: list[Row]) -> dict[str, int]:
    """Of the rows ``of``, the claims stated blind per verdict (every verdict present, zeros included), the
    post-hoc claims whatever their verdict (:data:`POST_HOC`) and the open rows (:data:`OPEN`)."""
    out = {v: sum(r.kind == "claim" and not r.post_hoc and r.verdict == v for r in of) for v in VERDICTS}
    out[POST_HOC] = sum(r.kind == "claim" and r.post_hoc for r in of)
    out[OPEN] = sum(r.kind == OPEN for r in of)
    return out


class Rows:
    """One chapter's rows, keyed by claim id, in recording order: its claims (:meth:`record`) and open rows
    (:meth:`open_row`). ``chapter`` is the chapter's key, which every id starts with."""

    def __init__(self, chapter_key: str):
        self.chapter = _check_key("chapter", chapter_key)
        self._rows: dict[str, Row] = {}

    def _keep(self, row: Row) -> Row:
        old = self._rows.get(row.id)
        if old is not None and (old.statement, old.source) != (row.statement, row.source):
            raise ValueError(
                f"claim id {row.id!r} is already used in chapter {self.chapter!r} by another claim "
                f"({old.statement!r}, {old.source}); ids must be unique"
            )
        self._rows[row.id] = row
        return row

    def record(
        self,
        id: str,
        *,
        statement: str,
        source: str,
        paper,
        ours,
        verdict: str,
        check,
        setting: str = "",
        post_hoc=False,
    ):
        """Assert a claim's check and keep its row.

        ``id`` is unique in the book and starts with the chapter key (``"lloyd-monotone"`` in chapter
        ``lloyd``). ``paper`` and ``ours`` are strings or real numbers (floats are shown with 4 significant
        digits). ``verdict`` is one of :data:`VERDICTS`. ``check`` is a bool: the test of that verdict
        (for "not reproduced", that our measurement contradicts the paper's value by a stated margin).
        ``setting`` says where the claim was decided (e.g. "n=32, d=4, k=6; 6,000 steps; 10 seeds");
        ``post_hoc``, that its expected verdict was set after its own runs or models were read.

        Recording a claim again replaces its row; a second, different claim with the same id raises
        ``ValueError``. A failed check raises ``AssertionError`` naming the claim and both values.
        """
        if not isinstance(verdict, str) or verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {list(VERDICTS)}, got {verdict!r}")
        if not isinstance(post_hoc, bool):
            raise TypeError(f"post_hoc must be a bool, got {post_hoc!r}")
        row = Row(
            **_common(self.chapter, id, statement, source, paper, ours),
            verdict=verdict,
            setting=_check_text("setting", setting, empty=True),
            post_hoc=post_hoc,
        )
        if not isinstance(check, (bool, np.bool_)):
            raise TypeError(
                f"check must be a bool (the test of the verdict), got {type(check).__name__} "
                f"{check!r}; write check=bool(...)"
            )
        if not check:
            raise AssertionError(
                f"claim {row.id!r} failed its check (verdict stated: {row.verdict!r}): "
                f"{row.statement} [{row.source}]; paper: {row.paper}; ours: {row.ours}"
                + (f"; setting: {row.setting}" if row.setting else "")
            )
        return self._keep(row)

    def open_row(self, id: str, *, statement: str, source: str, paper, decides: str, ours: str = "not decided here"):
        """Keep a paper statement this build does not decide, as an open row (not a verdict, never an assertion).

        ``decides`` names the setting that would decide it and the command that trains it (e.g. "n=512,
        10,000 steps, 10 seeds on a GPU: python -m lloydlib train ..."); ``ours`` may say what the build saw
        (e.g. "undetermined at n=32: interval -0.02 to 0.04"). The Scorecard counts open rows apart.
        """
        row = Row(
            **_common(self.chapter, id, statement, source, paper, ours),
            verdict=OPEN,
            kind=OPEN,
            decides=_check_text("decides", decides),
        )
        return self._keep(row)

    def rows(self) -> list[Row]:
        """The rows (claims and open rows), in recording order."""
        return list(self._rows.values())

    def claims(self) -> list[Row]:
        """The checked claims, in recording order."""
        return [r for r in self.rows() if r.kind == "claim"]

    def open_rows(self) -> list[Row]:
        """The open rows, in recording order."""
        return [r for r in self.rows() if r.kind == OPEN]

    def counts(self) -> dict[str, int]:
        """Rows per verdict and ``"open"`` (see :func:`counts`)."""
        return counts(self.rows())

    def __len__(self) -> int:
        return len(self._rows)

    def __repr__(self) -> str:
        return f"Rows({self.chapter!r}, {len(self)} rows)"
