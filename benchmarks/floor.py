"""How close can any model come on this machine? The noise floor under issue 10's criteria.

For each study tree (``results/<study>`` of a default run), the tiers the acceptance check judges
(interior tiers of write series at 10 %, of device-dependent read series at 15 %), scored for two
perfect models, neither of which exists:

* **within-run**: predicts each result's true mean exactly; it misses only by the result's own
  standard error (``truth_se_pct`` of ``validation/tiers.csv``; :mod:`benchcast.screening.floor`). Printed:
  expected misses and the chance of none.
* **other runs** (with two or more trees): predicts each result by the geometric mean of the same
  result in the *other* trees, i.e. by measuring the device again as often as the other runs did.
  Printed: how many judged tiers it misses, and how many (engine, write or read, tier) families
  have a mean error over their limit (the lenient reading of the criterion); the nested choice's
  counts beside.

    .venv/bin/python benchmarks/floor.py /tmp/runA/results/local /tmp/runB/results/local ...

Reads the trees' tables; measures nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from benchcast import features
from benchcast.screening import floor
from benchcast.report import tables  # noqa: E402
from benchcast.validation import acceptance  # noqa: E402


def judged(tree: Path) -> pd.DataFrame:
    """The judged interior tiers of one tree: series, held_out, truth, truth_se_pct, limit, error."""
    inner, _ = acceptance.check(tree)
    j = inner[inner["limit"].notna()]
    cols = ["series", "engine", "kind", "held_out", "truth", "limit", "nested_pct_error"]
    out = j[cols + (["truth_se_pct"] if "truth_se_pct" in j else [])].copy()
    if "truth_se_pct" not in out:  # a tree validated before the column existed: from its runs
        out["truth_se_pct"] = _se_from_aggregated(tree, out)
    return out.reset_index(drop=True)


def _se_from_aggregated(tree: Path, tiers: pd.DataFrame) -> np.ndarray:
    se = floor.truth_se(features.series_table(tables.read_aggregated(tree / "aggregated.csv")))
    return se.reindex(pd.MultiIndex.from_arrays([tiers["series"], tiers["held_out"]])).to_numpy()


def other_runs(trees: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per tree: judged tiers that every tree has, and how many of them the geometric mean of the
    other trees' truths misses by more than the limit (and how many the nested choice misses)."""
    keys = ["series", "held_out"]
    common = None
    for t in trees.values():
        k = set(map(tuple, t[keys].to_numpy()))
        common = k if common is None else common & k
    truths = pd.DataFrame({name: t.set_index(keys)["truth"] for name, t in trees.items()}).loc[sorted(common)]
    rows = []
    for name, t in trees.items():
        t = t.set_index(keys).loc[truths.index]
        rest = truths.drop(columns=name)
        oracle = np.exp(np.log(rest).mean(axis=1))
        t = t.assign(other=100 * (oracle / truths[name] - 1).abs(), nested=t["nested_pct_error"].abs())
        # the lenient reading: the MAPE of a family (engine, write or read) on a tier within its limit
        fam = t.groupby(["engine", "kind", "held_out"])[["other", "nested", "limit"]].mean()
        rows.append({"tree": name, "judged": len(t), "other_runs_misses": int((t["other"] > t["limit"]).sum()),
                     "other_runs_mape": float(t["other"].mean()),
                     "nested_misses": int((t["nested"] > t["limit"]).sum()), "nested_mape": float(t["nested"].mean()),
                     "families": len(fam), "other_runs_family_misses": int((fam["other"] > fam["limit"]).sum()),
                     "nested_family_misses": int((fam["nested"] > fam["limit"]).sum())})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trees", nargs="+", type=Path, help="results/<study> directories of default runs")
    args = p.parse_args(argv)
    trees = {str(t): judged(t) for t in args.trees}
    print("within-run floor (a perfect model misses by the truth's own standard error):")
    for name, t in trees.items():
        f = floor.expected_misses(t["truth_se_pct"].to_numpy(dtype=float), t["limit"].to_numpy(dtype=float))
        print(f"  {name}: judged {len(t)}, with a standard error {f['cells']}, median se "
              f"{t['truth_se_pct'].median():.1f} %, expected misses {f['expected']:.1f}, P(no miss) {f['p_none']:.2g}; "
              f"the nested choice misses {int((t['nested_pct_error'].abs() > t['limit']).sum())}")
    if len(trees) >= 2:
        print("\nother runs (each tier predicted by the geometric mean of the other trees' results):")
        pd.set_option("display.width", 200)
        print(other_runs(trees).round(1).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
