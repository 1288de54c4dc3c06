import copy

import numpy as np
import pandas as pd
import pytest

from analysis_util import PAPER, io_records, make_agg, paper_agg
from benchcast import BenchcastError, config, features, fits, validation
from benchcast.prediction import predict
from benchcast.screening import screen
from benchcast.report import tables
from benchcast.core import workloads
from benchcast.validation import choice, intervals
from benchcast.validation import nested as vnested
from benchcast.validation import folds as vfolds

# paper Table 12: data size -> (a, b, S-SCM, M-SCM)
TABLE12 = {
    2: (15.55701, 1128.205, 1906.055, 1517.130),
    16: (14.39262, 1386.865, 2106.496, 1746.680),
    128: (17.73891, 1306.947, 2193.893, 1750.420),
}
TABLE13 = {48: (2027.159, 1626.645), 96: (2150.680, 1720.387), 192: (2397.722, 1907.872)}
TABLE14 = {"nand_flash": 0.839929, "3d_xpoint": 0.332145, "dram": 0.419822, "S-SCM": 0.641802, "M-SCM": 0.484443}


@pytest.fixture(scope="module")
def paper():
    agg = paper_agg()
    res = screen.screen(agg, PAPER["features"], PAPER["series"], PAPER["pairing"], 3)
    pred = predict.predict(res, PAPER["targets"])
    measured = features.series_table(agg, PAPER["features"], PAPER["series"])
    fits, points = predict.extrapolate(measured, pred, PAPER["extrapolate"]["data_sizes"])
    return res, pred, fits, points


def test_predictions_reproduce_table12(paper):
    _, pred, _, _ = paper
    wo = pred[pred.workload == "write-only"].set_index(["target", "data_size"])
    for gb, (a, b, s, m) in TABLE12.items():
        row = wo.loc[("S-SCM", gb * 10**9)]
        assert row["feature"] == "randwrite_64K_lat_mean"
        assert row["a"] == pytest.approx(a, abs=2e-3) and row["b"] == pytest.approx(b, abs=0.1)
        assert row["value"] == pytest.approx(s, abs=0.05)
        assert wo.loc[("M-SCM", gb * 10**9), "value"] == pytest.approx(m, abs=0.05)
        # predictions lie where a and b put them
        assert row["value"] == pytest.approx(row["a"] * 50 + row["b"])


def test_choice_best_vs_best_in_spec(paper):
    res, pred, _, _ = paper
    wo = pred[(pred.workload == "write-only") & (pred.target == "S-SCM")].set_index("data_size")
    # at 2 GB the best feature is 256K latency, which the card lacks: the best feature in the card
    assert wo.loc[2 * 10**9, "choice"] == "best in spec"
    assert wo.loc[16 * 10**9, "choice"] == "best"
    # read series: the SCM cards have no randread figure: no prediction at all for them
    scm = pred[pred.target.isin(["S-SCM", "M-SCM"])]
    assert (scm["op"] == "write").all()
    # the sourced Optane card gives randread figures too: its read series are predicted
    assert set(pred.loc[pred.target == "Optane-P4800X", "op"]) == {"read", "write"}


def test_extrapolation_reproduces_tables_13_and_14(paper):
    _, _, fits, points = paper
    wo = points[points.workload == "write-only"].set_index(["device", "data_size"])
    for gb, (s, m) in TABLE13.items():
        assert wo.loc[("S-SCM", gb * 10**9), "value"] == pytest.approx(s, abs=0.05)
        assert wo.loc[("M-SCM", gb * 10**9), "value"] == pytest.approx(m, abs=0.05)
        assert not wo.loc[("S-SCM", gb * 10**9), "beyond_2x"]
    f = fits[fits.workload == "write-only"].set_index("device")
    for dev, r2 in TABLE14.items():
        assert f.loc[dev, "r2"] == pytest.approx(r2, abs=2e-5)


