"""The paging counters (benchcast.sources.run.paging): /proc/vmstat read for real, increases between two readings
summed over passes and spread over operations as records with units."""

from __future__ import annotations

import pytest

from benchcast.sources.run import paging
from benchcast import records

BEFORE = {"memcg": {"pgmajfault": 10, "pgfault": 100, "workingset_refault_anon": 0, "pgpgin": 5},
          "vmstat": {"pswpin": 1000, "pswpout": 50, "pgpgin": 4, "pgpgout": 8, "swap_ra": 0},
          "device": {"reads": 7, "read_bytes": 4096}}
AFTER = {"memcg": {"pgmajfault": 30, "pgfault": 160, "workingset_refault_anon": 20, "pgpgin": 25},
         "vmstat": {"pswpin": 1020, "pswpout": 90, "pgpgin": 84, "pgpgout": 8, "swap_ra": 3},
         "device": {"reads": 27, "read_bytes": 86016}}


def test_vmstat_reads_the_machines_paging_counters():
    now = paging.vmstat()
    assert {"pswpin", "pswpout", "pgpgin", "pgpgout"} <= set(now) <= set(paging.VMSTAT_COUNTERS)
    assert all(isinstance(v, int) and v >= 0 for v in now.values())
    later = paging.vmstat()
    assert all(later[k] >= now[k] for k in now)  # counters only grow


def test_delta_and_add_take_groups_apart_and_never_go_below_zero():
    d = paging.delta(BEFORE, AFTER)
    assert d["memcg"]["pgmajfault"] == 20 and d["vmstat"]["pgpgin"] == 80 and d["device"]["reads"] == 20
    assert paging.delta({"vmstat": {"pswpin": 9}}, {"vmstat": {"pswpin": 3}}) == {"vmstat": {"pswpin": 0}}
    assert paging.delta(BEFORE, None) is None and paging.delta(None, AFTER) is None
    assert paging.delta({"device": None}, {"device": {"reads": 1}}) == {"device": None}  # a tmpfs: no counters
    two = paging.add(d, d)
    assert two["memcg"]["pgfault"] == 120 and two["device"]["read_bytes"] == 2 * 81920


def test_per_op_spreads_each_counter_over_the_operations_with_its_unit():
    rows = paging.per_op(paging.delta(BEFORE, AFTER), 2)
    got = {r["metric"]: (r["value"], r["unit"]) for r in rows}
    assert got["major_faults_per_op"] == (10, "1/op") and got["faults_per_op"] == (30, "1/op")
    assert got["refaults_anon_per_op"] == (10, "1/op") and got["charged_pages_per_op"] == (10, "pages/op")
    assert got["swap_ins_per_op"] == (10, "pages/op") and got["swap_outs_per_op"] == (20, "pages/op")
    assert got["read_bytes_per_op"] == (40 * 1024, "B/op") and got["written_bytes_per_op"] == (0, "B/op")
    # what the readings lack gives no row (cgroup v2 has no pgpgin; no refault_file here)
    assert "refaults_file_per_op" not in got and "uncharged_pages_per_op" not in got
    assert {r["op"] for r in rows} == {paging.OP}
    records.make([{**r, "workload": "copy"} for r in rows], study="s", device="d", source="ooc", benchmark="ooc")
    assert paging.per_op(paging.delta(BEFORE, AFTER), 0) == [] and paging.per_op(None, 3) == []


@pytest.mark.parametrize("group", ["memcg", "vmstat"])
def test_every_metric_names_a_counter_of_its_group(group):
    names = {c for g, c, _, _ in paging.METRICS.values() if g == group}
    assert names and all(m.endswith("_per_op") for m in paging.METRICS)
    if group == "vmstat":
        assert names == set(paging.VMSTAT_COUNTERS)
