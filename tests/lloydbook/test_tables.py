"""Tests of lloydbook.tables: an HTML table whose cells may hold math, sympy expressions as inline TeX, a build's
settings beside the paper's, and settings as text."""

import pytest
import sympy as sp

from lloydbook.tables import Table, departures, fmt_list, fmt_value, setting_text, settings_table, tex


def test_html_has_the_header_rows_and_mathjax_class():
    t = Table(["k", r"\(d_E\)"], [[2, r"\(1\)"], [10, 4]])
    html = t._repr_html_()
    assert html.startswith('<table class="mathjax_process">')
    assert "<thead><tr><th>k</th><th>\\(d_E\\)</th></tr></thead>" in html
    assert "<tr><td>2</td><td>\\(1\\)</td></tr><tr><td>10</td><td>4</td></tr>" in html
    assert html.count("<tr>") == 3


def test_cells_become_text():
    t = Table(("a", 1), [(0.5, None)])
    assert t.header == ["a", "1"] and t.rows == [["0.5", "None"]]


def test_plain_text_fallback_aligns_columns():
    t = Table(["name", "v"], [["x", "1000"], ["longer", "2"]])
    assert repr(t).splitlines() == ["name   | v   ", "x      | 1000", "longer | 2   "]


def test_empty_table():
    t = Table(["a", "b"], [])
    assert "<tbody></tbody>" in t._repr_html_() and repr(t).strip() == "a | b"


def test_row_of_the_wrong_length_raises_naming_it():
    with pytest.raises(ValueError, match=r"rows\[1\] must have 2 cells .*got 3"):
        Table(["a", "b"], [[1, 2], [1, 2, 3]])


def test_tex_is_inline_math():
    x = sp.Symbol("x")
    assert tex(x**2 / 2) == r"\(\frac{x^{2}}{2}\)"
    assert tex(sp.Integer(3)) == r"\(3\)"


def test_fmt_list():
    assert fmt_list([0.1, 1.0, 4]) == "0.1, 1, 4"
    assert fmt_list([(4, 0.1)]) == "(4, 0.1)"
    assert fmt_list(32) == "32" and fmt_list(10000.0) == "10000.0"  # not a list: str
    assert fmt_value(10000.0) == "10000" and fmt_value(0.25) == "0.25" and fmt_value("OH") == "OH"


def test_settings_table_and_departures():
    rows = [("n", 512, 64), ("B", 32, 32), ("tau", "1, 0.1", "1, 0.1")]
    assert departures(rows) == [("n", 512, 64)]
    table = settings_table(rows)
    assert isinstance(table, Table)
    assert table.rows == [["n", "512", "64", "departs"], ["B", "32", "32", ""], ["tau", "1, 0.1", "1, 0.1", ""]]


def test_setting_text_writes_sets_and_counts_last():
    assert setting_text(n=32, d=[4, 16], k=6, steps=6000, seeds=10) == "n=32, d in {4, 16}, k=6; 6,000 steps; 10 seeds"
    assert setting_text(seeds=3, tau=0.25, lr=(0.001, 1.0)) == "tau=0.25, lr in {0.001, 1}; 3 seeds"
    assert setting_text() == ""
