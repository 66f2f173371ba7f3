"""The house's shape in numbers, counted on the code with `ast` (issue 20): where the method list is spelled out, how
many places finish a run, how many type-only imports point at a higher module, and which functions run past 60
lines. Run it before and after a change to the layout and compare.

    python bench/house.py [--list]

Output: one count per line, `name value`; with --list, the places behind each count.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
CODE = ("gear", "studio", "pages", "app.py")
METHOD_NAMES = frozenset({"none", "naive", "sync", "gear", "ppr", "ircot"})
LONG = 60


def python_files(*roots: str) -> list[Path]:
    files: list[Path] = []
    for root in roots:
        path = ROOT / root
        files.extend([path] if path.is_file() else sorted(path.rglob("*.py")))
    return files


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def enclosing(tree: ast.Module) -> dict[ast.AST, str]:
    """Each node → the name of the top-level statement (function, class or assignment) it sits in."""
    owner: dict[ast.AST, str] = {}
    for top in tree.body:
        name = getattr(top, "name", None) or (ast.unparse(top.targets[0]) if isinstance(top, ast.Assign) else
                                              ast.unparse(top.target) if isinstance(top, ast.AnnAssign) else
                                              f"line {top.lineno}")
        for node in ast.walk(top):
            owner[node] = name
    return owner


# -- places that spell out the method list -----------------------------------------------------------------------------
def _method_constants(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in METHOD_NAMES}


def _compared_names(node: ast.Compare) -> set[str]:
    """Method names a comparison tests a method variable against (`method == "ppr"`, `expand in ("gear", …)`)."""
    sides = [node.left, *node.comparators]
    if not any(re.search(r"(method|expand|expansion)s?\b", ast.unparse(side)) for side in sides):
        return set()
    return set().union(*(_method_constants(side) for side in sides))


def method_knowledge(tree: ast.Module) -> dict[str, tuple[set[str], set[str]]]:
    """Per top-level definition: the method names in its literals (dicts, lists, tuples, sets, Literal[...], help
    texts naming three or more), and the names it compares a method variable with (docstrings left out)."""
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and n.body and isinstance(n.body[0], ast.Expr)}
    found: dict[str, tuple[set[str], set[str]]] = {}
    owner = enclosing(tree)
    for node in ast.walk(tree):
        listed, compared = found.setdefault(owner.get(node, "?"), (set(), set()))
        if isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
            listed |= _method_constants(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words = set(re.findall(r"[a-z]+", node.value)) & METHOD_NAMES
            if len(words) >= 3:
                listed |= words
        elif isinstance(node, ast.Compare):
            compared |= _compared_names(node)
    return {name: sets for name, sets in found.items() if sets[0] or sets[1]}


def method_list_places() -> tuple[list[str], list[str]]:
    """(places that spell out the method list or part of it: two method names or more in their literals, or an
    if-chain over two or more; places that test for one method by name)."""
    lists, checks = [], []
    for path in python_files(*CODE):
        for name, (listed, compared) in method_knowledge(parse(path)).items():
            where = f"{rel(path)}:{name} ({', '.join(sorted(listed | compared))})"
            if len(listed) >= 2 or len(compared) >= 2:
                lists.append(where)
            elif compared:
                checks.append(where)
    return sorted(lists), sorted(checks)


# -- run-finish blocks -------------------------------------------------------------------------------------------------
def run_finish_blocks() -> list[str]:
    """Functions that emit RunFinished (each one writes the end of a run: final ranking, answer, finish, Run)."""
    found = []
    for path in python_files("gear"):
        tree = parse(path)
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    isinstance(c, ast.Call) and ast.unparse(c.func).split(".")[-1] == "RunFinished"
                    for c in ast.walk(fn)):
                found.append(f"{rel(path)}:{fn.name}")
    return found


# -- type-only imports of a higher module ------------------------------------------------------------------------------
def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    return ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def imports(path: Path) -> Iterator[tuple[str, bool, int]]:
    """(imported module, whether only for type checking, line of the import) for every import in a gear module."""
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]

    def visit(node: ast.AST, typing_only: bool) -> Iterator[tuple[str, bool, int]]:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.body:
                yield from visit(child, True)
            for child in node.orelse:
                yield from visit(child, typing_only)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, typing_only, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield base, typing_only, node.lineno
            for alias in node.names:
                yield f"{base}.{alias.name}", typing_only, node.lineno
        for child in ast.iter_child_nodes(node):
            yield from visit(child, typing_only)

    yield from visit(parse(path), False)


def _ours(target: str, modules: set[str], importer: str) -> list[str]:
    parts = target.split(".")
    return [p for p in (".".join(parts[:n]) for n in range(2, len(parts) + 1))
            if p in modules and p != importer and not importer.startswith(p + ".")]


def type_only_upward_imports() -> list[str]:
    """`if TYPE_CHECKING:` imports whose target needs the importer at run time (module or package level): an arrow
    upwards that the runtime import graph does not show."""
    files = {module_name(p): p for p in python_files("gear")}
    modules = set(files)
    runtime = nx.DiGraph()
    typed: list[tuple[str, str, int]] = []
    for name, path in files.items():
        for target, typing_only, line in imports(path):
            for mod in _ours(target, modules, name):
                if typing_only:
                    typed.append((name, mod, line))
                else:
                    runtime.add_edge(name, mod)

    def package(module: str) -> str:
        return module.split(".")[1] if module.count(".") else module

    packages = nx.DiGraph((package(a), package(b)) for a, b in runtime.edges() if package(a) != package(b))
    upward: dict[tuple[str, int], str] = {}  # one per import statement
    for a, b, line in typed:
        module_cycle = b in runtime and a in runtime and nx.has_path(runtime, b, a)
        pa, pb = package(a), package(b)
        package_cycle = pa != pb and pb in packages and pa in packages and nx.has_path(packages, pb, pa)
        if module_cycle or package_cycle:
            upward.setdefault((a, line), f"{a} -> {b} (line {line})")
    return sorted(upward.values())


# -- long functions ----------------------------------------------------------------------------------------------------
def long_functions(limit: int = LONG) -> list[str]:
    found = []
    for path in python_files("gear", "studio"):
        for fn in ast.walk(parse(path)):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = fn.end_lineno - fn.lineno + 1  # type: ignore[operator]  # end_lineno is set by ast.parse
                if lines > limit:
                    found.append(f"{rel(path)}:{fn.name} ({lines} lines)")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print the places behind each count")
    args = parser.parse_args()
    lists, checks = method_list_places()
    counts = {
        "method_list_places": lists,
        "single_method_checks": checks,
        "run_finish_blocks": run_finish_blocks(),
        "type_only_upward_imports": type_only_upward_imports(),
        f"functions_over_{LONG}_lines": long_functions(),
    }
    for name, places in counts.items():
        print(name, len(places))
        if args.list:
            for place in places:
                print("   ", place)


if __name__ == "__main__":
    main()
