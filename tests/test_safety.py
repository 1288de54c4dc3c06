"""Safety, for real: devices the config does not own are never formatted; targets mounted elsewhere
or holding a signature are refused; teardown runs after failures, SIGTERM and SIGINT; teardown-all
cleans up after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchcast import BenchcastError, devices
from benchcast.sources.run import fio
from benchcast.devices import mounts, state_record
from devices_util import (HAS_BLKIO_V1, HAS_ZRAM, clean, findmnt_target, losetup_all,  # noqa: F401
                          needs_loop, needs_root, needs_zram, snapshot)

SCRIPTS = str(Path(__file__).resolve().parents[1] / "scripts")


@pytest.fixture
def victim(tmp_path):
    """A loop device the test made, holding an ext4 filesystem with a file on it."""
    img = tmp_path / "victim.img"
    with open(img, "wb") as fh:
        fh.truncate(32 << 20)
    dev = subprocess.run(["losetup", "--find", "--show", str(img)], capture_output=True, text=True,
                         check=True).stdout.strip()
    mnt = tmp_path / "victim-mnt"
    mnt.mkdir()
    try:
        subprocess.run(["mkfs.ext4", "-q", dev], check=True)
        subprocess.run(["mount", dev, str(mnt)], check=True)
        (mnt / "precious.txt").write_text("do not lose me\n")
        subprocess.run(["umount", str(mnt)], check=True)
        yield {"dev": dev, "mnt": mnt}
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        subprocess.run(["losetup", "-d", dev], check=True)


def precious(victim) -> str:
    subprocess.run(["mount", "-o", "ro", victim["dev"], str(victim["mnt"])], check=True)
    try:
        return (victim["mnt"] / "precious.txt").read_text()
    finally:
        subprocess.run(["umount", str(victim["mnt"])], check=True)


@needs_loop
def test_blockdev_not_disposable_is_refused_and_data_intact(victim, tmp_path):
    spec = {"kind": "blockdev", "path": victim["dev"]}
    with pytest.raises(BenchcastError, match=rf"^device ssd: disposable: {victim['dev']} is not marked disposable"):
        devices.provision("ssd", spec, tmp_path / "ssd.json")
    assert precious(victim) == "do not lose me\n"


@needs_loop
def test_blockdev_with_signature_is_refused_without_overwrite(victim, tmp_path):
    spec = {"kind": "blockdev", "path": victim["dev"], "disposable": True}
    with pytest.raises(BenchcastError, match=r"^device ssd: path: .* holds a signature \(ext4\); refusing .*overwrite: true"):
        devices.provision("ssd", spec, tmp_path / "ssd.json")
    assert precious(victim) == "do not lose me\n"
    assert not findmnt_target(tmp_path / "mnt" / "ssd")


@needs_loop
def test_blockdev_mounted_elsewhere_is_refused_even_with_overwrite(victim, tmp_path):
    spec = {"kind": "blockdev", "path": victim["dev"], "disposable": True, "overwrite": True}
    subprocess.run(["mount", victim["dev"], str(victim["mnt"])], check=True)
    try:
        with pytest.raises(BenchcastError, match=rf"^device ssd: path: .* is in use \(mounted at {victim['mnt']}\)"):
            devices.provision("ssd", spec, tmp_path / "ssd.json")
    finally:
        subprocess.run(["umount", str(victim["mnt"])], check=True)
    assert precious(victim) == "do not lose me\n"


@needs_loop
def test_blockdev_disposable_and_overwrite_is_formatted_mounted_and_unmounted(victim, tmp_path):
    spec = {"kind": "blockdev", "path": victim["dev"], "disposable": True, "overwrite": True}
    st = devices.provision("ssd", spec, tmp_path / "ssd.json")
    assert findmnt_target(devices.target(st))["source"] == victim["dev"]
    assert not (Path(devices.target(st)) / "precious.txt").exists()  # it was told it may destroy it
    devices.teardown(tmp_path / "ssd.json")
    assert findmnt_target(tmp_path / "mnt" / "ssd") is None
    assert victim["dev"] in losetup_all()  # a named device is never detached or removed


@needs_root
def test_mkfs_refuses_a_device_the_record_does_not_own(tmp_path):
    rec = state_record.Recorder({"device": "x", "kind": "zram", "created": {"zram": "/dev/zram99"}},
                                tmp_path / "x.json")
    with pytest.raises(BenchcastError, match=r"device x: mkfs: refusing to format /dev/vda"):
        mounts.mkfs(rec, "/dev/vda", "ext4", [])


@needs_root
def test_teardown_leaves_a_mount_from_another_source_alone(clean):
    """A state record naming a mount point that now holds somebody else's filesystem."""
    other = clean / "other"
    other.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "someone-else", str(other)], check=True)
    try:
        state_record.write_state(clean / "r.json", {"device": "r", "kind": "tmpfs", "status": "ready",
                                            "created": {"mount": str(other), "mount_source": "benchcast-r"}})
        with pytest.raises(BenchcastError, match=r"device r: teardown: .* mounted from someone-else, not benchcast-r"):
            devices.teardown(clean / "r.json")
        assert findmnt_target(other)["source"] == "someone-else"
    finally:
        subprocess.run(["umount", str(other)], check=True)
    devices.teardown(clean / "r.json")  # once it is gone, the record clears


