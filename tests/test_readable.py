"""What a person sees of each chart page, read in headless Chromium at 1280x800
(tests/readable_util.py): no overlapping labels, no text outside the window, a unit on every
numeric axis' title, every legend entry with its symbol, no panel drawn over another. Every chart
kind is read on the stored local study's outputs (six devices with long labels, fio, YCSB and
out-of-core series) and on the paper study's; the charts a run built (results/<study>/charts, or
the folder BENCHCAST_RESULTS names) are read too. Screenshots go to results/screenshots/."""
import os
from pathlib import Path

import altair as alt
import pandas as pd
import pytest
import yaml

from benchcast.report import app_charts, charts, device_charts, paper_charts, prediction_charts, spread_charts
from benchcast.report import tables
from browser_util import missing
from conftest import ROOT
from readable_util import readability
from report_util import FOCUS

SHOTS = ROOT / "results" / "screenshots"
STORED = ROOT / "tests" / "data" / "local_expected"

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))


def read(browser, chart, tmp_path, name) -> list[str]:
    page = tmp_path / f"{name}.html"
    charts.save(chart, page)
    return readability(browser, page, SHOTS / f"{name}.png")


def built_to_fail() -> alt.Chart:
    """A chart with every fault the reader knows: two labels on one spot, axes titled without a unit,
    a line-style legend whose symbols are filled points (no dash to see), a panel drawn over the
    other, and a width no 1280 px window holds."""
    df = pd.DataFrame({"x": [1.0, 2.0, 1.0, 2.0], "y": [10.0, 20.0, 15.0, 30.0], "stat": ["mean", "mean", "p99", "p99"],
                       "name": ["a long device label here", "a long device label here", "another", "another"]})
    base = alt.Chart(df).encode(x=alt.X("x:Q", title="measured"), y=alt.Y("y:Q", title="predicted"))
    lines = base.mark_line(point=True).encode(color="name:N", strokeDash=alt.StrokeDash(
        "stat:N", legend=alt.Legend(symbolType="stroke")))
    names = base.mark_text(fontSize=14).encode(x=alt.datum(1.5), y=alt.datum(20.0), text="name:N")
    small = base.mark_line().properties(width=200, height=100)
    return alt.vconcat((lines + names).properties(width=1400, height=200), alt.hconcat(small, small, spacing=-150))


def built_to_pass() -> alt.Chart:
    df = pd.DataFrame({"x": [1.0, 2.0, 1.0, 2.0], "y": [10.0, 20.0, 15.0, 30.0],
                       "stat": ["mean", "mean", "p99", "p99"]})
    base = alt.Chart(df).encode(x=alt.X("x:Q", title="block size (KiB)"), y=alt.Y("y:Q", title="latency (us)"))
    lines = base.mark_line().encode(strokeDash=alt.StrokeDash("stat:N", legend=alt.Legend(
        symbolType="stroke", symbolStrokeColor="black")))
    return (lines + base.mark_point(filled=True)).properties(width=400, height=200)


def test_a_chart_built_to_fail_is_caught(browser, tmp_path):
    problems = read(browser, built_to_fail(), tmp_path, "built_to_fail")
    kinds = {p.split(":")[0] for p in problems}
    assert {"overlapping labels", "axis title without a unit", "legend entry without its symbol",
            "text outside the view", "needs horizontal scrolling", "panels drawn over each other"} <= kinds, problems
    assert "axis title without a unit: 'predicted'" in problems


def test_a_chart_built_to_pass_reads(browser, tmp_path):
    assert read(browser, built_to_pass(), tmp_path, "built_to_pass") == []


