"""Every chapter runs through its Chapter object (``ch = book.setup("<key>")``, lloydbook.book.Chapter).

Checked on the code cells of every ``book/*.ipynb``, parsed with ``ast`` (IPython magic and shell lines read
as ``pass``, as scripts/count_plumbing.py reads them):

(a) the chapter calls ``book.setup("<key>")`` once, with its own key: the notebook's name without the number,
    ``_`` written ``-`` (``06_many_steps`` -> ``many-steps``), a key of ``book.CHAPTERS``;
(b) no glue name or claim id is typed with its prefix: no ``glue``/``book.glue``/``ch.rows.record``/
    ``ch.rows.open_row``/``decide`` called with a literal name (they go through ``ch.glue``, ``ch.record``,
    ``ch.open``, ``ch.decide``), and no name given to the chapter object repeats the chapter's prefix;
(c) no seed is typed: no ``seed=<integer literal>`` (nor ``seed0=``, ``seeds=``, ``random_state=``...), no
    ``manual_seed(<int>)``, ``np.random.default_rng(<int>)``, ``derive_seed(<int>, ...)`` and the like; a draw's
    seed comes from ``ch.seed("<name>")`` (from ``LLOYD_SEED``), a training run's from the settings (lists of run
    seeds, data: ``tests/lloydbook/test_seeds.py`` checks the settings hold no seed of a draw);
(d) glue, print and display are at most 10% of the book's code lines (scripts/count_plumbing.py);
(e) a chapter that records claims shows its claims table once, in its last code cell.
"""

import ast
import json
import re
from pathlib import Path

import pytest
from _support import load_script

from lloydbook import book

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
IDS = [p.name for p in NOTEBOOKS]
MAX_PLUMBING = 0.10

count_plumbing = load_script("count_plumbing")


def expected_key(path: Path) -> str:
    """``book/06_many_steps.ipynb`` -> ``many-steps``."""
    return re.sub(r"^\d+[a-z]?_", "", path.stem).replace("_", "-")


def code_cells(path: Path) -> list[tuple[int, ast.Module]]:
    """(index among the code cells, parsed source) of every code cell of a notebook."""
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    out = []
    for i, c in enumerate(cells):
        try:
            out.append((i, ast.parse(count_plumbing._source(c))))
        except SyntaxError as e:
            pytest.fail(f"{path.name}: code cell {i} does not parse ({e})")
    return out


def calls(path: Path):
    """(code cell index, call node) of every call in the notebook's code."""
    for i, tree in code_cells(path):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                yield i, node


def dotted(func) -> str:
    """The called name as written: ``book.glue``, ``np.random.default_rng``, ``ch.glue``; '' if not a plain name."""
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        return ".".join([func.id, *reversed(parts)])
    if isinstance(func, ast.Call):  # torch.Generator().manual_seed(3): the method's name is what counts
        return ".".join(["()", *reversed(parts)])
    return ""


def where(path: Path, i: int, node) -> str:
    return f"{path.name} code cell {i} line {node.lineno}: {ast.unparse(node)[:100]}"