@needs_root
def test_mountpoint_in_use_or_not_empty_is_refused(clean):
    full = clean / "full"
    full.mkdir()
    (full / "file").write_text("x")
    with pytest.raises(BenchcastError, match=r"device ram: mountpoint: .*full is not empty"):
        devices.provision("ram", {"kind": "tmpfs", "size": "1M", "mountpoint": str(full)}, clean / "ram.json")
    assert (full / "file").read_text() == "x"


@needs_zram
def test_failed_provisioning_undoes_what_it_did(clean):
    sp = clean / "zr.json"
    with pytest.raises(BenchcastError, match=r"^device zr: mkfs: mkfs.ext4 .* failed"):
        devices.provision("zr", {"kind": "zram", "disksize": "16M", "mkfs_options": ["-O", "no_such_feature"]}, sp)
    st = json.loads(sp.read_text())
    assert st["status"] == "torn_down" and st["created"] == {} and "mkfs" in st["error"]


@needs_loop
def test_failed_provisioning_after_losetup_detaches(clean):
    (clean / "mp").mkdir()
    (clean / "mp" / "x").write_text("x")
    with pytest.raises(BenchcastError, match=r"device lp: mountpoint: .* not empty"):
        devices.provision("lp", {"kind": "loop", "size": "16M", "mountpoint": str(clean / "mp")}, clean / "lp.json")
    assert "benchcast-lp.img" not in losetup_all() and not (clean / "benchcast-lp.img").exists()


@needs_root
def test_failing_benchmark_inside_a_session_still_tears_down(clean):
    src = {"type": "fio", "rw": ["randread"], "block_sizes": ["4K"], "size": "1M", "runtime": 1, "ramp_time": 0,
           "extra": {"no_such_fio_option": 1}}
    cell = fio.expand_grid(src, {"ram": {"kind": "tmpfs", "size": "8M"}})[0]
    with pytest.raises(BenchcastError, match=r"^fio: device ram, cell randread-4K-\w+, repeat 0: fio exit 1"):
        with devices.session("ram", {"kind": "tmpfs", "size": "8M"}, clean / "ram.json") as st:
            fio.run(cell, st, 0, clean / "job.fio", clean / "out.json")
    assert json.loads((clean / "ram.json").read_text())["status"] == "torn_down"


SESSION_SCRIPT = """
import sys, time
sys.path.insert(0, {scripts!r})
from benchcast import devices
with devices.session("d", {spec!r}, {state!r}) as st:
    print("ready", flush=True)
    time.sleep(60)
"""


def _start(script: str, **kw) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, **kw)
    line = p.stdout.readline()
    assert line.strip() == "ready", f"child did not get ready: {line!r}"
    return p


@needs_zram
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_sigint_tear_down(clean, sig):
    sp = clean / "d.json"
    p = _start(SESSION_SCRIPT.format(scripts=SCRIPTS, spec={"kind": "zram", "disksize": "16M"}, state=str(sp)))
    assert json.loads(sp.read_text())["status"] == "ready"
    p.send_signal(sig)
    p.wait(timeout=20)
    assert json.loads(sp.read_text())["status"] == "torn_down"


KILLED_SCRIPT = """
import sys, subprocess
sys.path.insert(0, {scripts!r})
from benchcast import devices
for dev, spec in {specs!r}.items():
    devices.provision(dev, spec, {state_dir!r} + "/" + dev + ".json")
st = devices.read_state({state_dir!r} + "/slow.json") if "slow" in {specs!r} else None
if st:   # a benchmark left running in the cgroup, holding a file open on the device
    subprocess.Popen(devices.command_prefix(st) + ["sh", "-c", "exec sleep 60 > " + st["target"] + "/busy"])
print("ready", flush=True)
import time; time.sleep(60)
"""


@needs_loop
def test_teardown_all_cleans_up_after_sigkill(clean):
    specs = {"ram": {"kind": "tmpfs", "size": "8M"},
             "lp": {"kind": "loop", "size": "16M", "backing_dir": str(clean)}}
    if HAS_ZRAM:
        specs["zr"] = {"kind": "zram", "disksize": "16M"}
    if HAS_BLKIO_V1:
        specs["slow"] = {"kind": "throttled", "backing": {"kind": "loop", "size": "16M", "backing_dir": str(clean)},
                         "write_bps": "1M"}
    state_dir = clean / "state"
    p = _start(KILLED_SCRIPT.format(scripts=SCRIPTS, specs=specs, state_dir=str(state_dir)), start_new_session=True)
    left = snapshot(clean)
    assert len(left["mounts"]) == len(specs)
    os.killpg(p.pid, signal.SIGKILL)  # the whole job: python and the benchmark it started
    p.wait(timeout=10)
    time.sleep(0.2)
    results = devices.teardown_all(state_dir)
    assert sorted(Path(k).stem for k in results) == sorted(specs) and set(results.values()) == {"ok"}
    # the `clean` fixture then checks: no mounts, loops, zram devices or cgroups left