def stored_local_pages() -> dict:
    """Every chart kind of the report, made from the stored local study's outputs."""
    study = yaml.safe_load((ROOT / "tests" / "data" / "local_records" / "study.yaml").read_text())["studies"]["stored"]
    labels = {d: spec.get("label", d) for d, spec in study["devices"].items()}
    agg = tables.read_aggregated(STORED / "aggregated.csv.gz")
    best = tables.read_screen(STORED / "best.csv.gz")
    screened = tables.read_screen(STORED / "screen.csv.gz")
    preds = tables.read_predictions(STORED / "predictions.csv.gz")
    focus = tables.default_focus(best, study["report"]["focus"])
    validation = STORED / "validation"
    return {
        "device_figures": lambda: device_charts.device_figures(device_charts.device_figures_table(agg), labels),
        "app_overview": lambda: app_charts.app_overview(tables.app_overview(agg), labels),
        "noise": lambda: spread_charts.noise(tables.noisy_cells(agg, 0.1), 0.1, int((agg["n"] >= 2).sum()), labels),
        "heldout": lambda: prediction_charts.heldout(tables.read_table(validation / "chosen_folds.csv.gz"), labels),
        "target_intervals": lambda: prediction_charts.target_intervals(
            tables.read_table(validation / "target_predictions.csv.gz"), focus),
        "heatmap_best_r2": lambda: paper_charts.heatmap_best_r2(best),
        "latency_size": lambda: app_charts.latency_over_size(tables.latency_over_size(agg, {}, None), labels),
        "ooc_relative": lambda: app_charts.ooc_relative(tables.ooc_relative(agg, {"import:records": 2**25}), labels),
        "fig3_scatter": lambda: paper_charts.fig3_scatter(
            agg, screened, preds, tables.read_table(STORED / "features.csv.gz"), focus, study["report"].get(
                "focus_data_size"), labels),
        "fig4_data_size": lambda: paper_charts.fig4_data_size(
            agg, preds, tables.read_table(STORED / "extrapolation.csv.gz"), focus, labels),
    }


@pytest.mark.parametrize("name", sorted(stored_local_pages()))
def test_every_chart_kind_reads_on_the_stored_local_study(browser, tmp_path, name):
    assert read(browser, stored_local_pages()[name](), tmp_path, f"local_{name}") == []


def test_every_chart_kind_reads_on_the_paper_study(browser, paper_analysis, tmp_path):
    a = paper_analysis
    labels = {"nand_flash": "NAND flash SSD (Intel SSD DC S3520)", "3d_xpoint": "3D XPoint SSD (Intel Optane SSD "
              "900P)", "dram": "DRAM (tmpfs)"}
    pages = {
        "fig3_scatter": paper_charts.fig3_scatter(a["agg"], a["screen"], a["predictions"], a["features"], FOCUS, "16GB",
                                                  labels),
        "fig4_data_size": paper_charts.fig4_data_size(a["agg"], a["predictions"], a["points"], FOCUS, labels),
        "heatmap_best_r2": paper_charts.heatmap_best_r2(a["best"]),
        "device_figures": device_charts.device_figures(device_charts.device_figures_table(a["agg"]), labels),
        "heldout": prediction_charts.heldout(a["chosen_folds"], labels),
        "target_intervals": prediction_charts.target_intervals(a["target_predictions"], FOCUS),
        "app_overview": app_charts.app_overview(tables.app_overview(a["agg"]), labels),
    }
    failed = {name: p for name, chart in pages.items() if (p := read(browser, chart, tmp_path, f"paper_{name}"))}
    assert not failed, failed


def test_every_chart_page_a_run_built_reads(browser):
    """The chart pages under results/<study>/charts/ (or BENCHCAST_RESULTS/<study>/charts/): each
    reads at 1280x800; screenshots as results/screenshots/run_<study>_<chart>.png."""
    results = Path(os.environ.get("BENCHCAST_RESULTS", ROOT / "results"))
    pages = sorted(results.glob("*/charts/*.html"))
    if not pages:
        pytest.skip(f"no chart pages under {results} (./benchcast.sh run makes them)")
    failed = {}
    for page in pages:
        name = f"run_{page.parent.parent.name}_{page.stem}"
        problems = readability(browser, page, SHOTS / f"{name}.png")
        if problems:
            failed[name] = problems
    assert not failed, "\n".join(f"{name}: {'; '.join(p[:4])}" for name, p in failed.items())
