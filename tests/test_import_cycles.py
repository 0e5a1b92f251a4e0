"""No import cycle in mlitool/: every module-level and function-level import of an mlitool module
is an edge; the strongly connected components of that graph must all be single modules."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """{module: the package's modules it imports} for the package at `package_dir`."""
    top = package_dir.name
    modules: dict[str, Path] = {}
    for path in package_dir.rglob("*.py"):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                # `from pkg import mod` names a module; `from mod import name` the module itself
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            for target in targets:
                if target == top or target.startswith(top + "."):
                    found = known(target)
                    if found and found != module:
                        edges[module].add(found)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
    return found


def test_mlitool_has_no_import_cycle():
    edges = import_graph(ROOT / "mlitool")
    assert "mlitool.execute.call" in edges["mlitool.execute.float_ops"]  # the graph is read
    assert cycles(edges) == []


def test_nothing_below_imports_the_cli():
    """Data flows one way: the CLI calls the pipeline, never the reverse (only `python -m mlitool`
    starts it)."""
    edges = import_graph(ROOT / "mlitool")
    users = sorted(
        module
        for module, targets in edges.items()
        if not module.startswith("mlitool.cli")
        and module != "mlitool.__main__"
        and any(t == "mlitool.cli" or t.startswith("mlitool.cli.") for t in targets)
    )
    assert "mlitool.cli.commands.run" in edges and "mlitool.plumbing.fsio" in edges
    assert users == []


def test_every_package_is_installed():
    """setuptools' find (pyproject.toml) installs only folders with an __init__.py: a folder of
    modules without one works from a checkout and is missing from an installed mlitool."""
    folders = {p.parent for p in (ROOT / "mlitool").rglob("*.py")}
    missing = sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").exists())
    assert len(folders) > 10 and missing == []


def test_a_cycle_is_found(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    (pkg / "d.py").write_text("from pkg import a\n")
    edges = import_graph(pkg)
    assert edges["pkg.sub.b"] == {"pkg.c"} and edges["pkg.d"] == {"pkg.a"}
    assert cycles(edges) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
