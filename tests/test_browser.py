"""The report's interactive charts in a real browser (headless Chromium): each chart page draws its
chart (an SVG or canvas inside the vega-embed div) with nothing on the console at error level; a
broken chart is caught. Screenshots go to results/screenshots/ for people to look at."""
import json

import pytest

from benchcast.report import app_charts, charts, device_charts, paper_charts, prediction_charts, spread_charts
from benchcast.report import tables
from browser_util import missing
from conftest import ROOT
from report_util import repeated_agg

SHOTS = ROOT / "results" / "screenshots"
FOCUS = {"benchmark": "ycsb", "engine": "mysql", "workload": "write-only", "op": "write", "metric": "lat_mean"}

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))


def render(browser, path) -> dict:
    """Open a chart page and wait until it says it is drawn (or failed): its state, what the
    vega-embed div holds, and the console's errors."""
    browser.console()  # drop what earlier pages logged
    browser.get(path.resolve().as_uri())
    state = browser.wait("const s = document.body.dataset.chart; return s !== 'loading' && s;", 30)
    marks = browser.js("return document.querySelectorAll('#vis.vega-embed svg.marks, #vis.vega-embed canvas')"
                       ".length;")
    marks_drawn = browser.js("return document.querySelectorAll('#vis svg.marks path, #vis svg.marks text')"
                             ".length;")
    errors = [e["message"] for e in browser.console() if e["level"] == "SEVERE"]
    return {"state": state, "marks": marks, "drawn": marks_drawn, "errors": errors}


def test_report_charts_render_without_console_errors(browser, paper_analysis, tmp_path):
    a = paper_analysis
    pages = {  # overview: the application results (results/screenshots/overview.png)
        "overview": app_charts.app_overview(tables.app_overview(repeated_agg())),
        "noise": spread_charts.noise(tables.noisy_cells(repeated_agg(), 0.1), 0.1, 186),
        "fig3_scatter": paper_charts.fig3_scatter(a["agg"], a["screen"], a["predictions"], a["features"], FOCUS,
                                                  "16GB"),
        "heatmap_best_r2": paper_charts.heatmap_best_r2(a["best"]),
        "device_figures": device_charts.device_figures(device_charts.device_figures_table(a["agg"])),
        "heldout": prediction_charts.heldout(a["chosen_folds"]),
    }
    for name, chart in pages.items():
        path = tmp_path / f"{name}.html"
        charts.save(chart, path)
        got = render(browser, path)
        assert got["state"] == "rendered", (name, got)
        assert got["marks"] == 1 and got["drawn"] > 10, (name, got)
        assert got["errors"] == [], (name, got)
        shot = browser.screenshot(SHOTS / f"{name}.png")
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_tooltips_are_live(browser, paper_analysis, tmp_path):
    """Hovering a mark shows its tooltip (what the SVG copies cannot do)."""
    path = tmp_path / "heat.html"
    charts.save(paper_charts.heatmap_best_r2(paper_analysis["best"]), path)
    assert render(browser, path)["state"] == "rendered"
    shown = browser.js("""
        const mark = document.querySelector('#vis svg.marks g.mark-rect path');
        const box = mark.getBoundingClientRect();
        const at = {bubbles: true, clientX: box.x + box.width / 2, clientY: box.y + box.height / 2};
        mark.dispatchEvent(new MouseEvent('mousemove', at));
        mark.dispatchEvent(new MouseEvent('pointermove', at));
        const tip = document.querySelector('#vg-tooltip-element');
        return tip && tip.classList.contains('visible') ? tip.innerText : null;""")
    assert shown and "best R²" not in shown and "r2" in shown and "workload" in shown


def test_a_broken_chart_is_caught(browser, tmp_path):
    """The check can fail: a spec vega-embed rejects leaves the page in error, on the console."""
    page = charts.to_html(charts.placeholder("x"))
    spec = json.dumps({"mark": {"type": "no-such-mark"}, "data": {"values": [{"a": 1}]}})
    path = tmp_path / "broken.html"
    path.write_text(page.replace("const spec = ", f"const spec = {spec}; const unused = ", 1))
    got = render(browser, path)
    assert got["state"].startswith("error"), got
    assert got["marks"] == 0 and got["errors"], got


SNAKEFILE = """
report: "workflow.rst"


rule all:
    input:
        "results/charts/overview.html",


rule overview:
    input:
        "made/overview.html",
    output:
        report(
            "results/charts/overview.html",
            caption="caption.rst",
            category="study",
            subcategory="Applications",
        ),
    shell:
        "cp {input} {output}"
"""

#: Click the menu entry or the results-table row's view button with this text (the Snakemake report).
CLICK = """
const [text] = arguments;
const menu = [...document.querySelectorAll('a')].find((a) => a.textContent.trim() === text);
if (menu) { menu.click(); return 'menu'; }
const row = [...document.querySelectorAll('tr')].find((r) => r.textContent.includes(text));
const button = row && row.querySelector('a');
if (button) { button.click(); return 'row'; }
return null;
"""


