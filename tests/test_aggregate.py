import numpy as np
import pandas as pd
import pytest

from benchcast import BenchcastError, aggregate, records


def recs(values, **key):
    base = dict(study="s", source="x", device="d", benchmark="fio", engine="", workload="randread",
                block_size=4096, threads=1, data_size=0, op="read", metric="lat_mean", unit="us")
    base.update(key)
    return pd.DataFrame([{**base, "value": v, "run": i} for i, v in enumerate(values)])


def test_trimmed_mean_paper_rule_by_hand():
    # 5 runs, drop the largest (50) and the smallest (1), mean of 3: (10 + 11 + 12) / 3 = 11
    assert aggregate.trimmed_mean([12, 50, 1, 10, 11], trim=1) == pytest.approx(11.0)
    # trim 2 of 5 leaves the median
    assert aggregate.trimmed_mean([12, 50, 1, 10, 11], trim=2) == pytest.approx(11.0)
    assert aggregate.trimmed_mean([1, 2, 3, 4, 100], trim=0) == pytest.approx(22.0)


def test_trim_reduced_when_too_few_runs():
    # 2 runs with trim 1 cannot drop both ends: plain mean
    assert aggregate.trimmed_mean([2, 4], trim=1) == pytest.approx(3.0)
    # 3 runs, trim 1: the middle one
    assert aggregate.trimmed_mean([9, 1, 5], trim=1) == pytest.approx(5.0)


def test_aggregate_table_matches_reference_and_keeps_stats():
    a = recs([12, 50, 1, 10, 11])
    b = recs([3.0, 5.0, 4.0], device="e")
    c = recs([7.5], device="f")
    c["run"] = -1
    agg = aggregate.aggregate(pd.concat([a, b, c]), trim=1).set_index("device")
    assert agg.loc["d", "value"] == pytest.approx(11.0)
    assert agg.loc["d", "n"] == 5 and agg.loc["d", "k"] == 1
    assert agg.loc["d", "mean"] == pytest.approx(np.mean([12, 50, 1, 10, 11]))
    assert agg.loc["d", "std"] == pytest.approx(np.std([12, 50, 1, 10, 11], ddof=1))
    assert agg.loc["d", "cv"] == pytest.approx(agg.loc["d", "std"] / agg.loc["d", "mean"])
    assert (agg.loc["d", "min"], agg.loc["d", "max"]) == (1, 50)
    assert agg.loc["e", "value"] == pytest.approx(4.0)
    # already aggregated data passes through unchanged
    assert agg.loc["f", "value"] == 7.5 and agg.loc["f", "n"] == 1 and agg.loc["f", "std"] == 0


def test_aggregate_random_against_reference():
    rng = np.random.default_rng(1)
    frames = [recs(rng.normal(100, 10, size=n), device=f"d{i}") for i, n in enumerate([1, 2, 3, 4, 5, 7, 9])]
    agg = aggregate.aggregate(pd.concat(frames), trim=2).set_index("device")
    for i, f in enumerate(frames):
        assert agg.loc[f"d{i}", "value"] == pytest.approx(aggregate.trimmed_mean(f["value"], trim=2))


def test_bad_values_are_refused_naming_row():
    bad = recs([1.0, 2.0])
    bad["value"] = bad["value"].astype(object)
    bad.loc[1, "value"] = "fast"
    with pytest.raises(BenchcastError, match=r"row 2: column value is not a number"):
        records.check(bad, where="x.csv")
    with pytest.raises(BenchcastError, match="trim"):
        aggregate.aggregate(recs([1.0]), trim=-1)



def _with_hist(values_per_run, device="d"):
    """lat_mean, lat_p99 and lat_hdr records of YCSB runs, one list of latencies per run."""
    from benchcast.records import hdr

    rows = []
    for run, values in enumerate(values_per_run):
        h = hdr.empty()
        for v in values:
            h.record_value(v)
        key = dict(study="s", source="ycsb", device=device, benchmark="ycsb", engine="rocksdb",
                   workload="a", block_size=0, threads=1, data_size=10**6, op="read", run=run)
        rows += [{**key, "metric": "lat_mean", "unit": "us", "value": sum(values) / len(values)},
                 {**key, "metric": "lat_p99", "unit": "us", "value": hdr.percentiles(h, [99])[0]},
                 {**key, "metric": "lat_hdr", "unit": "ops", "value": len(values), "hdr": hdr.encode(h)}]
    return pd.DataFrame(rows)


def test_percentiles_of_runs_with_histograms_are_merged_and_labelled():
    # three runs of 100 reads: two fast (1..100 us), one slow (all 2000 us)
    runs = [list(range(1, 101)), list(range(1, 101)), [2000] * 100]
    agg = aggregate.aggregate(_with_hist(runs), trim=1).set_index("metric")
    assert "lat_hdr" not in agg.index
    # 300 values: the 297th (p99) is 2000; the trimmed mean of per-run p99s would be 99 (the middle run)
    assert agg.loc["lat_p99", "value"] == 2000.0 and agg.loc["lat_p99", "aggregation"] == "merged histogram"
    assert agg.loc["lat_p99", "n"] == 3 and agg.loc["lat_p99", "max"] == 2000.0 and agg.loc["lat_p99", "min"] == 99.0
    assert agg.loc["lat_mean", "aggregation"] == "trimmed mean"
    # percentiles nobody printed come from the merge too: p50 of the 300 is the 150th value, 75 us
    assert agg.loc["lat_p50", "value"] == 75.0 and agg.loc["lat_p50", "aggregation"] == "merged histogram"


def test_runs_without_a_histogram_keep_the_trimmed_mean():
    recs = _with_hist([list(range(1, 101)), list(range(1, 101)), [2000] * 100])
    recs = recs[~((recs["metric"] == "lat_hdr") & (recs["run"] == 2))]
    agg = aggregate.aggregate(recs, trim=1).set_index("metric")
    assert agg.loc["lat_p99", "value"] == 99.0 and agg.loc["lat_p99", "aggregation"] == "trimmed mean"
    assert "lat_p50" not in agg.index
