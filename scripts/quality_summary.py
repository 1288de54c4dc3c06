"""Rule script: the study's measurement quality: per device the runs interference spoiled, those
measured again, the interference seen (tables/quality.csv), and the noise floor against the
validation tolerance in one line (quality/summary.txt), which the end of `./benchcast.sh run` prints."""
from pathlib import Path

import pandas as pd

from benchcast.sources.run import quality
from benchcast.core import smk


def main(sm):
    tables = [pd.read_csv(p, keep_default_na=True) for p in sm.input.tables]
    tables = [t for t in tables if not t.empty]
    summary = quality.summary(pd.concat(tables, ignore_index=True) if tables else pd.DataFrame())
    summary.to_csv(sm.output.table, index=False)
    verdicts = pd.read_csv(sm.input.verdicts[0]) if sm.input.verdicts else pd.DataFrame()
    lines = [quality.floor_line(verdicts, float(sm.params.tolerance))]
    spoiled = int(summary["spoiled"].sum()) if len(summary) else 0
    if spoiled:
        again = int(summary["measured_again"].sum())
        flagged = int(summary["flagged_cells"].sum())
        lines.append(f"{spoiled} runs spoiled by interference, {again} measured again, {flagged} cells flagged")
    Path(sm.output.line).write_text("\n".join(f"{sm.wildcards.study}: {x}" for x in lines) + "\n")


smk.run(main, snakemake)  # noqa: F821
