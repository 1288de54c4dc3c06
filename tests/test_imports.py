"""The package's shape: its folders are its layers (the import rule is checked by folder), every
module imports on its own in a fresh interpreter, the import graph (module-level and function-level
imports alike) has no cycle, data flows one way (a module never imports one of a later folder), every
module has a test module, and the command lines the measuring rules run stay runnable by their names."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "scripts" / "benchcast"

#: The package's folders in data-flow order: sources -> records -> aggregate -> features -> fits ->
#: screening -> validation -> prediction -> report (tables and charts), over the base (core), the
#: configuration, the record table and the devices. A module may import a module of its own folder or
#: of an earlier one. The package's own ``__init__`` (BenchcastError) comes before them all; the
#: command modules beside it (``python -m benchcast.fio`` ...: :data:`COMMANDS`) after them all.
LAYERS = ["core", "config", "records", "devices", "sources", "aggregate", "features", "fits", "screening",
          "validation", "prediction", "report", "workflow"]

#: The folders tested as one: their modules' test modules are test_<folder>*.py.
TESTED_AS_ONE = {"devices", "validation"}


def module_names() -> list[str]:
    out = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join(parts))
    return out


def _resolve(module: str, is_pkg: bool, node: ast.ImportFrom) -> list[str]:
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    if node.level:
        base = base[: len(base) - (node.level - 1)]
        target = base + (node.module.split(".") if node.module else [])
    else:
        target = node.module.split(".")
    if target[0] != "benchcast":
        return []
    if node.module is None or node.level and not node.module:
        return [".".join(target + [a.name]) for a in node.names]
    return [".".join(target)] + [".".join(target + [a.name]) for a in node.names]


def import_graph() -> dict[str, set[str]]:
    """Module -> the benchcast modules it imports anywhere in its body (functions included)."""
    names = set(module_names())
    graph = {}
    for mod in names:
        path = PKG.parent / Path(*mod.split("."))
        is_pkg = path.is_dir()
        path = path / "__init__.py" if is_pkg else path.with_suffix(".py")
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                deps |= {d for d in _resolve(mod, is_pkg, node) if d in names}
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in names}
        deps.discard(mod)
        # a package's own __init__ importing its submodules is how a package is made, not a cycle
        graph[mod] = {d for d in deps if not d.startswith(mod + ".")}
    return graph


def _layer(mod: str) -> int:
    """The position of a module's folder in :data:`LAYERS`: -1 for the package's ``__init__``, one past
    the last for a command module at the top."""
    parts = mod.split(".")
    if len(parts) == 1:
        return -1
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else len(LAYERS)


#: The modules the workflow's shell rules run (``python -m benchcast.X``), by the names their command
#: lines had before the package's folders were its layers: Snakemake records a job's command line and
#: plans a job whose line changed again, so these names stay (a measuring job would be refused).
def shell_commands() -> set[str]:
    return {m for p in (ROOT / "rules").glob("*.smk") for m in re.findall(r"python -m (benchcast\.[\w.]+)",
                                                                           p.read_text())}


COMMANDS = sorted(shell_commands())


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (c := visit(m)):
                return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (c := visit(n)):
            return c
    return None


def test_every_module_imports_in_a_fresh_interpreter():
    from concurrent.futures import ThreadPoolExecutor

    code = "import importlib, sys\nfor m in sys.argv[1:]:\n    importlib.import_module(m)\n"

    def imports(mod: str) -> str | None:
        proc = subprocess.run([sys.executable, "-c", code, mod], cwd=ROOT / "scripts", capture_output=True,
                              text=True, timeout=120)
        return None if proc.returncode == 0 else f"import {mod}: {proc.stderr.strip().splitlines()[-1:]}"

    # one interpreter per module (an import that works only after another fails here), one per core
    # at a time: they share nothing
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failed = [why for why in pool.map(imports, module_names()) if why]
    assert not failed, failed


def test_import_graph_has_no_cycle():
    assert find_cycle(import_graph()) is None, " -> ".join(find_cycle(import_graph()))


def test_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_dependencies_point_down_the_data_flow():
    wrong = [f"{m} (layer {_layer(m)}) imports {d} (layer {_layer(d)})"
             for m, deps in import_graph().items() for d in deps if _layer(d) > _layer(m)]
    assert not wrong, wrong


#: The layers that analyse what was measured: they read the records and the names the sources write
#: into them (benchcast.core.vocabulary), never the code that measures or imports (benchcast.sources).
ANALYSIS = ["records", "aggregate", "features", "fits", "screening", "validation", "prediction", "report"]


def test_no_analysis_layer_imports_the_sources():
    """The vocabulary the analysis shares with the sources (ops, benchmark names, modes) is below both;
    of the package only the sources themselves, the command modules and the workflow's glue (the top
    layer, which binds the measuring rules) import benchcast.sources."""
    wrong = [f"{m} imports {d}" for m, deps in import_graph().items() for d in deps
             if d.startswith("benchcast.sources") and m.split(".")[1] in ANALYSIS]
    assert not wrong, wrong
    outside = {m for m, deps in import_graph().items() if any(d.startswith("benchcast.sources") for d in deps)
               and not m.startswith(("benchcast.sources", "benchcast.workflow"))}
    assert outside <= set(COMMANDS), sorted(outside - set(COMMANDS))


#: The folders of benchcast.sources in order: the run plan, reading results, measuring. A sources
#: module imports a module of its own folder or of an earlier one (the plan reads no parser, a parser
#: runs nothing); :mod:`benchcast.sources.plan` is a module of its own, first.
SOURCES = ["plan", "parse", "run"]


def _sources_part(mod: str) -> int:
    return SOURCES.index(mod.split(".")[2]) if mod.count(".") >= 2 else -1


def test_sources_folders_point_down_too():
    graph = import_graph()
    names = [m for m in graph if m.startswith("benchcast.sources.")]
    assert {m.split(".")[2] for m in names} == set(SOURCES)
    wrong = [f"{m} imports {d}" for m in names for d in graph[m]
             if d.startswith("benchcast.sources.") and _sources_part(d) > _sources_part(m)]
    assert not wrong, wrong


def test_every_module_is_in_a_layer_folder_or_is_a_command():
    names = module_names()
    assert {m.split(".")[1] for m in names if m.count(".") >= 2} <= set(LAYERS)
    top = {m for m in names if m.count(".") == 1 and m.split(".")[1] not in LAYERS}
    assert top == set(COMMANDS) - {f"benchcast.{layer}" for layer in LAYERS}, "a module belongs in a layer folder"
    assert not top & set().union(*import_graph().values()), "a command module runs its code; import the code"


def _tested_modules() -> list[str]:
    """Each module that has a test module of its own: a command, a folder's module, and a folder whose
    ``__init__`` holds its code; the modules of :data:`TESTED_AS_ONE` folders are tested under it."""
    out = []
    for m in module_names():
        parts = m.split(".")
        path = PKG.parent / Path(*parts)
        if len(parts) == 1:
            continue  # the package's own __init__
        if path.is_dir():  # a layer folder, or a folder inside one (benchcast.sources.run)
            if ast.get_docstring(tree := ast.parse((path / "__init__.py").read_text())) and len(tree.body) == 1:
                continue  # a folder whose __init__ is its docstring alone
            if len(parts) == 2 or parts[1] not in TESTED_AS_ONE:
                out.append(m)
        elif len(parts) == 2 or parts[1] not in TESTED_AS_ONE:
            out.append(m)
    return out


@pytest.mark.parametrize("mod", _tested_modules())
def test_every_module_has_a_test_module(mod):
    name = mod.split(".")[-1]
    tests = {p.stem for p in (ROOT / "tests").glob("test_*.py")}
    assert f"test_{name}" in tests, f"no tests/test_{name}.py"


@pytest.mark.parametrize("command", COMMANDS)
def test_each_shell_rule_command_runs_by_its_name(command):
    proc = subprocess.run([sys.executable, "-m", command, "--help"], cwd=ROOT / "scripts", capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and f"python -m {command}" in proc.stdout, proc.stderr


def test_benchmarks_import_nothing_from_tests():
    """benchmarks/ stands on the package and its own helpers (benchmarks/harness/); the tests may use
    those (tests/workflow_util.py: harness.scratch), never the other way round."""
    test_modules = {p.stem for p in (ROOT / "tests").glob("*.py")}
    wrong = []
    for path in sorted((ROOT / "benchmarks").rglob("*.py")):
        text = path.read_text()
        for node in ast.walk(ast.parse(text)):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            wrong += [f"{path.relative_to(ROOT)} imports {n}" for n in names if n.split(".")[0] in test_modules]
        if re.search(r"""["']tests["']""", text):
            wrong.append(f"{path.relative_to(ROOT)} names the tests' folder")
    assert not wrong, wrong
