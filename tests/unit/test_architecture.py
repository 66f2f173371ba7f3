"""The house rules of the package layout, checked on the code itself: no import cycles among gear's modules, and the
engine never imports the app (Streamlit, studio/, pages/, app.py). Lazy imports inside functions count; imports
under `if TYPE_CHECKING:` do not (they never run)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
GEAR = ROOT / "gear"
APP_SIDE = ("streamlit", "studio", "pages", "app")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def runtime_imports(path: Path) -> list[str]:
    """Every module name imported by code that can run (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append(base)
            found.extend(f"{base}.{alias.name}" for alias in node.names)  # `from pkg import module`
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def gear_modules() -> dict[str, Path]:
    return {module_name(p): p for p in GEAR.rglob("*.py")}


def import_graph() -> nx.DiGraph:
    """Edges module → module it needs at run time; importing a.b.c also runs a.b/__init__ (a package's face)."""
    modules = gear_modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for target in runtime_imports(path):
            parts = target.split(".")
            for n in range(2, len(parts) + 1):  # gear.x, gear.x.y, ... each one that is a module of ours
                prefix = ".".join(parts[:n])
                if prefix in modules and prefix != name and not name.startswith(prefix + "."):
                    graph.add_edge(name, prefix)
    return graph


def test_the_import_graph_sees_the_packages() -> None:
    graph = import_graph()
    assert graph.has_edge("gear.agent.engine", "gear.agent.loop")  # the check would be empty if parsing failed
    assert graph.number_of_edges() > 100


def test_no_import_cycles() -> None:
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert cycles == [], f"import cycles: {cycles}"


def package_graph() -> nx.DiGraph:
    """The same edges between gear's packages (gear.agent, gear.store, …; top-level modules count as their own)."""
    def package(module: str) -> str:
        return module.split(".")[1] if module.count(".") else module

    graph = nx.DiGraph()
    for a, b in import_graph().edges():
        if package(a) != package(b):
            graph.add_edge(package(a), package(b))
    return graph


def test_packages_form_layers() -> None:
    """Arrows only run downwards: no two packages need each other, even through different modules."""
    cycles = [sorted(c) for c in nx.strongly_connected_components(package_graph()) if len(c) > 1]
    assert cycles == [], f"packages that import each other: {cycles}"


@pytest.mark.parametrize("path", sorted(GEAR.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_engine_never_imports_the_app(path: Path) -> None:
    bad = [m for m in runtime_imports(path) if m.split(".")[0] in APP_SIDE]
    assert bad == [], f"{path.relative_to(ROOT)} imports the app side: {bad}"


def test_a_cycle_is_detected(tmp_path: Path) -> None:
    """The detector itself: two modules importing each other form a strongly connected component."""
    graph = nx.DiGraph([("gear.a", "gear.b"), ("gear.b", "gear.a")])
    assert [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1] == [["gear.a", "gear.b"]]
