"""lloydbook.claims.registry and .table: recording, asserting and gluing a chapter's rows; bad input raises clear errors."""

import json

import numpy as np
import pytest
from _support import assert_raises_naming

from lloydbook import book, claims
from lloydbook.claims import render as table_module


def good(**over):
    kw = dict(
        statement="Lloyd's algorithm never increases the k-means objective",
        source="Leaner paper, Alg. 2",
        paper="monotone decrease",
        ours="max increase 0.0e+00",
        verdict="reproduced",
        check=True,
    )
    kw.update(over)
    return kw


@pytest.fixture
def rows():
    """Fresh rows of the chapter "lloyd", as a chapter records into (``ch.rows``)."""
    return claims.Rows("lloyd")


def test_record_keeps_rows_in_order_and_counts(rows):
    rows.record("lloyd-a", **good())
    rows.record("lloyd-b", **good(statement="other", verdict="beyond the paper"))
    rows.record("lloyd-c", **good(statement="third", verdict="not reproduced", paper=0.75, ours=0.5))
    rows.record("lloyd-d", **good(statement="k-means++ bound", verdict="background"))
    kept = rows.claims()
    assert [r.id for r in kept] == ["lloyd-a", "lloyd-b", "lloyd-c", "lloyd-d"]
    assert (
        claims.counts(rows.rows())
        == rows.counts()
        == {
            "reproduced": 1,
            "partly": 0,
            "not reproduced": 1,
            "beyond the paper": 1,
            "background": 1,
            "post hoc": 0,
            "open": 0,
        }
    )
    assert kept[2].paper == "0.75" and kept[2].ours == "0.5"


def test_post_hoc_claims_are_marked_and_counted_apart(rows):
    rows.record("lloyd-a", **good())
    rows.record("lloyd-b", **good(statement="b", verdict="not reproduced", paper=1, ours=0), post_hoc=True)
    n = claims.counts(rows.rows())
    assert n["reproduced"] == 1 and n["not reproduced"] == 0 and n["post hoc"] == 1
    html = claims.ClaimsTable("lloyd", rows.rows())._repr_html_()
    assert 'class="verdict-not-reproduced post-hoc"' in html and "(post hoc)" in html
    assert html.count("(post hoc)") == 1
    assert "not reproduced (post hoc)" in repr(claims.ClaimsTable("lloyd", rows.rows()))
    assert claims.ClaimsTable.from_json(claims.ClaimsTable("lloyd", rows.rows()).to_json()).rows[1].post_hoc
    with pytest.raises(TypeError, match="post_hoc must be a bool"):
        rows.record("lloyd-c", **good(statement="c"), post_hoc="yes")


def test_values_are_formatted(rows):
    r = rows.record("lloyd-a", **good(paper=3, ours=np.float64(2.0 / 3.0)))
    assert (r.paper, r.ours) == ("3", "0.6667")
    r = rows.record("lloyd-b", **good(statement="x", paper=np.int64(75), ours=1e-17))
    assert (r.paper, r.ours) == ("75", "1e-17")


def test_failed_check_names_the_claim_and_values(rows):
    with pytest.raises(AssertionError) as err:
        rows.record("lloyd-a", **good(check=False, paper="75%", ours="74.1%"))
    msg = str(err.value)
    for part in ("lloyd-a", "never increases", "Alg. 2", "75%", "74.1%", "reproduced"):
        assert part in msg
    assert rows.claims() == []  # a failed claim is not recorded


def test_numpy_bool_check_is_accepted(rows):
    rows.record("lloyd-a", **good(check=np.bool_(True)))
    with pytest.raises(AssertionError):
        rows.record("lloyd-b", **good(check=np.bool_(False)))


def test_rerunning_a_cell_replaces_the_row(rows):
    rows.record("lloyd-a", **good(ours="first"))
    rows.record("lloyd-a", **good(ours="second"))
    assert [(r.id, r.ours) for r in rows.claims()] == [("lloyd-a", "second")]


def test_duplicate_id_for_another_claim_raises(rows):
    rows.record("lloyd-a", **good())
    with pytest.raises(ValueError, match="already used"):
        rows.record("lloyd-a", **good(statement="a different claim"))


