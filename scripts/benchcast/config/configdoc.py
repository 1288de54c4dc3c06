"""The configuration reference, made from ``config/schema.yaml`` alone: every key with its type,
default, allowed values and description, one section per mapping of keys (a study, a device of
each kind, a source of each type ...). ``python -m benchcast.config.configdoc`` prints it;
``--write FILE`` writes it (``docs/config-reference.md``), and ``tests/test_configdoc.py`` compares
the committed file with what the schema makes now, so the two cannot drift apart. Validating a
config against the schema is :mod:`benchcast.config`'s.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from . import SCHEMA

#: What the generated file says of itself, first.
HEADER = """# Configuration reference

Every key of a benchcast config, made from [`config/schema.yaml`](../config/schema.yaml) by
`PYTHONPATH=scripts .venv/bin/python -m benchcast.config.configdoc --write docs/config-reference.md`; do
not edit it by hand (`tests/test_configdoc.py` fails when it and the schema differ). How a config
is put together, with examples: [`config/README.md`](../config/README.md). A key written
`<device>` stands for a name you choose; `[]` is each item of a list. A default shown here is
filled in when the key is left out; keys without one are optional unless marked required.
"""

#: What the name of an entry the user chooses stands for, by the key holding the entries.
_NAMED = {"studies": "study", "devices": "device", "sources": "source", "targets": "target", "compare": "name",
          "per_kind": "kind", "per_device": "device", "files": "device", "rename": "device"}


def render(schema: dict | None = None) -> str:
    """The reference as Markdown."""
    schema = load() if schema is None else schema
    defs = schema.get("$defs", {})
    out = [HEADER]
    if "size" in defs:
        out += ["## Sizes", "", _para(defs["size"].get("description", "")), ""]
    sections: list[tuple[str, str, dict]] = []
    _collect("", "", schema, defs, sections)
    for path, cond, node in sections:
        out += _section(path, cond, node, defs)
    return "\n".join(out).rstrip() + "\n"


def load(path: Path = SCHEMA) -> dict:
    return yaml.safe_load(Path(path).read_text())


def _chain(node, defs: dict) -> list[str]:
    """The definitions a node's ``$ref`` leads through (``fio_size``, then ``size``)."""
    names = []
    while isinstance(node, dict) and "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in names:
            break
        names.append(name)
        node = defs[name]
    return names


def _resolve(node, defs: dict) -> dict:
    """A node with its ``$ref`` followed; its own keys (a description, a default) win."""
    if not isinstance(node, dict):
        return {}
    merged = dict(node)
    for name in _chain(node, defs):
        merged = {**defs[name], **merged}
    merged.pop("$ref", None)
    return merged


def _description(node, defs: dict) -> str:
    """A key's own description, else its definition's (a size has none of its own: see Sizes)."""
    if isinstance(node, dict) and node.get("description"):
        return _para(node["description"])
    for name in _chain(node, defs):
        if name == "size":
            return ""
        if defs[name].get("description"):
            return _para(defs[name]["description"])
    return ""


def _collect(path: str, cond: str, node, defs: dict, sections: list) -> None:
    """Every mapping of keys at or below ``path`` (``cond``: the case it is in), in the schema's
    order, as (path, condition, node)."""
    node = _resolve(node, defs)
    props = _own_props(node, defs)
    if props:
        sections.append((path, cond, node))
    for key, sub in props.items():
        _descend(f"{path}.{key}" if path else key, key, cond, sub, defs, sections)
    for variant, then in _variants(node):
        case = f"{cond}; {variant}" if cond else variant
        if any(then.get("properties", {}).values()):
            sections.append((path, case, then))
        for key, sub in (then.get("properties") or {}).items():
            if sub:
                _descend(f"{path}.{key}", key, f"in {case}", sub, defs, sections)


def _own_props(node: dict, defs: dict) -> dict:
    """A mapping's keys, but those that only restate the definition of its named entries (fio's
    ``per_kind.tmpfs`` is a ``per_kind.<kind>`` with one default of its own, which the
    description says)."""
    props = node.get("properties") or {}
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and _chain(extra, defs):
        props = {k: v for k, v in props.items() if _chain(v, defs)[:1] != _chain(extra, defs)[:1]}
    return {k: v for k, v in props.items() if v is not None}


def _descend(path: str, key: str, cond: str, sub, defs: dict, sections: list) -> None:
    """The mappings a key's value holds: its own keys, each named entry's, each list item's."""
    if not isinstance(sub, dict) or "size" in _chain(sub, defs):
        return
    node = _resolve(sub, defs)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and _mapping(_resolve(extra, defs)):
        _collect(f"{path}.<{_NAMED.get(key, 'name')}>", cond, extra, defs, sections)
    items = node.get("items")
    if isinstance(items, dict) and _mapping(_resolve(items, defs)):
        _collect(f"{path}[]", cond, items, defs, sections)
    if _mapping(node):
        _collect(path, cond, node, defs, sections)


