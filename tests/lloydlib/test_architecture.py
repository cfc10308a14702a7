"""The shape of the code base, checked statically: sizes, import cycles, layering and dependencies.

- no source file of ``lloydlib`` or ``lloydbook`` runs over 450 lines;
- the modules of each package (the library, and the book layer) import each other without cycles, counting
  imports inside functions too, and the package ``__init__`` that importing a submodule runs first;
- the library never imports the book layer (``lloydbook``);
- the runtime dependencies in ``pyproject.toml`` are exactly the third-party packages the library imports;
- no library source, chapter or book page cites the project's private technical briefs.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 450
# import name -> distribution name, where they differ
DISTRIBUTION = {"yaml": "pyyaml", "sklearn": "scikit-learn"}


def modules(package: str, root: Path = ROOT) -> dict[str, Path]:
    """Every module of ``package`` (a folder of ``root``) by dotted name (a package is named by its
    ``__init__.py``)."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imported_names(name: str, path: Path, known: set[str] | frozenset = frozenset()) -> set[str]:
    """Absolute dotted names imported anywhere in the module (top level and inside functions).

    ``from pkg import sub`` counts as an import of ``pkg.sub`` alone when ``pkg.sub`` is one of the
    ``known`` modules (the package is then only being completed, not run again), else of ``pkg`` and
    ``pkg.name``.
    """
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module
            for alias in node.names:
                full = f"{prefix}.{alias.name}"
                found.update({full} if full in known else {prefix, full})
    return found


def _packages_above(name: str) -> list[str]:
    """The packages that hold the module ``name``, outermost first: ``a.b.c`` -> ``["a", "a.b"]``."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def package_graph(package: str, root: Path = ROOT) -> dict[str, set[str]]:
    """Edges module -> the modules of ``package`` it imports, anywhere in its source (at the top and inside
    functions; names that are not modules, e.g. functions, dropped).

    Importing ``a.b.c`` runs the packages ``a`` and ``a.b`` first (their ``__init__``), so an import of a
    module is also an import of every package above it, except the packages above the importing module
    itself, which are already being imported when it runs.
    """
    mods = modules(package, root)
    graph = {}
    for name, path in mods.items():
        running = set(_packages_above(name)) | ({name} if path.name == "__init__.py" else set())
        edges = set()
        for m in imported_names(name, path, set(mods)):
            if m in mods:
                edges.update(x for x in (*_packages_above(m), m) if x in mods and x not in running and x != name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


@pytest.mark.parametrize("package", ["lloydlib", "lloydbook"])
def test_no_source_file_over_the_limit(package):
    long = {
        str(p.relative_to(ROOT)): n
        for p in modules(package).values()
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"source files over {MAX_LINES} lines: {long}"


@pytest.mark.parametrize("package", ["lloydlib", "lloydbook"])
def test_no_import_cycles(package):
    found = cycles(package_graph(package))
    assert not found, f"import cycles among {package}'s modules (imports inside functions counted): {found}"


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_counts_imports_inside_functions_and_package_inits(tmp_path):
    """A cycle closed by an import inside a function, and one closed by the ``__init__`` that importing a
    submodule runs, are both found; a package's ``__init__`` importing its own submodules is no cycle."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a, sub\n")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n")
    (pkg / "b.py").write_text("from . import a\n")
    (pkg / "sub" / "__init__.py").write_text("from .x import h\n")
    (pkg / "sub" / "x.py").write_text("from ..c import k\n")
    (pkg / "sub" / "y.py").write_text("z = 1\n")
    (pkg / "c.py").write_text("from .sub.y import z\n")
    graph = package_graph("pkg", tmp_path)
    assert "pkg" not in graph["pkg.a"] and "pkg.sub" not in graph["pkg.sub.x"]  # packages already running
    assert "pkg.sub" in graph["pkg.c"]  # importing pkg.sub.y runs pkg/sub/__init__.py first
    assert sorted(cycles(graph)) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.sub", "pkg.sub.x"]]


def test_relative_imports_resolve(tmp_path):
    pkg = tmp_path / "lloydlib" / "sub"
    pkg.mkdir(parents=True)
    (pkg / "x.py").write_text("from . import y\nfrom ..z import f\n\ndef g():\n    from .w import h\n")
    names = imported_names("lloydlib.sub.x", pkg / "x.py", {"lloydlib.sub.y"})
    assert {"lloydlib.sub.y", "lloydlib.z", "lloydlib.z.f", "lloydlib.sub.w"} <= names
    assert "lloydlib.sub" not in names  # `from . import y` with y a module imports y, not the package again


def test_library_never_imports_the_book_layer():
    offenders = {
        name: sorted(m for m in imported_names(name, path) if m.split(".")[0] == "lloydbook")
        for name, path in modules("lloydlib").items()
    }
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"library modules importing lloydbook: {offenders}"


def test_runtime_dependencies_are_what_the_library_imports():
    """The required dependencies are exactly the library's imports, less those of optional extras
    (``distributed``: ray, imported only inside the Ray executor)."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    stdlib = set(sys.stdlib_module_names)
    imported = set()
    for name, path in modules("lloydlib").items():
        for m in imported_names(name, path):
            top = m.split(".")[0]
            if top not in stdlib and top not in ("lloydlib", "__future__"):
                imported.add(DISTRIBUTION.get(top, top))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def names(requirements):
        return {re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0].lower() for d in requirements}

    declared = names(project["dependencies"])
    optional = names(project.get("optional-dependencies", {}).get("distributed", []))
    assert imported - optional == declared, (
        f"imported but not declared: {sorted(imported - optional - declared)}; "
        f"declared but not imported: {sorted(declared - imported)}"
    )
    assert optional <= imported, (
        f"optional extra 'distributed' lists packages the library never imports: {optional - imported}"
    )


def test_no_citation_of_the_private_briefs():
    pattern = re.compile(r"brief", re.IGNORECASE)
    paths = [*ROOT.glob("lloydlib/**/*.py"), *ROOT.glob("book/*.ipynb"), *ROOT.glob("book/*.md")]
    hits = [str(p.relative_to(ROOT)) for p in paths if pattern.search(p.read_text(encoding="utf-8"))]
    assert not hits, f"files citing a 'brief' no reader can open (cite the paper's section instead): {hits}"
