"""Shared helpers for the tests: the paper study as configured, its aggregated records."""
import copy
from pathlib import Path

import yaml

from benchcast import aggregate, config, importers

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
PAPER = config.validate(copy.deepcopy(CONFIG))["studies"]["paper"]


def paper_records():
    return importers.soga2018(
        ROOT / "resources/soga2018/fio.csv",
        ROOT / "resources/soga2018/ycsb_mysql.csv",
        study="paper",
        source="import:soga2018",
        devices=list(PAPER["devices"]),
    )


def paper_agg():
    return aggregate.aggregate(paper_records(), trim=1)
