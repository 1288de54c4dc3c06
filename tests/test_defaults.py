"""Defaults live in config/schema.yaml alone: no code under scripts/benchcast supplies its own value
for a key the schema gives a default. Read with ``ast``: a parameter default, a ``.get(key, value)``,
a module or class constant (a dict constant: each of its keys), or a dataclass field whose name is a
schema key (constants: with ``DEFAULT_`` or ``_DEFAULTS`` around it) and whose value is that key's
default in the schema, is such a copy. The same name with another value (``timeout=None`` where the
schema's out-of-core timeout is 900) is another thing and passes, and so do None and empty values,
which say "nothing given". A line that holds the same value for another reason says so: ``# not a
schema default: <why>`` (fio's own iodepth of 1 for a JSON that does not report one)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "scripts" / "benchcast"
SCHEMA = ROOT / "config" / "schema.yaml"


def schema_defaults(schema: dict) -> dict[str, list]:
    """Key name -> the defaults the schema gives a key of that name anywhere (properties, and the
    definitions a property refers to)."""
    defs = schema.get("$defs", {})
    out: dict[str, list] = {}

    def add(name, sub):
        if not isinstance(sub, dict):
            return
        target = defs.get(sub.get("$ref", "").split("/")[-1], {}) if "$ref" in sub else {}
        for node in (sub, target):
            if "default" in node and node["default"] not in out.setdefault(name, []):
                out[name].append(node["default"])

    def walk(node):
        if isinstance(node, dict):
            for name, sub in (node.get("properties") or {}).items():
                add(name, sub)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    return {k: v for k, v in out.items() if v}


def _same(a, b) -> bool:
    """Equal, and of the same kind (True is no 1, 1.0 is 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT


_NOT = object()


def _constant_name(name: str) -> str:
    low = name.lower().strip("_")
    for affix in ("default_", "defaults_"):
        low = low.removeprefix(affix)
    for affix in ("_default", "_defaults"):
        low = low.removesuffix(affix)
    return low


def _constants(body):
    """(line, name, value node) of the module's or a class's constants; a dict constant gives each
    of its keys."""
    for stmt in body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else (
            [stmt.target] if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else [])
        for t in targets:
            if not isinstance(t, ast.Name):
                continue
            yield stmt.lineno, _constant_name(t.id), stmt.value
            values = [stmt.value] + [v for v in (stmt.value.values if isinstance(stmt.value, ast.Dict) else [])]
            for d in values:
                if isinstance(d, ast.Dict):
                    for k, v in zip(d.keys, d.values):
                        key = _literal(k) if k is not None else _NOT
                        if isinstance(key, str):
                            yield stmt.lineno, key, v


def _pairs(tree: ast.AST):
    """(line, what, key name, value node) of every place a value is given for a name."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            positional = a.posonlyargs + a.args
            for arg, default in zip(positional[len(positional) - len(a.defaults):], a.defaults):
                yield default.lineno, "parameter default", arg.arg, default
            for arg, default in zip(a.kwonlyargs, a.kw_defaults):
                if default is not None:
                    yield default.lineno, "parameter default", arg.arg, default
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "get", "setdefault", "pop") and len(node.args) == 2:
            key = _literal(node.args[0])
            if isinstance(key, str):
                yield node.lineno, f".{node.func.attr}(key, value)", key, node.args[1]
        elif isinstance(node, (ast.Module, ast.ClassDef)):
            for line, key, value in _constants(node.body):
                yield line, "constant", key, value


def copies(source: str, defaults: dict[str, list], where: str) -> list[str]:
    """The schema defaults that ``source`` (Python code) holds a copy of."""
    lines = source.splitlines()
    out = []
    for line, what, key, node in _pairs(ast.parse(source)):
        if key not in defaults or "# not a schema default" in lines[line - 1]:
            continue
        value = _literal(node)
        if value is _NOT or value is None or (isinstance(value, (list, tuple, dict, str)) and not value):
            continue
        if any(_same(value, d) for d in defaults[key]):
            out.append(f"{where}:{line}: {what} {key}={value!r} repeats the schema's default")
    return out


#: Copies in modules another change is moving (path -> key names); they go with that move. An entry
#: that no longer matches fails too, so that the list only shrinks. (heldout.py's max_figures went
#: with the validation subpackage, which reads the study's setting.)
PENDING: dict[str, set] = {}


def _pending(hit: str) -> bool:
    path, rest = hit.split(":", 1)
    return any(f" {key}=" in rest for key in PENDING.get(path, ()))


def package_copies(root: Path = PKG) -> list[str]:
    defaults = schema_defaults(yaml.safe_load(SCHEMA.read_text()))
    return [hit for path in sorted(root.rglob("*.py"))
            for hit in copies(path.read_text(), defaults, str(path.relative_to(root.parent)))]


def test_the_schema_gives_defaults():
    defaults = schema_defaults(yaml.safe_load(SCHEMA.read_text()))
    assert defaults["trim"] == [1] and defaults["min_devices"] == [3] and defaults["fieldcount"] == [10]
    assert defaults["ioengine"] == ["libaio", "libpmem"] and defaults["direct"] == [True, False]
    assert sorted(defaults["repeats"]) == [3, 5]


def test_no_code_holds_a_default_the_schema_has():
    hits = package_copies()
    wrong = [h for h in hits if not _pending(h)]
    assert not wrong, "\n".join(wrong)
    stale = {(path, key) for path, keys in PENDING.items() for key in keys
             if not any(h.startswith(path + ":") and f" {key}=" in h for h in hits)}
    assert not stale, f"no longer copies, take them out of PENDING: {sorted(stale)}"


@pytest.mark.parametrize("code", [
    "def aggregate(recs, trim: int = 1): ...",
    "def screen(agg, *, min_devices=3): ...",
    "n = src.get('fieldcount', 10)",
    "DEFAULTS = {'ioengine': 'libaio', 'iodepth': 1}",
    "KIND_DEFAULTS = {'tmpfs': {'direct': False}}",
    "DEFAULT_REPEATS = 5",
    "class S:\n    fast_load: bool = True\n",
    "def run(threads=1): ...",
])
def test_a_copy_of_a_schema_default_is_found(code):
    defaults = schema_defaults(yaml.safe_load(SCHEMA.read_text()))
    assert copies(code, defaults, "x.py")


@pytest.mark.parametrize("code", [
    "def run(timeout=None): ...",  # the out-of-core timeout's default is 900: another thing
    "n = src['fieldcount']",
    "ROWS = {'threads': 0}",
    "def f(io_some=None, exclude=()): ...",  # nothing given
    "def row():\n    return {'benchmark': 'fio'}\n",  # a record's column, not a setting
    "depth = int(opts.get('iodepth', 1))  # not a schema default: fio's own",
    "def f(trim): ...",
])
def test_other_values_of_the_same_names_pass(code):
    defaults = schema_defaults(yaml.safe_load(SCHEMA.read_text()))
    assert not copies(code, defaults, "x.py")
