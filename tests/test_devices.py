"""Device kinds provisioned and torn down for real (as root), plus spec errors and fsdax against
ndctl output shapes (this machine has no pmem)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from benchcast import BenchcastError, devices
from benchcast.devices import base, blockinfo, fsdax
from benchcast.devices import dir as dir_kind
from devices_util import (clean, findmnt_target, losetup_all, needs_blkio, needs_fuse, needs_loop,  # noqa: F401
                          needs_root, needs_zram, zram_devices)

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing


def state_of(path) -> dict:
    return json.loads(Path(path).read_text())


# --------------------------------------------------------------------------- real devices


@needs_root
def test_tmpfs_mounted_described_and_torn_down(clean):
    sp = clean / "ram.json"
    st = devices.provision("ram", {"kind": "tmpfs", "size": "16M", "mount_options": "noatime"}, sp)
    mp = devices.target(st)
    fm = findmnt_target(mp)
    assert fm["fstype"] == "tmpfs" and fm["source"] == "benchcast-ram"
    assert "size=16384k" in fm["options"] and "noatime" in fm["options"]
    on_disk = state_of(sp)
    assert on_disk["status"] == "ready" and on_disk["created"]["mount"] == mp
    desc = devices.describe(sp)
    assert desc["findmnt"]["filesystems"][0]["target"] == mp and desc["model"] == "DRAM (tmpfs)"
    # memory has no readahead window: none described, none in the records' provenance
    assert "read_ahead_kb" not in desc and devices.provenance(sp)["read_ahead_kb"] == ""
    devices.teardown(sp)
    assert findmnt_target(mp) is None and not os.path.exists(mp)
    assert state_of(sp)["status"] == "torn_down" and state_of(sp)["created"] == {}
    devices.teardown(sp)  # idempotent


@needs_root
def test_release_tears_down_what_is_still_provisioned(clean):
    """A cluster job's way out: its devices still provisioned are torn down, the rest left alone."""
    live, gone = clean / "ram.json", clean / "old.json"
    mp = devices.target(devices.provision("ram", {"kind": "tmpfs", "size": "16M"}, live))
    devices.provision("old", {"kind": "tmpfs", "size": "16M"}, gone)
    devices.teardown(gone)
    assert devices.release([live, gone, clean / "never.json"]) == {str(live): "ok"}
    assert findmnt_target(mp) is None and state_of(live)["status"] == "torn_down"
    assert devices.release([live]) == {}


@needs_root
def test_a_tmpfs_unmounted_under_its_job_is_named_gone_and_torn_down(clean):
    """The file system pulled from under a job (umount -l: the kernel refuses a plain umount of a busy
    one): the device is named gone, with why; files the job opened after it landed in the bare mount
    directory, which teardown empties and removes (it made it, and nothing is mounted there)."""
    from benchcast.devices import presence

    sp = clean / "ram.json"
    st = devices.provision("ram", {"kind": "tmpfs", "size": "16M"}, sp)
    mp = Path(devices.target(st))
    assert presence.gone(st) is None
    with open(mp / "open", "w") as held:  # a job's open file: the plain umount is refused
        assert subprocess.run(["umount", str(mp)], capture_output=True).returncode != 0
        subprocess.run(["umount", "-l", str(mp)], check=True)
        (mp / "after").write_text("written after the unmount")
        held.write("still on the tmpfs")
    assert presence.gone(state_of(sp)) == f"nothing is mounted at {mp} any more (unmounted under the job)"
    with pytest.raises(BenchcastError, match=r"^device ram: gone during the run: nothing is mounted at .* any "
                                             r"more \(unmounted under the job\); nothing of this run is kept$"):
        presence.check(state_of(sp))
    devices.teardown(sp)
    assert not mp.exists() and state_of(sp)["status"] == "torn_down"
    assert any("after its file system was unmounted" in n for n in state_of(sp)["notes"])


