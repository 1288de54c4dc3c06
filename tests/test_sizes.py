"""benchcast.screening.sizes: the size hold-out and the two-stage chain, computed by hand on small tables."""
import numpy as np
import pandas as pd
import pytest
from analysis_util import PAPER, io_records, make_agg, paper_agg

from benchcast.screening import screen, sizes

GB = 10**9
FIG = ("randwrite", 4096, "lat_mean")


def run(figures, results, memory=None):
    agg = make_agg({d: {FIG: x} for d, x in figures.items()}, results)
    sc = screen.screen(agg, {"workloads": ["randwrite"], "block_sizes": [4096], "metrics": ["lat_mean"]},
                       None, None, 2)
    return sizes.validate(agg, sc, memory=memory)


def row(folds, kind, device):
    r = folds[(folds["kind"] == kind) & (folds["device"] == device)]
    assert len(r) == 1
    return r.iloc[0]


def test_three_sizes_by_hand_size_holdout_and_chain():
    # three sizes: too few to judge a form (an inner hold-out needs two sizes below the largest but
    # one), so the second stage is the nearest measured size, the baseline itself
    figures = {"A": 1.0, "B": 2.0, "C": 4.0}
    results = {"A": {1 * GB: 10, 2 * GB: 12, 4 * GB: 16},
               "B": {1 * GB: 20, 2 * GB: 22, 4 * GB: 30},
               "C": {1 * GB: 40, 2 * GB: 50, 4 * GB: 70}}
    folds, summary, forms = run(figures, results)
    b = row(folds, "size", "B")
    assert (b["form"], b["held_out_size"], b["train_sizes"]) == ("nearest", 4 * GB, "1GB-2GB")
    assert b["prediction"] == 22 and b["pct_error"] == pytest.approx(-80 / 3)
    assert b["baseline"] == 22 and b["baseline_pct_error"] == pytest.approx(-80 / 3)
    assert b["position"] == "interior" and row(folds, "size", "A")["position"] == "extreme"
    c = row(folds, "chain", "B")
    # first stage on A and C: at 1 GB y = 10 x -> 20; at 2 GB y = 38/3 x - 2/3 -> 74/3; the second
    # stage is the nearest size: 74/3
    assert c["feature"] == "randwrite_4K_lat_mean" and c["form"] == "nearest"
    assert c["prediction"] == pytest.approx(74 / 3) and c["pct_error"] == pytest.approx(-160 / 9)
    assert c["baseline"] == pytest.approx(74 / 3) and c["baseline_pct_error"] == pytest.approx(-160 / 9)
    s = summary.set_index("kind")
    assert s.loc["size", "n_devices"] == 3 and s.loc["chain", "interior_mape"] == pytest.approx(160 / 9)
    assert s.loc["size", "interior_baseline_mape"] == pytest.approx(80 / 3)
    assert forms["inner_mape"].isna().all() and forms["chosen"].sum() == 1
    # the paper's straight line, asked for alone, still cannot be judged: nearest
    assert set(sizes.validate(*_agg_screen(figures, results), forms=["line"])[0]["form"]) == {"nearest"}


def _agg_screen(figures, results):
    agg = make_agg({d: {FIG: x} for d, x in figures.items()}, results)
    sc = screen.screen(agg, {"workloads": ["randwrite"], "block_sizes": [4096], "metrics": ["lat_mean"]},
                       None, None, 2)
    return agg, sc


def test_the_line_reaching_zero_is_refused_not_shown():
    # falling results: the line through 1, 2 and 4 GB reaches below zero at 8 GB
    figures = {"A": 1.0, "B": 2.0, "C": 4.0}
    results = {d: {1 * GB: 100 * x, 2 * GB: 60 * x, 4 * GB: 30 * x, 8 * GB: 20 * x} for d, x in figures.items()}
    assert sizes.second_stage([1 * GB, 2 * GB, 4 * GB], [100, 60, 30], 8 * GB, "line") != sizes.second_stage(
        [1 * GB, 2 * GB, 4 * GB], [100, 60, 30], 8 * GB, "log")
    assert np.isnan(sizes.second_stage([1 * GB, 2 * GB, 4 * GB], [100, 60, 30], 12 * GB, "line"))
    folds = run(figures, results)[0]
    assert not (folds["prediction"] <= 0).any()