def test_extrapolation_flags_beyond_twice_the_largest_size(paper):
    res, pred, _, _ = paper
    agg = paper_agg()
    measured = features.series_table(agg, PAPER["features"], PAPER["series"])
    _, points = predict.extrapolate(measured, pred, ["200GB", "300GB"], "log2")
    p = points[points.device == "dram"].set_index(["workload", "op", "data_size"])
    assert not p.loc[("write-only", "write", 200 * 10**9), "beyond_2x"]
    assert p.loc[("write-only", "write", 300 * 10**9), "beyond_2x"]


def test_outside_range_flag_and_fallback_feature(paper):
    res, _, _, _ = paper
    targets = {
        "far": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", "value": 1000}]},
        "two": {"figures": [
            {"workload": "randwrite", "block_size": "1K", "metric": "lat_mean", "value": 10},
            {"workload": "randwrite", "block_size": "16K", "metric": "lat_mean", "value": 10},
        ]},
    }
    pred = predict.predict(res, targets)
    far = pred[pred.target == "far"]
    assert far["outside_range"].all()
    two = pred[(pred.target == "two") & (pred.workload == "write-only") & (pred.data_size == 16 * 10**9)]
    # 16K latency has R^2 0.98 > 1K latency 0.145 for this series
    assert two.iloc[0]["feature"] == "randwrite_16K_lat_mean"


def test_target_without_usable_feature_is_refused():
    feats = PAPER["features"]
    bad = {"X": {"figures": [{"workload": "randwrite", "block_size": "8K", "metric": "lat_mean", "value": 1}]}}
    with pytest.raises(BenchcastError, match=r"targets.X: none of its figures \(randwrite/8K/lat_mean\)"):
        config.check_targets(bad, feats)
    dup = {"Y": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", "value": v}
                             for v in (1, 2)]}}
    with pytest.raises(BenchcastError, match="given twice"):
        features.spec_features(dup)


def test_predict_targets_simple_skips_and_flags():
    feats = {d: {("randwrite", 65536, "lat_mean"): v} for d, v in {"a": 10.0, "b": 20.0, "c": 40.0, "d": 30.0}.items()}
    agg = make_agg(feats, {"a": 101.0, "b": 199.0, "c": 402.0, "d": 298.0})
    sel = pd.DataFrame({"series": ["ycsb/mysql/write-only/write/lat_mean/16GB"],
                        "selected_feature": ["randwrite_64K_lat_mean"], "paper_feature": ["randwrite_64K_lat_mean"]})
    targets = {"in": {"figures": [{"workload": "randwrite", "block_size": 65536, "metric": "lat_mean", "value": 25}]},
               "out": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", "value": 5}]},
               "none": {"figures": [{"workload": "randread", "block_size": "4K", "metric": "lat_mean", "value": 5}]}}
    pred, skipped = predict.predict_targets_simple(agg, sel, targets)
    assert pred["target"].tolist() == ["in", "out"]
    fit = fits.simple(np.array([[101, 199, 402, 298]]), np.array([[10, 20, 40, 30]]))
    assert pred["prediction"].tolist() == pytest.approx([fit.a[0, 0] * x + fit.b[0, 0] for x in (25, 5)])
    assert pred["extrapolation"].tolist() == [False, True]
    assert (pred["lower"] < pred["prediction"]).all()
    assert skipped["target"].tolist() == ["none"] and "randwrite_64K_lat_mean" in skipped["reason"][0]