@needs_zram
def test_a_zram_device_reset_under_its_job_is_named_gone_and_torn_down(clean):
    """A zram device reset under a job: the kernel refuses while its file system is mounted (EBUSY);
    unmounted lazily, it lets the reset through once the last open file is closed. The device is
    named gone; teardown hot-removes the zram device it made (the same sysfs node), and nothing else."""
    from benchcast.devices import presence

    before = zram_devices()
    sp = clean / "zr.json"
    st = devices.provision("zr", {"kind": "zram", "disksize": "32M", "fstype": "ext4"}, sp)
    dev, mp = st["created"]["zram"], devices.target(st)
    reset = Path("/sys/block", Path(dev).name, "reset")
    with pytest.raises(OSError):
        reset.write_text("1")
    subprocess.run(["umount", "-l", mp], check=True)
    for _ in range(50):
        try:
            reset.write_text("1")
            break
        except OSError:
            time.sleep(0.1)
    assert Path("/sys/block", Path(dev).name, "disksize").read_text().strip() == "0"
    assert "unmounted under the job" in presence.gone(state_of(sp))
    devices.teardown(sp)
    assert zram_devices() == before and state_of(sp)["created"] == {}


@needs_root
def test_teardown_goes_on_when_the_state_record_cannot_be_written(clean, capfd):
    """The results file system full (here: the state record's own small tmpfs): provisioning that
    could not record what it makes stops before it makes it, one line naming the record; a teardown
    undoes everything all the same and says its record still lists what is gone; a second teardown
    finds nothing left to undo."""
    states = clean / "states"
    states.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "benchcast-test-states", str(states)], check=True)
    try:
        sp = states / "ram.json"
        st = devices.provision("ram", {"kind": "tmpfs", "size": "16M", "mountpoint": str(clean / "mnt")}, sp)
        filler = states / "fill"
        with open(filler, "wb", buffering=0) as fh:
            with pytest.raises(OSError):
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
        devices.teardown(sp)
        assert findmnt_target(st["target"]) is None
        assert state_of(sp)["status"] == "ready"  # stale: it could not be rewritten
        assert sorted(p.name for p in states.iterdir()) == ["fill", "ram.json"]  # no half-written copy
        assert capfd.readouterr().err == (f"benchcast: device ram: torn down; its state record {sp} could not be "
                                          f"written (No space left on device) and still lists what is gone\n")
        with pytest.raises(BenchcastError, match=r"^device more: state record .*more.json cannot be written "
                                                 r"\(No space left on device\)$"):
            devices.provision("more", {"kind": "tmpfs", "size": "16M", "mountpoint": str(clean / "m2")},
                              states / "more.json")
        assert findmnt_target(str(clean / "m2")) is None
        filler.unlink()
        devices.teardown(sp)
        assert state_of(sp)["status"] == "torn_down" and state_of(sp)["created"] == {}
    finally:  # whatever a failing test left, while its record is still there
        (states / "fill").unlink(missing_ok=True)
        for rec in states.glob("*.json"):
            devices.teardown(rec)
        subprocess.run(["umount", str(states)])


def test_tmpfs_falls_back_to_dev_shm_when_not_root(clean, monkeypatch):
    monkeypatch.setattr(base, "is_root", lambda: False)
    sp = clean / "ram.json"
    st = devices.provision("ram", {"kind": "tmpfs", "size": "16M"}, sp)
    d = devices.target(st)
    assert d.startswith("/dev/shm/benchcast-ram-") and os.path.isdir(d)
    assert any("not root" in n for n in st["notes"])
    devices.teardown(sp)
    assert not os.path.exists(d)
    with pytest.raises(devices.UnavailableError, match="device ram: kind tmpfs needs root"):
        devices.provision("ram", {"kind": "tmpfs", "size": "16M", "shm_fallback": False}, sp)


def test_dir_probes_o_direct_and_removes_its_subdirectory(clean):
    sp = clean / "d.json"
    (clean / "data").mkdir()
    st = devices.provision("d", {"kind": "dir", "path": str(clean / "data")}, sp)
    sub = Path(devices.target(st))
    assert sub == clean / "data" / "benchcast-d" and sub.is_dir()
    ok, why = dir_kind.probe_direct(sub)
    assert st["direct_ok"] is ok and isinstance(ok, bool)
    assert any("O_DIRECT probe" in n for n in st["notes"])
    assert list(sub.iterdir()) == []  # the probe file is gone
    devices.teardown(sp)
    assert not sub.exists() and (clean / "data").is_dir()


@needs_root
def test_dir_probe_on_a_fresh_tmpfs(clean):
    """Whatever the kernel says about O_DIRECT on tmpfs is recorded, not assumed."""
    ram = devices.provision("ram", {"kind": "tmpfs", "size": "8M"}, clean / "ram.json")
    st = devices.provision("d", {"kind": "dir", "path": devices.target(ram)}, clean / "d.json")
    assert isinstance(st["direct_ok"], bool) and st["filesystem"] == "tmpfs"
    devices.teardown(clean / "d.json")
    devices.teardown(clean / "ram.json")


