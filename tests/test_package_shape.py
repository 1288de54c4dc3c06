"""The package's shape (issue 38): every module of scripts/benchcast/ at most 500 lines, every
function at most 80 lines and 8 parameters (``self`` and ``cls`` not counted; ``*args`` and
``**kwargs`` one each). A function that needs more takes a frozen dataclass of the group that
travels together, or derives what it can inside. Every rule file (rules/*.smk) at most 400 lines."""

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "scripts" / "benchcast"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
MAX_PARAMETERS = 8


def modules() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def parameters(f: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many parameters ``f`` takes: positional-only, positional and keyword-only, ``*args`` and
    ``**kwargs`` one each; a method's ``self`` or ``cls`` is not one."""
    a = f.args
    named = [p.arg for p in a.posonlyargs + a.args]
    if named and named[0] in ("self", "cls"):
        named = named[1:]
    return len(named) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)


def too_big(source: str, name: str) -> list[str]:
    """What in one module's ``source`` breaks the limits, each naming the module and function."""
    out = []
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        out.append(f"{name}: {lines} lines (at most {MAX_MODULE_LINES})")
    for f in ast.walk(ast.parse(source)):
        if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        length, n = f.end_lineno - f.lineno + 1, parameters(f)
        if length > MAX_FUNCTION_LINES:
            out.append(f"{name}.{f.name} (line {f.lineno}): {length} lines (at most {MAX_FUNCTION_LINES})")
        if n > MAX_PARAMETERS:
            out.append(f"{name}.{f.name} (line {f.lineno}): {n} parameters (at most {MAX_PARAMETERS})")
    return out


@pytest.mark.parametrize("path", modules(), ids=module_name)
def test_module_and_its_functions_are_small(path):
    problems = too_big(path.read_text(), module_name(path))
    assert not problems, "; ".join(problems)


def test_the_check_counts_lines_and_parameters_as_it_says():
    body = "\n".join(f"    x{i} = {i}" for i in range(80))
    source = (f"def long(a):\n{body}\n\n"  # 81 lines
              "def nine(a, b, c, d, e, f, g, h, i):\n    pass\n\n"
              "def star(a, b, c, d, e, f, g, *args, **kwargs):\n    pass\n\n"
              "class C:\n    def method(self, a, b, c, d, e, f, g, h):\n        pass\n\n"
              "def fine(a, b, c, d, e, f, g, h):\n    pass\n")
    assert too_big(source, "m") == [
        "m.long (line 1): 81 lines (at most 80)",
        "m.nine (line 83): 9 parameters (at most 8)",
        "m.star (line 86): 9 parameters (at most 8)",
    ]
    assert too_big("x = 1\n" * 501, "big") == ["big: 501 lines (at most 500)"]


#: The workflow's rule files, each one concern (issue 53: rules/common.smk, 985 lines, was cut by concern).
MAX_SMK_LINES = 400


@pytest.mark.parametrize("path", sorted((PKG.parents[1] / "rules").glob("*.smk")), ids=lambda p: p.name)
def test_each_rule_file_is_small(path):
    assert len(path.read_text().splitlines()) <= MAX_SMK_LINES, f"{path.name}: split it by concern"
