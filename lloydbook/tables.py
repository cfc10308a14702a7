"""Small display helpers shared by chapters: an HTML table whose cells may hold math, sympy as TeX, a build's
settings beside the paper's (:func:`settings_table`, :func:`departures`), and settings written as text
(:func:`fmt_list`, :func:`setting_text`)."""

from __future__ import annotations

import sympy as sp

__all__ = ["Table", "tex", "fmt_value", "fmt_list", "departures", "settings_table", "setting_text"]


class Table:
    r"""Rows shown as an HTML table (math in ``\( \)`` is typeset by MathJax), with a plain-text fallback.

    ``header`` is a sequence of column titles; ``rows`` a sequence of rows of the same length, whose
    cells are turned into text with ``str``.
    """

    def __init__(self, header, rows):
        self.header = [str(h) for h in header]
        self.rows = [[str(c) for c in r] for r in rows]
        for i, r in enumerate(self.rows):
            if len(r) != len(self.header):
                raise ValueError(f"rows[{i}] must have {len(self.header)} cells (one per header entry), got {len(r)}")

    def _repr_html_(self) -> str:
        th = "".join(f"<th>{h}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in self.rows)
        return f'<table class="mathjax_process"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'

    def __repr__(self) -> str:
        w = [max(len(x) for x in col) for col in zip(self.header, *self.rows)]
        return "\n".join(" | ".join(x.ljust(n) for x, n in zip(r, w)) for r in [self.header] + self.rows)


def tex(expr) -> str:
    r"""A sympy expression as inline math for :class:`Table` cells: ``\( latex \)``."""
    return r"\(" + sp.latex(expr) + r"\)"


def fmt_value(x) -> str:
    """A float with ``:g``, anything else as ``str(x)``."""
    return f"{x:g}" if isinstance(x, float) else str(x)


def fmt_list(v) -> str:
    """A list or tuple as ``'a, b, c'`` (each with :func:`fmt_value`); anything else as ``str(v)``."""
    if not isinstance(v, (list, tuple)):
        return str(v)
    return ", ".join(fmt_value(x) for x in v)


def departures(rows) -> list:
    """The rows ``(setting, paper, this build)`` whose two values differ as text."""
    return [r for r in rows if str(r[1]) != str(r[2])]


def settings_table(rows) -> Table:
    """The settings of a build beside the paper's: rows ``(setting, paper, this build)``, flagged
    'departs' where they differ as text."""
    return Table(
        ("setting", "paper", "this build", ""),
        [(name, p, o, "departs" if str(p) != str(o) else "") for name, p, o in rows],
    )


def setting_text(**fields) -> str:
    """A claim's setting as text, fields in the order given: ``setting_text(n=32, d=[4, 16], k=6, steps=6000,
    seeds=10)`` is ``"n=32, d in {4, 16}, k=6; 6,000 steps; 10 seeds"`` (``steps`` and ``seeds`` are written
    last, as counts; a list or tuple is a set of values, floats are written with ``:g``)."""
    parts = [
        f"{k} in {{{fmt_list(v)}}}" if isinstance(v, (list, tuple)) else f"{k}={fmt_value(v)}"
        for k, v in fields.items()
        if k not in ("steps", "seeds")
    ]
    text = ", ".join(parts)
    if "steps" in fields:
        text += f"; {fields['steps']:,} steps"
    if "seeds" in fields:
        text += f"; {fields['seeds']} seeds"
    return text
