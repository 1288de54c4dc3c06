"""The report's interactive charts in a real browser (headless Chromium): each chart page draws its
chart (an SVG or canvas inside the vega-embed div) with nothing on the console at error level; a
broken chart is caught. Screenshots go to results/screenshots/ for people to look at."""
import json

import pytest

from benchcast import charts, tables
from browser_util import Browser, missing
from conftest import ROOT
from report_util import repeated_agg

SHOTS = ROOT / "results" / "screenshots"
FOCUS = {"benchmark": "ycsb", "engine": "mysql", "workload": "write-only", "op": "write", "metric": "lat_mean"}

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


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
        "overview": charts.app_overview(tables.app_overview(repeated_agg())),
        "noise": charts.noise(tables.noisy_cells(repeated_agg(), 0.1), 0.1, 186),
        "fig3_scatter": charts.fig3_scatter(a["agg"], a["screen"], a["predictions"], a["features"], FOCUS, "16GB"),
        "heatmap_best_r2": charts.heatmap_best_r2(a["best"]),
        "device_figures": charts.device_figures(charts.device_figures_table(a["agg"])),
        "heldout": charts.heldout(a["chosen_folds"]),
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
    charts.save(charts.heatmap_best_r2(paper_analysis["best"]), path)
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
