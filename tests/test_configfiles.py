"""The config files: a key given twice, an empty or list-valued file, a merge that changes a
device's kind, and the command line ./benchcast.sh run checks before Snakemake reads it."""
from pathlib import Path

import pytest

from benchcast import BenchcastError
from benchcast import configfiles

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
