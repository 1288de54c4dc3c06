"""Does the method hold for tiers it was not tuned on? Issue 10's acceptance check.

Adds device tiers of the supported kinds that ``config/config.yaml`` does not have to the default
``local`` study (an overlay config written to ``results/acceptance/extra_tiers.yaml``), runs the
workflow (only the new tiers are measured; everything already measured is kept), then checks the
study's validity tables against the criteria (:mod:`benchcast.validation.acceptance`):

* write-latency series (update, insert) of every engine: nested-choice held-out error <= 10 % on
  every interior tier;
* read-latency series that depend on the device: <= 15 % on every interior tier;
* every series beats its baseline (the mean of the other devices) or is labelled
  device-independent.

    .venv/bin/python benchmarks/acceptance.py              # measure the extra tiers, then check
    .venv/bin/python benchmarks/acceptance.py --check-only # check the tree as it is (a default run)
    .venv/bin/python benchmarks/acceptance.py --no-extra   # run the default study alone, then check
    .venv/bin/python benchmarks/acceptance.py --recompute  # validate the tree's records again, then check

``--recompute`` measures nothing and runs no workflow: it redoes the study's validation from the
records of ``results/<study>`` with the code as it is (:func:`benchcast.validation.run_study`, the
study's settings from ``--config``) and checks that.

Prints every interior tier's error per series, the failures, and exits 1 when a criterion fails.
Measuring the extra tiers takes a few minutes each and needs root, like the default study.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from benchcast import config, records, validation  # noqa: E402
from benchcast.validation import acceptance  # noqa: E402

#: Tiers of the supported kinds, none of them in config/config.yaml: a delayed device over zram
#: with delays shorter than the default ones, a slower delayed tmpfs, and a loop device capped at
#: a lower rate than the default throttled tier.
EXTRA_TIERS = {
    "x_zram_delay": {
        "kind": "delayed", "backing": {"kind": "zram", "disksize": "512M", "fstype": "ext4"},
        "read_delay_us": 80, "write_delay_us": 25, "sync_delay_us": 120, "optional": True,
        "label": "acceptance: delayed zram (FUSE: read +80 us, write +25 us, sync +120 us)",
    },
    "x_slow_delay": {
        "kind": "delayed", "backing": {"kind": "tmpfs", "size": "512M"},
        "read_delay_us": 250, "write_delay_us": 80, "sync_delay_us": 500, "optional": True,
        "label": "acceptance: delayed tmpfs (FUSE: read +250 us, write +80 us, sync +500 us)",
    },
    "slower": {
        "kind": "throttled", "backing": {"kind": "loop", "size": "512M", "backing_dir": ".", "fstype": "ext4"},
        "read_bps": "40M", "write_bps": "40M", "read_iops": 1500, "write_iops": 1500, "optional": True,
        "label": "throttled loop device (cgroup blkio: 1500 IOPS, 40 MiB/s)",
    },
}


def overlay(study: str, tiers: dict) -> dict:
    return {"studies": {study: {"devices": tiers}}}


def run_workflow(study: str, extra: Path | None) -> None:
    cmd = [str(ROOT / ".venv" / "bin" / "snakemake"), "--config", f"run={{studies: [{study}]}}"]
    if extra is not None:
        cmd[1:1] = ["--configfile", "config/config.yaml", str(extra)]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True)


def recompute(tree: Path, study: dict) -> tuple[pd.DataFrame, list[str]]:
    """The criteria over the study's validation redone from the tree's records."""
    recs = records.read_many(sorted(tree.glob("records/*/*.csv")))
    out = validation.run_study(validation.Study.of(study), records=recs)
    return acceptance.criteria(out["tiers"], out["verdicts"])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--study", default="local")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--check-only", action="store_true", help="measure nothing; check results/<study> as it is")
    g.add_argument("--no-extra", action="store_true", help="run the study without extra tiers, then check")
    g.add_argument("--recompute", action="store_true",
                   help="measure nothing; validate results/<study>'s records again with this code, then check")
    p.add_argument("--config", default="config/config.yaml", help="the settings of --recompute")
    args = p.parse_args(argv)
    if not (args.check_only or args.recompute):
        extra = None
        if not args.no_extra:
            extra = ROOT / "results" / "acceptance" / "extra_tiers.yaml"
            extra.parent.mkdir(parents=True, exist_ok=True)
            extra.write_text(yaml.safe_dump(overlay(args.study, EXTRA_TIERS), sort_keys=False))
        run_workflow(args.study, extra)
    tree = ROOT / "results" / args.study
    if args.recompute:
        cfg = config.validate(yaml.safe_load((ROOT / args.config).read_text()))
        inner, failures = recompute(tree, cfg["studies"][args.study])
    else:
        inner, failures = acceptance.check(tree)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 500)
    table = inner.pivot_table(index=["engine", "workload", "data_size", "op"], columns="held_out",
                              values="nested_pct_error", aggfunc="first").round(1)
    print("nested-choice held-out error (%) on interior tiers:")
    print(table.to_string())
    by = inner.groupby(["engine", "kind"])["nested_pct_error"].apply(lambda s: s.abs().mean()).round(1)
    print("\nMAPE by engine and kind:")
    print(by.to_string())
    f = acceptance.noise_floor(inner)
    print(f"\nnoise floor: a perfect model, from the truths' standard errors alone, would miss {f['expected']:.1f} "
          f"of the {f['cells']} judged tiers (P(no miss) {f['p_none']:.2g})")
    print(f"\n{len(failures)} failed criteria" + (":" if failures else ""))
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