def test_setup_starts_a_fresh_chapter_with_its_own_rows(monkeypatch, tmp_path):
    monkeypatch.setenv("LLOYD_CACHE", str(tmp_path))
    lloyd = book.setup("lloyd")
    lloyd.rows.record("lloyd-a", **good())
    construction = book.setup("construction")
    assert construction.rows.chapter == "construction" and construction.rows.claims() == []
    assert [r.id for r in lloyd.rows.claims()] == ["lloyd-a"]  # a later chapter leaves the earlier one's rows alone
    with pytest.raises(ValueError, match="chapter key"):
        construction.rows.record("lloyd-a", **good())
    assert book.setup("lloyd").rows.claims() == [] and len(lloyd.rows) == 1  # the same key again: fresh rows


@pytest.mark.parametrize(
    "field, value, exc, words",
    [
        ("verdict", "confirmed", ValueError, ["verdict", "reproduced", "confirmed"]),
        ("verdict", None, ValueError, ["verdict"]),
        ("statement", "", ValueError, ["statement", "non-empty"]),
        ("statement", "   ", ValueError, ["statement", "non-empty"]),
        ("source", 3, TypeError, ["source", "str"]),
        ("paper", None, TypeError, ["paper", "str or a real number"]),
        ("paper", True, TypeError, ["paper"]),
        ("ours", float("nan"), ValueError, ["ours", "finite"]),
        ("ours", np.array([1.0, 2.0]), TypeError, ["ours", "float(x)"]),
        ("ours", "", ValueError, ["ours", "non-empty"]),
        ("check", 1, TypeError, ["check", "bool"]),
        ("check", None, TypeError, ["check", "bool"]),
        ("check", "yes", TypeError, ["check", "bool"]),
    ],
)
def test_bad_inputs_raise_clear_errors(rows, field, value, exc, words):
    with pytest.raises(exc) as err:
        rows.record("lloyd-a", **good(**{field: value}))
    for w in words:
        assert w in str(err.value)


@pytest.mark.parametrize("cid", ["Lloyd-a", "lloyd_a", "lloyd--a", "lloyd-", "", "lloyd a"])
def test_bad_ids_raise(rows, cid):
    with pytest.raises(ValueError, match="id"):
        rows.record(cid, **good())


def test_id_must_carry_the_chapter_key(rows):
    with pytest.raises(ValueError, match="'lloyd-'"):
        rows.record("construction-a", **good())
    with pytest.raises(TypeError, match="id must be a str"):
        rows.record(7, **good())


def test_table_and_counts_need_the_rows_they_read(rows):
    """Nothing reads a chapter it was not given: without rows, or given something else, they name the argument."""
    rows.record("lloyd-a", **good())
    assert_raises_naming(lambda: claims.table(), TypeError, ["chapter_rows"])
    for bad in (None, "lloyd", rows.rows()):
        assert_raises_naming(lambda bad=bad: claims.table(bad), TypeError, ["chapter_rows", "Rows", type(bad).__name__])
    assert_raises_naming(lambda: claims.counts(), TypeError, ["of"])


def test_table_without_claims_raises(rows):
    with pytest.raises(ValueError, match="no claims"):
        claims.table(rows)


def test_glue_keys():
    keys = claims.glue_keys("lloyd")
    assert keys == {
        "table": "claims-lloyd",
        "rows": "claims-lloyd-rows",
        "n": "claims-lloyd-n",
        "reproduced": "claims-lloyd-reproduced",
        "partly": "claims-lloyd-partly",
        "not reproduced": "claims-lloyd-not-reproduced",
        "beyond the paper": "claims-lloyd-beyond-the-paper",
        "background": "claims-lloyd-background",
        "post hoc": "claims-lloyd-post-hoc",
        "open": "claims-lloyd-open",
    }
    with pytest.raises(ValueError):
        claims.glue_keys("Bad Key")


