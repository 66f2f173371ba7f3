"""The house rules of the package layout, checked on the code itself: no import cycles among gear's modules, the engine
never imports the app (Streamlit, studio/, app_pages/, app.py), gear.trace stands below the engine, a package hands on
only its own names, and the two maps of the house — docs/architecture.md's packages and its Layout — name only what
exists (the Layout names every package too). Every import is an arrow: lazy imports inside functions, and imports under
`if TYPE_CHECKING:` too — they never run, but a module that names a higher one's types depends on it all the same (a
type-only import was how the runners used to reach the engine)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
GEAR = ROOT / "gear"
APP_SIDE = ("streamlit", "studio", "app_pages", "app")


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


# -- the app's wing in rooms by role: pages → views / gold → core -------------------------------------------------
STUDIO = ROOT / "studio"
APP_PAGES = ROOT / "app_pages"
#: each room of studio/ and app_pages/ (the page layouts) with its floor: an import runs to a lower floor or within
#: its own room, never up and never across (views and gold stand side by side and never import each other)
ROOMS = {"app_pages": 4, "studio.pages": 3, "studio.views": 2, "studio.gold": 2, "studio.core": 1}


def room_of(module: str) -> str:
    return next(room for room in ROOMS if module == room or module.startswith(room + "."))


def page_of(module: str) -> str | None:
    """The page a module belongs to: app_pages/<page>.py, or studio/pages/<page>[_<part>].py (what that page owns)."""
    if module.startswith("app_pages."):
        return module.split(".")[1]
    if module.startswith("studio.pages."):
        return module.split(".")[2].split("_")[0]
    return None


def wing_modules() -> dict[str, Path]:
    return {module_name(p): p for p in [*STUDIO.rglob("*.py"), *APP_PAGES.glob("*.py")] if p.name != "__init__.py"}


def wing_graph(extra: dict[str, str] | None = None) -> nx.DiGraph:
    """Edges module → module of studio/ and app_pages/ it imports; `extra` adds a module's source on top of a file's
    (a test's planted import)."""
    modules = wing_modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        found = imports(path) + (imports_in(extra[name], name) if extra and name in extra else [])
        for target in found:
            for known in modules:
                if (target == known or target.startswith(known + ".")) and known != name:
                    graph.add_edge(name, known)
    return graph


def wing_faults(graph: nx.DiGraph) -> list[str]:
    """What breaks the wing's rules: a cycle, an import up a floor or across rooms, a module importing another
    page's module (or any page's, outside app_pages/), and more than six floors of modules."""
    faults = [f"import cycle: {sorted(c)}" for c in nx.strongly_connected_components(graph) if len(c) > 1]
    for a, b in sorted(graph.edges()):
        ra, rb = room_of(a), room_of(b)
        if ra != rb and ROOMS[ra] <= ROOMS[rb]:
            faults.append(f"{a} imports {b}: {ra} may not import {rb}")
        if page_of(b) is not None and page_of(a) != page_of(b):
            faults.append(f"{a} imports {b}, a module of the {page_of(b)} page")
    if not faults:
        floors: dict[str, int] = {}
        for n in reversed(list(nx.topological_sort(graph))):
            floors[n] = 1 + max((floors[m] for m in graph.successors(n)), default=0)
        deepest = max(floors.values())
        if deepest > 7:  # app_pages/ over six floors of studio/
            faults.append(f"{deepest} floors: {sorted(floors.items(), key=lambda kv: -kv[1])[:4]}")
    return faults


def test_the_app_s_wing_stands_in_rooms_by_role() -> None:
    """As STORM's demo keeps its pages apart from shared helpers: app_pages/ → studio/pages/ → studio/views/ and
    studio/gold/ → studio/core/; a page's modules are imported by that page only (what two pages share lives in
    views/, gold/ or core/); lazy imports count; at most six floors of studio/ under the page files."""
    graph = wing_graph()
    assert graph.has_edge("studio.pages.ask", "studio.views.trace")  # the check would be empty if parsing failed
    assert {room_of(m) for m in graph} == set(ROOMS)  # every module sits in a room
    assert wing_faults(graph) == []


def test_the_wing_s_check_sees_a_page_importing_another_page_s_module() -> None:
    """The rule itself: the Compare page taking a helper from the Ask page's module is refused, by name."""
    planted = wing_graph({"app_pages.compare": "from studio.pages.ask import question_box\n"})
    assert wing_faults(planted) == ["app_pages.compare imports studio.pages.ask, a module of the ask page"]
    across = wing_graph({"studio.views.trace": "from studio.gold.panel import gold_panel\n"})
    assert "studio.views.trace imports studio.gold.panel: studio.views may not import studio.gold" in \
        wing_faults(across)


# -- docs/architecture.md names only what exists -----------------------------------------------------------------
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("config", "methods", "types", "files", "measures", "agent", "store", "retrieve", "index", "trace",
            "diagnosis", "eval", "extract", "llm", "embed", "data", "viz", "cli", "prompts", "parsing")


def doc_references() -> tuple[list[str], list[str]]:
    """(paths, dotted names) in the doc's code spans: `agent/steps.py:answer`, `gear/store/`, `llm.queue.ModelQueue`."""
    spans = {re.sub(r"\(.*\)$", "", s) for s in re.findall(r"`([^`\s]+)`", DOC.read_text(encoding="utf-8"))}
    paths = sorted(s for s in spans if re.fullmatch(r"[\w./]+(:[\w.]+)?", s) and ("/" in s or s.endswith(".py")))
    dotted = sorted(s for s in spans if re.fullmatch(rf"(gear\.|studio\.)?({'|'.join(PACKAGES)}|safe)\.[\w.]+", s)
                    and not s.endswith(".py"))
    return paths, dotted


def defines(module: Path, name: str) -> bool:
    """Whether `name` ("f", "Class" or "Class.method") is defined at the top of a module."""
    scope: list[ast.stmt] = ast.parse(module.read_text(encoding="utf-8")).body
    for part in name.split("."):
        found = next((node for node in scope if getattr(node, "name", None) == part or any(
            isinstance(target, ast.Name) and target.id == part
            for target in (node.targets if isinstance(node, ast.Assign) else
                           [node.target] if isinstance(node, ast.AnnAssign) else []))), None)
        if found is None:
            return False
        scope = getattr(found, "body", [])
    return True


def test_every_path_the_architecture_doc_names_exists() -> None:
    paths, dotted = doc_references()
    assert "agent/steps.py:answer" in paths and "gear/methods.py" in paths  # the extraction sees the doc's forms
    missing = []
    for ref in paths:
        path, _, name = ref.partition(":")
        file = next((f for f in (ROOT / path, GEAR / path) if f.exists()), None)  # `gear/x.py`, `app.py`; `x.py`
        if file is None or (name and not defines(file, name)):
            missing.append(ref)
    for ref in dotted:
        parts = ref.removeprefix("gear.").split(".")
        top = "studio" if parts[0] in ("studio", "safe") else "gear"
        parts = parts[1:] if parts[0] == "studio" else parts
        for n in range(len(parts), 0, -1):  # the longest importable module, then attributes
            try:
                obj: object = importlib.import_module(".".join([top, *parts[:n]]))
            except ImportError:
                continue
            for attr in parts[n:]:
                obj = getattr(obj, attr, None)
            if obj is None:
                missing.append(ref)
            break
        else:
            missing.append(ref)
    assert missing == [], f"docs/architecture.md names what does not exist: {missing}"


# -- docs/architecture.md's "Layout" is a true map ----------------------------------------------------------------
LAYOUT = ROOT / "docs" / "architecture.md"  # the README links to it


def layout_map() -> dict[Path, set[Path]]:
    """Each entry of the Layout block (a path) → the files and folders its description names, resolved where
    they exist (the entry's folder, its parent, the project root); a line indented past the names continues the entry
    above it."""
    section = LAYOUT.read_text(encoding="utf-8").split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the Layout section holds one map"
    entries: dict[Path, set[Path]] = {}
    entry = ROOT
    for line in blocks[0].splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if indent <= 2:
            name, _, description = line.strip().partition(" ")
            entry = (GEAR if indent == 2 else ROOT) / name
            entries[entry] = set()
        else:
            description = line
        for mention in re.findall(r"(?<![\w./-])((?:\w+/)*\w+(?:\.py|/))(?=[\s,;:)]|$)", description):
            bases = [entry, entry.parent, ROOT] if entry.is_dir() else [entry.parent, ROOT]
            entries[entry].add(next((b / mention for b in bases if (b / mention).exists()), entry / mention))
    return entries


def test_every_path_the_layout_names_exists() -> None:
    entries = layout_map()
    named = set(entries) | set().union(*entries.values())
    assert {GEAR / "agent" / "event_builders.py", GEAR / "diagnosis" / "stage_rules.py", GEAR / "llm" / "speed.py",
            ROOT / "app_pages"} <= named  # the parser sees the map's forms: entries, names in brackets, a continuation
    missing = sorted(str(p.relative_to(ROOT)) for p in named if not p.exists())
    assert missing == [], f"docs/architecture.md's Layout names what does not exist: {missing}"


def test_the_layout_names_every_package_and_top_level_module() -> None:
    entries = layout_map()
    named = {p.resolve() for p in set(entries) | set().union(*entries.values())}
    packages = {p.parent.resolve() for p in GEAR.rglob("__init__.py") if p.parent != GEAR}
    modules = {p.resolve() for p in GEAR.glob("*.py")}
    left_out = sorted(str(p.relative_to(ROOT)) for p in (packages | modules) - named)
    assert left_out == [], f"docs/architecture.md's Layout leaves out: {left_out}"


# -- the contract sits below the engine, and each package hands on only its own names ----------------------------
def test_trace_imports_nothing_of_the_engine() -> None:
    """gear.trace is what a UI reads without an index or a model: it stands on the record types alone (and on
    gear.saved, how every saved file is read)."""
    assert set(package_graph().successors("trace")) <= {"files", "methods", "saved", "types"}


@pytest.mark.parametrize("init", sorted(p for p in GEAR.rglob("__init__.py") if p.parent != GEAR),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_a_package_hands_on_only_its_own_names(init: Path) -> None:
    """A package's `__all__` names what its own modules define; only the front doors (gear/__init__.py,
    gear/events.py) gather."""
    package = module_name(init)
    tree = ast.parse(init.read_text(encoding="utf-8"))
    source = {alias.asname or alias.name: node.module for node in tree.body if isinstance(node, ast.ImportFrom)
              for alias in node.names if node.module}
    exported = next((ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                     and any(getattr(t, "id", None) == "__all__" for t in node.targets)
                     and isinstance(node.value, ast.List | ast.Tuple)), [])
    borrowed = [name for name in exported if name in source
                and not (source[name] == package or source[name].startswith(package + "."))]
    assert borrowed == [], f"{package} hands on names of other packages: {borrowed}"


# -- each package's docstring names its modules -------------------------------------------------------------------
@pytest.mark.parametrize("init", sorted(p for p in [*GEAR.rglob("__init__.py"), *STUDIO.rglob("__init__.py")]
                                        if p.parent != GEAR), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_package_s_docstring_names_its_modules(init: Path) -> None:
    """A reader opening a package finds each of its modules named, with its job, in the package's docstring (the
    front door, gear/__init__.py, names the user's few names instead)."""
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    modules = {p.stem for p in init.parent.glob("*.py") if p.name != "__init__.py"} | {
        p.name for p in init.parent.iterdir() if (p / "__init__.py").is_file()}
    unnamed = sorted(m for m in modules if not re.search(rf"(?<![\w-]){m}(?![\w-])", doc))
    assert unnamed == [], f"{init.relative_to(ROOT)}'s docstring leaves out: {unnamed}"
