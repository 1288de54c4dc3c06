"""What a person sees of a chart page, read in a real browser (tests/browser_util.py): the text the
chart drew (its bounding boxes as laid out), checked for labels that overlap, text outside the
window, a numeric axis whose title gives no unit, a legend entry drawn without its symbol (or
every entry with the same symbol), and panels drawn over each other. ``readability`` returns the
problems as lines (none: the page reads)."""
from __future__ import annotations

import re
from pathlib import Path

#: The window a person reads the report in.
VIEW = (1280, 800)

#: A title names its unit in parentheses, e.g. "mean latency (us)", "data size (bytes)",
#: "rate (IOPS)", "relative (ratio)": one of these words in the last parenthesised part.
UNIT = re.compile(r"\(([^()]*[\s,;/])?(ns|us|µs|ms|s|min|IOPS|ops/s|B/s|[kKMGT]i?B/s|[kKMGT]i?B|B|bytes|%|"
                  r"ratio|x|×|R²|count|runs|requests)([\s,;/][^()]*)?\)\s*$")

#: A tick label that is a number (1,000; 150µ; 10G; 2.5; 50%; 16 MB; 4 KiB; −3): its axis has a unit.
NUMBER = re.compile(r"^[−\-+]?[\d.,]+(e[−\-+]?\d+)?\s*[a-zA-Zµ%]{0,4}(/s)?$")

#: Overlaps smaller than this (in px, each way) are the glyph boxes' padding, not a collision.
SLACK = 2.0

#: Reads the drawn chart (a Vega SVG in #vis): every visible text with its box and role, the axes
#: (title, tick labels), the legends' entries (label, symbol), the panels' plot areas, the page's
#: scroll width. Hidden text (Vega hides overlapping tick labels with opacity 0) is left out.
READ = r"""
const svg = document.querySelector('#vis svg.marks');
if (!svg) return null;
const visible = (el) => {
  for (let n = el; n && n !== svg; n = n.parentElement) {
    const s = getComputedStyle(n);
    if (s.display === 'none' || s.visibility === 'hidden' || parseFloat(s.opacity) === 0) return false;
    if (n.getAttribute('opacity') !== null && parseFloat(n.getAttribute('opacity')) === 0) return false;
  }
  return true;
};
const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const role = (el) => {
  const g = el.closest('g[class*="role-"]');
  const m = g && g.getAttribute('class').match(/role-([a-z-]+)/);
  return m ? m[1] : '';
};
const texts = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim() && visible(t))
  .map((t) => ({text: t.textContent.trim(), role: role(t), box: box(t)}))
  .filter((t) => t.box[2] - t.box[0] > 0);
// a facet's headers: an untitled axis is titled by the header of its panel (its row's label, or
// the label above its panel)
const headers = (kind) => [...svg.querySelectorAll(`g.role-${kind}-header g.role-title-text text`)].filter(visible)
  .map((t) => ({text: t.textContent.trim(), box: box(t)}));
const rows = headers('row'), columns = headers('column');
const mid = (b, i) => (b[i] + b[i + 2]) / 2;
const header = (a) => {
  const item = a.closest('g.role-scope.cell > g');
  const bg = item && item.querySelector(':scope > path.background');
  const panel = bg ? box(bg) : box(a);
  const y = (a.getAttribute('aria-label') || '').startsWith('Y');
  const above = columns
    .filter((h) => mid(h.box, 0) >= panel[0] && mid(h.box, 0) <= panel[2] && h.box[3] <= panel[1] + 2)
    .sort((p, q) => q.box[3] - p.box[3]).slice(0, 1);
  const beside = y ? rows.filter((h) => mid(h.box, 1) >= panel[1] && mid(h.box, 1) <= panel[3]) : [];
  // a wrapped facet's panel carries its header as its own title
  const own = item ? [...item.querySelectorAll(':scope > g > g.role-title text')].filter(visible)
    .map((t) => ({text: t.textContent.trim()})) : [];
  return [...beside, ...above, ...own].map((h) => h.text).join(' / ');
};
const axes = [...svg.querySelectorAll('g.role-axis')].map((a) => ({
  title: [...a.querySelectorAll('g.role-axis-title text')].filter(visible).map((t) => t.textContent.trim()).join(' '),
  labels: [...a.querySelectorAll('g.role-axis-label text')].filter(visible).map((t) => t.textContent.trim()),
  header: header(a),
})).filter((a) => a.labels.length);
const paint = (p) => {
  const s = getComputedStyle(p);
  const on = (c) => c && c !== 'none' && c !== 'transparent' && !/rgba\(.*,\s*0\)$/.test(c);
  const stroked = on(s.stroke) && parseFloat(s.strokeWidth) > 0 && parseFloat(s.strokeOpacity) > 0;
  const filled = on(s.fill) && parseFloat(s.fillOpacity) > 0;
  return {stroked, filled, look: [s.stroke, s.fill, s.strokeDasharray, p.getAttribute('d')].join('|')};
};
const legends = [...svg.querySelectorAll('g.role-legend')].map((lg) => ({
  gradient: !!lg.querySelector('g.role-legend-gradient, g.role-legend-band'),
  title: [...lg.querySelectorAll('g.role-legend-title text')].map((t) => t.textContent.trim()).join(' '),
  entries: [...lg.querySelectorAll('g.role-legend-label text')].filter(visible).map((t) => {
    const entry = t.parentElement.parentElement;  // the entry's item: its symbol and its label
    const sym = entry.querySelector('g.role-legend-symbol path');
    const b = sym && visible(sym) ? box(sym) : null;
    const p = sym ? paint(sym) : {stroked: false, filled: false, look: ''};
    // a symbol that is a line (a stroke legend) shows only its stroke; a shape its stroke or fill
    const line = !!b && (b[2] - b[0] <= 1 || b[3] - b[1] <= 1);
    const drawn = !!b && (b[2] - b[0] > 1 || b[3] - b[1] > 1) && (p.stroked || (!line && p.filled));
    return {label: t.textContent.trim(), drawn, look: p.look};
  }),
}));
// a panel: an item of a facet's cells or of a concatenated view holding no further panel, with
// what it draws (its plot, marks and own axes)
const scopes = 'g.role-scope.cell, g.role-scope[class$="_group"]:not([class$="pathgroup"])';
const panels = [...svg.querySelectorAll(scopes)].flatMap((s) => [...s.children])
  .filter((g) => g.tagName === 'g' && !g.querySelector(scopes)).map(box)
  .filter((b) => b[2] - b[0] > 5 && b[3] - b[1] > 5);
const page = document.scrollingElement;
return {texts, axes, legends, panels, width: innerWidth, height: innerHeight, scroll_width: page.scrollWidth,
        svg: box(svg)};
"""