def test_table_glues_the_table_and_counts(rows, monkeypatch):
    glued = {}
    monkeypatch.setattr(table_module, "glue", lambda name, obj, display=True: glued.setdefault(name, (obj, display)))
    rows.record("lloyd-a", **good(statement="objective $L(X, C) \\le 1$ & <b>", ours=0.5))
    rows.record("lloyd-b", **good(statement="second", verdict="partly"))
    assert claims.table(rows) is None  # shown once, by the glue
    table, shown = glued["claims-lloyd"]
    assert shown is True
    assert claims.ClaimsTable.from_json(glued.pop("claims-lloyd-rows")[0]).rows == rows.rows()
    assert {k: v[0] for k, v in glued.items() if k != "claims-lloyd"} == {
        "claims-lloyd-n": 2,
        "claims-lloyd-reproduced": 1,
        "claims-lloyd-partly": 1,
        "claims-lloyd-not-reproduced": 0,
        "claims-lloyd-beyond-the-paper": 0,
        "claims-lloyd-background": 0,
        "claims-lloyd-post-hoc": 0,
        "claims-lloyd-open": 0,
    }
    html = table._repr_html_()
    assert 'class="claims-table mathjax_process"' in html
    assert '<tr id="claim-lloyd-a"' in html and '<tr id="claim-lloyd-b"' in html
    assert r"\(L(X, C) \le 1\)" in html and "$" not in html  # inline math for MathJax
    assert "&amp; &lt;b&gt;" in html  # text is escaped
    assert "verdict-partly" in html
    rows.record("lloyd-c", **good(statement="third", verdict="background"))
    assert (
        'class="claim-verdict verdict-background">background<'
        in claims.ClaimsTable("lloyd", rows.claims())._repr_html_()
    )
    assert "<code>" not in html.split("</td>", 2)[1]
    assert "lloyd-a" in repr(table) and "partly" in repr(table)


def test_table_through_myst_nb_glue_is_json_serialisable(rows, capsys):
    pytest.importorskip("myst_nb")
    rows.record("lloyd-a", **good())
    claims.table(rows)  # outside a kernel, IPython's display prints the plain-text fallback
    assert "lloyd-a" in capsys.readouterr().out
    json.dumps(rows.claims()[0].__dict__)


def test_code_spans_and_math_in_html(rows):
    rows.record("lloyd-a", **good(statement="matches `KMeans(algorithm='lloyd')` for $k \\ge 2$"))
    html = claims.ClaimsTable("lloyd", rows.claims())._repr_html_()
    assert "<code>KMeans(algorithm='lloyd')</code>" in html and r"\(k \ge 2\)" in html and "`" not in html


def test_open_rows_are_kept_apart_and_never_verdicts(rows):
    rows.record("lloyd-a", **good(setting="n=32, d=4, k=6; 6,000 steps; 10 seeds"))
    row = rows.open_row(
        "lloyd-b",
        statement="OH and BN differ at d=4",
        source="Leaner paper, Fig. 3",
        paper="they differ",
        decides="n=512, 10,000 steps, 10 seeds: python -m lloydlib train ...",
        ours="undetermined at n=32",
    )
    assert row.kind == "open" and row.verdict == "open" and row.setting == ""
    assert [r.id for r in rows.claims()] == ["lloyd-a"] and [r.id for r in rows.open_rows()] == ["lloyd-b"]
    assert rows.counts()["open"] == 1 and claims.counts(rows.rows())["reproduced"] == 1
    table = claims.ClaimsTable("lloyd", rows.rows())
    html = table._repr_html_()
    assert "<th>Setting</th>" in html and "n=32, d=4, k=6" in html and "decided by:" in html
    assert 'class="claim-verdict verdict-open">open<' in html
    back = claims.ClaimsTable.from_json(table.to_json())
    assert back.rows == table.rows and back.chapter == "lloyd"
    with pytest.raises(ValueError, match="decides"):
        rows.open_row("lloyd-c", statement="s", source="x", paper="p", decides=" ")


def test_rows_read_back_from_json_only_when_whole():
    with pytest.raises(ValueError, match="fields"):
        claims.Row.from_dict({"id": "lloyd-a"})
    with pytest.raises(ValueError, match="chapter"):
        claims.ClaimsTable.from_json({"rows": []})


def test_rows_are_each_chapters_own(rows):
    """Two Rows never share a row, nor a third's of the same chapter."""
    mine, other = claims.Rows("lloyd"), claims.Rows("lloyd")
    mine.record("lloyd-a", **good())
    other.open_row("lloyd-b", statement="s", source="src", paper="p", decides="a GPU")
    assert [r.id for r in mine.rows()] == ["lloyd-a"] and [r.id for r in other.open_rows()] == ["lloyd-b"]
    assert rows.rows() == [] and mine.counts()["reproduced"] == 1 and other.counts()["open"] == 1
    with pytest.raises(ValueError, match="'lloyd-'"):
        mine.record("construction-a", **good())
    assert mine.chapter == other.chapter == rows.chapter == "lloyd" and rows.claims() == rows.open_rows() == []