def test_targets_get_the_io_path_figure_from_their_spec_cards():
    """A chosen I/O-path figure is computed for a target from its card's figures, weighted by the
    requests per operation the devices counted; a card lacking a component is skipped."""
    rr, sync = {"a": 10.0, "b": 20.0, "c": 40.0, "d": 30.0}, {"a": 30.0, "b": 35.0, "c": 90.0, "d": 50.0}
    agg = make_agg({d: {("randread", 16384, "lat_mean"): rr[d], ("write", 16384, "lat_mean"): sync[d]} for d in rr},
                   {d: 5.0 + 2.0 * rr[d] + sync[d] for d in rr}, op="update")
    agg.loc[agg["workload"] == "write", "op"] = "sync"
    agg = pd.concat([agg, io_records({d: {"reads_per_op": 2.0, "read_request_size": 16384.0, "syncs_per_op": 1.0,
                                          "write_request_size": 16384.0} for d in rr})], ignore_index=True)
    name = "io_path[mysql/write-only]"
    sel = pd.DataFrame({"series": ["ycsb/mysql/write-only/update/lat_mean/16GB"], "selected_feature": [name],
                        "paper_feature": [name]})
    card = [{"workload": "randread", "block_size": "16K", "metric": "lat_mean", "value": "8 us"},
            {"workload": "write", "block_size": "16K", "op": "sync", "metric": "lat_mean", "value": "12 us"}]
    targets = {"both": {"figures": card}, "reads": {"figures": card[:1]}}
    pred, skipped = predict.predict_targets_simple(agg, sel, targets, io_paths=0.05)
    assert pred["target"].tolist() == ["both"]
    assert pred["x"].iloc[0] == pytest.approx(2.0 * 8 + 12)
    assert pred["prediction"].iloc[0] == pytest.approx(5.0 + 2.0 * 8 + 12)
    assert skipped["target"].tolist() == ["reads"] and name in skipped["reason"].iloc[0]


def test_predict_targets_multiple_refits_pool_and_flags_data_size():
    rng = np.random.default_rng(3)
    x = {"a": 10.0, "b": 20.0, "c": 40.0, "d": 30.0}
    feats = {d: {("randwrite", 65536, "lat_mean"): v} for d, v in x.items()}
    sizes = [2 * 10**9, 8 * 10**9, 32 * 10**9]
    res = {d: {s: 50 + 10 * v + 3 * s / 1e9 + rng.normal(0, 1) for s in sizes} for d, v in x.items()}
    agg = make_agg(feats, res)
    sel = pd.DataFrame({"pool": ["ycsb/mysql/write-only/write/lat_mean/us"],
                        "pool_by": [",".join(features.POOL_PER_WORKLOAD)],
                        "selected_features": ["randwrite_64K_lat_mean"],
                        "selected_figures": [vfolds.figures_cell(["randwrite_64K_lat_mean"])]})
    targets = {"t": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", "value": 25}]},
               "u": {"figures": [{"workload": "randwrite", "block_size": "4K", "metric": "lat_mean", "value": 25}]}}
    pred, skipped = predict.predict_targets_multiple(agg, sel, targets, data_sizes=["64GB", "100GB"])
    assert pred["data_size"].tolist() == sizes + [64 * 10**9, 100 * 10**9]
    assert pred["measured_size"].tolist() == [True, True, True, False, False]
    assert pred["data_size_extrapolated"].tolist() == [False, False, False, False, True]
    expect = 50 + 10 * 25 + 3 * pred["data_size"] / 1e9
    assert np.allclose(pred["prediction"], expect, rtol=0.02)
    assert ((pred["lower"] <= expect) & (expect <= pred["upper"])).all()
    assert skipped["target"].tolist() == ["u"]


