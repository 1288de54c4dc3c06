"""Faults survived (issue 52), for real: the fault harness (benchmarks/faults.py) on a tiny study that
has a job of every kind a fault hits, each fault kind injected once into one chain of runs of the
README's command (`./benchcast.sh run` on a scratch copy, nothing else between the runs), then one
test per kind asserting the invariants held for it; and the harness itself on a fault known to break
an unguarded run: a power cut, with the start-up recovery taken out of the copy's workflow, is caught
(the next runs refuse until the harness gives up, and what the dead run left is still there).

A run of this module takes about N minutes on 2 cores (a clean run of the tiny study, then one run per
fault and the runs that finish it)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from analysis_util import benchmark
from devices_util import HAS_FUSE, HAS_LOOP, HAS_ZRAM
from ycsb_util import need_mariadb, ycsb_jar  # noqa: F401 (fixture)

pytestmark = [pytest.mark.workflow, pytest.mark.root]

faults = benchmark("faults")


def tiny_study(cfg: dict) -> None:
    """The harness's small study, smaller: one fio run per device, YCSB RocksDB on the tmpfs and the
    delayed device and MariaDB on the delayed one, STREAM in memory, over swap and mmap on the zram
    device; each kind of fault has a job of its own to hit."""
    faults.small_study(cfg)
    local = cfg["studies"][faults.STUDY]
    for dev in ("ram", "zr"):
        local["devices"][dev]["size" if dev == "ram" else "disksize"] = "128M"
    local["devices"]["fz"]["backing"]["size"] = "128M"
    local["devices"]["slow"]["backing"]["size"] = "128M"
    src = local["sources"]
    src["fio"]["repeats"] = 1
    src["ycsb"].update(devices=["ram", "fz"], operationcount=500)
    src["maria"].update(devices=["fz"], operationcount=500)
    src["ooc"]["devices"] = ["zr"]
    local["screen"] = {"min_devices": 2}


def _skip() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    if not (HAS_ZRAM and HAS_LOOP and HAS_FUSE):
        return "needs zram, loop and FUSE"
    from benchcast.devices import memlimit, swap

    if memlimit.version() is None:
        return "needs a memory cgroup controller"
    deadline = time.monotonic() + 120  # another run's swap job on this machine ends soon
    while swap.active() and time.monotonic() < deadline:
        time.sleep(1)
    if swap.active():
        return "swap benchcast did not make is active here"
    return None


@pytest.fixture(scope="module")
def campaign(tmp_path_factory, ycsb_jar):
    if why := _skip():
        pytest.skip(why)
    need_mariadb()
    faults.JAR = Path(ycsb_jar)
    c = faults.Campaign(0, len(faults.KINDS), tmp_path_factory.mktemp("faults"), mutate=tiny_study,
                        plan=list(faults.KINDS), say=print)
    c.go()
    print(faults.table(c.faults, c.other))
    return c


@pytest.mark.parametrize("kind", list(faults.KINDS))
def test_a_fault_is_survived_with_every_invariant(campaign, kind):
    """The fault struck its job (early in it); the runs after it finished the study within
    MAX_RUNS; nothing measured before it was lost or changed, no record came from a partial output or
    was counted twice, the records and the aggregate have the clean run's cells and run counts,
    nothing was left on the machine, one line named the job and the cause, no traceback."""
    mine = [f for f in campaign.faults if f.kind == kind]
    struck = [f for f in mine if f.injected]
    assert struck, f"{kind} never struck: {[f.line() for f in mine]}"
    for f in struck:
        assert not f.violations, f.line()
        assert f.runs_needed is not None and f.runs_needed <= faults.MAX_RUNS, f.line()


def test_the_campaign_itself_left_nothing(campaign):
    """What no single fault is to blame for: the clean run's own leftovers, kinds never struck."""
    assert campaign.other == []


def _unguarded(path: Path) -> None:
    """The workflow as it was before the start-up recovery: a killed run's lock is refused."""
    smk = path / "rules" / "common.smk"
    text = smk.read_text()
    guard = '        RECOVERY = bc_recover.after_kill(".")\n'
    assert guard in text
    smk.write_text(text.replace(guard, '        raise WorkflowError("benchcast: a previous run in this folder was '
                                       'killed and left its lock (unguarded)")\n'))


def fio_only(cfg: dict) -> None:
    faults.small_study(cfg)
    local = cfg["studies"][faults.STUDY]
    local["devices"] = {"ram": {"kind": "tmpfs", "size": "64M"}}
    local["sources"] = {"fio": {**local["sources"]["fio"], "repeats": 3}}
    local.pop("targets")
    local.pop("extrapolate")


def test_the_harness_catches_a_power_cut_that_breaks_an_unguarded_run(tmp_path):
    """Without the guard, the runs after a power cut refuse (the lock) and the harness says so: the
    study never finishes, and the devices the dead run left are cleaned by force at the end."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    c = faults.Campaign(0, 1, tmp_path, mutate=fio_only, plan=["power_cut"], patch=_unguarded, say=print)
    c.go()
    (cut,) = [f for f in c.faults if f.injected]
    said = "; ".join(cut.violations)
    assert "not finished" in said and "leftover" in said, cut.line()
    assert cut.runs_needed is None, cut.line()
