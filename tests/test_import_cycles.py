"""No import cycle in mlitool/, between modules or between packages: every module-level and
function-level import of an mlitool module is an edge, to that module and to the `__init__` of
each package above it (Python runs those first); the strongly connected components of that
graph, and of the graph of packages it induces, must all be single nodes. Package `__init__`
files only hand names on, no folder holds more than 25 modules, no module more than 600 lines."""

from __future__ import annotations

import ast
import subprocess
import sys
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
                    # importing a.b.c runs a/__init__ and a/b/__init__ first
                    parent = (found or "").rpartition(".")[0]
                    while parent and parent != top:
                        if parent != module and parent in modules:
                            edges[module].add(parent)
                        parent = parent.rpartition(".")[0]
    return edges


def package_graph(edges: dict[str, set[str]], top: str = "mlitool") -> dict[str, set[str]]:
    """The edges between packages that `edges` induce. A module of a subpackage stands for its
    package; a package's `__init__` is a node of its own (`pkg.__init__`: importing any module
    of the package runs it, so it must not import the package's modules); a module at the top
    (mlitool/ir.py...) is a node of its own: the top folder is a namespace, not a layer."""
    packages = {m for m in edges if any(o.startswith(m + ".") for o in edges)}

    def node(module: str) -> str:
        if module in packages:
            return module + ".__init__"
        parent = module.rpartition(".")[0]
        return module if parent == top else parent

    graph: dict[str, set[str]] = {}
    for module, targets in edges.items():
        graph.setdefault(node(module), set())
        for target in targets:
            if node(target) != node(module):
                graph[node(module)].add(node(target))
    for targets in list(graph.values()):
        for t in targets:
            graph.setdefault(t, set())
    return graph


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
    # the graph is read, parent packages included
    assert "mlitool.execute.reference.call" in edges["mlitool.ops.conv.float_mode"]
    assert "mlitool.execute.reference" in edges["mlitool.ops.conv.float_mode"]
    assert cycles(edges) == []


def test_no_import_cycle_between_packages():
    graph = package_graph(import_graph(ROOT / "mlitool"))
    assert "mlitool.execute.reference" in graph["mlitool.ops.conv"]  # the graph is read
    assert cycles(graph) == []


def test_the_stages_never_import_an_op_family():
    """Only the entry points load the families (`mlitool.op_families`); everything else reads
    the registry (`mlitool.ops.spec`)."""
    edges = import_graph(ROOT / "mlitool")
    entries = {"mlitool.pipeline", "mlitool.cli.inspect_cmd"}
    registry = {"mlitool.ops", "mlitool.ops.spec"}

    def family(module: str) -> bool:
        return module.startswith("mlitool.ops.") and module not in registry

    users = sorted(
        module
        for module, targets in edges.items()
        if not family(module)
        and module not in entries | {"mlitool.op_families"}
        and any(family(t) for t in targets)
    )
    assert users == []


def test_only_the_entry_points_load_the_families():
    """The main process's entry points, and the job contexts of worker processes (each worker is
    a fresh interpreter, an entry point of its own: `plumbing.parallel` runs their `setup`)."""
    edges = import_graph(ROOT / "mlitool")
    loaders = sorted(m for m, targets in edges.items() if "mlitool.op_families" in targets)
    assert loaders == [
        "mlitool.cli.inspect_cmd",
        "mlitool.pipeline",
        "mlitool.run",
        "mlitool.tune.evaluate",
        "mlitool.verify.command",
    ]


def test_package_inits_only_hand_names_on():
    inits = {
        str(p.relative_to(ROOT)): len(p.read_text().splitlines())
        for p in (ROOT / "mlitool").rglob("__init__.py")
    }
    assert len(inits) > 10 and {p: n for p, n in inits.items() if n > 40} == {}


def test_folders_and_modules_have_a_sane_size():
    """One job per module, not a line limit: these are sanity bounds."""
    folders: dict[str, int] = {}
    for p in (ROOT / "mlitool").rglob("*.py"):
        folders[str(p.parent.relative_to(ROOT))] = (
            folders.get(str(p.parent.relative_to(ROOT)), 0) + 1
        )
    assert {f: n for f, n in folders.items() if n > 25} == {}
    long = {
        str(p.relative_to(ROOT)): n
        for p in (ROOT / "mlitool").rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 600
    }
    assert long == {}


def test_reading_a_model_loads_few_modules():
    """`mlitool.tflite.reader` needs the IR and the registry, not lowering or the executors."""
    code = (
        "import sys, mlitool.tflite.reader; "
        "print(sorted(m for m in sys.modules if m.startswith('mlitool')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = eval(out.stdout)  # a list of str
    assert len(loaded) <= 35, loaded
    assert not [m for m in loaded if m.startswith(("mlitool.execute", "mlitool.mli"))]
    assert {m for m in loaded if m.startswith("mlitool.ops")} == {"mlitool.ops", "mlitool.ops.spec"}


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
    assert "mlitool.cli.run_cmd" in edges and "mlitool.plumbing.fsio" in edges
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
    assert edges["pkg.a"] == {"pkg.sub", "pkg.sub.b"}  # pkg/sub/__init__ runs first
    assert cycles(edges) == [["pkg.a", "pkg.c", "pkg.sub.b"]]


def test_a_cycle_between_packages_is_found(tmp_path):
    """No module cycle, but the package `sub` imports `other` and `other` imports `sub`'s
    __init__, which is where the knot of issue 33 was (`from pkg import mod` runs pkg/__init__)."""
    pkg = tmp_path / "pkg"
    for sub in ("sub", "other"):
        (pkg / sub).mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub import y\n")
    (pkg / "sub" / "x.py").write_text("")
    (pkg / "sub" / "y.py").write_text("")
    (pkg / "other" / "__init__.py").write_text("")
    (pkg / "other" / "z.py").write_text("from pkg.sub import x\n")
    (pkg / "sub" / "w.py").write_text("def f():\n    from pkg.other import z\n")
    edges = import_graph(pkg)
    assert cycles(edges) == []
    assert cycles(package_graph(edges, "pkg")) == [["pkg.other", "pkg.sub", "pkg.sub.__init__"]]