def test_nested_choice_predicts_a_target_by_the_median_of_the_three_best_by_hand():
    """The spec cards are predicted by the procedure validation measured: every figure, as a
    straight line and as a log-log line, is scored by leave-one-device-out MAPE over all devices;
    of the three best, each refitted on all devices, the one whose prediction for the target is
    the median wins, with its own interval. A card lacking a figure is predicted by the best
    ranked models it has (two: the better alone). Checked by hand."""
    x64 = {"a": 1.0, "b": 10.0, "c": 30.0, "d": 60.0, "e": 100.0, "f": 200.0}
    x4 = {"a": 5.0, "b": 1.0, "c": 4.0, "d": 2.0, "e": 6.0, "f": 3.0}
    x16 = {"a": 2.0, "b": 12.0, "c": 25.0, "d": 70.0, "e": 90.0, "f": 230.0}
    y = {d: 3 * x64[d] ** 0.5 + 0.02 * x64[d] for d in x64}
    figs = {"randwrite_64K_lat_mean": x64, "randwrite_4K_lat_mean": x4, "randwrite_16K_lat_mean": x16}
    agg = make_agg({d: {("randwrite", 65536, "lat_mean"): x64[d], ("randwrite", 4096, "lat_mean"): x4[d],
                        ("randwrite", 16384, "lat_mean"): x16[d]} for d in x64}, y)
    _, summary = vfolds.loo_simple(agg, loglog=True)
    ranked = choice.rank_models(agg, summary, top=3)
    nested = choice.select_nested(ranked, features.series_matrix(agg)[1])
    assert nested["rank"].tolist() == [1, 2, 3]
    devs = list(x64)
    yv = np.array([y[d] for d in devs])
    hand = []  # (mape, features, fit on all devices as a function of x, figure)
    for fid, xd in figs.items():
        xv = np.array([xd[d] for d in devs])
        for log in (False, True):
            t, back = (np.log, np.exp) if log else (np.asarray, np.asarray)
            loo = []
            for i in range(len(devs)):
                b, a = np.polyfit(np.delete(t(xv), i), np.delete(t(yv), i), 1)
                loo.append(back(a + b * t(xv[i])))
            b, a = np.polyfit(t(xv), t(yv), 1)
            name = vfolds.model_label([fid], vfolds.LOGLOG if log else vfolds.LINE)
            hand.append((np.mean(np.abs(100 * (np.array(loo) - yv) / yv)), name,
                         lambda x, a=a, b=b, t=t, back=back: float(back(a + b * t(x))), fid))
    hand.sort(key=lambda h: h[0])
    assert nested["features"].tolist() == [h[1] for h in hand[:3]]
    assert nested["score_mape"].to_numpy() == pytest.approx([h[0] for h in hand[:3]])
    card = {"randwrite_64K_lat_mean": ("64K", 150.0), "randwrite_4K_lat_mean": ("4K", 2.5),
            "randwrite_16K_lat_mean": ("16K", 50.0)}
    fig = lambda fid: {"workload": "randwrite", "block_size": card[fid][0], "metric": "lat_mean",  # noqa: E731
                       "value": card[fid][1]}
    second = hand[1][3]
    lacking = [f for f in card if f != second]  # the card without the second model's figure
    targets = {"full": {"figures": [fig(f) for f in card]}, "less": {"figures": [fig(f) for f in lacking]}}
    pred, _ = predict.predict_targets_nested(agg, nested, targets)
    pred = pred.set_index("target")
    assert set(pred["choice"]) == {"nested"} and set(pred["kind"]) == {"simple"}
    values = sorted((h[2](card[h[3]][1]), h[1]) for h in hand[:3])
    assert pred.loc["full", "features"] == values[1][1] != hand[0][1]  # the median, not the best
    assert pred.loc["full", "prediction"] == pytest.approx(values[1][0])
    assert pred.loc["full", "lower"] < pred.loc["full", "prediction"] < pred.loc["full", "upper"]
    have = [h for h in hand[:3] if h[3] in lacking]
    assert len(have) == 2  # an even number: the better alone
    assert pred.loc["less", "features"] == have[0][1]
    assert pred.loc["less", "prediction"] == pytest.approx(have[0][2](card[have[0][3]][1]))


