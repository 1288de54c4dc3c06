"""Shield the benchmark: no other job of the workflow runs beside a measuring job (the `machine`
resource, checked on a real small Snakemake run with the profile's settings). The shield's config keys are
tested with the other config keys (test_config.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing


BASE = Path(__file__).resolve().parents[1]
PROFILES = ["default", "workstation"]

SNAKEFILE = """
rule all:
    input: "bench.t", "a1.t", "a2.t", "a3.t"

rule bench:
    output: "bench.t"
    resources: machine={machine}
    shell: "date +%s.%N > {{output}}; sleep 2; date +%s.%N >> {{output}}"

rule other:
    output: "a{{i}}.t"
    shell: "date +%s.%N > {{output}}; sleep 1; date +%s.%N >> {{output}}"
"""


def common_machine() -> int:
    return int(re.search(r"^MACHINE = (\d+)$", (BASE / "rules/common.smk").read_text(), re.M).group(1))


def test_every_measuring_rule_takes_the_whole_machine():
    """Every rule that takes the benchmark slot takes `machine=MACHINE` too (the measuring rules
    share one definition, rules/common.smk MEASURING_RESOURCES), and the profiles set the limit to
    MACHINE and one unit for every other job."""
    common = (BASE / "rules/common.smk").read_text()
    shared = re.search(r"^MEASURING_RESOURCES = dict\((.*?)^\)", common, re.M | re.S).group(1)
    assert "benchmark_slots=1" in shared and "machine=MACHINE" in shared
    measuring = 0
    for smk in (BASE / "rules").glob("*.smk"):
        for block in re.split(r"\n(?=rule )", smk.read_text()):
            measuring += block.startswith("rule ") and "**MEASURING_RESOURCES" in block
            if "benchmark_slots=" in block and block.startswith("rule "):
                assert "machine=MACHINE" in block, f"{smk.name}: {block.split(':')[0]}"
    assert measuring >= 5  # fio, ycsb, ooc and the two device rules
    for name in PROFILES:
        prof = yaml.safe_load((BASE / "profiles" / name / "config.yaml").read_text())
        assert f"machine={common_machine()}" in prof["resources"] and prof["default-resources"][0] == "machine=1"
        # every other default a constant: Snakemake's own read input.size_mb, which it cannot evaluate
        # while it writes the report ("coroutine ... was never awaited", once per job)
        assert sorted(prof["default-resources"][1:]) == ["disk_mb=1000", "mem_mb=1000"]


def intervals(folder: Path) -> dict[str, tuple[float, float]]:
    return {p.stem: tuple(float(x) for x in p.read_text().split()) for p in folder.glob("*.t")}


def run_small(tmp_path, machine: int) -> dict:
    (tmp_path / "Snakefile").write_text(SNAKEFILE.format(machine=machine))
    prof = yaml.safe_load((BASE / "profiles/default/config.yaml").read_text())
    cmd = [sys.executable, "-m", "snakemake", "--cores", "4", "--resources", *prof["resources"],
           "--default-resources", *prof["default-resources"], "--quiet", "all"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return intervals(tmp_path)


def overlaps(t: dict) -> list[str]:
    b0, b1 = t["bench"]
    return [k for k, (s, e) in t.items() if k != "bench" and s < b1 and e > b0]


@pytest.mark.workflow
def test_no_job_runs_beside_a_benchmark(tmp_path):
    """With the profile's resources, three 1 s jobs never overlap the 2 s benchmark job; with a
    benchmark that takes one unit only (the control), on 4 cores they do."""
    (tmp_path / "shielded").mkdir()
    t = run_small(tmp_path / "shielded", common_machine())
    assert len(t) == 4 and overlaps(t) == []
    (tmp_path / "control").mkdir()
    assert overlaps(run_small(tmp_path / "control", 1)) != []
