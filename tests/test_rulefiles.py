"""Rule files hold rules (issue 66): the workflow's Python lives in the package (scripts/benchcast/,
under its size limits and unit tests); a rule file (rules/*.smk, the Snakefile) keeps its rules and
thin glue. No rule file defines a function longer than 15 lines, nor a function at all unless it holds
a rule (an input function beside the rule that uses it); module-level statements calling the package
and lambdas in a rule's input are glue."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_DEF_LINES = 15

DEF = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+)?def[ \t]+(?P<name>\w+)[ \t]*\(")
RULE = re.compile(r"^(?:rule|checkpoint)[ \t]+\w+[ \t]*:", re.M)


def rule_files() -> list[Path]:
    return [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def defs(text: str) -> list[tuple[str, int, int]]:
    """Every ``def`` of a rule file's text, at any depth: (name, line, length in lines, from ``def``
    to its last non-blank line; a signature's closing bracket at the ``def``'s indent is its own)."""
    lines, out = text.splitlines(), []
    for i, line in enumerate(lines):
        if not (m := DEF.match(line)):
            continue
        end = i
        for j in range(i + 1, len(lines)):
            s = lines[j]
            if not s.strip():
                continue
            if _indent(s) <= len(m["indent"]) and not s.lstrip().startswith((")", "]", "}")):
                break
            end = j
        out.append((m["name"], i + 1, end - i + 1))
    return out


def problems(text: str, name: str) -> list[str]:
    """What in one rule file breaks the rule: a function too long, or one in a file with no rule."""
    has_rule = bool(RULE.search(text))
    out = []
    for fn, line, length in defs(text):
        if length > MAX_DEF_LINES:
            out.append(f"{name}: def {fn} (line {line}): {length} lines (at most {MAX_DEF_LINES}): move it to the package")
        if not has_rule:
            out.append(f"{name}: def {fn} (line {line}) in a file with no rule: move it to the package")
    return out


@pytest.mark.parametrize("path", rule_files(), ids=lambda p: p.name)
def test_rule_files_hold_rules_and_thin_glue(path):
    found = problems(path.read_text(), path.name)
    assert not found, "; ".join(found)


def test_the_workflow_s_own_rule_files_have_no_function_at_all():
    """The files of no rule (config, plan, inputs, checks, outputs) bind package functions only."""
    for name in ("common.smk", "inputs.smk", "checks.smk", "outputs.smk", "hooks.smk"):
        text = (ROOT / "rules" / name).read_text()
        assert not RULE.search(text) and defs(text) == [], name


def test_the_check_finds_long_and_rule_less_functions():
    body = "\n".join(f"    x{i} = {i}" for i in range(14))
    long = f"def long(\n    a,\n):\n{body}\n\n\n"  # 17 lines with its signature
    short = "def short(wildcards):\n    return 1\n\n"
    nested = "if True:\n\n    def inner():\n        pass\n"
    rule = "rule r:\n    input:\n        short,\n"
    assert defs(long + short + nested) == [("long", 1, 17), ("short", 20, 2), ("inner", 25, 2)]
    assert problems(short + rule, "f.smk") == []
    assert problems(long + rule, "f.smk") == ["f.smk: def long (line 1): 17 lines (at most 15): move it to the package"]
    assert problems(short + "X = 1\n", "g.smk") == ["g.smk: def short (line 1) in a file with no rule: move it to the package"]
    assert problems("get_x = JOBS.x\nrule_of_thumb = 1\n", "h.smk") == []