@needs_zram
def test_zram_hot_added_sized_and_removed(clean):
    before = zram_devices()
    sp = clean / "zr.json"
    # the algorithms the kernel offers, from any zram device there is (zram0 may have been removed)
    offered = next(iter(sorted(Path("/sys/block").glob("zram*/comp_algorithm"))), None)
    algo = "lz4" if offered and "lz4" in offered.read_text() else None
    spec = {"kind": "zram", "disksize": "64M", **({"comp_algorithm": algo} if algo else {})}
    st = devices.provision("zr", spec, sp)
    dev = st["created"]["zram"]
    name = os.path.basename(dev)
    assert name not in before  # a fresh device, never an existing one
    assert Path(f"/sys/block/{name}/disksize").read_text().strip() == str(64 << 20)
    if algo:
        assert f"[{algo}]" in Path(f"/sys/block/{name}/comp_algorithm").read_text()
    fm = findmnt_target(devices.target(st))
    assert fm["source"] == dev and fm["fstype"] == "ext4"
    assert devices.describe(st)["zram"]["disksize"] == str(64 << 20)
    devices.teardown(sp)
    assert zram_devices() == before


@needs_loop
def test_loop_with_direct_io_detached_and_file_deleted(clean):
    sp = clean / "lp.json"
    st = devices.provision("lp", {"kind": "loop", "size": "32M", "backing_dir": str(clean)}, sp)
    bf, loop = st["created"]["backing_file"], st["created"]["loop"]
    assert bf in losetup_all() and os.path.getsize(bf) == 32 << 20
    assert st["loop_direct_io"] is True  # /tmp's filesystem takes O_DIRECT here
    assert findmnt_target(devices.target(st))["source"] == loop
    desc = devices.describe(sp)
    assert desc["lsblk"]["blockdevices"][0]["name"] == os.path.basename(loop)
    # the window a mapped file's faults read ahead: the loop device's own, set here and read back
    ra = Path(f"/sys/block/{os.path.basename(loop)}/queue/read_ahead_kb")
    was = ra.read_text().strip()
    try:
        ra.write_text("384")
        assert devices.describe(sp)["read_ahead_kb"] == 384 and devices.provenance(sp)["read_ahead_kb"] == "384"
    finally:
        ra.write_text(was)
    assert devices.describe(sp)["read_ahead_kb"] == int(was)
    devices.teardown(sp)
    assert bf not in losetup_all() and not os.path.exists(bf)


@needs_loop
@needs_fuse
@needs_blkio
@pytest.mark.parametrize("spec_of", [
    lambda d: {"kind": "loop", "size": "32M", "backing_dir": d},
    lambda d: {"kind": "throttled", "backing": {"kind": "loop", "size": "32M", "backing_dir": d}, "read_iops": 500},
    lambda d: {"kind": "delayed", "backing": {"kind": "tmpfs", "size": "16M"}, "read_delay_us": 10},
])
def test_a_readahead_window_set_on_the_tier_itself(clean, spec_of):
    """``read_ahead_kb`` is written to the file system's own device (the loop device, the throttled
    tier's loop device, the FUSE mount) and read back into the description and the records."""
    sp = clean / "ra.json"
    plain = devices.provision("ra", spec_of(str(clean)), sp)
    kernel = devices.describe(plain)["read_ahead_kb"]
    devices.teardown(sp)
    want = 1024 if kernel != 1024 else 512  # not the kernel's own, so that setting it shows
    st = devices.provision("ra", {**spec_of(str(clean)), "read_ahead_kb": want}, sp)
    try:
        assert devices.describe(sp)["read_ahead_kb"] == want
        assert devices.provenance(st)["read_ahead_kb"] == str(want)
        assert blockinfo.read_ahead_kb(st["target"]) == want
    finally:
        devices.teardown(sp)


