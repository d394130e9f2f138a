"""The layout budgets of the core redesign, checked on the source tree.

Small parts with one owner each: no module over 600 lines (the generated-looking wire
Structs of ``_schema.py`` excepted), no class over 450 lines, no import circle between the
package's modules, nothing in the core importing the transport, the command line or the
testing kit, and the transport not importing the command line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import acp_client

PACKAGE = Path(acp_client.__file__).parent
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 450
EXEMPT_MODULES = {"acp_client._schema"}
#: the edges of the package: everything else is the core (decode, reduce, track, replay)
# `acp_client.__main__` is `python -m acp_client`: the command line, an edge like the CLI
EDGES = ("acp_client.transport", "acp_client.cli", "acp_client.testing", "acp_client.__main__")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import a module can run: at the top and deferred into functions alike (a
    deferred import is still a dependency); only ``if TYPE_CHECKING:`` blocks are left out."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            yield from (n for block in child.orelse for n in _imports_in(block))
        else:
            yield from _imports(child)


def _imports_in(node: ast.stmt) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _imports(node)


def _resolve(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The package modules an import statement loads."""
    if isinstance(node, ast.Import):
        targets = {alias.name for alias in node.names}
    else:
        is_package = MODULES[module].name == "__init__.py"
        base = module.split(".")
        if node.level:
            base = base[: len(base) - node.level + (1 if is_package else 0)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        targets = {prefix} | {f"{prefix}.{alias.name}" for alias in node.names}
    loaded = set()
    for target in targets:
        # importing a.b.c loads a, a.b and a.b.c
        parts = target.split(".")
        loaded |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return {name for name in loaded if name in MODULES and name != module}


def _graph() -> dict[str, set[str]]:
    graph = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges: set[str] = set()
        for node in _imports(tree):
            edges |= _resolve(module, node)
        graph[module] = edges
    return graph


GRAPH = _graph()


def _reachable(start: str, graph: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _is_edge(module: str, edges: tuple[str, ...] = EDGES) -> bool:
    return any(module == edge or module.startswith(edge + ".") for edge in edges)


def test_no_module_is_over_budget() -> None:
    over = {
        module: lines
        for module, path in MODULES.items()
        if module not in EXEMPT_MODULES
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert over == {}


def test_no_class_is_over_budget() -> None:
    over = {}
    for module, path in MODULES.items():
        if module in EXEMPT_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_CLASS_LINES:
                    over[f"{module}.{node.name}"] = lines
    assert over == {}


def test_no_import_circle() -> None:
    # A package's __init__ importing its own submodules is how a package exposes them, not a
    # circle: leave those edges out, keep every other.
    graph = {
        module: {
            dep
            for dep in deps
            if not (MODULES[module].name == "__init__.py" and dep.startswith(module + "."))
        }
        for module, deps in GRAPH.items()
    }
    circles = sorted(module for module in graph if module in _reachable(module, graph))
    assert circles == []


def test_the_core_never_imports_the_edges() -> None:
    leaks = {}
    for module in GRAPH:
        if _is_edge(module) or module == "acp_client":
            continue
        bad = sorted(dep for dep in _reachable(module, GRAPH) if _is_edge(dep))
        if bad:
            leaks[module] = bad
    assert leaks == {}


def test_the_top_level_imports_no_edge() -> None:
    assert sorted(dep for dep in _reachable("acp_client", GRAPH) if _is_edge(dep)) == []


def test_the_transport_does_not_import_the_command_line() -> None:
    for module in GRAPH:
        if _is_edge(module, ("acp_client.transport",)):
            reached = _reachable(module, GRAPH)
            assert not any(_is_edge(dep, ("acp_client.cli",)) for dep in reached), module


def test_the_checks_see_a_violation() -> None:
    # The graph walk is not vacuous: the transport reaches the connection through the core.
    assert "acp_client._connection" in _reachable("acp_client.transport", GRAPH)
    circular = {"a": {"b"}, "b": {"a"}}
    assert "a" in _reachable("a", circular)
