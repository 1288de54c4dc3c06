"""The config files: a key given twice, an empty or list-valued file, a merge that changes a
device's kind, and the command line ./benchcast.sh run checks before Snakemake reads it."""
from pathlib import Path

import pytest

from benchcast import BenchcastError
from benchcast.config import configfiles

ROOT = Path(__file__).resolve().parents[1]


def test_config_files_duplicate_keys_and_kind_changes(tmp_path):
    dup = tmp_path / "dup.yaml"
    dup.write_text("studies:\n  paper:\n    aggregate: {trim: 1}\n    aggregate: {trim: 0}\n")
    with pytest.raises(BenchcastError, match=r"dup.yaml:4: duplicate key 'aggregate' \(first on line 3\)"):
        configfiles.check_files([dup])
    for text, what in (("", "is empty"), ("- a\n- b\n", "is a list, not a mapping")):
        bad = tmp_path / "bad.yaml"
        bad.write_text(text)
        with pytest.raises(BenchcastError, match=f"bad.yaml: config file {what}"):
            configfiles.check_files([ROOT / "config" / "config.yaml"], [bad])
    with pytest.raises(BenchcastError, match="nope.yaml: no such config file"):
        configfiles.check_files([], [tmp_path / "nope.yaml"])
    kind = tmp_path / "kind.yaml"
    kind.write_text("studies:\n  paper:\n    devices:\n      dram: {kind: tmpfs, size: 64M}\n")
    with pytest.raises(BenchcastError, match=r"studies.paper.devices.dram.kind: 'tmpfs' would change the kind of device dram \('imported'"):
        configfiles.check_files([ROOT / "config" / "config.yaml"], [kind])
    configfiles.check_files([ROOT / "config" / "config.yaml"], [ROOT / "config" / "precise.yaml"])


def test_command_line_configfiles_and_config_items_checked_first(tmp_path, capsys):
    (tmp_path / "list.yaml").write_text("- a\n")
    (tmp_path / "empty.yaml").write_text("")
    for argv, expected in (
        (["--configfile", str(tmp_path / "nope.yaml")], "nope.yaml: no such config file"),
        (["--cores", "2", "--configfile", str(tmp_path / "list.yaml")], "list.yaml: config file is a list"),
        ([f"--configfile={tmp_path / 'empty.yaml'}"], "empty.yaml: config file is empty"),
        (["--config", "run.studies=[paper]"], "--config run.studies=[paper]: not KEY=VALUE with a top-level key"),
    ):
        assert configfiles.main(argv) == 2
        err = capsys.readouterr().err
        assert expected in err and err.count("\n") == 1 and "Traceback" not in err
    assert configfiles.main(["--configfile", str(ROOT / "config" / "config.yaml"), "--config", "run={studies: [paper]}",
                        "-n"]) == 0


def test_yaml_errors_name_the_line_and_merge_keys_are_no_duplicates(tmp_path):
    """A tab or an unclosed bracket is refused naming the file and its line (Snakemake's own message
    names neither); a merge key (``<<: *anchor``) is YAML, and the keys it brings yield to the
    mapping's own: no duplicate."""
    for text, expected in (("studies:\n  paper:\n\tscreen: {min_devices: 3}\n",
                            r"bad.yaml:3: not valid YAML \(found character '\\t' that cannot start any token\)"),
                           ("studies:\n  paper:\n    screen: {min_devices: 3\n",
                            r"bad.yaml:4: not valid YAML \(expected ',' or '}', but got '<stream end>'\)")):
        bad = tmp_path / "bad.yaml"
        bad.write_text(text)
        with pytest.raises(BenchcastError, match=expected):
            configfiles.check_files([bad])
    merged = tmp_path / "merged.yaml"
    merged.write_text("studies:\n  paper:\n    targets:\n      A:\n        figures:\n"
                      "          - &fig {workload: randwrite, block_size: 64K, metric: lat_mean, value: 40 us}\n"
                      "      B:\n        figures:\n          - {<<: *fig, value: 30 us}\n")
    data = configfiles.read_file(merged)
    assert data["studies"]["paper"]["targets"]["B"]["figures"] == [
        {"workload": "randwrite", "block_size": "64K", "metric": "lat_mean", "value": "30 us"}]
    configfiles.check_files([ROOT / "config" / "config.yaml"], [merged])


