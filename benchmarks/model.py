"""How good are the predictions, against the measurement's own noise? Per finished tree.

For every tree given (a study's results folder, e.g. ``results/local``), per family of series (YCSB:
engine x read or write operations; out of core: the mode): the nested choice's held-out MAPE on
interior tiers (a device the model never saw), its noise floor (``interior_floor_mape``, what a perfect
model would still miss from the truths' own scatter) and their ratio, the baseline, the share of
series better than it (``beats_pct``; ``beats_dep_pct`` among the series whose verdict is not
device-independent, ``dependent``); the size stage
(largest data size held out) against the nearest measured size; and how many predictions or interval
bounds of a positive quantity a user is shown at or below zero (chosen folds, target predictions, size
folds, extrapolation, Table 12's predictions).

    .venv/bin/python benchmarks/model.py TREE [TREE ...]                # the tree's own outputs
    .venv/bin/python benchmarks/model.py TREE ... --again               # the analysis again, this code
    .venv/bin/python benchmarks/model.py TREE ... --again --set anchored=false --set nested_match=true

``--again`` reruns the held-out and size validation on the tree's ``aggregated.csv`` and ``screen.csv``
with the study's settings from ``--config`` (and ``--set`` overrides of its ``validate`` keys): nothing
is measured. ``--devices``, ``--block-sizes``, ``--drop-source`` and ``--cells`` analyse the tree's
records again instead (``TREE/records``, aggregated and screened here), with fewer tiers, figures or
sources: what a smaller config would have predicted from the same runs.

    .venv/bin/python benchmarks/model.py TREE --devices zram,fuse150,disk,fuse400,slow --block-sizes 4K,16K,64K
    .venv/bin/python benchmarks/model.py TREE --drop-source paging --cells zcap,loop=randread:4K,write:16K

``--noise N`` analyses the tree N times more, each time with every aggregated value (the fio
figures, the application results and their device counters alike) moved by a normal draw of its own
standard error (the trimmed mean's, :func:`benchcast.screening.floor.se_pct`; on the log scale,
seed ``--seed``), and gives per family the scatter of the nested choice's interior predictions over
the draws (``scatter``: the procedure's noise, its choice of model included) and ``noise_only``, the
MAPE a procedure with that scatter and no bias of its own would have against results with the
floor's noise (``sqrt(2/pi) * sqrt(scatter_sd^2 + truth_se^2)`` per cell), beside the floor:
what the measurement allows this procedure (unbagged: ``validate.bag`` 0 in the draws; ``bagged``
the draws' median, what ``validate.bag`` does).

    .venv/bin/python benchmarks/model.py TREE --noise 20

``--beside OTHER`` adds, per family, how far each interior device's result in another run of the same
config lies from this run's (``again``; ``again_scaled`` with each series' common factor between the
runs taken out) and the model's MAPE over the scaled one (``ratio_scaled``): the model against
measuring the device again.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from benchcast import aggregate, config, records, validation
from benchcast.screening import floor, screen, sizes
from benchcast.config import settings  # noqa: E402
from benchcast.core.units import parse_size  # noqa: E402


def family(t: pd.DataFrame) -> pd.Series:
    """'mariadb read', 'rocksdb write' for YCSB series; the mode ('swap', 'mmap') out of core."""
    ycsb = t["benchmark"].eq("ycsb")
    kind = np.where(t["op"].eq("read"), "read", "write")
    return pd.Series(np.where(ycsb, t["engine"].astype(str) + " " + kind, t["engine"].astype(str)), index=t.index)


def per_family(verdicts: pd.DataFrame, size_summary: pd.DataFrame) -> pd.DataFrame:
    v = verdicts[verdicts["metric"] == "lat_mean"].assign(family=lambda d: family(d))
    g = v.groupby("family")
    out = pd.DataFrame({"series": g.size(), "judged": g["interior_mape"].count(), "mape": g["interior_mape"].mean(),
                        "floor": g["interior_floor_mape"].mean(), "baseline": g["interior_baseline_mape"].mean()})
    out["ratio"] = out["mape"] / out["floor"]
    # the share of judged series whose model beats the baseline
    beats = v["interior_mape"] < v["interior_baseline_mape"]
    out["beats_pct"] = 100 * beats.groupby(v["family"]).sum() / out["judged"]
    # the same among the series the device matters to (not device-independent: verdicts.DEVICE_INDEPENDENT)
    dep = ~v["verdict"].isin(validation.verdicts.DEVICE_INDEPENDENT) & v["interior_mape"].notna()
    out["dependent"] = dep.groupby(v["family"]).sum()
    out["beats_dep_pct"] = 100 * (beats & dep).groupby(v["family"]).sum() / out["dependent"]
    s = size_summary[(size_summary["kind"] == "size") & (size_summary["metric"] == "lat_mean")]
    s = s.assign(family=family(s)).groupby("family")
    out["size_mape"], out["size_nearest"] = s["mape"].mean(), s["baseline_mape"].mean()
    return out


def per_tier(tiers: pd.DataFrame) -> pd.DataFrame:
    """Per family and held-out device, the nested choice's interior MAPE (where the excess over the
    floor comes from), and per family the MAPE without its worst device."""
    t = tiers[(tiers["metric"] == "lat_mean") & (tiers["position"] == "interior")]
    t = t.assign(family=family(t), ape=t["nested_pct_error"].abs())
    wide = t.pivot_table(index="family", columns="held_out", values="ape", aggfunc="mean")
    worst = wide.idxmax(axis=1)
    wide["without worst"] = [t[(t["family"] == f) & (t["held_out"] != worst[f])]["ape"].mean() for f in wide.index]
    wide["worst"] = worst
    return wide


def remeasured(tiers: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Per family, how far the same device's result in ``other`` (another run's tiers) lies from this
    run's, on this run's interior tiers: ``again`` as measured, ``again_scaled`` after each series'
    common factor between the runs (the geometric mean of its devices' ratios) is taken out. The
    scaled error is what moves a device's result against its series' other devices from one run to
    the next: a held-out prediction from the other devices carries it; the within-run floor does not."""
    key = ["series", "held_out"]
    both = tiers[tiers["metric"] == "lat_mean"].merge(
        other[other["metric"] == "lat_mean"][key + ["truth"]], on=key, suffixes=("", "_other"))
    log_ratio = np.log(both["truth_other"] / both["truth"])
    scale = log_ratio.groupby(both["series"]).transform("mean")
    both = both.assign(family=family(both), again=100 * (np.exp(log_ratio) - 1).abs(),
                       again_scaled=100 * (np.exp(log_ratio - scale) - 1).abs())
    inner = both[both["position"] == "interior"]
    return inner.groupby("family")[["again", "again_scaled"]].mean()


