"""The house's shape in numbers, counted on the code with `ast`: where the method list is spelled out, how
many places finish a run, how many type-only imports point at a higher module, which functions run past 60 lines,
and the import graph between gear's packages: its layers, the arrows that run back up, and — with --walk —
how one GeAR run moves through those layers. Run it before and after a change to the layout and compare.

    python bench/house.py [--list] [--walk]

Layers: the package graph (every import is an arrow, lazy and `if TYPE_CHECKING:` ones too, as
tests/unit/test_architecture.py counts them; gear/__init__.py, the front door, left out) ranked by the longest path
down to a package that imports none of gear; `package_layers` is how many ranks there are. An arrow runs back up when
its target can reach its source (a cycle between packages: 0 in a layered house).

The walk (--walk) runs the paper's walk-through question with GeAR on the walk-through demo index (built on first
use, in seconds), every LLM answer replayed from assets/llm_cache (no model is asked), and follows the calls the
agent's code makes into another package, in order, consecutive repeats merged: `walk_moves` steps, of which
`walk_moves_up` go to a higher layer than the step before (the run going back up the house to fetch something), and
`walk_agent_trace_returns` times the agent went back to gear.trace after a stage below it.

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
CODE = ("gear", "studio", "app_pages", "app.py")
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


# -- the import graph's layers, and one GeAR run through them ----------------------------------------------------------
def package_of(module: str) -> str:
    """gear.agent.steps → agent; gear.config → config; gear → gear (the front door)."""
    return module.split(".")[1] if module.count(".") else module


def package_graph() -> nx.DiGraph:
    """Package → package it imports (any import, as the architecture test counts them), the front door left out."""
    files = {module_name(p): p for p in python_files("gear")}
    modules = set(files)
    graph = nx.DiGraph()
    for name, path in files.items():
        for target, _, _ in imports(path):
            for mod in _ours(target, modules, name):
                a, b = package_of(name), package_of(mod)
                if a != b and "gear" not in (a, b):
                    graph.add_edge(a, b)
    return graph


def layers(graph: nx.DiGraph) -> dict[str, int]:
    """Each package's rank: 0 for one that imports none of gear, else one above the highest it imports (cycles
    condensed, so that a house with a cycle still gets ranks)."""
    condensed = nx.condensation(graph)
    rank: dict[int, int] = {}
    for node in reversed(list(nx.topological_sort(condensed))):
        rank[node] = max((rank[m] + 1 for m in condensed.successors(node)), default=0)
    return {package: rank[condensed.graph["mapping"][package]] for package in graph}


def upward_arrows(graph: nx.DiGraph) -> list[str]:
    """Package arrows whose target reaches back to their source."""
    return sorted(f"{a} -> {b}" for a, b in graph.edges() if nx.has_path(graph, b, a))


def layer_list(rank: dict[str, int]) -> list[str]:
    return [f"{n}: {', '.join(sorted(p for p, r in rank.items() if r == n))}" for n in sorted(set(rank.values()))]


def gear_walk() -> list[tuple[str, str]]:
    """(calling module, package called) for every call from the agent's code into another package during one GeAR
    run of the walk-through question, replayed; consecutive calls into the same package merged."""
    import sys

    sys.path.insert(0, str(ROOT))  # this checkout's gear and studio, whichever one the venv installed
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.questions import load_qa
    from studio.core.demos import DEMOS, ensure_demo_index
    from studio.core.paths import LLM_CACHE

    question = next(q for q in load_qa(DEMOS["walkthrough"].qa)[0] if q.id == "paper_walkthrough")
    settings = Settings(_env_file=None).with_(retriever="hybrid", method="gear", llm="replay", llm_cache_dir=LLM_CACHE)
    engine = Engine.open(ensure_demo_index("walkthrough"), settings)
    gear_dir = str(ROOT / "gear") + "/"

    def module_of(filename: str) -> str | None:
        return module_name(Path(filename)) if filename.startswith(gear_dir) else None

    walk: list[tuple[str, str]] = []

    def profile(frame, event, arg):  # type: ignore[no-untyped-def]
        if event != "call" or frame.f_back is None or frame.f_code.co_name == "<module>":
            return
        callee, caller = module_of(frame.f_code.co_filename), module_of(frame.f_back.f_code.co_filename)
        if not (callee and caller and package_of(caller) == "agent" and package_of(callee) != "agent"):
            return
        if not walk or walk[-1][1] != package_of(callee):
            walk.append((caller, package_of(callee)))

    sys.setprofile(profile)
    try:
        run = engine.retrieve(question.question, k=settings.agent_k, settings=settings)
    finally:
        sys.setprofile(None)
    assert run.answer is not None, "the walk-through run did not finish"
    return walk


def walk_counts(walk: list[tuple[str, str]], rank: dict[str, int]) -> dict[str, list[str]]:
    steps = [f"{caller} -> {package} (layer {rank.get(package, '?')})" for caller, package in walk]
    up = [steps[i] for i in range(1, len(walk)) if rank.get(walk[i][1], 0) > rank.get(walk[i - 1][1], 0)]
    back_to_trace = [steps[i] for i in range(1, len(walk)) if walk[i][1] == "trace"
                     and rank.get(walk[i - 1][1], 0) < rank.get("trace", 0)]
    return {"walk_moves": steps[1:], "walk_moves_up": up, "walk_agent_trace_returns": back_to_trace}


# -- the app's wing: rooms, floors, and the walk of a question from a page into the engine ----------------------------
WALK_PAGES = ("app_pages.ask", "app_pages.compare")
ENGINE = "gear.agent.engine"


def room(module: str) -> str:
    """A module's room: app_pages, studio's sub-package (studio.core, …) or studio itself for a module at its top,
    gear's package (gear.agent, …)."""
    parts = module.split(".")
    if parts[0] == "app_pages":
        return "app_pages"
    if parts[0] == "studio":
        return f"studio.{parts[1]}" if len(parts) > 2 or (ROOT / "studio" / parts[-1]).is_dir() else "studio"
    return f"gear.{parts[1]}" if len(parts) > 1 else module