#: Root reads a mode-000 file: without these capabilities it cannot, as any other user.
AS_ANY_USER = ["/usr/sbin/capsh", "--drop=cap_dac_override,cap_dac_read_search", "--"]


def _unreadable_and_nowhere(tmp_path):
    """(path, the one line) of a config file that cannot be read, a folder, a path whose folder is
    missing, one through a file, and a file that is not UTF-8 text."""
    secret = tmp_path / "secret.yaml"
    secret.write_text("run: {studies: [paper]}\n")
    secret.chmod(0)
    (tmp_path / "adir.yaml").mkdir()
    (tmp_path / "plain").write_text("x\n")
    (tmp_path / "latin1.yaml").write_bytes(b"run: {studies: [caf\xe9]}\n")
    return [(secret, f"{secret}: cannot read config file (permission denied)"),
            (tmp_path / "adir.yaml", f"{tmp_path / 'adir.yaml'}: a folder, not a config file"),
            (tmp_path / "nodir" / "x.yaml", f"{tmp_path / 'nodir' / 'x.yaml'}: no such config file (no folder "
                                            f"{tmp_path / 'nodir'})"),
            (tmp_path / "plain" / "x.yaml", f"{tmp_path / 'plain' / 'x.yaml'}: no such config file ("
                                            f"{tmp_path / 'plain'} is a file, not a folder)"),
            (tmp_path / "latin1.yaml", f"{tmp_path / 'latin1.yaml'}: cannot read config file (not UTF-8 text: "
                                       f"byte 19)")]


@pytest.mark.skipif(not Path(AS_ANY_USER[0]).exists(), reason="needs capsh (Debian package libcap2-bin)")
def test_an_unreadable_folder_or_nowhere_configfile_is_refused_in_one_line(tmp_path):
    """Through ./benchcast.sh run, as it checks the command line before Snakemake reads it: one line
    naming the file, exit 2, no traceback (a dry run: nothing would run anyway)."""
    import os
    import subprocess

    for path, expected in _unreadable_and_nowhere(tmp_path):
        cmd = ["./benchcast.sh", "run", "-n", "--configfile", str(path)]
        out = subprocess.run([*AS_ANY_USER, "-c", " ".join(cmd)] if os.geteuid() == 0 else cmd, cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 2, out.stderr
        assert out.stderr == f"benchcast: {expected}\n" and "Traceback" not in out.stdout, (out.stdout, out.stderr)


def test_a_folder_or_a_path_through_a_file_is_no_config_file(tmp_path):
    for path, expected in _unreadable_and_nowhere(tmp_path)[1:]:
        with pytest.raises(BenchcastError) as exc:
            configfiles.check_files([ROOT / "config" / "config.yaml"], [path])
        assert str(exc.value) == expected


def test_merged_config_numbers_fit_and_study_names_differ_in_more_than_case():
    """YAML reads 99999999999999999999 and .nan as numbers: the first ended in an OverflowError
    inside the aggregate job after its output was rewritten, the second passes every bound; two
    studies of one name but for case would share one results folder where case is ignored."""
    for value, expected in ((99999999999999999999, "config: studies.paper.aggregate.trim: 99999999999999999999 is beyond "
                                                    "a 64-bit integer"),
                            (-(2**63) - 1, "config: studies.paper.aggregate.trim: -9223372036854775809 is beyond a 64-bit"),
                            (float("nan"), "config: studies.paper.aggregate.trim: nan is not a finite number"),
                            (float("inf"), "config: studies.paper.aggregate.trim: inf is not a finite number")):
        with pytest.raises(BenchcastError, match=expected):
            configfiles.check_merged({"studies": {"paper": {"aggregate": {"trim": value}}}})
    with pytest.raises(BenchcastError, match=r"config: studies.x.extrapolate.data_sizes\[1\]: nan"):
        configfiles.check_merged({"studies": {"x": {"extrapolate": {"data_sizes": ["48GB", float("nan")]}}}})
    with pytest.raises(BenchcastError, match="config: studies: 'PAPER' and 'paper' differ only in case"):
        configfiles.check_merged({"studies": {"paper": {}, "PAPER": {}}})
    configfiles.check_merged({"studies": {"paper": {"aggregate": {"trim": 2**63 - 1}, "x": True, "y": 0.5},
                                          "paper2": {}}})
    import yaml
    configfiles.check_merged(yaml.safe_load((ROOT / "config" / "config.yaml").read_text()))