def noise_only(tree: Path, study: dict, draws: int, seed: int, t: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per family: the scatter (sd, percent of the prediction) of the nested choice's interior
    predictions over ``draws`` analyses of noisy copies of the tree's aggregated table
    (:func:`benchcast.screening.floor.noisy`), the floor, the MAPE of an unbiased procedure with that scatter against results
    with the floor's noise (``noise_only``) and its ratio to the floor. ``t``: the tree's own analysis
    (its tiers say which cells are interior and their standard errors)."""
    agg = pd.read_csv(tree / "aggregated.csv", low_memory=False)
    screened = pd.read_csv(tree / "screen.csv")
    s = validation.Study.of(study)
    s = dataclasses.replace(s, settings=dataclasses.replace(s.settings, bag=0, noise_draws=0))  # its own noise
    rng = np.random.default_rng(seed)
    preds = []
    for i in range(draws):
        out = validation.run_study(s, agg=floor.noisy(agg, rng), screened=screened)
        c = out["chosen_folds"]
        c = c[c["kind"] == validation.choice.KIND_NESTED]
        preds.append(c.set_index(["series", "held_out"])["prediction"].rename(i))
    p = pd.concat(preds, axis=1)
    tiers = t["tiers"]
    inner = tiers[(tiers["metric"] == "lat_mean") & (tiers["position"] == "interior")].set_index(["series", "held_out"])
    logp = np.log(p.where(p > 0))
    sd = floor.scatter_pct(preds).reindex(inner.index)  # percent, on the log scale
    se = inner["truth_se_pct"]
    cells = inner.assign(family=family(inner.reset_index()).to_numpy(), scatter=sd,
                         floor=floor.expected_abs_error(se), noise_only=floor.noise_only(sd, se))
    bagged = np.exp(logp.median(axis=1)).reindex(inner.index)  # the draws' median prediction
    cells["bagged"] = 100 * (bagged / inner["truth"] - 1).abs()
    g = cells.groupby("family")[["scatter", "floor", "noise_only", "bagged"]].mean()
    g["noise_ratio"] = g["noise_only"] / g["floor"]
    return g


def nonpositive(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per output, its predictions and its bounds at or below zero."""
    rows = []
    for name, t in tables.items():
        cols = [c for c in ("prediction", "lower", "upper", "value") if c in t.columns]
        rows.append({"output": name, **{c: int((pd.to_numeric(t[c], errors="coerce") <= 0).sum()) for c in cols}})
    return pd.DataFrame(rows).set_index("output").fillna(0).astype(int)


def kept_records(tree: Path, devices: list[str], drop_sources: list[str], cells: str) -> pd.DataFrame:
    """The tree's records on ``devices`` (all if empty), without the fio sources ``drop_sources``;
    ``cells`` ('zcap,loop=randread:4K,write:16K'): on those devices only those fio cells."""
    recs = records.read_many(sorted(tree.glob("records/*/*.csv")))
    if devices:
        recs = recs[recs["device"].isin(devices)]
    recs = recs[~recs["source"].isin([f"fio:{s}" for s in drop_sources])]
    if cells:
        on, _, pairs = cells.partition("=")
        keep = {(rw, parse_size(bs)) for rw, bs in (c.split(":") for c in pairs.split(","))}
        ok = [(w, b) in keep for w, b in zip(recs["workload"], recs["block_size"])]
        elsewhere = ~(recs["benchmark"].eq("fio") & recs["device"].isin(on.split(",")))
        recs = recs[elsewhere | pd.Series(ok, index=recs.index)]
    return recs


def again(tree: Path, study: dict, recs: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    if recs is None:
        agg = pd.read_csv(tree / "aggregated.csv")
        screened = pd.read_csv(tree / "screen.csv")
    else:
        s = validation.Study.of(study)
        agg = aggregate.aggregate(recs, trim=s.trim)
        screened = screen.screen(agg, s.features, s.series, s.pairing, s.min_devices)
    out = validation.run_study(validation.Study.of(study), agg=agg, screened=screened)
    folds, summary, _ = sizes.validate(agg, screened, study["features"], study.get("series"),
                                       settings.memory_lines(study["sources"]), study["validate"]["size_forms"])
    return {**out, "size_folds": folds, "size_summary": summary}


def stored(tree: Path) -> dict[str, pd.DataFrame]:
    v = tree / "validation"
    names = ["verdicts", "tiers", "chosen_folds", "size_folds", "size_summary", "target_predictions"]
    out = {n: pd.read_csv(v / f"{n}.csv") for n in names if (v / f"{n}.csv").exists()}
    for n, f in (("predictions", "predictions.csv"), ("extrapolation", "extrapolation.csv")):
        if (tree / f).exists():
            out[n] = pd.read_csv(tree / f)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("trees", nargs="+")
    p.add_argument("--config", default=str(Path(__file__).resolve().parents[1] / "config" / "config.yaml"))
    p.add_argument("--study", default="local")
    p.add_argument("--again", action="store_true", help="the analysis again with this code (nothing measured)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a validate key (YAML value)")
    p.add_argument("--devices", default="", help="from the records: only these tiers (comma-separated)")
    p.add_argument("--block-sizes", default="", help="from the records: these features.block_sizes")
    p.add_argument("--drop-source", action="append", default=[], help="from the records: without this fio source")
    p.add_argument("--cells", default="", help="from the records: DEVICES=RW:BS,... only those fio cells there")
    p.add_argument("--noise", type=int, default=0, metavar="N", help="N analyses of noisy copies: the procedure's noise")
    p.add_argument("--seed", type=int, default=0, help="the seed of --noise")
    p.add_argument("--beside", default="", help="another run's tree: each device's result there against this run's")
    args = p.parse_args(argv)
    from_records = bool(args.devices or args.block_sizes or args.drop_source or args.cells)
    cfg = yaml.safe_load(Path(args.config).read_text())
    for item in args.set:
        key, _, value = item.partition("=")
        cfg["studies"][args.study].setdefault("validate", {})[key] = yaml.safe_load(value)
    if args.block_sizes:
        cfg["studies"][args.study]["features"]["block_sizes"] = args.block_sizes.split(",")
    study = config.validate(cfg)["studies"][args.study]
    pd.set_option("display.width", 200)
    beside = pd.read_csv(Path(args.beside) / "validation" / "tiers.csv") if args.beside else None
    for tree in map(Path, args.trees):
        if from_records:
            recs = kept_records(tree, [d for d in args.devices.split(",") if d], args.drop_source, args.cells)
            t = again(tree, study, recs)
        else:
            t = again(tree, study) if args.again else stored(tree)
        print(f"== {tree}{' (analysed again)' if args.again or from_records else ''}")
        fam = per_family(t["verdicts"], t["size_summary"])
        if beside is not None:
            fam = fam.join(remeasured(t["tiers"], beside))
            fam["ratio_scaled"] = fam["mape"] / fam["again_scaled"]
        if args.noise:
            fam = fam.join(noise_only(tree, study, args.noise, args.seed, t).drop(columns="floor"))
        print(fam.round(1).to_string())
        print(per_tier(t["tiers"]).round(1).to_string())
        shown = {k: t[k] for k in ("chosen_folds", "target_predictions", "size_folds", "predictions", "extrapolation")
                 if k in t}
        print(nonpositive(shown).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