@needs_loop
@needs_blkio
def test_throttled_cgroup_made_with_limits_and_removed(clean):
    sp = clean / "slow.json"
    spec = {"kind": "throttled", "backing": {"kind": "loop", "size": "32M", "backing_dir": str(clean)},
            "write_bps": "4M", "read_iops": 500}
    st = devices.provision("slow", spec, sp)
    cg = Path(st["created"]["cgroup"])
    mm = blockinfo.majmin(st["block_device"])
    assert (cg / "blkio.throttle.write_bps_device").read_text().strip() == f"{mm} {4 << 20}"
    assert (cg / "blkio.throttle.read_iops_device").read_text().strip() == f"{mm} 500"
    prefix = devices.command_prefix(st)
    out = subprocess.run(prefix + ["cat", "/proc/self/cgroup"], capture_output=True, text=True).stdout
    assert f"blkio:/{cg.name}" in out
    out = devices.run_in_cgroup(st, ["cat", "/proc/self/cgroup"], capture_output=True, text=True).stdout
    assert f"blkio:/{cg.name}" in out
    assert devices.describe(st)["cgroup"]["blkio.throttle.write_bps_device"] == f"{mm} {4 << 20}"
    # the records' device_model is the same whether a job provisioned the device or read its record
    assert devices.provenance(st) == devices.provenance(sp)
    assert devices.provenance(sp)["device_model"].endswith("throttled (read_iops=500, write_bps=4194304)")
    devices.teardown(sp)
    assert not cg.exists()
    assert state_of(sp)["backing"]["created"] == {}


@needs_fuse
def test_delayed_fuse_over_tmpfs_mounted_described_and_torn_down(clean):
    sp = clean / "dl.json"
    spec = {"kind": "delayed", "backing": {"kind": "tmpfs", "size": "16M"}, "write_delay_us": 100,
            "sync_delay_us": 250}
    st = devices.provision("dl", spec, sp)
    fuse, back = findmnt_target(st["target"]), findmnt_target(st["backing"]["target"])
    assert fuse["fstype"] == "fuse.delayfs" and back["fstype"] == "tmpfs"
    assert st["direct_ok"] is True
    assert st["delays_ns"] == {"read_delay_ns": 0, "write_delay_ns": 100000, "sync_delay_ns": 250000}
    Path(st["target"], "f").write_text("through FUSE")  # lands in the backing tmpfs
    assert Path(st["created"]["data_dir"], "f").read_text() == "through FUSE"
    d = devices.describe(st)
    assert d["model"] == "delayfs over DRAM (tmpfs) (read +0 us, sync +250 us, write +100 us)"
    assert d["read_ahead_kb"] > 0  # a FUSE mount's own backing device info: its readahead window
    # the same whether the state is the one provisioning made or the one read back from its record
    assert devices.describe(sp)["model"] == d["model"]
    devices.teardown(sp)
    after = state_of(sp)
    assert after["status"] == "torn_down" and after["created"] == {} and after["backing"]["created"] == {}
    assert findmnt_target(st["target"]) is None and findmnt_target(st["backing"]["target"]) is None
    assert not Path(st["target"]).exists()
    alive = subprocess.run(["pgrep", "-f", st["target"]], capture_output=True).returncode == 0
    assert not alive, "the delayfs server outlived its unmount"


@needs_fuse
def test_delayed_device_whose_server_was_killed_is_reprovisioned_then_torn_down(clean):
    """A SIGKILLed FUSE server leaves a mount that answers ENOTCONN: not alive, so ``ensure``
    unmounts it and provisions afresh; teardown after that leaves nothing."""
    sp = clean / "dl.json"
    spec = {"kind": "delayed", "backing": {"kind": "dir", "path": str(clean)}, "read_delay_us": 10}
    st = devices.ensure("dl", spec, sp)
    subprocess.run(["pkill", "-KILL", "-f", f"delayfs-.* {st['target']} "], check=True)
    for _ in range(50):
        try:
            os.stat(st["target"])
        except OSError:
            break
        time.sleep(0.05)
    assert not devices.KINDS["delayed"].alive(state_of(sp))
    st2 = devices.ensure("dl", spec, sp)
    os.stat(st2["target"])
    assert Path(st2["target"], ".").is_dir()
    devices.teardown(sp)
    assert findmnt_target(st2["target"]) is None
    assert not any(p.name.startswith("benchcast-dl") for p in clean.iterdir())


