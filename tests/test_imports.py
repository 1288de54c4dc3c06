"""The package's shape: every module imports on its own in a fresh interpreter, the import graph
(module-level and function-level imports alike) has no cycle, data flows one way (a module never
imports one of a later layer), and every module has a test module."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "scripts" / "benchcast"

#: Data-flow order: sources -> records -> aggregate -> features -> fits -> screening -> validation ->
#: prediction -> tables / charts. A module may import its own layer or an earlier one; a subpackage
#: (devices, validation) is one entry, its modules in its layer.
LAYERS = [
    {"benchcast", "units", "workloads", "host", "smk", "cli", "protect", "stop", "progress", "startup", "speed"},
    {"config", "configfiles", "configdoc", "settings"},
    {"records", "correction"},
    {"importers", "importchecks", "pkb", "fio", "fiojson", "ycsb", "ycsbout", "hdr", "ooc", "ooc_job", "mariadb",
     "ycsb_job", "devices",
     "preflight", "blockio", "paging", "repeats", "quality", "plan", "otherio", "cpushare", "recover"},
    {"aggregate"},
    {"features", "iopath"},
    {"fits", "positive"},
    {"screen", "ratecap", "floor", "sizes"},
    {"validation"},
    {"predict", "answers", "crossrun"},
    {"tables", "answer_page"},
    {"charts", "paper_charts", "device_charts", "prediction_charts", "app_charts", "spread_charts"},
]


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
    parts = mod.split(".")
    key = parts[1] if len(parts) > 1 else parts[0]
    return next(i for i, layer in enumerate(LAYERS) if key in layer)


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
    mods = module_names()
    code = "import importlib, sys\nfor m in sys.argv[1:]:\n    importlib.import_module(m)\n"
    for mod in mods:  # one interpreter per module: an import that works only after another fails here
        proc = subprocess.run([sys.executable, "-c", code, mod], cwd=ROOT / "scripts", capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, f"import {mod}: {proc.stderr.strip().splitlines()[-1:]}"


def test_import_graph_has_no_cycle():
    assert find_cycle(import_graph()) is None, " -> ".join(find_cycle(import_graph()))


def test_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_dependencies_point_down_the_data_flow():
    wrong = [f"{m} (layer {_layer(m)}) imports {d} (layer {_layer(d)})"
             for m, deps in import_graph().items() for d in deps if _layer(d) > _layer(m)]
    assert not wrong, wrong


@pytest.mark.parametrize("mod", [m for m in module_names() if m.count(".") == 1])
def test_every_module_has_a_test_module(mod):
    name = mod.split(".")[1]
    tests = {p.stem for p in (ROOT / "tests").glob("test_*.py")}
    assert f"test_{name}" in tests, f"no tests/test_{name}.py"
