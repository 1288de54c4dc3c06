"""Tests of benchcast.screening.ratecap: the rate-cap rule by hand on a small study with one capped device."""

import copy

import numpy as np
import pandas as pd
import pytest

from analysis_util import CONFIG, io_records, make_agg
from benchcast import config, features, validation
from benchcast.prediction import predict
from benchcast.screening import ratecap, screen
from benchcast.validation import choice

P = {"a": 3.0, "b": 60.0, "c": 150.0, "d": 400.0, "e": 90.0, "cap": 60.0}  # read median (us)
SYNC = {"a": 20.0, "b": 110.0, "c": 350.0, "d": 1000.0, "e": 200.0, "cap": 100.0}  # commit (us)
MEAN = {**{d: 1.05 * v for d, v in P.items()}, "cap": 600.0}  # a cap: the mean 10x the median
NOISE = {"a": 1.0, "b": -2.0, "c": 1.5, "d": -0.5, "e": 0.5, "cap": 0.0}
K_READ, K_SYNC = 0.8, 0.5
SIZE = 16 * 10**9
SERIES = "ycsb/mysql/read-heavy/update/lat_mean/16GB"


def x_of(d):
    return K_READ * P[d] + K_SYNC * SYNC[d]


WMEAN = {"a": 3.0, "b": 20.0, "c": 50.0, "d": 130.0, "e": 30.0, "cap": 600.0}  # random-write mean (us)


def study(truth_cap=700.0, cap_reads=K_READ, extra=None, op="update", writes=None):
    """Six devices, one capped; y = 50 + 2 x (+ noise) and time per operation t = 30 + 1.5 x on
    the others; counters K_READ reads and K_SYNC syncs of 16K per operation (and ``writes``)."""
    devs = list(P)
    y = {d: 50 + 2 * x_of(d) + NOISE[d] for d in devs}
    y["cap"] = truth_cap
    agg = make_agg({d: {("randread", 16384, "lat_mean"): MEAN[d], ("randread", 16384, "clat_p50"): P[d],
                        ("write", 16384, "lat_mean"): SYNC[d], ("randwrite", 16384, "lat_mean"): WMEAN.get(d, 1.0)}
                    for d in devs}, y, workload="read-heavy", op=op, data_size=SIZE)
    agg.loc[agg["workload"] == "write", "op"] = "sync"
    t = {d: 30 + 1.5 * x_of(d) for d in devs}
    thr = agg[agg["benchmark"] == "ycsb"].assign(op="overall", metric="throughput", unit="ops/sec",
                                                   value=lambda df: 1e6 / df["device"].map(t))
    prof = {d: {"reads_per_op": cap_reads if d == "cap" else K_READ, "read_request_size": 16384.0,
                "syncs_per_op": K_SYNC, "write_request_size": 16384.0, **({"writes_per_op": writes} if writes else {})}
            for d in devs}
    parts = [agg, thr, io_records(prof, workload="read-heavy", data_size=SIZE)]
    return pd.concat(parts + ([extra] if extra is not None else []), ignore_index=True)


def x_read(d):
    """A read's x: its own reads alone (the commits are the updates')."""
    return K_READ * P[d]


def lines(devs, x0, x=x_of):
    """(the series' line, the time per operation's line) over ``devs`` at ``x0``, fitted on ``x``."""
    xs = np.array([x(d) for d in devs])
    b, a = np.polyfit(xs, [50 + 2 * x_of(d) + NOISE[d] for d in devs], 1)
    bt, at = np.polyfit(xs, [30 + 1.5 * x_of(d) for d in devs], 1)
    return a + b * x0, at + bt * x0


def by_hand(devs, x0, bound0):
    y0, t0 = lines(devs, x0)
    return y0 * max(1.0, bound0 / t0)


def held_out_rows(agg, series=SERIES):
    Y, keys = features.series_matrix(agg)
    rows = pd.DataFrame({"series": series, "held_out": list(Y.index), "truth": Y[series].to_numpy(),
                         "prediction": 1.0, "lower": 0.5, "upper": 1.5, "x": 0.0, "model": "simple",
                         "features": "randread_16K_lat_mean", "covered": pd.array([True] * len(Y), dtype="boolean")})
    return rows, features.feature_matrix(agg), Y, keys