@needs_zram
def test_ensure_is_idempotent_and_reprovisions_lost_devices(clean):
    sp = clean / "zr.json"
    spec = {"kind": "zram", "disksize": "32M"}
    a = devices.ensure("zr", spec, sp)
    b = devices.ensure("zr", spec, sp)
    assert a["created"] == b["created"]
    with pytest.raises(BenchcastError, match="device zr: state: .* still records created resources"):
        devices.provision("zr", spec, sp)
    subprocess.run(["umount", b["target"]], check=True)  # the device went away behind our back
    c = devices.ensure("zr", spec, sp)
    assert findmnt_target(c["target"])["source"] == c["created"]["zram"]
    devices.teardown(sp)


# --------------------------------------------------------------------------- spec errors


@pytest.mark.parametrize("spec, pattern", [
    ({"kind": "zram"}, r"^device x: kind zram needs key 'disksize'$"),
    ({"kind": "zram", "disksize": "1G", "compalgo": "lz4"}, r"^device x: unknown key 'compalgo' for kind zram"),
    ({"kind": "loop", "size": "lots"}, r"^device x: size: not a size: 'lots'"),
    ({"kind": "loop", "size": "64M", "fstype": "btrfs"}, r"^device x: fstype: 'btrfs' is not one of"),
    ({"kind": "floppy"}, r"^device x: kind: 'floppy' is not one of"),
    ({"kind": "imported"}, r"^device x: kind: imported devices are not provisioned"),
    ({"kind": "blockdev", "path": "/dev/null", "disposable": "yes"}, r"^device x: disposable: must be true or false"),
    ({"kind": "fsdax", "region": "r0", "size": "1G"}, r"^device x: region: 'r0' is not a region"),
    ({"kind": "throttled", "backing": {"kind": "tmpfs", "size": "1G"}, "write_bps": "1M"}, r"^device x: backing: must be a zram or loop"),
    ({"kind": "throttled", "backing": {"kind": "loop", "size": "1G"}}, r"^device x: kind throttled needs at least one of"),
    ({"kind": "throttled", "backing": {"kind": "loop"}, "write_bps": "1M"}, r"^device x.backing: kind loop needs key 'size'"),
    ({"kind": "delayed", "backing": {"kind": "blockdev", "path": "/dev/vda"}, "read_delay_us": 5}, r"^device x: backing: must be a device spec of kind tmpfs, dir, zram, loop$"),
    ({"kind": "delayed", "backing": {"kind": "tmpfs", "size": "1G"}}, r"^device x: kind delayed needs at least one of read_delay_us"),
    ({"kind": "delayed", "backing": {"kind": "tmpfs", "size": "1G"}, "sync_delay_us": -1}, r"^device x: sync_delay_us: must be a number of microseconds >= 0, not -1$"),
    ({"kind": "delayed", "backing": {"kind": "tmpfs", "size": "1G"}, "sync_delay_us": 1, "threads": 0}, r"^device x: threads: must be a positive integer, not 0$"),
    ({"kind": "tmpfs", "size": "1G", "read_ahead_kb": 128}, r"^device x: unknown key 'read_ahead_kb' for kind tmpfs"),
    ({"kind": "dir", "path": ".", "read_ahead_kb": 128}, r"^device x: unknown key 'read_ahead_kb' for kind dir"),
    ({"kind": "loop", "size": "64M", "read_ahead_kb": 130}, r"^device x: read_ahead_kb: must be a whole number of KiB >= 0 and a multiple of 4 \(a page\), not 130$"),
    ({"kind": "zram", "disksize": "64M", "read_ahead_kb": "8M"}, r"^device x: read_ahead_kb: must be .*, not '8M'$"),
    ({"kind": "throttled", "backing": {"kind": "loop", "size": "1G", "read_ahead_kb": 128}, "write_bps": "1M"},
     r"^device x.backing: read_ahead_kb: set it on device x itself"),
])
def test_bad_spec_is_one_line_naming_device_and_key(clean, spec, pattern):
    with pytest.raises(BenchcastError, match=pattern) as info:
        devices.provision("x", spec, clean / "x.json")
    assert "\n" not in str(info.value)
    assert not (clean / "x.json").exists()


def test_bad_state_record_named(tmp_path):
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(BenchcastError, match=r"x.json: device state record is not JSON"):
        devices.teardown(tmp_path / "x.json")
    with pytest.raises(BenchcastError, match=r"no device state record"):
        devices.teardown(tmp_path / "y.json")
    with pytest.raises(BenchcastError, match=r"device r: state: not provisioned \(status skipped\)"):
        devices.target({"device": "r", "kind": "fsdax", "status": "skipped"})


# --------------------------------------------------------------------------- fsdax


