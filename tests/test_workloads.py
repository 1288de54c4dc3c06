"""Tests of benchcast.core.workloads: what fio and YCSB workloads measure."""
import pytest

from benchcast.core import workloads


def test_rw_op_of_pure_and_mixed_fio_workloads():
    assert workloads.rw_op("randread") == "read" and workloads.rw_op("write") == "write"
    assert workloads.rw_op("randrw") is None and workloads.rw_op("readwrite") is None


def test_paper_workloads_are_the_papers_mixes():
    """Soga et al. 2018, Table 3: read/update 0/100, 50/50, 95/5, 100/0, zipfian."""
    w = workloads.WORKLOADS
    assert [(w[n]["readproportion"], w[n]["updateproportion"]) for n in workloads.PAPER_WORKLOADS] == [
        ("0", "1"), ("0.5", "0.5"), ("0.95", "0.05"), ("1", "0")]


@pytest.mark.parametrize("name, fraction", [
    ("write-only", 0.0), ("write-heavy", 0.5), ("read-heavy", 0.95), ("read-only", 1.0), ("c", 1.0),
    ("e", 0.95), ("d", 0.95),
])
def test_read_fractions(name, fraction):
    assert workloads.read_fractions()[name] == pytest.approx(fraction)


def test_every_workload_proportion_sums_to_one():
    for name, props in workloads.WORKLOADS.items():
        total = sum(float(v) for k, v in props.items() if k.endswith("proportion"))
        assert total == pytest.approx(1.0), name
