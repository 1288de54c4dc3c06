"""How trustworthy is a prediction: the study-level glue over :mod:`validate` and :mod:`models`.

Takes the study's aggregated records and screening table, restricts them to the configured candidate
features and pairing, runs held-out-device validation of the simple models (every candidate feature)
and of the pooled multiple regressions, selects models by held-out error next to the paper's
max-R^2 choice, and predicts the hypothetical devices with prediction intervals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import models, records, validate
from .screen import feature_table, match_rule, series_table


def read_fractions() -> dict[str, float]:
    """Read fraction of each YCSB workload (and the paper's), from the workload definitions."""
    from .ycsb import WORKLOADS

    out = dict(models.PAPER_READ_FRACTION)
    for name, props in WORKLOADS.items():
        out.setdefault(name, float(props.get("readproportion", 0)) + float(props.get("scanproportion", 0)))
    return out


def study_table(agg: pd.DataFrame, features: dict, series: dict | None) -> pd.DataFrame:
    """The aggregated rows the models see: candidate feature rows and the screened series rows."""
    feats = feature_table(agg, features)
    keep = agg[agg["benchmark"] == features.get("benchmark", "fio")].merge(
        feats[["device", "workload", "block_size", "op", "metric"]].drop_duplicates(),
        on=["device", "workload", "block_size", "op", "metric"],
    )
    return pd.concat([keep, series_table(agg, features, series)], ignore_index=True)


def simple_candidates(screened: pd.DataFrame) -> pd.DataFrame:
    """Series label -> feature, exactly the pairs the screening fitted (pairing applied)."""
    keys = screened[records.SERIES_COLUMNS].to_dict("records")
    return pd.DataFrame({"series": [models.series_label(k) for k in keys], "feature": screened["feature"]})


def multiple_candidates(agg: pd.DataFrame, features: dict, pairing):
    """A callable: pool key -> the feature ids its pairing rule allows."""
    feats = feature_table(agg, features).drop_duplicates("feature")

    def allowed(key: dict) -> list[str]:
        rule = match_rule(key, pairing)
        if rule < 0:
            return list(feats["feature"])
        return list(feats.loc[feats["workload"].isin(pairing[rule]["workloads"]), "feature"])

    return allowed


def run(agg, screened, features, series, pairing, settings: dict):
    """All validation tables of a study, as a dict name -> DataFrame."""
    alpha = 1 - settings["level"]
    table = study_table(agg, features, series)
    folds, summary = validate.loo_simple(table, simple_candidates(screened), alpha=alpha)
    selection = validate.select_simple(summary)
    pool_by = models.POOL_PER_WORKLOAD if settings["pool"] == "workload" else models.POOL_ACROSS_WORKLOADS
    mfolds, msummary, refusals = validate.loo_multiple(
        table,
        multiple_candidates(agg, features, pairing),
        alpha=alpha,
        pool_by=pool_by,
        read_fraction=read_fractions(),
        max_figures=settings["max_figures"],
    )
    mselection = validate.select_multiple(msummary, refusals)
    return {
        "simple_folds": folds,
        "simple_summary": summary,
        "simple_selection": selection,
        "multiple_folds": mfolds,
        "multiple_summary": msummary,
        "multiple_refusals": refusals,
        "multiple_selection": mselection,
    }


def selected_folds(folds, selection, mfolds, mselection) -> pd.DataFrame:
    """The held-out predictions of the selected models only (simple per series, multiple per pool),
    with the paper's choice as a third kind: what the validity chart and coverage are about."""
    parts = []
    for kind, col in (("simple (held-out choice)", "selected_feature"), ("simple (paper: max R²)", "paper_feature")):
        sel = selection[["series", col]].rename(columns={col: "features"})
        parts.append(folds.merge(sel, on=["series", "features"]).assign(kind=kind))
    if len(mselection):
        sel = mselection[["pool", "selected_features"]].rename(columns={"selected_features": "features"})
        parts.append(mfolds.merge(sel, on=["pool", "features"]).assign(kind="multiple (held-out choice)"))
    cols = ["kind", "series", *records.SERIES_COLUMNS, "features", "held_out", "truth", "prediction",
            "lower", "upper", "abs_error", "pct_error", "covered", "interval_flag"]
    out = pd.concat(parts, ignore_index=True)
    return out[[c for c in cols if c in out.columns]]


def coverage(chosen: pd.DataFrame, level: float) -> pd.DataFrame:
    """Per model kind: held-out MAPE, and how often the held-out truth fell inside the interval."""
    rows = []
    for kind, df in chosen.groupby("kind", sort=False):
        has = df["covered"].notna()
        n = int(has.sum())
        rows.append(
            {
                "model": kind,
                "nominal_level": level,
                "held_out_predictions": len(df),
                "with_interval": n,
                "coverage": float(df.loc[has, "covered"].astype(bool).mean()) if n else np.nan,
                "mape": float(df["pct_error"].abs().mean()),
            }
        )
    return pd.DataFrame(rows)


def target_predictions(agg, features, series, selection, mselection, targets, settings, data_sizes):
    """Predictions with intervals for the hypothetical devices: the paper's choice, the held-out
    choice (simple) and the selected multiple model per pool; plus what was skipped and why."""
    alpha = 1 - settings["level"]
    table = study_table(agg, features, series)
    preds, skipped = [], []
    for choice in ("paper", "heldout"):
        p, s = models.predict_targets_simple(table, selection, targets, alpha=alpha, choice=choice)
        preds.append(p.assign(kind="simple"))
        skipped.append(s.assign(kind="simple"))
    if len(mselection):
        p, s = models.predict_targets_multiple(
            table, mselection, targets, alpha=alpha, read_fraction=read_fractions(), data_sizes=data_sizes
        )
        preds.append(p.assign(kind="multiple", choice="heldout"))
        skipped.append(s.assign(kind="multiple"))
    return pd.concat(preds, ignore_index=True), pd.concat(skipped, ignore_index=True)


def refusal_summary(refusals: pd.DataFrame) -> pd.DataFrame:
    """Models refused, counted per pool, number of device figures and reason."""
    cols = ["pool", "n_figures", "n_devices", "reason"]
    if refusals.empty:
        return pd.DataFrame(columns=cols + ["models"])
    return refusals.groupby(cols, sort=True).size().rename("models").reset_index()


def interval_table(preds: pd.DataFrame) -> pd.DataFrame:
    """Target predictions with intervals and extrapolation flags, one row per model and setting."""
    cols = ["kind", "choice", "target", "benchmark", "engine", "workload", "op", "metric", "unit", "threads",
            "data_size", "features", "prediction", "lower", "upper", "interval_flag", "feature_out_of_range",
            "data_size_extrapolated", "extrapolation"]
    out = preds[[c for c in cols if c in preds.columns]].copy()
    out.insert(out.columns.get_loc("data_size"), "data_size_gb", out["data_size"] / 1e9)
    return out.drop(columns="data_size").sort_values(["kind", "choice", "target", "engine", "workload", "op",
                                                      "data_size_gb"], kind="mergesort").reset_index(drop=True)