def test_chart_renders_inside_the_snakemake_report(browser, tmp_path):
    """The real report: Snakemake embeds the chart page (as a data: URI in an iframe); opened
    through the report's menu, it draws with no console error (results/screenshots/report.png)."""
    import subprocess
    import sys

    made = tmp_path / "made" / "overview.html"
    made.parent.mkdir()
    charts.save(app_charts.app_overview(tables.app_overview(repeated_agg())), made)
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "workflow.rst").write_text("A test report.\n")
    (tmp_path / "caption.rst").write_text("The application overview.\n")
    for args in ([], ["--report", "report.html"]):
        subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "--quiet", "all", *args], cwd=tmp_path,
                       check=True, capture_output=True)
    browser.console()
    browser.get((tmp_path / "report.html").as_uri())
    for text in ("Results", "overview.html"):  # one category: its results at once
        assert browser.wait(CLICK, 20, text), f"no {text!r} in the report"
    assert browser.wait("return document.querySelectorAll('iframe').length;", 20) == 1
    browser.frame(0)
    try:
        state = browser.wait("const s = document.body.dataset.chart; return s !== 'loading' && s;", 30)
        marks = browser.js("return document.querySelectorAll('#vis.vega-embed svg.marks path').length;")
    finally:
        browser.frame(None)
    errors = [e["message"] for e in browser.console() if e["level"] == "SEVERE"]
    assert state == "rendered" and marks > 10 and errors == [], (state, marks, errors)
    shot = browser.screenshot(SHOTS / "report.png")
    assert shot.stat().st_size > 10_000


def test_every_chart_of_the_built_report_renders(browser):
    """The report a run built (results/report.html, or the file BENCHCAST_REPORT names): every
    interactive chart it embeds draws, with no console error; the application overview's is
    screenshotted (results/screenshots/report_overview.png). Its answer pages show their table."""
    import os
    from pathlib import Path

    report = Path(os.environ.get("BENCHCAST_REPORT", ROOT / "results" / "report.html"))
    if not report.is_file():
        pytest.skip(f"no report built at {report} (./benchcast.sh run writes it)")
    browser.get(report.resolve().as_uri())
    pages = browser.wait("""return typeof results === 'object' && Object.fromEntries(Object.entries(results)
        .filter(([path, r]) => path.endsWith('.html')).map(([path, r]) => [path, r.data_uri]));""", 30)
    assert pages, "the report embeds no interactive chart"
    failed = {}
    for path, uri in sorted(pages.items()):
        browser.console()
        browser.get(uri)
        if "/answer/" in path:  # an answer page (benchcast.report.answer_page): a table, no chart
            if not browser.wait("return document.querySelectorAll('.benchcast-answer table tr').length;", 30):
                failed[path] = "no answer table"
            continue
        state = browser.wait("const s = document.body && document.body.dataset.chart; return s !== 'loading' && s;",
                             30)
        marks = browser.js("return document.querySelectorAll('#vis.vega-embed svg.marks, #vis.vega-embed canvas')"
                           ".length;")
        errors = [e["message"] for e in browser.console() if e["level"] == "SEVERE"]
        if state != "rendered" or marks != 1 or errors:
            failed[path] = (state, marks, errors)
        elif path.endswith("/app_overview.html"):
            browser.screenshot(SHOTS / f"report_{Path(path).parent.parent.name}_overview.png")
    assert not failed, failed


LANDING = """
report: "report/workflow.rst"


rule all:
    input:
        expand("results/{study}/answer/answer.html", study=["local", "paper"]),


rule answer:
    input:
        "made/{study}.html",
    output:
        report(
            "results/{study}/answer/answer.html",
            caption="report/answer.rst",
            category="{study}",
            subcategory="1. Answer",
        ),
    shell:
        "cp {input} {output}"
"""


def test_the_report_opens_with_the_answer(browser, tmp_path):
    """The report's first screen, at 1280x800: both studies' answer tables (report/workflow.rst
    includes each answer page; report/report.css lets it take the width, the rule graph below), the
    first table starting on the first screen, nothing wider than the window; the rule graph still
    there, below (results/screenshots/report_landing.png)."""
    import shutil
    import subprocess
    import sys

    from benchcast.report import answer_page
    from readable_util import viewport
    from report_util import answers, verdicts

    for study in ("local", "paper"):
        made = tmp_path / "made" / f"{study}.html"
        made.parent.mkdir(exist_ok=True)
        made.write_text(answer_page.page(study, answers(), verdicts(), [f"{study}: noise floor 6.0 %"]))
    shutil.copytree(ROOT / "report", tmp_path / "report")
    (tmp_path / "Snakefile").write_text(LANDING)
    for args in ([], ["--report", "report.html", "--report-stylesheet", "report/report.css"]):
        subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "--quiet", "all", *args], cwd=tmp_path,
                       check=True, capture_output=True)
    viewport(browser)
    browser.get((tmp_path / "report.html").as_uri())
    seen = browser.wait("""const pages = [...document.querySelectorAll('.benchcast-answer')];
        const graph = document.querySelector('#rulegraph');
        return pages.length && graph && {ids: pages.map((p) => p.id), tops: pages.map((p) => p.getBoundingClientRect().top),
            right: Math.max(...[...document.querySelectorAll('.benchcast-answer table')]
                .map((t) => t.getBoundingClientRect().right)),
            graph: graph.getBoundingClientRect().top, width: innerWidth, height: innerHeight};""", 30)
    browser.screenshot(SHOTS / "report_landing.png")
    assert seen, "no answer page on the report's landing page"
    assert seen["ids"] == ["answer-local", "answer-paper"]
    assert 0 < seen["tops"][0] < seen["height"] / 2 and seen["right"] <= seen["width"], seen
    assert seen["graph"] > seen["tops"][1], seen  # the rule graph after the answers
    first = browser.js("return document.querySelector('.benchcast-answer td.num').textContent;")
    assert first == "55.5"  # the first target's first answer (mariadb read-only at 16 MiB)
