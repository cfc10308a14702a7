"""lloydlib.training.fingerprint: what trained a run, blind to comments and formatting, not to code."""

import ast
import shutil
from pathlib import Path

import pytest

from lloydlib.training import fingerprint

PACKAGE = Path(fingerprint.__file__).resolve().parents[1]


def test_comments_docstrings_and_formatting_do_not_change_a_module_hash():
    a = 'def f(x):\n    """Doc."""\n    return x * 2  # twice\n'
    b = "def f(x):\n\n    # a comment\n    return (x\n            * 2)\n"
    assert fingerprint.module_hash(a) == fingerprint.module_hash(b)


@pytest.mark.parametrize("change", ["return x * 3", "return x * 2.0", "return 2 * x", "return x ** 2"])
def test_a_change_of_code_changes_the_hash(change):
    assert fingerprint.module_hash("def f(x):\n    return x * 2\n") != fingerprint.module_hash(
        f"def f(x):\n    {change}\n"
    )


def test_the_fingerprint_covers_every_listed_module_and_names_a_change(tmp_path):
    fp = fingerprint.fingerprint()
    assert set(fp["modules"]) == {f"lloydlib/{m}" for m in fingerprint.MODULES} and fp["torch"]
    copy = tmp_path / "lloydlib"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    text = (copy / "losses.py").read_text()
    (copy / "losses.py").write_text(text + "\n# a comment\n")
    assert fingerprint.changes(fp, fingerprint.fingerprint(copy)) == []
    (copy / "losses.py").write_text(text + "\nEXTRA = 1\n")
    assert fingerprint.changes(fp, fingerprint.fingerprint(copy)) == ["lloydlib/losses.py changed"]
    assert fingerprint.changes(dict(fp, torch="0.1"), fp, torch_version=False) == []
    assert fingerprint.changes(dict(fp, torch="0.1"), fp) == [f"torch 0.1 -> {fp['torch']}"]
    with pytest.raises(TypeError, match="recorded"):
        fingerprint.changes({"torch": "x"})
    with pytest.raises(TypeError, match="source"):
        fingerprint.module_hash(b"x = 1")


def _imports(rel: str) -> set[str]:
    """lloydlib modules (as paths relative to the package) that the module ``rel`` imports."""
    path = PACKAGE / rel
    pkg = Path(rel).parent
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = pkg
            for _ in range(node.level - 1):
                base = base.parent
            target = base / (node.module or "").replace(".", "/") if node.module else base
            for alias in node.names:
                cand = target / alias.name
                if (PACKAGE / cand).with_suffix(".py").is_file():
                    out.add(str(cand.with_suffix(".py")))
                elif (PACKAGE / target).with_suffix(".py").is_file():
                    out.add(str(target.with_suffix(".py")))
                else:
                    out.add(str(target / "__init__.py") if str(target) != "." else "__init__.py")
        elif isinstance(node, ast.Import) and any(a.name == "lloydlib" for a in node.names):
            out.add("__init__.py")
    return {p.removeprefix("./") for p in out}


def test_the_module_list_is_closed_under_imports():
    """Every lloydlib module a fingerprinted module imports is fingerprinted, or declared not arithmetic."""
    allowed = set(fingerprint.MODULES) | set(fingerprint.NOT_ARITHMETIC)
    for rel in fingerprint.MODULES:
        for dep in _imports(rel):
            top = dep.split("/")[0] if dep.startswith("construction") else dep
            assert dep in allowed or top in allowed, f"{rel} imports {dep}, which is neither fingerprinted nor declared"