def test_a_knee_the_inner_fold_cannot_see_falls_back_to_the_nearest_size():
    """The memory line between the inner step (2 -> 4 GB, both below it) and the held-out one (4 ->
    8 GB, across it): no form chosen below the line can say what happens across it, so the stage is
    the nearest size, never worse than its baseline; with the line below every step both steps lie
    above it and the forms are judged."""
    sz = [1, 2, 4, 8]
    figures = {"A": 1.0, "B": 2.0, "C": 3.0, "D": 5.0}
    results = {d: {s * GB: _knee(s, 100 * x, 40 * x, m=5) for s in sz} for d, x in figures.items()}
    assert sizes.unjudged([1 * GB, 2 * GB, 4 * GB, 8 * GB], 5 * GB) == (
        "the inner step lies below the memory line, the held-out one across the memory line")
    folds, summary, _ = run(figures, results, memory={"test": 5 * GB})
    assert set(folds["form"]) == {"nearest"}
    size = folds[folds["kind"] == "size"]
    assert size["prediction"].tolist() == [results[d][4 * GB] for d in size["device"]]
    assert (summary["mape"] == summary["baseline_mape"]).all()
    assert set(summary["form_why"]) == {sizes.unjudged([1 * GB, 2 * GB, 4 * GB, 8 * GB], 5 * GB)}
    # a memory line at 0.5 GB puts every step above it, one at 8 GB every step at or below it: the
    # forms are judged; without a memory line nothing tells whether the held-out step crosses one
    assert sizes.unjudged([1 * GB, 2 * GB, 4 * GB, 8 * GB], 0.5 * GB) == ""
    assert sizes.unjudged([1 * GB, 2 * GB, 4 * GB, 8 * GB], 8 * GB) == ""
    assert "no memory line" in sizes.unjudged([1 * GB, 2 * GB, 4 * GB, 8 * GB], None)


def _knee(s_gb, level, slope, m=4):
    return level + slope * max(s_gb - m, 0)


def test_form_chosen_by_inner_held_out_error_knee_at_the_memory_line():
    sz = [1, 2, 4, 8, 16, 32]
    figures = {"A": 1.0, "B": 2.0, "C": 3.0, "D": 5.0}
    results = {d: {s * GB: _knee(s, 100 * x, 10 * x) for s in sz} for d, x in figures.items()}
    folds, summary, forms = run(figures, results, memory={"test": 4 * GB})
    f = forms.set_index("form")
    assert f.loc["knee", "chosen"] and f.loc["knee", "inner_mape"] == pytest.approx(0, abs=1e-9)
    # the straight line's inner error, recomputed: fit 1-8 GB, predict 16 GB, per device
    x = np.array([1, 2, 4, 8.0])
    errs = [abs(np.polyval(np.polyfit(x, [_knee(s, 100 * v, 10 * v) for s in x], 1), 16)
                / _knee(16, 100 * v, 10 * v) - 1) * 100 for v in figures.values()]
    assert f.loc["line", "inner_mape"] == pytest.approx(np.mean(errs))
    # knee and piecewise both fit exactly; the earlier form wins the tie
    size = folds[folds["kind"] == "size"]
    assert set(size["form"]) == {"knee"} and np.allclose(size["pct_error"], 0, atol=1e-9)
    chain = folds[folds["kind"] == "chain"]
    assert np.allclose(chain["pct_error"], 0, atol=1e-9)  # y linear in x at every size: exact
    assert summary["memory"].eq(4 * GB).all()
    # without a memory limit neither knee nor piecewise can be fitted
    _, _, forms = run(figures, results)
    assert forms.set_index("form").loc[["knee", "piecewise"], "inner_mape"].isna().all()


def test_chain_never_sees_the_held_out_device_results():
    sz = [1, 2, 4, 8]
    figures = {"A": 1.0, "B": 2.0, "C": 3.0, "D": 5.0}
    results = {d: {s * GB: 10 * x + s + 0.3 * x * s for s in sz} for d, x in figures.items()}
    before = row(run(figures, results)[0], "chain", "B")
    changed = {**results, "B": {s * GB: v * (3 if s < 8 else 1) for s, v in zip(sz, results["B"].values())}}
    after = row(run(figures, changed)[0], "chain", "B")
    assert after["prediction"] == pytest.approx(before["prediction"])
    # but the other devices' results at the smaller sizes do enter
    moved = {**results, "C": {s * GB: v * 2 for s, v in zip(sz, results["C"].values())}}
    assert row(run(figures, moved)[0], "chain", "B")["prediction"] != pytest.approx(before["prediction"])


def test_two_sizes_give_no_rows():
    folds, summary, forms = run({"A": 1.0, "B": 2.0, "C": 3.0},
                                {d: {1 * GB: 1.0 + i, 2 * GB: 2.0 + i} for i, d in enumerate("ABC")})
    assert folds.empty and summary.empty and forms.empty
    assert list(summary.columns) == sizes.SUMMARY_COLUMNS


