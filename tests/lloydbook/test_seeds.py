"""No literal seed for a chapter's draw outside lloydbook/book.py (issue 36): every draw of the book layer takes
its seed from the chapter (``ch.seed("<name>")``, from ``LLOYD_SEED``), passed in as an argument.

Checked statically on every module of ``lloydbook`` but ``book.py`` (where ``LLOYD_SEED`` is read): no call
passes a typed seed (``seed=11``, ``seed=40 + c``, ``manual_seed(53)``, ``default_rng(0)``, a module constant
such as ``seed=EVAL_SEED``), and no function gives a seed argument a typed default (``seed=62``). A seed derived
from a seed (``seed + 1``, ``task_seed + c.seed``) or from a call is fine. And no chapter's settings
(:data:`lloydbook.scales.SCALES`) hold a single integer seed: the seeds there are lists of training runs' seeds,
which are data, not draws.
"""

import ast
import re
from pathlib import Path

import pytest

from lloydbook.scales import SCALES

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(p for p in (ROOT / "lloydbook").rglob("*.py") if p.relative_to(ROOT).as_posix() != "lloydbook/book.py")
#: argument names that carry a seed
SEED_NAME = re.compile(r"^(seeds?\d*|seed_value|random_state|\w+_seed)$")
#: calls whose first argument is a seed
SEEDING = {"seed", "manual_seed", "manual_seed_all", "default_rng", "RandomState", "SeedSequence", "derive_seed"}


def _identifier(node) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def typed(node) -> bool:
    """Whether the seed expression ``node`` is typed: it holds a module constant (an upper-case name such as
    ``EVAL_SEED``), or an integer literal and nothing derived (a call, a subscript, or a name with "seed" in it)."""
    nodes = list(ast.walk(node))
    if any(_identifier(n).isupper() for n in nodes):
        return True
    derived = any(isinstance(n, (ast.Call, ast.Subscript)) or "seed" in _identifier(n).lower() for n in nodes)
    return any(isinstance(n, ast.Constant) and type(n.value) is int for n in nodes) and not derived


def typed_seeds(source: str) -> list[str]:
    """The typed seeds of a module's ``source``: 'line: what' for each."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            bad += [f"{node.lineno}: {kw.arg}={ast.unparse(kw.value)}" for kw in node.keywords
                    if kw.arg and SEED_NAME.match(kw.arg) and typed(kw.value)]  # fmt: skip
            if _identifier(node.func) in SEEDING and node.args and typed(node.args[0]):
                bad.append(f"{node.lineno}: {ast.unparse(node)[:80]}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            positional = a.posonlyargs + a.args
            pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults))
            pairs += [(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
            bad += [f"{node.lineno}: def {node.name}(... {arg.arg}={ast.unparse(d)})" for arg, d in pairs
                    if SEED_NAME.match(arg.arg) and typed(d)]  # fmt: skip
    return bad


def test_the_scan_finds_typed_seeds_and_passes_derived_ones():
    typed_source = (
        "EVAL_SEED = 10\n"
        "def f(x, seed=62):\n    pass\n"
        "def g(*, task_seed=EVAL_SEED):\n    pass\n"
        "sample(1, seed=11)\nsample(1, seed=40 + c)\ntorch.Generator().manual_seed(53)\nnp.random.default_rng(0)\n"
    )
    assert len(typed_seeds(typed_source)) == 6
    derived = (
        "def f(x, seed):\n    pass\n"
        "sample(1, seed=seed + 2)\nsample(1, seed=task_seed + c.seed)\ntorch.manual_seed(check_int('seed', s))\n"
        "sample(1, seed=ch.seed('tasks'))\nnp.random.default_rng(seed)\n"
    )
    assert typed_seeds(derived) == []


@pytest.mark.parametrize("path", MODULES, ids=[p.relative_to(ROOT).as_posix() for p in MODULES])
def test_no_module_types_a_seed(path):
    bad = typed_seeds(path.read_text(encoding="utf-8"))
    assert not bad, f"{path.relative_to(ROOT)}: typed seeds (take a seed argument; the chapter passes ch.seed):\n" + (
        "\n".join(bad)
    )


def _single_seeds(settings, where: str):
    """Paths of settings named like a seed that hold one integer (a draw's seed), at any depth."""
    if isinstance(settings, dict):
        for key, value in settings.items():
            if "seed" in key and isinstance(value, int) and not isinstance(value, bool):
                yield f"{where}.{key}"
            yield from _single_seeds(value, f"{where}.{key}")
    elif isinstance(settings, list):
        for i, value in enumerate(settings):
            yield from _single_seeds(value, f"{where}[{i}]")


def test_no_setting_is_a_seed_of_a_draw():
    bad = list(_single_seeds(SCALES, "SCALES"))
    assert not bad, f"settings that hold a draw's seed (the chapter names its draws with ch.seed instead): {bad}"
