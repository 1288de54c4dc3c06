"""benchcast.sources.parse.importchecks: the checks of every imported row, each error one line naming the file and
the row's place."""
import pandas as pd
import pytest

from benchcast import BenchcastError
from benchcast.sources.parse import importchecks as chk

PLACES = [("t.csv", f"line {n}") for n in (2, 3, 4)]


def test_the_same_row_twice_and_two_rows_that_disagree_are_two_errors():
    df = pd.DataFrame({"device": ["a", "b", "a"], "value": ["1", "2", "1"]})
    with pytest.raises(BenchcastError, match=r"^t.csv: line 4: duplicate row \(the same as line 2: device a\)$"):
        chk.repeated(df, PLACES, ["device"])
    df.loc[2, "value"] = "5"
    with pytest.raises(BenchcastError, match=r"^t.csv: line 4: conflicting duplicate of line 2 \(device a: value 1 vs 5\)$"):
        chk.repeated(df, PLACES, ["device"])
    chk.repeated(df, PLACES, ["device", "value"])  # other keys: no row twice
    # across files: the other place names its file
    with pytest.raises(BenchcastError, match=r"^u.csv: line 4: conflicting duplicate of t.csv: line 2 "):
        chk.repeated(df, PLACES[:2] + [("u.csv", "line 4")], ["device"])


@pytest.mark.parametrize("value, what", [("0", "zero"), ("-1", "negative"), ("nan", "not finite"), ("inf", "not finite"),
                                         ("1e300", "more than a fit can square")])
def test_values_above_zero_where_a_run_cannot_measure_zero(value, what):
    df = pd.DataFrame({"op": ["read"] * 3, "metric": ["lat_mean", "lat_p99", "lat_mean"], "value": ["3", "0", value]})
    mask = df["metric"].isin(chk.POSITIVE_METRICS).to_numpy()
    must = "at most 1e\\+150" if value == "1e300" else "above 0"
    with pytest.raises(BenchcastError, match=rf"^t.csv: line 4: column value: value is {what}: .* \(read lat_mean: "
                                             rf"it must be {must}\)$"):
        chk.above_zero(df, PLACES, {"value": mask})
    chk.above_zero(df.iloc[:2], PLACES[:2], {"value": mask[:2]})  # a percentile of 0 is a measurement


def test_known_names_and_devices_name_the_row():
    df = pd.DataFrame({"device": ["a", "x", "a"], "rw": ["randread", "read", "randwirte"]})
    with pytest.raises(BenchcastError, match=r"^t.csv: line 4: unknown rw 'randwirte'"):
        chk.known_fields(df, PLACES, {"rw": chk.FIO_RW})
    with pytest.raises(BenchcastError, match=r"^t.csv: line 3: unknown device 'x' \(study devices: a, b\)$"):
        chk.known_devices(df, PLACES, ["a", "b"])
    chk.known_devices(df, PLACES, None)


def test_a_device_of_one_table_only_is_named():
    fio, app = pd.DataFrame({"device": ["a", "b"]}), pd.DataFrame({"device": ["a"]})
    with pytest.raises(BenchcastError, match=r"^f.csv: line 3: device 'b' has no rows in a.csv$"):
        chk.same_devices(fio, [("f.csv", "line 2"), ("f.csv", "line 3")], app, [("a.csv", "line 2")])


def test_a_header_only_table_is_named(tmp_path):
    with pytest.raises(BenchcastError, match=r"t.csv: no rows \(only a header\)"):
        chk.no_rows(pd.DataFrame({"device": []}), tmp_path / "t.csv")