def test_weights_are_the_requests_per_operation_at_the_series_data_size():
    """Counters of another data size do not count; the figures are the read mean, its median and
    the commit at the request sizes."""
    other = io_records({d: {"reads_per_op": 3.0, "read_request_size": 4096.0} for d in P}, workload="read-heavy",
                       data_size=SIZE // 2)
    agg = study(extra=other)
    key = features.series_matrix(agg)[1].loc[SERIES]
    w = ratecap.weights(agg, key, 0.05)
    assert w == {"reads": K_READ, "mean": "randread_16K_lat_mean", "median": "randread_16K_clat_p50",
                 "syncs": K_SYNC, "sync": "write_16K_sync_lat_mean", "writes": 0.0, "write": None}
    assert ratecap.weights(agg, key, 1.0) is None  # reads below min_per_op: not the rule's
    fig = ratecap.figures(features.feature_matrix(agg), w)
    assert fig.loc["cap", "x"] == pytest.approx(x_of("cap")) and fig.loc["cap", "r"] == pytest.approx(K_READ * 600)
    assert (fig["w"] == 0).all()  # no writes counted
    assert fig.loc["cap", "cap"] == pytest.approx(10) and fig["cap"].drop("cap").to_numpy() == pytest.approx(1.05)


def test_a_capped_held_out_device_is_predicted_by_the_rule_by_hand_and_the_others_stay():
    """(a + b x) * max(1, k m / (c + d x)) with both lines over the other devices, by hand; the
    uncapped devices' rows keep their predictions."""
    agg = study()
    rows, F, Y, keys = held_out_rows(agg)
    out = ratecap.apply(rows, agg, F, Y, keys, ratecap.Rule(1.5, 0.05)).set_index("held_out")
    expect = by_hand([d for d in P if d != "cap"], x_of("cap"), K_READ * 600)
    assert expect > 50 + 2 * x_of("cap")  # the cap spaces the operations: the factor is above 1
    assert out.loc["cap", "prediction"] == pytest.approx(expect)
    assert out.loc["cap", "model"] == ratecap.MODEL and out.loc["cap", "features"] == "ratecap[mysql/read-heavy]"
    assert out.loc["cap", "lower"] < out.loc["cap", "prediction"] < out.loc["cap", "upper"]
    assert out.loc["cap", "pct_error"] == pytest.approx(100 * (expect - 700) / 700)
    others = out.drop(index="cap")
    assert (others["prediction"] == 1.0).all() and (others["model"] == "simple").all()
    # the cap's mean is 10x its median: not 20x
    above = ratecap.apply(rows, agg, F, Y, keys, ratecap.Rule(20, 0.05))
    assert (above["prediction"] == 1.0).all() and (above["model"] == "simple").all()
    assert ratecap.apply(rows, agg, F, Y, keys, ratecap.Rule(None, 0.05)) is rows


def test_the_held_out_devices_own_counters_and_result_do_not_enter():
    """Its reads per operation and its result changed wildly: the same prediction."""
    base = study()
    rows, F, Y, keys = held_out_rows(base)
    rule = ratecap.Rule(1.5, 0.05)
    first = ratecap.apply(rows, base, F, Y, keys, rule).set_index("held_out").loc["cap", "prediction"]
    other = study(truth_cap=5000.0, cap_reads=5.0)
    rows, F, Y, keys = held_out_rows(other)
    again = ratecap.apply(rows, other, F, Y, keys, rule).set_index("held_out").loc["cap", "prediction"]
    assert again == pytest.approx(first)


@pytest.mark.parametrize("share", [0.95, 0.85])
def test_a_capped_training_device_stays_out_of_the_lines(share):
    """A second capped device (its read mean 18x its median) whose result lies far off the line
    does not move the capped device's prediction: where its cap allows 95 % of its observed time
    per operation, and where it allows 85 % (the rest the operation's own time, as a capped loop
    device's swap pass took 1.15x its cap's spacing: it once counted as free of its cap)."""
    P["cap2"], SYNC["cap2"], MEAN["cap2"], NOISE["cap2"] = 50.0, 90.0, 900.0, 0.0
    try:
        agg = study()
        thr = (agg["device"] == "cap2") & (agg["metric"] == "throughput")
        agg.loc[thr, "value"] = 1e6 / (K_READ * 900 / share)
        agg.loc[(agg["device"] == "cap2") & (agg["op"] == "update"), "value"] = 3000.0
        rows, F, Y, keys = held_out_rows(agg)
        out = ratecap.apply(rows, agg, F, Y, keys, ratecap.Rule(1.5, 0.05)).set_index("held_out")
        expect = by_hand([d for d in P if d not in ("cap", "cap2")], x_of("cap"), K_READ * 600)
        assert out.loc["cap", "prediction"] == pytest.approx(expect)
    finally:
        for table in (P, SYNC, MEAN, NOISE):
            table.pop("cap2")


def test_a_spec_card_with_a_caps_signature_is_predicted_by_the_rule():
    """A card giving the read mean and its median far apart is predicted by the rule from every
    measured device; a card without the median keeps its prediction."""
    agg = study()
    _, F, Y, keys = held_out_rows(agg)
    fig = lambda w, m, v, op=None: {"workload": w, "block_size": "16K", "metric": m, "value": v,  # noqa: E731
                                     **({"op": op} if op else {})}
    cards = {"capped": {"figures": [fig("randread", "lat_mean", 800), fig("randread", "clat_p50", 40),
                                    fig("write", "lat_mean", 90, "sync")]},
             "no median": {"figures": [fig("randread", "lat_mean", 800), fig("write", "lat_mean", 90, "sync")]}}
    T = features.target_figures(cards)
    rows = pd.DataFrame({"series": SERIES, "target": list(cards), "prediction": 1.0, "lower": 0.5, "upper": 1.5,
                         "model": "simple", "features": "f"})
    out = ratecap.apply(rows, agg, F, Y, keys, ratecap.Rule(1.5, 0.05), new=T, at="target").set_index("target")
    # every measured device trains; the capped one, paced by its cap (k m / t = 2.7), stays out
    expect = by_hand([d for d in P if d != "cap"], K_READ * 40 + K_SYNC * 90, K_READ * 800)
    assert out.loc["capped", "prediction"] == pytest.approx(expect)
    assert out.loc["capped", "model"] == ratecap.MODEL
    assert out.loc["no median", "prediction"] == 1.0


def test_validation_and_the_spec_cards_use_the_rule_for_capped_devices_only():
    """validation.run_study: the nested choice's row of the capped device is the rule's, the others are not;
    predict.with_intervals: the nested choice of a capped card is the rule's too."""
    agg = study()
    settings = config.validate(copy.deepcopy(CONFIG))["studies"]["local"]  # the default validate settings
    feats = {"workloads": ["randread", "write"], "block_sizes": ["16K"], "metrics": ["lat_mean", "clat_p50"]}
    pairing = [{"when": {"op": "update"}, "workloads": ["write"]}]
    screened = screen.screen(agg, feats, None, pairing, 3)
    how = validation.Study(features=feats, series=None, pairing=pairing,
                           settings=validation.Settings.of(settings["validate"]))
    out = validation.run_study(how, agg=agg, screened=screened)
    nested = out["chosen_folds"]
    nested = nested[(nested["kind"] == choice.KIND_NESTED) & (nested["series"] == SERIES)].set_index("held_out")
    assert nested.loc["cap", "model"] == ratecap.MODEL
    assert (nested.drop(index="cap")["model"] != ratecap.MODEL).all()
    throughput = out["chosen_folds"][out["chosen_folds"]["series"].str.contains("/throughput/")]
    assert len(throughput) and (throughput["model"] != ratecap.MODEL).all()  # latencies only
    card = [{"workload": "randread", "block_size": "16K", "metric": m, "value": v}
            for m, v in (("lat_mean", 800), ("clat_p50", 40))]
    card.append({"workload": "write", "block_size": "16K", "op": "sync", "metric": "lat_mean", "value": 90})
    chosen = predict.Selections(out["simple_selection"], out["multiple_selection"], out["nested_selection"])
    preds, _ = predict.with_intervals(agg, feats, None, chosen, {"capped": {"figures": card}},
                                      settings["validate"], [])
    mine = preds[(preds["choice"] == "nested") & (preds["series"] == SERIES)]
    assert mine["model"].tolist() == [ratecap.MODEL]
    assert mine["prediction"].iloc[0] == pytest.approx(by_hand([d for d in P if d != "cap"], K_READ * 40 + K_SYNC * 90,
                                                               K_READ * 800))


def test_the_write_cap_spaces_updates_and_leaves_reads_their_budget():
    """Three writes per operation against the capped device's random-write mean (600 us): the
    write cap allows an operation every 1800 us, the read cap every 480 us and the line predicts
    177 us. An update waits for the tighter cap (f = 1800 / 177); a read is spaced by the write cap
    already and keeps its read budget (f = max(1, 480 / max(177, 1800)) = 1). A read's line is on
    its own reads alone: the commits are the updates'."""
    others = [d for d in P if d != "cap"]
    y0, t0 = lines(others, x_of("cap"))
    for op, factor in (("update", 3 * 600 / t0), ("read", 1.0)):
        if op == "read":
            y0 = lines(others, x_read("cap"), x_read)[0]
        agg = study(op=op, writes=3.0)
        rows, F, Y, keys = held_out_rows(agg, SERIES.replace("/update/", f"/{op}/"))
        out = ratecap.apply(rows, agg, F, Y, keys, ratecap.Rule(1.5, 0.05)).set_index("held_out")
        assert out.loc["cap", "model"] == ratecap.MODEL
        assert out.loc["cap", "prediction"] == pytest.approx(y0 * factor)


PASS_SERIES = "ycsb/mysql/read-heavy/pass/lat_mean/16GB"


def test_a_pass_without_a_throughput_is_spaced_by_its_own_time():
    """An out-of-core pass runs alone, one after another: without a throughput record its own mean
    latency is its time per operation, and the rule predicts the capped device from the two lines
    over the others (here both the series' line), by hand."""
    agg = study(op="pass")
    agg = agg[agg["op"] != "overall"]  # no throughput: the passes' own time
    key = features.series_matrix(agg)[1].loc[PASS_SERIES]
    y = {d: 50 + 2 * x_of(d) + NOISE[d] for d in P}
    assert ratecap.spacing(agg, key).drop(index="cap").to_numpy() == pytest.approx([y[d] for d in P if d != "cap"])
    rows, F, Y, keys = held_out_rows(agg, PASS_SERIES)
    out = ratecap.apply(rows, agg, F, Y, keys, ratecap.Rule(1.5, 0.05)).set_index("held_out")
    others = [d for d in P if d != "cap"]
    xs = np.array([x_of(d) for d in others])
    b, a = np.polyfit(xs, [y[d] for d in others], 1)
    y0 = a + b * x_of("cap")
    assert out.loc["cap", "model"] == ratecap.MODEL
    assert out.loc["cap", "prediction"] == pytest.approx(y0 * max(1.0, K_READ * 600 / y0))
    no_time = study(op="read")
    no_time = no_time[no_time["op"] != "overall"]  # a read's latency is not its time per operation
    key = features.series_matrix(no_time)[1].loc[SERIES.replace("/update/", "/read/")]
    assert ratecap.spacing(no_time, key).empty


@pytest.mark.parametrize("per_op, size, applies", [
    ({"a": 0.8, "b": 0.9, "c": 1.1, "d": 0.8, "e": 0.8}, 16384.0, True),  # 1.4x apart: agreed
    ({"a": 0.8, "b": 0.9, "c": 1.5, "d": 0.8, "e": 0.8}, 16384.0, False),  # 1.9x apart: the device's count
    ({"a": 0.0, "b": 0.9, "c": 1.5, "d": 0.8, "e": 0.8}, 16384.0, False),  # one reads nothing
    (None, 32768.0, True),  # a 32K request, priced by the 16K figure (2x)
    (None, 65536.0, False),  # 64K: no figure within 2x prices it
    (None, 4096.0, False),
])
def test_the_rule_needs_agreed_counts_and_a_figure_of_the_requests_size(per_op, size, applies):
    """weights: None where the training devices' reads per operation differ by more than SPREAD, or
    where no read figure lies within SIZE_FACTOR of the read request size."""
    agg = study()
    io = agg["op"] == "device"
    if per_op:
        for d, v in per_op.items():
            agg.loc[io & (agg["device"] == d) & (agg["metric"] == "reads_per_op"), "value"] = v
    agg.loc[io & (agg["metric"] == "read_request_size"), "value"] = size
    key = features.series_matrix(agg)[1].loc[SERIES]
    train = agg[agg["device"] != "cap"]
    assert (ratecap.weights(train, key, 0.05) is not None) == applies


def test_a_write_of_another_size_and_a_training_device_without_the_write_figure():
    """Writes of 4K against a 16K random-write figure (4x): no write cap is priced (writes 0). A
    training device without the random-write mean counts as having no write cap, as a card does:
    it still trains."""
    agg = study(writes=3.0)
    io = agg["op"] == "device"
    agg.loc[io & (agg["metric"] == "write_request_size"), "value"] = 4096.0
    key = features.series_matrix(agg)[1].loc[SERIES]
    w = ratecap.weights(agg, key, 0.05)
    assert w["writes"] == 0.0 and w["write"] is None
    agg = study(writes=3.0)
    agg = agg[~((agg["device"] == "b") & (agg["workload"] == "randwrite"))]
    rows, F, Y, keys = held_out_rows(agg)
    out = ratecap.apply(rows, agg, F, Y, keys, ratecap.Rule(1.5, 0.05)).set_index("held_out")
    others = [d for d in P if d != "cap"]
    y0, t0 = lines(others, x_of("cap"))
    assert out.loc["cap", "prediction"] == pytest.approx(y0 * max(1.0, 3 * 600 / t0))


def test_too_few_training_devices_without_a_cap_is_no_prediction():
    """Where fewer than MIN_TRAIN training devices lack the cap's signature, the rule does not fit a
    line through the capped ones: the row keeps its prediction."""
    saved = dict(MEAN)
    try:
        for d in ("a", "b", "c"):  # capped too: their read means 10x their medians
            MEAN[d] = 10 * P[d]
        agg = study()
        rows, F, Y, keys = held_out_rows(agg)
        out = ratecap.apply(rows, agg, F, Y, keys, ratecap.Rule(1.5, 0.05)).set_index("held_out")
        assert out.loc["cap", "model"] == "simple" and out.loc["cap", "prediction"] == 1.0
    finally:
        MEAN.clear()
        MEAN.update(saved)


def test_a_device_without_a_cap_trains_however_much_of_its_time_its_reads_take():
    """Three uncapped devices whose time per operation is 95 % their reads' (an I/O-bound workload,
    or a fault's reads priced at a slow figure) still train: nothing but the device spaces them."""
    agg = study()
    thr = agg["metric"] == "throughput"
    for d in ("a", "b", "c"):
        agg.loc[thr & (agg["device"] == d), "value"] = 1e6 / (K_READ * MEAN[d] / 0.95)
    rows, F, Y, keys = held_out_rows(agg)
    out = ratecap.apply(rows, agg, F, Y, keys, ratecap.Rule(1.5, 0.05)).set_index("held_out")
    assert out.loc["cap", "model"] == ratecap.MODEL
    devs = [d for d in P if d != "cap"]
    y0, _ = lines(devs, x_of("cap"))
    ts = [1e6 / agg[thr & (agg["device"] == d)]["value"].iloc[0] for d in devs]
    bt, at = np.polyfit([x_of(d) for d in devs], ts, 1)
    t0 = at + bt * x_of("cap")
    assert out.loc["cap", "prediction"] == pytest.approx(y0 * max(1.0, K_READ * 600 / t0))


def test_a_line_that_misses_the_devices_nearest_the_target_is_not_used():
    """The capped zram's case: a straight line through devices whose I/O spans 4 us to 1 ms misses
    the fast ones (its intercept far above them): with ``fit`` the rule leaves such a device to the
    nested choice; where the line fits its nearest devices, or without ``fit``, it predicts."""
    x = np.array([4.0, 30.0, 140.0, 370.0, 1000.0])
    y = pd.Series([173.0, 209.0, 567.0, 1281.0, 2183.0], index=list("abcde"))
    train = pd.DataFrame({"x": x, "r": x, "w": 0.0, "cap": 1.0}, index=y.index)
    target = pd.Series({"x": 33.0, "r": 59.0, "w": 80.0, "cap": 7.3})
    b, a = np.polyfit(x, y, 1)
    fitted = a + b * x
    miss = 100 * np.mean(np.abs(fitted[[1, 2]] / y.to_numpy()[[1, 2]] - 1))  # 30 and 140 us are nearest 33 (log)
    free = train.assign(y=y)
    assert ratecap.local_miss(free, fitted, 33.0) == pytest.approx(miss)
    assert miss > 25
    got = ratecap.predict_one(y, y, train, target, read=False, ratio=1.5)
    assert got["prediction"] == pytest.approx(a + b * 33.0)  # the cap does not bind here: the line alone
    assert ratecap.predict_one(y, y, train, target, read=False, ratio=1.5, fit=25) is None
    assert ratecap.predict_one(y, y, train, target, read=False, ratio=1.5, fit=miss + 1) == got
    # near the slow end the same line fits its neighbours (370 and 1000 us): the rule predicts
    slow = target.copy()
    slow["x"] = 500.0
    assert ratecap.local_miss(free, fitted, 500.0) < 25
    assert ratecap.predict_one(y, y, train, slow, read=False, ratio=1.5, fit=25) is not None
    assert np.isnan(ratecap.local_miss(free, fitted, 0.0))


def test_the_rule_applies_the_fit_check_it_is_given():
    """ratecap.apply passes Rule.fit on: a fit no line can meet leaves every row to the nested choice."""
    agg = study()
    rows, F, Y, keys = held_out_rows(agg)
    assert (ratecap.apply(rows, agg, F, Y, keys, ratecap.Rule(1.5, 0.05)).set_index("held_out")
            .loc["cap", "model"] == ratecap.MODEL)
    out = ratecap.apply(rows, agg, F, Y, keys, ratecap.Rule(1.5, 0.05, fit=1e-9)).set_index("held_out")
    assert out.loc["cap", "model"] == "simple" and out.loc["cap", "prediction"] == 1.0