def test_paper_study_holds_out_128gb_from_2_to_64gb():
    agg = paper_agg()
    sc = screen.screen(agg, PAPER["features"], PAPER["series"], PAPER["pairing"], 3)
    folds, summary, _ = sizes.validate(agg, sc, PAPER["features"], PAPER["series"])
    assert set(summary["held_out_size"]) == {128 * GB} and set(summary["train_sizes"]) == {"2GB-64GB"}
    assert set(summary["kind"]) == {"size", "chain"} and len(summary) == 12  # 6 families x 2 kinds
    assert folds["prediction"].notna().all() and (folds.groupby("kind").size() == 18).all()
    assert pd.Series(summary["mape"]).notna().all()


def _miss(s_gb, m=4, f=2):
    return max(0.0, 1 - m / (f * s_gb))


def test_footprint_fitted_to_the_reads_per_operation_by_hand():
    # 1 - 4 / (f 8) = 0.75 at f = 2; a run whose data fits (0 reads) says only f <= 2
    req = pd.DataFrame({2 * GB: [0.0, np.nan], 8 * GB: [0.75, 0.75]}, index=["A", "B"])
    assert sizes.footprint(req, 4 * GB) == 2
    # least squares over both runs: f = 2 fits 8 GB only, 1 - 4 / (4 f) = 0.5 needs f = 2 too
    both = req.copy()
    both[4 * GB] = 0.5
    assert sizes.footprint(both, 4 * GB) == 2
    assert sizes.footprint(req, None) is None and sizes.footprint(req * np.nan, 4 * GB) is None
    # an outlier moves it: 0.875 at 8 GB alone would be f = 4
    assert sizes.footprint(pd.DataFrame({8 * GB: [0.875]}), 4 * GB) == 4


def _with_reads(agg, reads):
    """``agg`` and the runs' device reads per operation, {data size: value} for every device."""
    devices = agg.loc[agg["benchmark"] == "ycsb", "device"].unique()
    io = [io_records({d: {"reads_per_op": r} for d in devices}, data_size=ds) for ds, r in reads.items()]
    return pd.concat([agg, *io], ignore_index=True)


def test_miss_form_from_the_measured_reads_per_operation():
    # y = 100 x + 400 x miss(s) under a 4 GB cache, the data's footprint twice its size: flat at
    # 1 and 2 GB, then a rise that is no line, log, knee nor piecewise at the 4 GB line
    sz = [1, 2, 4, 8, 16]
    figures = {"A": 1.0, "B": 2.0, "C": 3.0, "D": 5.0}
    results = {d: {s * GB: 100 * x + 400 * x * _miss(s) for s in sz} for d, x in figures.items()}
    reads = {s * GB: _miss(s) for s in sz[:-1]}
    agg = make_agg({d: {FIG: x} for d, x in figures.items()}, results)
    sc = screen.screen(agg, {"workloads": ["randwrite"], "block_sizes": [4096], "metrics": ["lat_mean"]},
                       None, None, 2)
    folds, summary, forms = sizes.validate(_with_reads(agg, reads), sc, memory={"test": 4 * GB})
    f = forms.set_index("form")
    # the inner fold (8 GB from 1, 2, 4: miss 0, 0, 0.5) is exact; knee and piecewise cannot be
    # fitted (every inner size at or below the line)
    assert f.loc["miss", "chosen"] and f.loc["miss", "inner_mape"] == pytest.approx(0, abs=1e-9)
    assert f.loc[["knee", "piecewise"], "inner_mape"].isna().all() and (f["footprint"] == 2).all()
    b = row(folds, "size", "B")
    # 16 GB: 200 + 800 * 0.875 = 900, the 8 GB result 200 + 800 * 0.75 = 800 the baseline
    assert b["form"] == "miss" and b["prediction"] == pytest.approx(900) and b["truth"] == pytest.approx(900)
    assert b["baseline"] == pytest.approx(800)
    assert np.allclose(folds.loc[folds["kind"] == "chain", "pct_error"], 0, atol=1e-9)
    # the held-out size's reads are never seen; without any reads the form is no candidate
    also = sizes.validate(_with_reads(agg, {**reads, 16 * GB: 0.1}), sc, memory={"test": 4 * GB})[0]
    assert row(also, "size", "B")["prediction"] == pytest.approx(900)
    _, _, bare = sizes.validate(agg, sc, memory={"test": 4 * GB})
    assert np.isnan(bare.set_index("form").loc["miss", "inner_mape"])
    # 8 GB from 1, 2, 4 GB: the log of size 366.7 (8.3 %), the line 571.4 (42.9 %)
    assert bare.loc[bare["chosen"], "form"].tolist() == ["log"]
    # the study's validate.size_forms: without miss among them, the log as without reads
    _, _, off = sizes.validate(_with_reads(agg, reads), sc, memory={"test": 4 * GB}, forms=["line", "log"])
    assert off["form"].tolist() == ["line", "log"] and off.loc[off["chosen"], "form"].tolist() == ["log"]
