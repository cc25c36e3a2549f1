"""planner/'s folders follow the pipeline: no import cycle, and no module imports a later stage.

Every `import` and `from … import` statement counts wherever it stands (at the top, inside a
function, under `if TYPE_CHECKING:`): a lazy import still ties two files together. The stages,
lowest first (a module imports only its own stage or lower ones):
0. the public types and small tools: spec (JobSpec), plan (Plan), errors, units, patterns,
   data_files (where planner/data lies);
1. catalog/ (models, cards, prices, stack profiles: data read from planner/data);
2. job/ (ResolvedJob, Patch) and parsing/ (free text → JobSpec);
3. estimate/ (memory per GPU, time per token), which reads a ResolvedJob;
4. resolve/ (JobSpec → ResolvedJob: defaults, post-training, model switches), which asks the
   estimate whether a default DDP layout fits the card the user named;
5. market/ (option rows, picks, suggestions, managed services, solving);
6. the plan and what reads it: planner.planner (make_plan), anchor, context_curve, explain,
   run_config/.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import cache
from pathlib import Path

PLANNER = Path(__file__).resolve().parents[1] / "planner"
STAGES = (
    (
        "planner.spec",
        "planner.plan",
        "planner.errors",
        "planner.units",
        "planner.patterns",
        "planner.words",
        "planner.messages",
        "planner.data_files",
    ),
    ("planner.catalog",),
    ("planner.job", "planner.parsing"),
    ("planner.estimate",),
    ("planner.resolve",),
    ("planner.market",),
)
TOP_STAGE = len(STAGES)


def _module(path: Path) -> str:
    parts = ["planner", *path.relative_to(PLANNER).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _stage(module: str) -> int:
    for stage, prefixes in enumerate(STAGES):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return stage
    return TOP_STAGE


def _targets(node: ast.Import | ast.ImportFrom, module: str, known: set[str]) -> set[str]:
    """The planner modules one import statement names (a name's module, else its package)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.rsplit(".", node.level)[0]
            base = f"{package}.{base}" if base else package
        names = [f"{base}.{alias.name}" for alias in node.names]
    found = set()
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name:
            found.add(name)
    return found


@cache  # parsing every planner file is most of these tests' time: once for all of them
def planner_graph() -> dict[str, set[str]]:
    paths = {_module(path): path for path in sorted(PLANNER.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
        named = set().union(*(_targets(node, module, set(paths)) for node in imports))
        graph[module] = named - {module}
    return graph


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph[module])
    return seen


def test_no_import_cycle_in_planner() -> None:
    graph = planner_graph()
    assert sorted(m for m in graph if m in _reachable(graph, m)) == []


def _imports_where(rule: Callable[[str, str], bool]) -> list[str]:
    """Each import (module, target) of planner/ that `rule` picks, in words."""
    return [
        f"{module} imports {target}"
        for module, targets in sorted(planner_graph().items())
        for target in sorted(targets)
        if rule(module, target)
    ]


def test_no_planner_module_imports_a_later_stage() -> None:
    assert _imports_where(lambda module, target: _stage(target) > _stage(module)) == []


def _is_own_package(module: str, target: str) -> bool:
    package = PLANNER.parent / target.replace(".", "/") / "__init__.py"
    return module.startswith(target + ".") and package.exists()


def test_no_planner_module_imports_its_own_package() -> None:
    assert _imports_where(_is_own_package) == []


def test_the_graph_counts_lazy_and_type_checking_imports() -> None:
    graph = planner_graph()
    # planner/estimate/memory/estimate.py names ResolvedJob under TYPE_CHECKING only.
    assert "planner.job.resolved" in graph["planner.estimate.memory.estimate"]
    # planner/__init__.py names make_plan's module under TYPE_CHECKING (and loads it lazily).
    assert "planner.planner" in graph["planner"]
