"""Small display helpers shared by chapters: an HTML table whose cells may hold math, and sympy as TeX."""

from __future__ import annotations

import sympy as sp

__all__ = ["Table", "tex"]


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
