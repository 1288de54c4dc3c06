"""Each rule's conda env is pinned, and pinned to what the project installs here with pip/apt."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
REQS = {}
for line in (ROOT / "requirements.txt").read_text().splitlines():
    line = line.split("#", 1)[0].strip()
    if line:
        name, ver = line.split("==")
        REQS[name.lower()] = ver

#: conda packages that are not Python packages: how to read the version installed here.
TOOLS = {
    "fio": (["fio", "--version"], r"fio-(\S+)"),
    "ndctl": (["ndctl", "--version"], r"(\d+(?:\.\d+)*)"),
    "openjdk": (["java", "-version"], r'version "(\d+)'),
    "maven": (["mvn", "-v"], r"Apache Maven (\S+)"),
    "mariadb": (["mariadbd", "--version"], r"Ver (\d+\.\d+\.\d+)"),
    "gcc": (["gcc", "-dumpfullversion"], r"(\d+\.\d+\.\d+)"),
}


def env_files():
    return sorted((ROOT / "envs").glob("*.yaml"))


def pins(path):
    env = yaml.safe_load(path.read_text())
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):  # a pip: section
            for p in dep.get("pip", []):
                name, ver = p.split("==")
                out[name.lower()] = ver
            continue
        m = re.match(r"^([A-Za-z0-9_.-]+)=([^=\s]+)$", dep)
        assert m, f"{path.name}: dependency {dep!r} is not pinned as name=version"
        out[m.group(1).lower()] = m.group(2)
    return out


def test_every_rule_has_an_existing_conda_env_and_a_log():
    text = "\n".join(p.read_text() for p in sorted((ROOT / "rules").glob("*.smk")))
    rules = re.split(r"^rule ", text, flags=re.M)[1:]
    assert rules
    for body in rules:
        name = body.split(":", 1)[0]
        m = re.search(r'^\s+conda:\s*\n\s+"([^"]+)"', body, flags=re.M)
        assert m, f"rule {name} has no conda: env"
        assert (ROOT / "rules" / m.group(1)).resolve().is_file(), f"rule {name}: {m.group(1)} missing"
        assert re.search(r"^\s+log:", body, flags=re.M), f"rule {name} has no log:"


@pytest.mark.parametrize("path", env_files(), ids=lambda p: p.name)
def test_env_pins_match_what_is_installed_here(path):
    env = yaml.safe_load(path.read_text())
    assert "conda-forge" in env["channels"]
    for name, ver in pins(path).items():
        if name == "python":
            continue
        if name in REQS:  # conda and pip names agree for every pinned package
            assert REQS[name] == ver, f"{path.name}: {name}={ver} but requirements.txt pins {REQS[name]}"
        elif name in TOOLS:
            cmd, pattern = TOOLS[name]
            if shutil.which(cmd[0]) is None:
                pytest.skip(f"{cmd[0]} not installed here")
            proc = subprocess.run(cmd, capture_output=True, text=True)
            found = re.search(pattern, proc.stdout + proc.stderr)
            assert found and (ver.startswith(found.group(1)) or found.group(1).startswith(ver)), (
                f"{path.name}: {name}={ver} but {found.group(1) if found else 'nothing'} is installed here"
            )
        else:
            pytest.fail(f"{path.name}: {name} is neither in requirements.txt nor a known tool")