def literal_text(node) -> str | None:
    """The typed text of a string literal, or the literal start of an f-string (``f"lloyd-{x}"`` -> "lloyd-");
    None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        head = node.values[0] if node.values else None
        return head.value if isinstance(head, ast.Constant) else ""
    return None


def named_argument(call: ast.Call, *names):
    """The first positional argument, else the keyword of one of ``names``; None when neither is given."""
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg in names), None)


# --- (a) the chapter's key ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_the_chapter_calls_setup_with_its_own_key(path):
    want = expected_key(path)
    assert want in book.CHAPTERS, f"{path.name}: its key {want!r} is not in lloydbook.book.CHAPTERS"
    setups = [(i, c) for i, c in calls(path) if dotted(c.func) == "book.setup"]
    assert len(setups) == 1, f"{path.name}: book.setup must be called once, found {len(setups)}"
    i, call = setups[0]
    key = literal_text(call.args[0]) if call.args and isinstance(call.args[0], ast.Constant) else None
    assert key == want, f'{where(path, i, call)}: the chapter must start with book.setup("{want}")'


# --- (b) no typed prefix --------------------------------------------------------------------------------------

#: functions that take a full glue name or claim id; a chapter calls its Chapter's methods instead
BYPASS = {"glue", "book.glue", "glue.glue", "myst_nb.glue", "decide", "evidence.decide", "claims.evidence.decide"}
#: the methods of a chapter's rows (``ch.rows``), which take a full claim id too
ROWS_BYPASS = ("rows.record", "rows.open_row")
#: the Chapter's methods whose first argument is a name without the chapter's prefix
CHAPTER_NAMES = {"glue", "record", "decide", "seed", "name", "claim_id"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_glue_name_or_claim_id_is_typed_with_its_prefix(path):
    prefix = expected_key(path) + "-"
    bad = []
    for i, call in calls(path):
        name = dotted(call.func)
        if name in BYPASS or name.endswith(tuple("." + m for m in ROWS_BYPASS)):
            arg = named_argument(call, "name", "id", "claim_id")
            if arg is not None and literal_text(arg) is not None:
                method = {"open_row": "open"}.get(name.split(".")[-1], name.split(".")[-1])
                bad.append(f"{where(path, i, call)} (use the chapter: ch.{method}(...))")
        elif isinstance(call.func, ast.Attribute) and call.func.attr in CHAPTER_NAMES | {"glue_many"}:
            if call.func.attr == "glue_many":
                arg = call.args[0] if call.args else None
                texts = [literal_text(k) for k in arg.keys] if isinstance(arg, ast.Dict) else []
            else:
                texts = [literal_text(named_argument(call, "name"))] if named_argument(call, "name") else []
            if any(t is not None and t.startswith(prefix) for t in texts):
                bad.append(f"{where(path, i, call)} (the chapter adds the prefix {prefix!r})")
    assert not bad, "typed glue names or claim ids:\n" + "\n".join(bad)


# --- (c) no typed seed ----------------------------------------------------------------------------------------

SEED_KEYWORD = re.compile(r"^(seeds?\d*|seed_value|random_state|\w+_seed)$")
#: calls whose (first) argument is a seed
SEEDING = {"seed", "manual_seed", "manual_seed_all", "default_rng", "RandomState", "SeedSequence", "derive_seed"}


def typed(node) -> bool:
    """Whether ``node`` is a value typed from integer literals: ``21``, ``100 + f``, ``[1, 2, 3]``, ``range(5)``;
    not one derived from a call (``ch.seed("x")``, other than ``range``) or a setting (``P.seed``, ``P["seed"]``)."""
    has_int = any(isinstance(n, ast.Constant) and type(n.value) is int for n in ast.walk(node))
    derived = any(
        (isinstance(n, ast.Call) and dotted(n.func) != "range") or isinstance(n, (ast.Attribute, ast.Subscript))
        for n in ast.walk(node)
    )
    return has_int and not derived


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_seed_is_typed(path):
    bad = []
    for i, call in calls(path):
        for kw in call.keywords:
            if kw.arg and SEED_KEYWORD.match(kw.arg) and typed(kw.value):
                bad.append(f"{where(path, i, call)} ({kw.arg}={ast.unparse(kw.value)})")
        name = dotted(call.func).split(".")[-1]
        if name in SEEDING and call.args and typed(call.args[0]):
            bad.append(f"{where(path, i, call)} (seed {ast.unparse(call.args[0])})")
    assert not bad, 'typed seeds (use ch.seed("<name of the draw>") or a setting):\n' + "\n".join(bad)


# --- (d) plumbing ---------------------------------------------------------------------------------------------


def test_plumbing_is_at_most_a_tenth_of_the_code():
    counts = count_plumbing.count_book(ROOT)
    assert set(counts) == {p.name for p in NOTEBOOKS}
    share = count_plumbing.share(counts.values())
    worst = sorted(counts.items(), key=lambda kv: -count_plumbing.share([kv[1]]))[:3]
    assert share <= MAX_PLUMBING, (
        f"glue, print and display are {share:.1%} of the chapters' code lines (at most {MAX_PLUMBING:.0%}); "
        "most: " + ", ".join(f"{name} {count_plumbing.share([c]):.1%}" for name, c in worst)
    )


# --- (e) the claims table -------------------------------------------------------------------------------------


def chapter_names(path: Path) -> set[str]:
    """The names the notebook binds to what ``book.setup`` returns (``ch = book.setup(...)`` -> {"ch"})."""
    names = set()
    for _, tree in code_cells(path):
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and dotted(node.value.func) == "book.setup"
            ):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_the_claims_table_is_the_last_code_cell(path):
    cells = code_cells(path)
    ch = chapter_names(path)
    recorders = {f"{n}.{m}" for n in ch for m in ("record", "decide", "rows.record")} | {"evidence.decide"}
    found = [(i, dotted(c.func), c) for i, c in calls(path)]
    records = [i for i, name, _ in found if name in recorders]
    shown = {f"{n}.rows" for n in ch}  # claims.table(ch.rows) shows the chapter's table, as ch.table() does
    tables = [
        i
        for i, name, c in found
        if (name in {f"{n}.table" for n in ch} and not c.args)
        or (name == "claims.table" and c.args and dotted(c.args[0]) in shown)
    ]
    if not records:
        assert not tables, f"{path.name} shows a claims table but records no claims"
        return
    assert tables == [cells[-1][0]], (
        f"{path.name}: the claims table (ch.table()) must be shown once, in the last code cell; "
        f"it is in code cells {tables} of {len(cells)}"
    )
