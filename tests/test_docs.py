"""The documentation holds together: every link in README.md, config/README.md and docs/ (relative
files, images, #anchors of headings as GitHub makes them, reference-style links) leads somewhere,
the README stays short enough to read on two screens, and benchmarks/README.md lists every script."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "config" / "README.md", *(ROOT / "docs").rglob("*.md")])

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)


def prose(text: str) -> str:
    """The page without its fenced code blocks and code spans: a link there is no link."""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.M | re.S)
    text = re.sub(r"^(?: {4}|\t).*$", "", text, flags=re.M)  # indented code blocks
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text, flags=re.S)


def anchors(page: Path) -> set[str]:
    """The #anchors of a page's headings, as GitHub makes them (lower case, punctuation dropped,
    spaces as hyphens, -1, -2 ... for a heading's repeats), and any explicit id or name."""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", page.read_text(), flags=re.M | re.S)
    out, seen = set(), {}
    for title in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, flags=re.M):
        title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", title).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    out |= set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    return out


def links(page: Path) -> list[str]:
    text = prose(page.read_text())
    return INLINE.findall(text) + REFERENCE.findall(text)


def broken(page: Path) -> list[str]:
    out = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...: not followed here
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            out.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            where = dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest.name
            out.append(f"{target}: no heading #{anchor} in {where}")
    return out


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_link_resolves(page):
    assert not broken(page)


def test_the_checker_finds_a_broken_link_and_anchor(tmp_path):
    """A link to a missing file, to a missing heading and a reference-style one to nowhere are
    found; a link in a code span or block, a URL, and a heading's repeat (-1) are not errors."""
    (tmp_path / "b.md").write_text("# Two words: here\n\n## Again\n\n## Again\n")
    page = tmp_path / "a.md"
    page.write_text("See [b](b.md#two-words-here), [again](b.md#again-1), [web](https://example.org).\n"
                    "`[x](nowhere.md)`\n\n```\n[y](nowhere.md)\n```\n"
                    "[gone](gone.md) and [bad](b.md#nope) and [ref][r].\n\n[r]: missing.png\n")
    assert broken(page) == ["gone.md: no such file", "b.md#nope: no heading #nope in b.md", "missing.png: no such file"]


def test_the_readme_fits_on_two_screens():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150


def test_every_benchmark_script_has_its_row_in_the_benchmarks_readme():
    """benchmarks/README.md names each script (first column of its tables: what it prints, how long)."""
    listed = set(re.findall(r"^\| `([\w.]+\.py)\b", (ROOT / "benchmarks" / "README.md").read_text(), flags=re.M))
    scripts = {p.name for p in (ROOT / "benchmarks").glob("*.py")}
    assert scripts == listed, (sorted(scripts - listed), sorted(listed - scripts))
