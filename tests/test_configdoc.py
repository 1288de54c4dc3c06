"""The configuration reference (docs/config-reference.md) is what config/schema.yaml makes now
(benchcast.config.configdoc): regenerate it with
`PYTHONPATH=scripts .venv/bin/python -m benchcast.config.configdoc --write docs/config-reference.md`."""
from pathlib import Path

from benchcast import config
from benchcast.config import configdoc

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "config-reference.md"


def test_the_committed_reference_is_the_schemas():
    assert REFERENCE.read_text() == configdoc.render(), (
        "docs/config-reference.md differs from config/schema.yaml: regenerate it with "
        "PYTHONPATH=scripts .venv/bin/python -m benchcast.config.configdoc --write docs/config-reference.md")


def _keys(node, out: set, under: str = "") -> set:
    """Every key the schema names (``properties``), anywhere, as (key, the key holding it)."""
    if isinstance(node, dict):
        for key, sub in (node.get("properties") or {}).items():
            out.add((key, under))
            _keys(sub, out, key)
        for word in ("items", "additionalProperties", "then"):
            _keys(node.get(word), out, under)
        for word in ("allOf", "oneOf", "anyOf"):
            for sub in node.get(word) or []:
                _keys(sub, out, under)
        for sub in (node.get("$defs") or {}).values():
            _keys(sub, out, "")
    return out


def test_every_key_is_there_with_its_default_and_values():
    text = configdoc.render()
    missing = sorted((k, under) for k, under in _keys(configdoc.load(), set()) if f"**`{k}`**" not in text)
    # fio's per_kind.tmpfs and .fsdax are entries of per_kind.<kind>, their one default said by per_kind
    per_kind = next(ln for ln in text.splitlines() if ln.startswith("- **`per_kind`**"))
    assert missing == [("fsdax", "per_kind"), ("tmpfs", "per_kind")]
    assert "tmpfs: direct false" in per_kind and "fsdax: ioengine libpmem" in per_kind
    # a default and the allowed values, as the schema has them (the schema's defaults: benchcast.config)
    slots = next(ln for ln in text.splitlines() if ln.startswith("- **`benchmark_slots`**"))
    assert "default `1`" in slots and "at least 1" in slots
    trim = next(ln for ln in text.splitlines() if ln.startswith("- **`trim`**"))
    assert f"default `{config.default_of('aggregate', 'trim')}`" in trim
    kind = next(ln for ln in text.splitlines() if ln.startswith("- **`kind`**"))
    assert "one of `imported`, `tmpfs`, `dir`" in kind
    assert "## `studies.<study>.devices.<device>` (kind: blockdev)" in text


def test_text_markdown_would_hide_is_escaped():
    """`<device-state dir>` outside a code span would be an HTML tag to Markdown, and vanish."""
    assert configdoc._para("a <device-state dir>/mnt and `x <y>`") == "a &lt;device-state dir>/mnt and `x <y>`"


def test_the_command_writes_the_reference(tmp_path):
    assert configdoc.main(["--write", str(tmp_path / "ref.md")]) == 0
    assert (tmp_path / "ref.md").read_text() == configdoc.render()
    assert configdoc.main(["--bogus"]) == 2
