"""Faults survived (issue 52), for real: the fault harness (benchmarks/faults.py) on the smallest
study that has a job of every kind a fault hits (a tmpfs, a zram, a delayed and a throttled device,
one fio cell on each and a second on the tmpfs, YCSB RocksDB and MariaDB on the tmpfs, one
out-of-core run over mmap on the zram device, each as short as it can be), its runs stopped at the
aggregate (the README's command with the aggregate as its target: the analysis and the report touch
no device, and their faults have tests of their own). One clean run is the reference; then each
fault kind is injected once, into its own job, in one chain of runs of the command on a scratch copy
(nothing else between the runs), and one test per kind asserts the invariants held for it. A kind
whose device the machine lacks is skipped. Then the harness itself on a fault known to break an
unguarded run: a power cut, with the start-up recovery taken out of the copy's workflow, is caught
(the next runs refuse until the harness gives up, and what the dead run left is still there). And a
fault's printed line, replayed (--replay), strikes the same job at the same point again.

The module took 5 min 11 s and 6 min 14 s on this 2-core machine (`time .venv/bin/python -m pytest
tests/test_faults.py -q`, beside other engineers' test runs, load 3-5; a clean run of the study:
43-68 s): the clean run, the chain of faulted runs (Snakemake's --keep-going among the command's arguments, so
that the faults on different devices' jobs strike one run), the unguarded chain."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analysis_util import benchmark
from devices_util import HAS_FUSE, HAS_LOOP, HAS_ZRAM
from ycsb_util import ycsb_jar  # noqa: F401 (fixture)

pytestmark = [pytest.mark.workflow, pytest.mark.root]

faults = benchmark("faults")
from harness import fault_tree  # noqa: E402 (beside it, on the path it put)

#: What the runs give after `run`: Snakemake's --keep-going (a job a fault breaks does not stop the
#: other devices' jobs: the next fault strikes the same run) and the target, the records and the
#: aggregate (what the invariants compare), not the analysis.
ARGS = ["--keep-going", f"results/{faults.STUDY}/aggregated.csv"]
#: The kinds each need a device of a kind the machine may lack, or the MariaDB server.
NEEDS = {"zram_reset": "zr", "loop_detach": "slow", "fuse_server": "fz", "mariadbd": "maria"}


def _has_mariadb() -> bool:
    from benchcast.sources.run import mariadb

    return mariadb.available() is None


def _present() -> set[str]:
    """What of the study this machine can have: devices by name, and "maria"."""
    have = {"ram"} | {d for d, ok in (("zr", HAS_ZRAM), ("slow", HAS_LOOP), ("fz", HAS_FUSE)) if ok}
    return have | ({"maria"} if _has_mariadb() else set())


def ci_study(cfg: dict) -> None:
    """The harness's small study, as small as a job of each kind allows (see the module doc)."""
    faults.small_study(cfg)
    local, have = cfg["studies"][faults.STUDY], _present()
    devices = local["devices"]
    devices["ram"]["size"] = devices["zr"]["disksize"] = "64M"
    devices["fz"]["backing"]["size"] = devices["slow"]["backing"]["size"] = "64M"
    local["devices"] = {d: spec for d, spec in devices.items() if d in have}
    src = local["sources"]
    fio = src["fio"] = {**src["fio"], "repeats": 1, "size": "4M"}
    src["fio2"] = {**fio, "devices": ["ram"], "block_sizes": ["8K"]}  # fio_worker's own job
    src["ycsb"].update(devices=["ram"], workloads=["read-only"], operationcount=200)
    src["maria"].update(devices=["ram"], workloads=["read-only"], operationcount=200)
    if "maria" not in have:
        del src["maria"]
    ooc_on = next((d for d in ("zr", "slow", "fz") if d in have), None)
    src["ooc"].update(devices=[ooc_on or "ram"], modes=["mmap" if ooc_on else "memory"],  # long enough to be hit
                      working_sets=["16M"], memory_limit="8M", passes=40)
    local["screen"] = {"min_devices": 2}
    local.pop("extrapolate")


def _skip() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    from benchcast.devices import memlimit

    if memlimit.version() is None:
        return "needs a memory cgroup controller"
    return None


def _kinds() -> list[str]:
    have = _present()
    return [k for k in faults.KINDS if NEEDS.get(k, "ram") in have]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory, ycsb_jar):
    if why := _skip():
        pytest.skip(why)
    fault_tree.JAR = Path(ycsb_jar)
    kinds = _kinds()
    c = faults.Campaign(0, len(kinds), tmp_path_factory.mktemp("faults"), mutate=ci_study, plan=kinds,
                        say=print, args=ARGS)
    c.go()
    print(faults.table(c.faults, c.other))
    return c


@pytest.mark.parametrize("kind", list(faults.KINDS))
def test_a_fault_is_survived_with_every_invariant(campaign, kind):
    """The fault struck its job (early in it); the runs after it finished the study within
    MAX_RUNS; nothing measured before it was lost or changed, no record came from a partial output or
    was counted twice, the records and the aggregate have the clean run's cells and run counts,
    nothing was left on the machine, one line named the job and the cause, no traceback."""
    if kind not in _kinds():
        pytest.skip(f"this machine lacks what {kind} strikes ({NEEDS[kind]})")
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


def test_the_harness_catches_a_power_cut_that_breaks_an_unguarded_run(campaign, tmp_path):
    """Without the guard, the runs after a power cut refuse (the lock) and the harness says so: the
    study never finishes, and the devices the dead run left are cleaned by force at the end. (The
    clean run of the campaign above is its reference.)"""
    c = faults.Campaign(0, 1, tmp_path, mutate=ci_study, plan=["power_cut"], patch=_unguarded, say=print,
                        args=ARGS)
    c.go(reference=campaign)
    (cut,) = [f for f in c.faults if f.injected]
    said = "; ".join(cut.violations)
    assert "not finished" in said and "leftover" in said, cut.line()
    assert cut.runs_needed is None, cut.line()


def test_a_fault_line_replays_the_same_fault_at_the_same_point_of_the_same_job(campaign, tmp_path):
    """--replay: the line the campaign printed for its first struck fault, struck again on a fresh
    copy (the campaign's clean run the reference): the same kind, job and fraction, struck, and every
    invariant held."""
    first = next(f for f in campaign.faults if f.injected)
    script = faults.read_script(first.line())
    assert list(script) == [first.round] and len(script[first.round]) == 1
    c = faults.Campaign(0, 1, tmp_path, mutate=ci_study, say=print, args=ARGS, script=script)
    c.go(reference=campaign)
    (again,) = c.faults
    assert (again.index, again.kind, again.fraction, again.job.name) == (first.index, first.kind, first.fraction,
                                                                         first.job.name)
    assert again.injected and again.round == first.round, again.line()
    assert not again.violations and c.other == [], again.line()
