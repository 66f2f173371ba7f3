"""The house rules of the package layout, checked on the code itself: no import cycles among gear's modules, and the
engine never imports the app (Streamlit, studio/, pages/, app.py). Every import is an arrow: lazy imports inside
functions, and imports under `if TYPE_CHECKING:` too — they never run, but a module that names a higher one's types
depends on it all the same (a type-only import was how the runners used to reach the engine)."""

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


def imports(path: Path) -> list[str]:
    """Every module name a file imports (relative imports resolved), under `if TYPE_CHECKING:` or not."""
    this = module_name(path)
    return imports_in(path.read_text(encoding="utf-8"), this, path.name == "__init__.py")


def imports_in(source: str, this: str, is_package: bool = False) -> list[str]:
    tree = ast.parse(source)
    package = this if is_package else this.rpartition(".")[0]
    found: list[str] = []

    def visit(node: ast.AST) -> None:
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
        for target in imports(path):
            parts = target.split(".")
            for n in range(2, len(parts) + 1):  # gear.x, gear.x.y, ... each one that is a module of ours
                prefix = ".".join(parts[:n])
                if prefix in modules and prefix != name and not name.startswith(prefix + "."):
                    graph.add_edge(name, prefix)
    return graph


def test_the_import_graph_sees_the_packages() -> None:
    graph = import_graph()
    assert graph.has_edge("gear.agent.engine", "gear.agent.context")  # the check would be empty if parsing failed
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
    bad = [m for m in imports(path) if m.split(".")[0] in APP_SIDE]
    assert bad == [], f"{path.relative_to(ROOT)} imports the app side: {bad}"


def test_type_only_imports_are_arrows() -> None:
    """The runners once named the engine's type under `if TYPE_CHECKING:` while the engine imported them: a cycle the
    checks must see."""
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from gear.agent.engine import Engine\n"
    assert "gear.agent.engine" in imports_in(source, "gear.agent.methods.gear")
    assert "gear.agent" in imports_in("if TYPE_CHECKING:\n    from .. import engine\n", "gear.agent.methods.gear")


def test_a_cycle_is_detected(tmp_path: Path) -> None:
    """The detector itself: two modules importing each other form a strongly connected component."""
    graph = nx.DiGraph([("gear.a", "gear.b"), ("gear.b", "gear.a")])
    assert [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1] == [["gear.a", "gear.b"]]