def test_nested_choice_predicts_a_target_with_a_multiple_model_of_its_pool():
    """A multiple model in the nested choice is found in its pool (select_nested), refitted on the
    whole pool and predicts each series of the pool at its own data size, as the held-out choice's
    multiple model does; sizes never measured are not nested-choice rows."""
    rng = np.random.default_rng(5)
    x = {"a": 10.0, "b": 20.0, "c": 40.0, "d": 30.0, "e": 70.0}
    sizes = [2 * 10**9, 8 * 10**9, 32 * 10**9]
    res = {d: {s: 50 + 10 * v + 3 * s / 1e9 + rng.normal(0, 1) for s in sizes} for d, v in x.items()}
    agg = make_agg({d: {("randwrite", 65536, "lat_mean"): v} for d, v in x.items()}, res)
    mfolds, msummary, _ = vfolds.loo_multiple(agg, candidates=lambda k: ["randwrite_64K_lat_mean"],
                                             max_figures=2)
    _, keys = features.series_matrix(agg)
    ranked = pd.DataFrame({"series": keys.index, "features": "randwrite_64K_lat_mean", "model": "multiple",
                           "mape": 1.0, "_rank": 0, "form": "line",
                           "figures": vfolds.figures_cell(["randwrite_64K_lat_mean"])})
    nested = choice.select_nested(ranked, keys, mfolds, msummary)
    assert nested["pool"].tolist() == ["ycsb/mysql/write-only/write/lat_mean/us"] * 3
    assert set(nested["variables"]) == {"data_gb+log2_data_gb"}
    targets = {"t": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", "value": 25}]}}
    pred, _ = predict.predict_targets_nested(agg, nested, targets)
    sel = nested.rename(columns={"features": "selected_features", "figures": "selected_figures"}).iloc[:1]
    whole, _ = predict.predict_targets_multiple(agg, sel, targets)
    assert pred["data_size"].tolist() == sizes and set(pred["kind"]) == {"multiple"}
    assert sorted(pred["series"]) == sorted(keys.index)
    assert pred["prediction"].to_numpy() == pytest.approx(whole["prediction"].to_numpy())
    assert np.allclose(pred["prediction"], 50 + 10 * 25 + 3 * pred["data_size"] / 1e9, rtol=0.02)


@pytest.mark.parametrize("relative", [False, True])
def test_a_device_predicted_as_a_spec_card_gets_its_nested_choice_held_out_prediction(relative):
    """The procedure that predicts spec cards is the one validation measured: a measured device
    left out of the study and given as a card of its own figures is predicted exactly as the
    nested choice predicted it when held out (same models, same fits, same median); with lines on
    relative errors too, which the cards then fit by statsmodels WLS."""
    x64 = {"a": 1.0, "b": 10.0, "c": 30.0, "d": 60.0, "e": 100.0, "f": 200.0, "g": 130.0}
    x4 = {"a": 5.0, "b": 1.0, "c": 4.0, "d": 2.0, "e": 6.0, "f": 3.0, "g": 2.5}
    x16 = {"a": 2.0, "b": 12.0, "c": 25.0, "d": 70.0, "e": 90.0, "f": 230.0, "g": 120.0}
    y = {d: 3 * x64[d] ** 0.5 + 0.02 * x64[d] + (1.5 if d in "bf" else 0.0) for d in x64}
    figs = {"64K": x64, "4K": x4, "16K": x16}
    agg = make_agg({d: {("randwrite", {"64K": 65536, "4K": 4096, "16K": 16384}[b], "lat_mean"): v[d]
                        for b, v in figs.items()} for d in x64}, y)
    loglog = not relative  # the lines on relative errors compete with straight lines, not a power law
    folds, _ = vfolds.loo_simple(agg, loglog=loglog, relative=relative)
    held = vnested.nested_choice(agg, folds, None, how=choice.Nested(top=3, loglog=loglog, level=0.9, relative=relative))
    held = intervals.widen(held).set_index("held_out")
    assert held["features"].nunique() > 1  # not one model everywhere
    assert held["features"].str.startswith(vfolds.RELATIVE.prefix).any() == relative
    widened = 0
    for d in x64:
        rest = agg[agg["device"] != d]
        rfolds, summary = vfolds.loo_simple(rest, loglog=loglog, relative=relative)
        ranked = choice.rank_models(rest, summary, top=3)
        Y, keys = features.series_matrix(rest)
        spread = intervals.interval_spread(intervals.inner_errors(rfolds), ranked, Y, keys, (), 0.9)
        nested = choice.select_nested(ranked, keys, spread=spread)
        assert nested["log_spread_beyond"].notna().all()
        card = {d: {"figures": [{"workload": "randwrite", "block_size": b, "metric": "lat_mean", "value": v[d]}
                                for b, v in figs.items()]}}
        pred, _ = predict.predict_targets_nested(rest, nested, card)
        assert pred["features"].iloc[0] == held.loc[d, "features"]
        assert pred["prediction"].iloc[0] == pytest.approx(held.loc[d, "prediction"])
        # and the same interval: beyond the other devices' results widened to the same errors
        pred = intervals.widen(pred.assign(log_spread=intervals.spread_of(pred, spread, Y, at="target")))
        assert pred[["lower", "upper"]].iloc[0].tolist() == pytest.approx(held.loc[d, ["lower", "upper"]].tolist())
        p = pred["prediction"].iloc[0]
        beyond = not Y.iloc[:, 0].min() <= p <= Y.iloc[:, 0].max()
        widened += beyond
        if beyond:
            assert pred["upper"].iloc[0] >= p * np.exp(spread.iloc[0]) * (1 - 1e-9)
    assert widened >= 2  # the fastest and the slowest device at least


def test_nested_choice_of_a_card_no_model_can_predict_is_skipped_not_an_error():
    feats = {d: {("randwrite", 65536, "lat_mean"): v} for d, v in {"a": 10.0, "b": 20.0, "c": 40.0, "d": 30.0}.items()}
    agg = make_agg(feats, {"a": 101.0, "b": 199.0, "c": 402.0, "d": 298.0})
    _, summary = vfolds.loo_simple(agg)
    nested = choice.select_nested(choice.rank_models(agg, summary, top=3), features.series_matrix(agg)[1])
    card = {"other": {"figures": [{"workload": "randread", "block_size": "4K", "metric": "lat_mean", "value": 5}]}}
    pred, skipped = predict.predict_targets_nested(agg, nested, card)
    assert pred.empty and list(pred.columns) == predict.TARGET_PREDICTION_COLUMNS
    assert skipped["target"].tolist() == ["other"]


def _paper_through_csv(tmp_path):
    """The paper study's validation and its spec cards' predictions with intervals, the selections
    written to CSV files and read back between the two, as between the rules ``heldout`` and
    ``predict_intervals``."""
    agg = paper_agg()
    screened = screen.screen(agg, PAPER["features"], PAPER["series"], PAPER["pairing"], 3)
    val = validation.run_study(validation.Study.of(PAPER), agg=agg, screened=screened)
    names = ("simple_selection", "multiple_selection", "nested_selection")
    for name in names:
        val[name].to_csv(tmp_path / f"{name}.csv", index=False)
    chosen = predict.Selections(*(tables.read_table(tmp_path / f"{name}.csv") for name in names))
    preds, _ = predict.with_intervals(agg, PAPER["features"], PAPER["series"], chosen, PAPER["targets"],
                                      PAPER["validate"], PAPER["extrapolate"]["data_sizes"])
    return val, preds, features.feature_table(agg, PAPER["features"])


def test_a_model_is_read_from_its_columns_never_from_its_label(tmp_path, monkeypatch):
    """Feature keys that look like model labels (starting 'log-log relative ', holding a '+') change
    no choice and no prediction: a model's form and figures travel as columns beside its label
    (straight and log-log lines, multiple models, through CSV files), and every label is the
    adversarial figures' label."""
    usual_dir, odd_dir = tmp_path / "usual", tmp_path / "odd"
    usual_dir.mkdir(), odd_dir.mkdir()
    val, preds, feats = _paper_through_csv(usual_dir)
    plain = features.feature_name
    odd = lambda *a, **k: f"log-log relative {plain(*a, **k)}+1"  # noqa: E731
    monkeypatch.setattr(workloads, "feature_name", odd)  # where names are made (spec cards read it there)
    monkeypatch.setattr(features, "feature_name", odd)
    odd_val, odd_preds, odd_feats = _paper_through_csv(odd_dir)
    both = feats.merge(odd_feats, on=[*features.FEATURE_KEYS, "device"], suffixes=("", "_odd"))
    rename = dict(zip(both["feature"], both["feature_odd"]))
    assert len(both) == len(feats) and all(v.endswith("+1") for v in rename.values())

    def relabel(label):  # the usual labels hold no '+' and no prefix of their own: read here, in a test
        if not isinstance(label, str):
            return label
        form = next((f for f in (vfolds.LOGLOG, vfolds.RELATIVE) if label.startswith(f.prefix)), vfolds.LINE)
        return vfolds.model_label([rename.get(x, x) for x in label.removeprefix(form.prefix).split("+")], form)

    nested = val["nested_selection"]
    assert {"line", "log-log"} <= set(nested["form"])  # the paper's data chooses no line on relative errors
    for name in ("simple_selection", "multiple_selection", "nested_selection", "chosen_folds", "verdicts"):
        got, want = odd_val[name], val[name]
        for col in ("features", "paper_feature", "selected_feature", "r2_features", "selected_features"):
            if col in want:
                want = want.assign(**{col: want[col].map(relabel)})
        cols = [c for c in want.columns if c not in ("figures", "selected_figures")]
        pd.testing.assert_frame_equal(got[cols], want[cols], obj=name)
    assert {"simple", "multiple"} <= set(preds["kind"]) and {"paper", "heldout", "nested"} <= set(preds["choice"])
    pd.testing.assert_frame_equal(odd_preds, preds.assign(features=preds["features"].map(relabel),
                                                          out_of_range_features=odd_preds["out_of_range_features"]),
                                  check_dtype=False)  # a mapped column's string dtype


def test_a_series_whose_straight_line_crosses_zero_shows_no_number_at_or_below_zero():
    """y falls with the figure (a line with a negative slope) and a card far out on the figure: the
    paper's line would predict below zero. Table 12 takes the next figure the card has, the
    intervals' lower bounds are mirrored on the log scale, a prediction at or below zero is refused
    (moved to the skipped rows with its value), and the size extrapolation refuses such points."""
    x64 = {"a": 10.0, "b": 20.0, "c": 40.0, "d": 30.0}
    x4 = {"a": 2.0, "b": 3.0, "c": 6.0, "d": 4.0}
    y = {"a": 400.0, "b": 300.0, "c": 110.0, "d": 210.0}
    agg = make_agg({d: {("randwrite", 65536, "lat_mean"): x64[d], ("randwrite", 4096, "lat_mean"): x4[d]} for d in x64},
                   y)
    card = {"far": {"figures": [{"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", "value": "90 us"},
                                {"workload": "randwrite", "block_size": "4K", "metric": "lat_mean", "value": "7.2 us"}]}}
    feats = {"workloads": ["randwrite"], "block_sizes": ["4K", "64K"], "metrics": ["lat_mean"]}
    res = screen.screen(agg, feats, None, None, 3)
    best = res[res["rank"] == 1].iloc[0]
    assert best["a"] * 90 + best["b"] < 0  # the best line crosses zero at the card
    pred = predict.predict(res, card)
    assert (pred["value"] > 0).all() and pred["choice"].tolist() == ["best in spec"]
    sel = pd.DataFrame({"series": ["ycsb/mysql/write-only/write/lat_mean/16GB"],
                        "selected_feature": ["randwrite_64K_lat_mean"], "paper_feature": ["randwrite_4K_lat_mean"]})
    preds, skipped = predict.with_intervals(agg, feats, None, predict.Selections(sel, pd.DataFrame()), card,
                                            {"level": 0.95, "candidates": "pairing", "cap_ratio": None, "cap_fit": None}, [])
    assert (preds["prediction"] > 0).all() and (preds["lower"] > 0).all()
    refused = skipped[skipped["reason"].str.contains("at or below 0")]
    assert refused["features"].tolist() == ["randwrite_64K_lat_mean"]
    mirrored = preds[preds["interval_flag"].str.contains("mirrored")]
    assert len(mirrored) and (mirrored["lower"] * mirrored["upper"]).to_numpy() == pytest.approx(
        (mirrored["prediction"] ** 2).to_numpy())
    # over data size: a falling line refused where it reaches zero
    measured = pd.DataFrame([{"device": "a", **{k: v for k, v in zip(
        ["benchmark", "engine", "workload", "threads", "op", "metric", "unit"],
        ["ycsb", "mysql", "write-only", 0, "write", "lat_mean", "us"])}, "data_size": s * 10**9, "value": v}
        for s, v in ((1, 300.0), (2, 200.0), (4, 20.0))])
    _, points = predict.extrapolate(measured, pd.DataFrame(columns=["target", *measured.columns[1:]]), ["3GB", "8GB"])
    p = points.set_index("data_size")
    assert p.loc[3 * 10**9, "value"] > 0 and not p.loc[3 * 10**9, "refused"]
    assert np.isnan(p.loc[8 * 10**9, "value"]) and p.loc[8 * 10**9, "refused"]


def test_the_cards_are_bagged_as_validation_was():
    """With the draws' models (``nested_draws``) a card's nested prediction is the median (log scale)
    of the unbagged one on the study and those of each draw's models on that draw (floor.draw)."""
    from benchcast.screening import floor
    from validation_util import noisy_study

    study, agg, screened = noisy_study(2)
    out = validation.run_study(study, agg=agg, screened=screened)
    settings = {**study.settings.__dict__, "nested_share": list(study.settings.nested_share)}
    card = {"new": {"figures": [{"workload": "randread", "block_size": "16K", "metric": "lat_mean", "value": 120}]}}

    def nested(a, sel, draws=None):
        chosen = predict.Selections(out["simple_selection"], out["multiple_selection"], sel, draws)
        p, _ = predict.with_intervals(a, study.features, None, chosen, card, settings, [])
        return p[p["choice"] == "nested"].set_index("series")["prediction"]

    draws = out["nested_draws"]
    parts = [nested(agg, out["nested_selection"])]
    parts += [nested(floor.draw(agg, d), draws[draws["draw"] == d].drop(columns="draw")) for d in (1, 2)]
    both = pd.concat(parts, axis=1)
    assert len(both) == 1 and both.nunique(axis=1).iloc[0] == 3
    want = np.exp(np.log(both).median(axis=1))
    pd.testing.assert_series_equal(nested(agg, out["nested_selection"], draws), want, check_names=False)


def test_a_card_prediction_without_a_model_interval_gets_the_band_within_the_measured_results():
    """An anchored line at or below zero at a measured device has no log residuals, so no interval of
    its own: the card's answer, though within the measured results, gets the band of the procedure's
    held-out errors (flagged), never an answer without its interval; one with an interval keeps it."""
    agg = make_agg({d: {("randread", 4096, "lat_mean"): x} for d, x in zip("abc", (10.0, 20.0, 40.0))},
                   {"a": 100.0, "b": 200.0, "c": 400.0})
    table = features.study_table(agg, {"workloads": ["randread"], "block_sizes": ["4K"], "metrics": ["lat_mean"]},
                                 None)
    Y, _ = features.series_matrix(table)
    s = Y.columns[0]
    p = pd.DataFrame({"series": [s, s], "target": ["X", "Z"], "prediction": [150.0, 150.0],
                      "lower": [np.nan, 120.0], "upper": [np.nan, 180.0], "interval_flag": ["", ""]})
    nested = pd.DataFrame({"series": [s], "log_spread_beyond": [np.log(2.0)]})
    out = predict.widened(p, nested, table).set_index("target")
    assert out.loc["X", ["lower", "upper"]].tolist() == pytest.approx([75.0, 300.0])
    assert out.loc["X", "interval_flag"] == intervals.FLAG_BAND
    assert out.loc["Z", ["lower", "upper"]].tolist() == [120.0, 180.0]  # within the results: its own
