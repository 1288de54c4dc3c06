"""The answer for each spec card, per finished tree: how many series each card answers and how, the median
held-out error of the card-conditional choice beside the study's unrestricted nested choice on the same
series, the figure worth asking for, and the time the cards' analysis takes. Nothing is measured.

    .venv/bin/python benchmarks/cards.py TREE [TREE ...]                    # the config's cards
    .venv/bin/python benchmarks/cards.py TREE --configfile more-cards.yaml  # with cards kept elsewhere

A TREE is a study's results folder (``results/local``). The cards are the study's ``targets`` in
``--config`` with every ``--configfile`` laid over it, as a run reads them; the analysis is
:func:`benchcast.validation.run_cards` on the tree's ``aggregated.csv`` and ``screen.csv``, timed
(``cards_s``), then :func:`benchcast.prediction.answers.answers` (``answers_s``). ``unrestricted`` is
the study's own nested choice (``validation/verdicts.csv``, interior MAPE) on the same series: what a
card with every figure would get. ``positive`` counts predictions and bounds at or below zero (0:
none shown), ``no_interval`` the answers shown without an interval (0: none).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from benchcast import config, validation  # noqa: E402
from benchcast.prediction import answers  # noqa: E402
from benchcast.report import tables  # noqa: E402


def _over(base: dict, more: dict) -> dict:
    """``more`` laid over ``base`` as Snakemake lays a ``--configfile`` (mappings key by key, the rest
    replaced)."""
    out = dict(base)
    for k, v in more.items():
        out[k] = _over(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def study_config(paths: list[str], study: str) -> dict:
    """The study's validated config: ``paths`` read and laid over each other."""
    merged: dict = {}
    for p in paths:
        merged = _over(merged, yaml.safe_load(Path(p).read_text()))
    return config.validate(merged)["studies"][study]


def per_card(tree: Path, study: dict) -> tuple[pd.DataFrame, list[str]]:
    agg, screened = tables.read_aggregated(tree / "aggregated.csv"), tables.read_screen(tree / "screen.csv")
    targets = study.get("targets") or {}
    t0 = time.perf_counter()
    out = validation.run_cards(validation.Study.of(study), targets, agg, screened)
    t1 = time.perf_counter()
    c = answers.CardTables(out["card_figures"], out["card_verdicts"], out["card_selection"], out["figure_value"])
    verdicts = pd.read_csv(tree / "validation" / "verdicts.csv").set_index("series")
    noise = verdicts["interior_noise_mape"] if "interior_noise_mape" in verdicts else None
    table = answers.answers(agg, study["features"], study.get("series"), targets, c, study["validate"], noise)
    t2 = time.perf_counter()
    own = verdicts["interior_mape"]
    rows = []
    for target, part in table.groupby("target", sort=False):
        ok = part["status"] != answers.NO_ANSWER
        rows.append({"card": target, "series": len(part), "answered": int(ok.sum()),
                     "by_model": int((part["status"] == answers.ANSWERED).sum()),
                     "by_mean": int((part["status"] == answers.BY_MEAN).sum()),
                     "median_error": part.loc[ok, "heldout_mape"].median(),
                     "unrestricted": own.reindex(part.loc[ok, "series"]).median(),
                     "positive": int((part[["prediction", "lower"]] <= 0).to_numpy().sum()),
                     "no_interval": int((ok & part["lower"].isna()).sum()),
                     "cards_s": t1 - t0, "answers_s": t2 - t1})
    return pd.DataFrame(rows), answers.card_lines(table, c.value)


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("trees", nargs="+")
    p.add_argument("--config", default=str(ROOT / "config" / "config.yaml"))
    p.add_argument("--configfile", action="append", default=[], help="a config laid over --config (cards)")
    p.add_argument("--study", default="local")
    args = p.parse_args(argv)
    study = study_config([args.config, *args.configfile], args.study)
    pd.set_option("display.width", 200)
    for tree in map(Path, args.trees):
        cards, lines = per_card(tree, study)
        print(f"== {tree}")
        print(cards.round(2).to_string(index=False))
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