@needs_root
def test_fsdax_without_pmem_fails_clearly_or_is_skipped(clean):
    """Real ndctl on a machine without pmem: `ndctl list -RN` prints nothing."""
    spec = {"kind": "fsdax", "region": "region0", "size": "1G"}
    with pytest.raises(devices.UnavailableError, match=r"^device pm: region: this machine has no persistent-memory "
                                                       r"regions .*optional: true"):
        devices.provision("pm", spec, clean / "pm.json")
    st = devices.provision("pm", {**spec, "optional": True}, clean / "pm.json")
    assert st["status"] == "skipped" and "no persistent-memory regions" in st["reason"]
    assert devices.teardown_all(clean) == {}
    with pytest.raises(devices.UnavailableError, match="device pm: region"):
        devices.usable_devices({"pm": spec, "paper": {"kind": "imported"}})
    assert list(devices.usable_devices({"pm": {**spec, "optional": True}})) == ["pm"]
    assert devices.usable_devices({"pm": {**spec, "optional": True}})["pm"].startswith("device pm: region")


# ndctl prints a one-element array as the bare object; these shapes follow ndctl-list(1) and
# ndctl-create-namespace(1).
REGION0 = {
    "dev": "region0", "size": 17179869184, "available_size": 8589934592, "max_available_extent": 8589934592,
    "type": "pmem", "iset_id": 10248187106440278, "persistence_domain": "memory_controller",
    "namespaces": [{"dev": "namespace0.0", "mode": "fsdax", "map": "dev", "size": 8453619712,
                    "uuid": "19f59a87-ef5a-4b2f-8a01-c8ab12a9e1f0", "sector_size": 512, "align": 2097152,
                    "blockdev": "pmem0"}],
}
REGION1 = {"dev": "region1", "size": 17179869184, "available_size": 0, "type": "pmem", "namespaces": []}
CREATED = {"dev": "namespace0.1", "mode": "fsdax", "map": "dev", "size": 1054867456,
           "uuid": "b9e3a0a4-2f06-4c7e-9b3c-3b0f8a8d7e11", "sector_size": 512, "align": 2097152,
           "blockdev": "pmem0.1"}


@pytest.mark.parametrize("shape", [REGION0, [REGION0, REGION1], {"regions": [REGION0, REGION1]},
                                   {"buses": [{"provider": "ACPI.NFIT", "dev": "ndbus0", "regions": [REGION0]}]}])
def test_ndctl_list_shapes_parsed(shape):
    regs = fsdax.parse_regions(json.loads(json.dumps(shape)))
    assert regs[0]["dev"] == "region0" and regs[0]["namespaces"][0]["blockdev"] == "pmem0"
    assert fsdax.parse_regions(None) == []


def test_ndctl_create_namespace_output_parsed_and_commands_built():
    ns = fsdax.parse_namespace(json.loads(json.dumps(CREATED)))
    assert ns["dev"] == "namespace0.1" and ns["blockdev"] == "pmem0.1"
    with pytest.raises(BenchcastError, match="made mode 'devdax'"):
        fsdax.parse_namespace({**CREATED, "mode": "devdax", "chardev": "dax0.1"})
    with pytest.raises(BenchcastError, match="lacks 'blockdev'"):
        fsdax.parse_namespace({k: v for k, v in CREATED.items() if k != "blockdev"})
    assert fsdax.create_command("region0", 1 << 30) == [
        "ndctl", "create-namespace", "--mode=fsdax", "--region=region0", f"--size={1 << 30}"]
    assert fsdax.destroy_command("namespace0.1") == ["ndctl", "destroy-namespace", "--force", "namespace0.1"]
    assert fsdax.mkfs_options("xfs", {}, "pm") == ["-m", "reflink=0"]
    assert fsdax.mkfs_options("ext4", {}, "pm") == []
    assert fsdax.region_name("pm", {"region": 1}) == "region1"


class FakeNdctl:
    """Stands in for base.run: answers ndctl from the documented shapes and records every command."""

    def __init__(self, after_uuid=None):
        self.calls, self.created, self.after_uuid = [], False, after_uuid

    def __call__(self, cmd, what, check=True, input=None, timeout=120):
        cmd = [str(c) for c in cmd]
        self.calls.append(cmd)
        out = ""
        if cmd[:2] == ["ndctl", "list"]:
            region = json.loads(json.dumps(REGION0))
            if self.created:
                region["namespaces"].append({**CREATED, "uuid": self.after_uuid or CREATED["uuid"]})
            out = json.dumps([region, REGION1])
        elif cmd[:2] == ["ndctl", "create-namespace"]:
            self.created = True
            out = json.dumps(CREATED)
        elif cmd[:2] == ["ndctl", "destroy-namespace"]:
            self.created = False
        return subprocess.CompletedProcess(cmd, 0, out, "")