def code_graph() -> nx.DiGraph:
    """Module → module it imports (every import, lazy and type-only too), over app_pages/, studio/ and gear/."""
    files = {module_name(p): p for p in python_files("app_pages", "studio", "gear")}
    modules = set(files)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in files.items():
        for target, _, _ in imports(path):
            for mod in _ours(target, modules, name):
                graph.add_edge(name, mod)
    return graph


def wing_counts() -> dict[str, list[str]]:
    """studio/'s rooms with their modules; the wing's floors (app_pages/ over studio/: the longest chain of imports);
    imports that climb (to a module on a floor of rooms at or above the importer's: a room cycle); and, for each
    walked page, the app's modules it reaches that import the agent (gear.agent…) themselves — the doors a question
    takes into the engine — each with its room, and the rooms it passes through."""
    graph = code_graph()
    wing = graph.subgraph(m for m in graph if m.split(".")[0] in ("app_pages", "studio")).copy()
    rooms: dict[str, list[str]] = {}
    for m in sorted(wing):
        rooms.setdefault(room(m), []).append(m)
    rooms_graph = nx.DiGraph((room(a), room(b)) for a, b in wing.edges() if room(a) != room(b))
    climbing = [f"{a} -> {b}" for a, b in sorted(wing.edges()) if room(a) != room(b)
                and nx.has_path(rooms_graph, room(b), room(a))]
    chain = nx.dag_longest_path(wing) if nx.is_directed_acyclic_graph(wing) else []
    counts: dict[str, list[str]] = {
        "studio_rooms": [f"{r}: {len(ms)} modules" for r, ms in rooms.items()],
        "wing_floors": chain,  # the longest chain of imports, top down
        "wing_room_climbs": climbing,
    }
    for page in WALK_PAGES:
        reach = nx.descendants(graph, page) if page in graph else set()
        doors = sorted(m for m in reach | {page} if m.split(".")[0] in ("app_pages", "studio")
                       and any(t.startswith("gear.agent") for t in graph.successors(m)))
        counts[f"walk_{page.split('.')[1]}_engine_doors"] = [
            f"{m} [{room(m)}] -> {', '.join(sorted(t for t in graph.successors(m) if t.startswith('gear.agent')))}"
            for m in doors]
        counts[f"walk_{page.split('.')[1]}_wing_rooms"] = sorted({room(m) for m in reach
                                                                  if m.split(".")[0] == "studio"})
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print the places behind each count")
    parser.add_argument("--walk", action="store_true", help="also follow one GeAR run (walk-through, replayed)")
    parser.add_argument("--root", type=Path, help="measure another checkout (its code, this script's counting)")
    args = parser.parse_args()
    if args.root:
        global ROOT
        ROOT = args.root.resolve()
    lists, checks = method_list_places()
    graph = package_graph()
    rank = layers(graph)
    counts = {
        "method_list_places": lists,
        "single_method_checks": checks,
        "run_finish_blocks": run_finish_blocks(),
        "type_only_upward_imports": type_only_upward_imports(),
        f"functions_over_{LONG}_lines": long_functions(),
        "package_layers": layer_list(rank),
        "package_arrows": sorted(f"{a} -> {b}" for a, b in graph.edges()),
        "upward_arrows": upward_arrows(graph),
        **wing_counts(),
    }
    if args.walk:
        counts.update(walk_counts(gear_walk(), rank))
    for name, places in counts.items():
        print(name, len(places))
        if args.list:
            for place in places:
                print("   ", place)


if __name__ == "__main__":
    main()
