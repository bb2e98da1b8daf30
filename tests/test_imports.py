"""No import circle among the modules of `app/`: every `import` and `from ... import` counts,
at module level, inside functions and under `TYPE_CHECKING` alike."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app"

Graph = dict[str, set[str]]


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Each module under `root` by dotted name (a package by its own name): its file, and
    whether it is a package's `__init__`."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def import_graph(root: Path) -> Graph:
    """For each module under `root`, the modules under `root` it imports: `from a import b`
    imports the module `a.b` when there is one, else `a`."""
    known = modules(root)

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph: Graph = {}
    for name, (path, package) in known.items():
        imported: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                imported |= {resolve(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = name if package else name.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        here = here.rpartition(".")[0]
                    base = f"{here}.{base}" if base else here
                imported |= {resolve(f"{base}.{alias.name}") for alias in node.names}
        graph[name] = {target for target in imported if target and target != name}
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_of_app_imports_itself_through_others() -> None:
    assert circles(import_graph(APP)) == []


def test_the_check_finds_a_circle_however_it_is_imported(tmp_path: Path) -> None:
    package = tmp_path / "app"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from app.sub import b\n")
    (package / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n"
    )
    (package / "sub" / "c.py").write_text("def f():\n    import app.a\n")
    (package / "d.py").write_text("from app import a\n")
    assert circles(import_graph(package)) == [["app.a", "app.sub.b", "app.sub.c"]]