def viewport(browser, width: int = VIEW[0], height: int = VIEW[1]) -> None:
    """Make the page's viewport ``width`` x ``height`` (the window's size minus its frame)."""
    browser._session("POST", "/window/rect", {"width": width, "height": height})
    inner = browser.js("return [innerWidth, innerHeight];")
    browser._session("POST", "/window/rect", {"width": 2 * width - inner[0], "height": 2 * height - inner[1]})


def _overlap(a, b) -> tuple[float, float]:
    return min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])


def problems(seen: dict) -> list[str]:
    """What a person could not read of ``seen`` (what ``READ`` returned), one line each."""
    if not seen:
        return ["no chart drawn (no SVG in #vis)"]
    out = []
    if seen["scroll_width"] > seen["width"] + 1:
        out.append(f"needs horizontal scrolling: the page is {seen['scroll_width']} px wide in a {seen['width']} px "
                   "window")
    texts = seen["texts"]
    for t in texts:
        x0, y0, x1, _ = t["box"]
        if x0 < -SLACK or y0 < -SLACK or x1 > seen["width"] + SLACK:
            out.append(f"text outside the view: {t['text']!r} ({t['role']}) at x {x0:.0f}-{x1:.0f}")
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            w, h = _overlap(a["box"], b["box"])
            if w > SLACK and h > SLACK:
                out.append(f"overlapping labels: {a['text']!r} ({a['role']}) and {b['text']!r} ({b['role']})")
    for axis in seen["axes"]:
        numeric = [s for s in axis["labels"] if NUMBER.match(s)]
        if not numeric:
            continue  # a categorical axis (devices, workloads): no unit to give
        title = axis["title"] or axis["header"]  # untitled: its panel's header titles it
        if not title:
            out.append(f"numeric axis without a title (ticks {', '.join(numeric[:3])})")
        elif not any(UNIT.search(part) for part in title.split(" / ")):
            out.append(f"axis title without a unit: {title!r}")
    for lg in seen["legends"]:
        if lg["gradient"]:
            continue  # a colour ramp: the gradient is the symbol
        for e in lg["entries"]:
            if not e["drawn"]:
                out.append(f"legend entry without its symbol: {lg['title']!r} / {e['label']!r}")
        looks = {e["look"] for e in lg["entries"]}
        if len(lg["entries"]) > 1 and len(looks) == 1:
            out.append(f"legend {lg['title']!r}: every entry has the same symbol")
    panels = seen["panels"]
    for i, a in enumerate(panels):
        for b in panels[i + 1:]:
            w, h = _overlap(a, b)
            if w > SLACK and h > SLACK and a != b:
                out.append(f"panels drawn over each other: at x {max(a[0], b[0]):.0f}, y {max(a[1], b[1]):.0f}")
    return list(dict.fromkeys(out))


def readability(browser, page: Path, shot: Path | None = None) -> list[str]:
    """Open the chart page ``page`` at 1280x800, wait until it is drawn and read it: the problems a
    person would have (``problems``); a screenshot to ``shot`` where given."""
    viewport(browser)
    browser.get(Path(page).resolve().as_uri())
    state = browser.wait("const s = document.body.dataset.chart; return s !== 'loading' && s;", 60)
    if state != "rendered":
        return [f"not drawn: {state}"]
    if shot is not None:
        browser.screenshot(shot)
    return problems(browser.js(READ))
