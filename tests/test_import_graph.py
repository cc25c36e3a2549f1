"""The file-level import graph of the code outside tests/: no cycle, no upward import.

Every `import` and `from … import` statement counts wherever it stands: at the top, inside a
function (a lazy import still runs, and still ties the two files together), under
`if TYPE_CHECKING:` (a type checker follows it like any other). An edge goes from a file to the
file it names: `from a.b import c` is an edge to a/b/c.py when c is a module, else to
a/b/__init__.py. A package's own `__init__` is not added implicitly, so a package that re-exports
a name (bot/conversation/__init__.py) makes no cycle with its modules unless one of them imports
the package back (which the upward rule below forbids).

"Upward", precisely:
1. Layers, low to high: planner/ (the pure core) < bot/ (conversation, state, prices, words) <
   adapters/ (one package per surface) < tools/ and bench/ (scripts). A module of planner/, bot/
   or adapters/ never imports a module of a higher layer.
2. A module never imports the `__init__` of a package that contains it (its own package or any
   parent): re-exports are for callers outside the package, and importing them from inside
   turns the package into a circle.
3. Inside bot/, bot.conversation is the top: no other bot module imports it (the stores, prices
   and words sit below the conversation that uses them).

Run `python -m tests.test_import_graph` to print the cycles and upward imports it finds.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("planner", "bot", "adapters", "tools", "bench")
LAYER = {"planner": 0, "bot": 1, "adapters": 2, "tools": 3, "bench": 3}
CHECKED_LAYERS = ("planner", "bot", "adapters")
BOT_TOP = "bot.conversation"

Graph = dict[str, set[str]]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the checked folders, by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            found[module_name(path, root)] = path
    return found


def _is_package(name: str, known: dict[str, Path]) -> bool:
    return known[name].name == "__init__.py"


def _imported(
    node: ast.Import | ast.ImportFrom, name: str, known: dict[str, Path]
) -> Iterator[str]:
    """The known modules one import statement of module `name` names."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            target = alias.name
            while target and target not in known:  # `import a.b.c` of a non-module: its package
                target = target.rpartition(".")[0]
            if target:
                yield target
        return
    base = node.module or ""
    if node.level:
        package = name if _is_package(name, known) else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        if submodule in known:
            yield submodule
        elif base in known:
            yield base


def import_graph(root: Path = ROOT) -> Graph:
    known = modules(root)
    graph: Graph = {name: set() for name in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[name].update(t for t in _imported(node, name, known) if t != name)
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted: every
    module of one can reach every other, so each is one circle of imports to break."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:  # iterative, so deep graphs need no recursion limit
        nonlocal counter
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(found)


def _top(name: str) -> str:
    return name.split(".")[0]


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def upward_imports(graph: Graph, known: dict[str, Path]) -> list[str]:
    """Each import that breaks one of the module docstring's three rules, in words."""
    found: list[str] = []
    for name, targets in sorted(graph.items()):
        if _top(name) not in CHECKED_LAYERS:
            continue
        for target in sorted(targets):
            if LAYER[_top(target)] > LAYER[_top(name)]:
                found.append(f"{name} imports {target}: a higher layer")
            elif _is_package(target, known) and _within(name, target):
                found.append(f"{name} imports {target}: its own package's __init__")
            elif _top(name) == "bot" and _within(target, BOT_TOP) and not _within(name, BOT_TOP):
                found.append(f"{name} imports {target}: above it in bot/")
    return found


def _in_planner(component: Iterable[str]) -> bool:
    return all(_top(name) == "planner" for name in component)


def test_the_graph_counts_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    (tmp_path / "bot" / "inner").mkdir(parents=True)
    files = {
        "bot/__init__.py": "",
        "bot/inner/__init__.py": "from bot.inner.a import A\n",
        "bot/inner/a.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from bot import b\nA = 1\n"
        ),
        "bot/b.py": "def f():\n    from .inner import a\n    import bot.inner\n",
    }
    for relative, text in files.items():
        (tmp_path / relative).write_text(text)
    for package in PACKAGES:
        (tmp_path / package).mkdir(exist_ok=True)
    graph = import_graph(tmp_path)
    assert graph["bot.inner.a"] == {"bot.b"}
    assert graph["bot.b"] == {"bot.inner.a", "bot.inner"}
    assert cycles(graph) == [["bot.b", "bot.inner", "bot.inner.a"]]


# The repository's graph, built once for the tests that read it (parsing every file is most of
# their time).
@pytest.fixture(scope="module")
def graph() -> Graph:
    return import_graph()


@pytest.fixture(scope="module")
def found_cycles(graph: Graph) -> list[list[str]]:
    return cycles(graph)


def test_no_import_cycle_outside_planner(found_cycles: list[list[str]]) -> None:
    outside = [c for c in found_cycles if not _in_planner(c)]
    assert outside == []


def test_no_import_cycle_in_planner(found_cycles: list[list[str]]) -> None:
    inside = [c for c in found_cycles if _in_planner(c)]
    assert inside == []


def test_no_upward_import(graph: Graph) -> None:
    assert upward_imports(graph, modules()) == []


def _runtime_imports(path: Path) -> Iterator[str]:
    """The modules a file imports when it runs: every import but those under `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
        for statement in node.body
        for inner in ast.walk(statement)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module


# The state backend is the one place that makes a Redis link (so the stores choose no backend
# themselves), and only the link and the error policy load the redis client.
REDIS_LOADERS = {
    "bot.state.redis_link": {"bot.state.backend"},
    "redis": {"bot.state.redis_link", "bot.state.redis_errors"},
}


def test_only_the_state_backend_loads_redis() -> None:
    found = [
        f"{name} imports {target}"
        for name, path in modules().items()
        if _top(name) == "bot"
        for target in _runtime_imports(path)
        for loaded, allowed in REDIS_LOADERS.items()
        if _within(target, loaded) and name not in allowed
    ]
    assert found == []


def main() -> int:
    graph = import_graph()
    found = cycles(graph)
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} import edges")
    print(f"{len(found)} import cycles ({sum(map(_in_planner, found))} inside planner/)")
    for component in found:
        print(f"  cycle of {len(component)}: {' ↔ '.join(component)}")
    upward = upward_imports(graph, modules())
    print(f"{len(upward)} upward imports")
    for line in upward:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