@needs_root
def test_fsdax_provision_and_teardown_command_sequence(tmp_path, monkeypatch):
    fake = FakeNdctl()
    monkeypatch.setattr(base, "run", fake)
    sp = tmp_path / "pm.json"
    st = devices.provision("pm", {"kind": "fsdax", "region": 0, "size": "1G", "fstype": "ext4"}, sp)
    assert st["created"]["namespace"] == "namespace0.1" and st["created"]["pmem"] == "/dev/pmem0.1"
    assert state_of(sp)["namespace_uuid"] == CREATED["uuid"]
    assert fake.calls[0] == fsdax.list_command()  # region checked before anything is made
    cmds = [c for c in fake.calls if c[0] != "findmnt" and c[:2] != ["ndctl", "list"]]
    assert cmds[0] == fsdax.create_command("region0", 1 << 30)
    assert cmds[1][0] == "mkfs.ext4" and cmds[1][-1] == "/dev/pmem0.1"
    assert cmds[2][:4] == ["mount", "-t", "ext4", "-o"] and cmds[2][4].split(",")[0] == "dax"
    with pytest.raises(devices.UnavailableError, match=r"size: .* but region1 has 0 available"):
        devices.check_available("pm2", {"kind": "fsdax", "region": "region1", "size": "1G"})
    devices.teardown(sp)
    destroys = [c for c in fake.calls if c[:2] == ["ndctl", "destroy-namespace"]]
    assert destroys == [fsdax.destroy_command("namespace0.1")]  # never namespace0.0, which it did not make


@needs_root
def test_fsdax_teardown_leaves_a_namespace_whose_uuid_changed(tmp_path, monkeypatch):
    fake = FakeNdctl(after_uuid="00000000-0000-0000-0000-000000000000")
    monkeypatch.setattr(base, "run", fake)
    sp = tmp_path / "pm.json"
    devices.provision("pm", {"kind": "fsdax", "region": "region0", "size": "1G", "fstype": "ext4"}, sp)
    with pytest.raises(BenchcastError, match=r"device pm: teardown: namespace0.1 now has uuid 0000"):
        devices.teardown(sp)
    assert not [c for c in fake.calls if c[:2] == ["ndctl", "destroy-namespace"]]
    assert state_of(sp)["created"]["namespace"] == "namespace0.1"


def test_cgroup_limit_lines_v1_and_v2():
    from benchcast.devices import throttled

    lim = {"read_bps": 1048576, "write_iops": 50}
    assert throttled.limit_lines(1, "253:1", lim) == {
        "blkio.throttle.read_bps_device": "253:1 1048576", "blkio.throttle.write_iops_device": "253:1 50"}
    assert throttled.limit_lines(2, "7:3", lim) == {"io.max": "7:3 rbps=1048576 wiops=50"}


@needs_zram
def test_cli_provision_describe_teardown_all(clean):
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "scripts")}
    cli = [sys.executable, "-m", "benchcast.devices"]
    sp = clean / "zr.json"
    out = subprocess.run(cli + ["provision", "--id", "zr", "--spec", "{kind: zram, disksize: 16M}", "--state", str(sp)],
                         capture_output=True, text=True, env=env, check=True).stdout
    assert json.loads(out)["status"] == "ready"
    desc = json.loads(subprocess.run(cli + ["describe", str(sp)], capture_output=True, text=True, env=env,
                                     check=True).stdout)
    assert desc["kind"] == "zram" and desc["lsblk"]["blockdevices"][0]["size"] == "16M"
    bad = subprocess.run(cli + ["provision", "--id", "zz", "--spec", "{kind: zram}", "--state", str(clean / "zz.json")],
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 1 and bad.stderr.strip() == "benchcast: device zz: kind zram needs key 'disksize'"
    done = subprocess.run(cli + ["teardown-all", str(clean)], capture_output=True, text=True, env=env, check=True)
    assert f"{sp}: ok" in done.stdout
