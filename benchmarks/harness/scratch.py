"""A scratch copy of the workflow: the project's parts copied to a folder (:func:`copy_workflow`),
its config edited (:func:`edit_config`), every copy quiet (:func:`quiet`). The benchmarks' scratch
runs and the tests' workflow runs (``tests/workflow_util.py``) alike."""

import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PARTS = ["Snakefile", "rules", "scripts", "config", "resources", "envs", "report", "profiles", "ycsb", "ooc"]


def copy_workflow(dest: Path, root: Path = ROOT) -> Path:
    """The workflow's parts (:data:`PARTS`) of the checkout ``root`` (this one) copied to ``dest``,
    its config made :func:`quiet`."""
    dest.mkdir(parents=True, exist_ok=True)
    for part in PARTS:
        src = root / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=shutil.ignore_patterns("__pycache__", "target"))
        elif src.exists():
            shutil.copy2(src, dest / part)
    if (dest / "config" / "config.yaml").exists():
        edit_config(dest, quiet)
    return dest


def quiet(cfg: dict) -> None:
    """A scratch workflow counts its runs exactly and runs on a machine other work keeps busy (the
    tests: their own suite): no extra runs for interference and no wait before a run, unless its
    config sets them (tests/test_quality.py measures both). Applied to every copy and every config edit."""
    run = cfg["run"] = cfg.get("run") or {}
    inter = run["interference"] = run.get("interference") or {}
    inter.setdefault("extra_runs", 0)
    inter.setdefault("wait_run", 0)


def paper_study_only(cfg: dict) -> None:
    """The config cut to the paper study (no measurement at all)."""
    cfg["studies"] = {"paper": cfg["studies"]["paper"]}
    cfg.pop("run", None)


def edit_config(workdir: Path, mutate) -> None:
    """The copy's config.yaml changed by ``mutate(cfg)``, then made :func:`quiet`."""
    path = workdir / "config" / "config.yaml"
    cfg = yaml.safe_load(path.read_text())
    mutate(cfg)
    quiet(cfg)
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
