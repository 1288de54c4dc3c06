"""The recipes of the guide are files (docs/recipes/) that the docs include as they are, and that run:
each one applied to the default config validates and is planned as the guide says (the NVMe drive, a
directory on a mounted drive, a spec card); a `dir` device goes through fio, YCSB and an out-of-core run
for real and is predicted when held out. The Slurm recipe runs in tests/test_slurm.py."""
import copy
import re
from pathlib import Path

import pytest
import yaml

from benchcast import config
from benchcast.sources import plan
from benchcast.sources.run.fio import expand_grid
from ycsb_util import ycsb_jar  # noqa: F401 (fixture)

#: times things or reads the machine's load: never in the niced lane (tests/conftest.py in_lane)
pytestmark = pytest.mark.timing

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "docs" / "recipes"
INCLUDED = re.compile(r"<!-- recipe: (docs/recipes/[^ ]+) -->\n```\w*\n(.*?)```", re.S)
DEFAULT = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _over(base: dict, more: dict) -> dict:
    """``more`` laid over ``base`` as Snakemake lays a ``--configfile``: mappings key by key."""
    out = copy.deepcopy(base)
    for k, v in more.items():
        out[k] = _over(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def with_recipe(name: str) -> dict:
    return config.validate(_over(DEFAULT, yaml.safe_load((RECIPES / name).read_text())))


def test_every_recipe_the_docs_show_is_its_file_as_it_is():
    shown = {}
    for page in pages():
        for path, text in INCLUDED.findall(page.read_text()):
            assert (ROOT / path).read_text() == text, f"{page.relative_to(ROOT)} shows {path} otherwise"
            shown.setdefault(path, page)
    files = {f"docs/recipes/{p.name}" for p in RECIPES.iterdir()}
    named = {p for p in files for page in pages() if p in page.read_text()}
    assert files == named, f"recipes no page names: {sorted(files - named)}"
    assert {"docs/recipes/nvme.yaml", "docs/recipes/dir.yaml", "docs/recipes/card.yaml"} <= set(shown)


@pytest.mark.parametrize("recipe, device", [("nvme.yaml", "nvme"), ("dir.yaml", "mydrive")])
def test_a_device_named_once_is_measured_by_every_source_that_can(recipe, device):
    """The guide's recipe adds the device under `devices:` alone: fio, the commit figures, YCSB and the
    out-of-core programs plan it; the out-of-core tiers' own figures (oocfio, ooccommit) do not."""
    study = with_recipe(recipe)["studies"]["local"]
    built = plan.build("local", study, set(study["devices"]), grid=expand_grid)
    took = {r.source for r in built.runs if r.device == device}
    assert took == {"fio", "commit", "ycsb", "ooc"}
    modes = {r.mode for r in built.runs if r.device == device and r.source == "ooc"}
    assert modes == {"memory", "swap", "mmap"}


def test_a_device_no_source_measures_is_refused_in_one_line():
    cfg = copy.deepcopy(DEFAULT)
    cfg["studies"]["local"]["devices"]["spare"] = {"kind": "dir", "path": "/tmp", "sources": []}
    study = config.validate(cfg)["studies"]["local"]
    with pytest.raises(Exception, match=r"^config: studies\.local\.devices\.spare: no source of the study "
                                        r"measures it") as info:
        plan.build("local", study, set(study["devices"]), grid=expand_grid)
    assert "\n" not in str(info.value)
    cfg["studies"]["local"]["devices"]["spare"]["sources"] = ["fio", "nvme_fio"]
    with pytest.raises(Exception, match=r"devices\.spare\.sources: 'nvme_fio' is not a source of the study"):
        plan.build("local", config.validate(cfg)["studies"]["local"], set(study["devices"]), grid=expand_grid)


def test_the_card_recipe_is_answered_from_its_own_figures():
    """The card's two datasheet figures serve the study (a check that would refuse a card no model can
    use), and the datasheet rules fix its 16K and 64K read latencies from them."""
    from benchcast.features import cards, feature_table
    from analysis_util import make_agg

    study = with_recipe("card.yaml")["studies"]["local"]
    card = study["targets"]["NVMe-Gen4"]
    grid = {("randread", bs, "lat_mean"): 1.0 for bs in (4096, 16384, 65536)}
    feats = feature_table(make_agg({d: grid for d in "abc"}, {d: 1.0 for d in "abc"}))
    got = cards.card_figures({"NVMe-Gen4": card}, feats).set_index("feature")
    assert got.at["randread_16K_lat_mean", "rule"] == "transfer"
    assert got.at["randread_64K_lat_mean", "value"] == pytest.approx(70 + 60 * 1024 / 7e9 * 1e6)


@pytest.mark.workflow
@pytest.mark.root
def test_the_dir_recipe_measures_its_directory_with_every_source_and_predicts_it_held_out(tmp_path, finished_tree):
    """docs/recipes/dir.yaml as written, its path a directory of this test, added to a copy of the
    workflow tests' small study (conftest.finished_tree: measured with fio and YCSB) with an
    out-of-core source beside them: the directory is measured by all three (named once, under
    `devices:`), and the validation holds it out like any other device."""
    import pandas as pd

    from benchcast.devices import swap
    from conftest import copy_tree
    from workflow_util import edit_config, snakemake

    if swap.active():
        pytest.skip("swap benchcast did not make is active here")
    drive = tmp_path / "drive"
    drive.mkdir()
    device = yaml.safe_load((RECIPES / "dir.yaml").read_text())["studies"]["local"]["devices"]["mydrive"]

    def mutate(cfg):
        study = cfg["studies"]["local"]
        study["devices"]["mydrive"] = {**device, "path": str(drive)}
        study["sources"]["ooc"] = {"type": "ooc", "programs": ["stream"], "working_sets": ["8M", "32M"],
                                   "memory_limit": "16M", "passes": 1, "repeats": 1}

    wd = copy_tree(finished_tree, tmp_path / "wf")
    edit_config(wd, mutate)
    snakemake(wd)
    recs = pd.concat(pd.read_csv(p) for p in (wd / "results" / "local" / "records").rglob("*.csv"))
    mine = recs[recs["device"] == "mydrive"]
    assert {"fio", "ycsb", "ooc"} <= set(mine["benchmark"])
    assert {"memory", "swap", "mmap"} <= set(mine.loc[mine["benchmark"] == "ooc", "engine"])
    tiers = pd.read_csv(wd / "results" / "local" / "validation" / "tiers.csv")
    assert "mydrive" in set(tiers["held_out"])
    assert not any(drive.iterdir())  # its benchmarks' files removed at teardown


def test_help_prints_the_commands_and_exits_0():
    import subprocess

    ok = subprocess.run(["bash", str(ROOT / "benchcast.sh"), "--help"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "set -euo" not in ok.stdout
    assert all(f"./benchcast.sh {c}" in ok.stdout for c in ("run", "slurm", "test", "setup", "teardown"))
    bad = subprocess.run(["bash", str(ROOT / "benchcast.sh"), "rnu"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1] == (
        "benchcast: unknown command rnu: one of run, slurm, test, setup, teardown")


def _png_size(path: Path) -> tuple[int, int]:
    import struct

    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is no PNG"
    return struct.unpack(">II", head[16:24])


def test_the_readme_s_picture_is_the_report_at_a_person_s_window():
    assert "docs/img/answer-page.png" in (ROOT / "README.md").read_text()
    assert _png_size(ROOT / "docs" / "img" / "answer-page.png") == (1280, 800)


@pytest.mark.bench
def test_the_picture_is_made_again_by_its_script(tmp_path):
    """docs/img/answer_page.py draws a report in headless Chromium at 1280x800 (skipped without one)."""
    import importlib.util
    import shutil

    if not any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")):
        pytest.skip("no Chromium here (./benchcast.sh test installs it as root)")
    spec = importlib.util.spec_from_file_location("answer_page_img", ROOT / "docs" / "img" / "answer_page.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    page = tmp_path / "report.html"
    page.write_text("<html><body><h2>local: what the application would do on S-SCM</h2></body></html>")
    assert _png_size(mod.shoot(page, tmp_path / "p.png")) == (1280, 800)


def test_the_import_recipe_reads_its_files_for_its_devices(tmp_path, monkeypatch):
    """docs/recipes/import.yaml over the default config validates, and its source reads fio JSON files
    laid out as it says (a bench-fio folder, a glob) as records of its two imported devices."""
    import json

    from benchcast.sources.parse import importers
    from test_fiojson import fio_json

    study = with_recipe("import.yaml")["studies"]["local"]
    files = study["sources"]["vendor"]["files"]
    for sub in ("imports/bench-fio/nvme0n1/randread.json", "imports/nvme1/run1.json"):
        (tmp_path / sub).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / sub).write_text(json.dumps(fio_json()))
    monkeypatch.chdir(tmp_path)
    recs = importers.fio_json(files, study="local", source="vendor")
    assert set(recs["device"]) == {"nvme_a", "nvme_b"} and set(recs["benchmark"]) == {"fio"}
    assert {d for d, spec in study["devices"].items() if spec["kind"] == "imported"} == {"nvme_a", "nvme_b"}