def _mapping(node: dict) -> bool:
    return bool(node.get("properties")) or bool(_variants(node))


def _variants(node: dict) -> list[tuple[str, dict]]:
    """The ``allOf: [{if: {properties: {kind: {const: X}}}, then: ...}]`` cases of a node: the keys
    of a device of each kind, a source of each type."""
    out = []
    for case in node.get("allOf", []):
        cond, then = case.get("if", {}).get("properties", {}), case.get("then")
        if not cond or not isinstance(then, dict):
            continue
        (key, test), = cond.items()
        values = [test["const"]] if "const" in test else test.get("enum", [])
        out.append((f"{key}: {', '.join(map(str, values))}", then))
    return out


def _section(path: str, cond: str, node: dict, defs: dict) -> list[str]:
    title = f"`{path}`" if path else "The top level"
    out = [f"## {title}" + (f" ({cond})" if cond else ""), ""]
    if node.get("description") and not cond.split("; ")[-1].count(":"):
        out += [_para(node["description"]), ""]
    required = set(node.get("required", []))
    alternatives = [alt.get("required", []) for alt in node.get("anyOf", [])]
    if alternatives:
        out += ["At least one of " + ", ".join(f"`{k}`" for alt in alternatives for k in alt) + ".", ""]
    for key, sub in _own_props(node, defs).items():
        if sub:  # `type: {}` is the key that chose this case
            out.append(_entry(key, sub, key in required, defs))
    return out + [""]


def _entry(key: str, sub: dict, required: bool, defs: dict) -> str:
    node = _resolve(sub, defs)
    facts = [_type(sub, defs, key)]
    if required:
        facts.append("required")
    if "default" in node and node["default"] != {}:
        facts.append(f"default `{_value(node['default'])}`")
    allowed = _allowed(node)
    if allowed:
        facts.append(allowed)
    text = _description(sub, defs)
    if node.get("x-expected") and "size" not in _chain(sub, defs):
        text += f" Written: {node['x-expected']}."
    return f"- **`{key}`** ({'; '.join(facts)}){': ' + text.strip() if text.strip() else ''}"


def _type(sub, defs: dict, key: str = "") -> str:
    """A value's type in words: `size`, `integer`, `string or list of string` ..."""
    if not isinstance(sub, dict):
        return "any"
    if "size" in _chain(sub, defs):
        return "[size](#sizes)"
    node = _resolve(sub, defs)
    for alt in ("oneOf", "anyOf"):
        if alt in node and all("type" in o or "$ref" in o for o in node[alt]):
            return " or ".join(dict.fromkeys(_type(o, defs) for o in node[alt]))
    kind = node.get("type")
    if kind is None and "enum" in node:
        return "string" if all(isinstance(v, str) for v in node["enum"]) else "value"
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array":
        return f"list of {_type(node.get('items', {}), defs)}"
    extra = node.get("additionalProperties")
    if kind == "object" and isinstance(extra, dict):
        return f"mapping of {_NAMED.get(key, 'name')} to {_type(extra, defs)}"
    if kind == "object":
        return "mapping"
    return kind or "any"


def _allowed(node: dict) -> str:
    """Allowed values and bounds, as the schema says them."""
    parts = []
    if "enum" in node:
        parts.append("one of " + ", ".join(f"`{_value(v)}`" for v in node["enum"]))
    items = node.get("items") if isinstance(node.get("items"), dict) else {}
    if "enum" in items:
        parts.append("each one of " + ", ".join(f"`{_value(v)}`" for v in items["enum"]))
    for word, key in (("at least", "minimum"), ("at most", "maximum"), ("above", "exclusiveMinimum"),
                      ("below", "exclusiveMaximum")):
        if key in node:
            parts.append(f"{word} {node[key]}")
    if "not" in node and "multipleOf" in node["not"]:
        parts.append(f"not a multiple of {node['not']['multipleOf']}")
    for word, key in (("at least", "minItems"), ("at most", "maxItems")):
        if key in node:
            parts.append(f"{word} {node[key]} item{'s' if node[key] != 1 else ''}")
    if node.get("uniqueItems"):
        parts.append("no item twice")
    if "minProperties" in node:
        parts.append(f"at least {node['minProperties']} entr{'ies' if node['minProperties'] != 1 else 'y'}")
    return "; ".join(parts)


def _value(v) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _para(text: str) -> str:
    """One paragraph of the schema's text, its ``<`` outside code spans written so that Markdown
    shows it (``<device-state dir>`` is no HTML tag)."""
    parts = " ".join(str(text).split()).split("`")
    return "`".join(p.replace("<", "&lt;") if i % 2 == 0 else p for i, p in enumerate(parts))


def main(argv=None) -> int:
    import sys

    args = sys.argv[1:] if argv is None else list(argv)
    text = render()
    if args[:1] == ["--write"] and len(args) == 2:
        Path(args[1]).write_text(text)
    elif args:
        print("usage: python -m benchcast.config.configdoc [--write FILE]", file=sys.stderr)
        return 2
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
