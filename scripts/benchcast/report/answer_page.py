"""The report's answer page, the first thing a study shows: per application series the predicted
result on every target card with its interval, the held-out error of the procedure that made it
beside the noise floor, and the series' verdict, or the card figure a validated prediction needs
(``validation/answers.csv``); then how good the predictions are per family (held-out error beside
the noise floor, ``validation/verdicts.csv``) and how clean the measurement was (the quality
lines). One HTML fragment, ASCII only: the report shows it on its landing page and as a result."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from .. import BenchcastError
from ..prediction.answers import ANSWERED, MISSING, NO_MODEL
from ..core.units import size_text

#: The columns of ``validation/answers.csv`` (one row per target and series).
ANSWER_COLUMNS = ["target", "series", "benchmark", "engine", "workload", "op", "metric", "unit", "threads",
                  "data_size", "status", "prediction", "lower", "upper", "model", "heldout_mape", "floor_mape",
                  "verdict", "missing_figure", "missing_mape", "line"]

#: What names a series on the page, in its order.
SERIES_KEYS = ["benchmark", "engine", "workload", "op", "metric", "unit", "threads", "data_size"]

#: A family: a series without its workload and data size (MariaDB read latency, RocksDB write...).
FAMILY_KEYS = ["benchmark", "engine", "op", "metric", "unit"]

#: The applications in the order the page shows them: the databases (the paper's YCSB) first, the
#: out-of-core programs after; any other benchmark after those, by name.
BENCHMARK_ORDER = ("ycsb", "ooc")


def _in_order(df: pd.DataFrame, keys: list[str]):
    """``df`` grouped by ``keys`` (the first is ``benchmark``), groups in :data:`BENCHMARK_ORDER`, then
    by their keys: (key, part) as ``groupby`` gives them."""
    rank = df["benchmark"].map({b: i for i, b in enumerate(BENCHMARK_ORDER)}).fillna(len(BENCHMARK_ORDER))
    for key, part in df.assign(_rank=rank).groupby(["_rank", *keys], sort=True, dropna=False):
        yield key[1:], part.drop(columns="_rank")


def number(v: float) -> str:
    """A value as a person reads it: 3 significant digits, thousands separated (1,670; 0.0123; 15.2)."""
    if not np.isfinite(v):
        return ""
    if abs(v) >= 100:
        return f"{float(f'{v:.3g}'):,.0f}"
    return f"{v:.3g}"


def percent(v: float) -> str:
    """A percentage (the tables' MAPE columns are percent already): 12.3 %, 4 %, 150 %."""
    return "" if not np.isfinite(v) else f"{v:.3g} %"


def _span(values: pd.Series, fmt) -> str:
    """One value, or the lowest-highest where the rows differ (the targets' procedures can)."""
    v = values.dropna().astype(float)
    if v.empty:
        return ""
    lo, hi = fmt(v.min()), fmt(v.max())
    return lo if lo == hi else f"{lo.removesuffix(' %')}-{hi}"


def _cell(row) -> str:
    """What one target's cell says: the prediction with its interval, or the figure it needs. A
    result is above zero: a prediction at or below zero is not shown, a bound at or below zero
    leaves the interval open below ("[up to 150]")."""
    if row["status"] == ANSWERED:
        if not row["prediction"] > 0:
            return "no prediction above zero"
        text = number(row["prediction"])
        if np.isfinite(row["upper"]):
            low = f"{number(row['lower'])}-" if row["lower"] > 0 else "up to "
            text += f" [{low}{number(row['upper'])}]"
        return text
    need = f"needs {row['missing_figure']}" if row["missing_figure"] else "no validated prediction"
    return need + (f" (held-out {percent(row['missing_mape'])})" if np.isfinite(row["missing_mape"]) else "")


def read_answers(df: pd.DataFrame) -> pd.DataFrame:
    """``answers.csv`` checked (its columns, a status each row), numbers as floats, text as text."""
    missing = [c for c in ANSWER_COLUMNS if c not in df.columns]
    if missing:
        raise BenchcastError(f"answers.csv: missing column(s) {', '.join(missing)}")
    out = df.copy()
    for c in ("prediction", "lower", "upper", "heldout_mape", "floor_mape", "missing_mape", "data_size", "threads"):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    for c in ("missing_figure", "line", "verdict", "model", "status"):
        out[c] = out[c].fillna("").astype(str)
    known = [ANSWERED, MISSING, NO_MODEL]
    bad = out[~out["status"].isin(known)]
    if len(bad):
        raise BenchcastError(f"answers.csv: status {bad['status'].iloc[0]!r} (one of {', '.join(known)})")
    return out


def _series_rows(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The answer table (:func:`answer_table`) of checked answers and each target cell's tooltip
    (the answer's one-line sentence), row for row."""
    targets = list(dict.fromkeys(df["target"]))
    rows, tips = [], []
    for key, part in _in_order(df, SERIES_KEYS):
        k = dict(zip(SERIES_KEYS, key))
        answered = part[part["status"] == ANSWERED]
        n = int(k["threads"]) if np.isfinite(k["threads"]) else 0
        threads = f", {n} thread{'s' * (n != 1)}" if n > 0 else ""
        row = {"application": f"{k['engine']} {k['workload']}", "result": f"{k['op']} {k['metric']} ({k['unit']})",
               "data size": size_text(k["data_size"]) + threads}
        cells = {t: _cell(r) for t, r in zip(part["target"], part.to_dict("records"))}
        row.update({t: cells.get(t, "") for t in targets})
        row["held-out error"] = _span(answered["heldout_mape"], percent)
        row["noise floor"] = _span(answered["floor_mape"], percent)
        verdicts = list(dict.fromkeys(v for v in part["verdict"] if v))
        row["verdict"] = "; ".join(v.split(" (")[0] for v in verdicts)
        rows.append(row)
        tips.append({**dict(zip(part["target"], part["line"])), "verdict": "; ".join(verdicts)})
    columns = ["application", "result", "data size", *targets, "held-out error", "noise floor", "verdict"]
    return pd.DataFrame(rows, columns=columns), pd.DataFrame(tips, columns=[*targets, "verdict"]).fillna("")


def answer_table(answers: pd.DataFrame) -> pd.DataFrame:
    """The answer as the page shows it, one row per series (the databases first, :data:`BENCHMARK_ORDER`,
    then sorted by its keys): the application
    (engine, workload), the result (op, metric, unit), the data size, one column per target (the
    prediction with its interval in brackets, or the figure it needs), the held-out error of the
    procedures that answered, their noise floor and the series' verdict."""
    return _series_rows(read_answers(answers))[0]


def how_good(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per family (engine, op and metric of a benchmark), the mean over its series of the held-out
    error on interior devices (``interior_mape``), of its noise floor (``interior_floor_mape``)
    and of the baseline's error (the mean of the other devices), the error over the floor, and how
    many series got each verdict."""
    if verdicts.empty:
        return pd.DataFrame(columns=["family", "series", "held-out error (%)", "noise floor (%)", "ratio",
                                     "baseline error (%)", "verdicts"])
    rows = []
    for key, part in _in_order(verdicts, FAMILY_KEYS):
        k = dict(zip(FAMILY_KEYS, key))
        err, floor = part["interior_mape"].mean(), part["interior_floor_mape"].mean()
        counts = part["verdict"].fillna("").astype(str).str.split(" \\(").str[0].value_counts(sort=True)
        rows.append({"family": f"{k['engine']} {k['op']} {k['metric']} ({k['unit']})", "series": len(part),
                     "held-out error (%)": err, "noise floor (%)": floor,
                     "ratio": err / floor if floor > 0 else np.nan,
                     "baseline error (%)": part["interior_baseline_mape"].mean(),
                     "verdicts": ", ".join(f"{n} {v}" for v, n in counts.items() if v)})
    return pd.DataFrame(rows)


STYLE = """<style>
.benchcast-answer { font-family: sans-serif; font-size: 13px; color: #111; max-width: 100%; }
.benchcast-answer h2 { font-size: 17px; margin: 14px 0 4px; }
.benchcast-answer h3 { font-size: 14px; margin: 12px 0 4px; }
.benchcast-answer p { margin: 4px 0; max-width: 70em; }
.benchcast-answer ul { margin: 4px 0; padding-left: 18px; }
.benchcast-answer table { border-collapse: collapse; margin: 4px 0 8px; }
.benchcast-answer th, .benchcast-answer td { border: 1px solid #ccc; padding: 2px 6px; text-align: left;
  vertical-align: top; }
.benchcast-answer th { background: #f0f0f0; }
.benchcast-answer td.num { text-align: right; white-space: nowrap; }
.benchcast-answer td.missing { color: #8a5a00; }
.benchcast-answer tr.group td { background: #f7f7f7; font-weight: bold; padding-top: 5px; }
.benchcast-answer td:first-child { white-space: nowrap; }
</style>"""


def _cells(row: dict, numeric, tips: dict) -> str:
    out = []
    for c, v in row.items():
        cls = "num" if c in numeric else ""
        if isinstance(v, str) and v.startswith(("needs ", "no ")):
            cls = "missing"
        tip = tips.get(c, "")
        attrs = (f' class="{cls}"' if cls else "") + (f' title="{html.escape(tip)}"' if tip else "")
        out.append(f"<td{attrs}>{html.escape(v if isinstance(v, str) else number(v))}</td>")
    return "<tr>" + "".join(out) + "</tr>"


def _table(df: pd.DataFrame, numeric=(), tips: pd.DataFrame | None = None, group=None) -> str:
    """``df`` as an HTML table; ``numeric`` columns right-aligned, ``tips`` each cell's tooltip;
    ``group`` (columns): rows under a header row of their values, those columns not repeated."""
    group = list(group or [])
    shown = [c for c in df.columns if c not in group]
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in shown)
    body, last = [], None
    for i, row in enumerate(df.to_dict("records")):
        key = tuple(row[g] for g in group)
        if group and key != last:
            body.append(f'<tr class="group"><td colspan="{len(shown)}">{html.escape(": ".join(key))}</td></tr>')
            last = key
        tip = tips.iloc[i].to_dict() if tips is not None else {}
        body.append(_cells({c: row[c] for c in shown}, numeric, tip))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def target_lines(answers: pd.DataFrame) -> list[str]:
    """Per target card, in one line: how many series it answers, and the figures its card lacks
    for the others, the most wanted first ("S-SCM: 2 of 54 series answered; for 40 more its card
    needs randwrite 4K lat_mean (31), randread 16K lat_mean (9)")."""
    df = read_answers(answers)
    out = []
    for target, part in df.groupby("target", sort=False):
        answered = int((part["status"] == ANSWERED).sum())
        line = f"{target}: {answered} of {len(part)} series answered"
        need = part.loc[(part["status"] != ANSWERED) & (part["missing_figure"] != ""), "missing_figure"]
        if len(need):
            counts = need.value_counts(sort=True)
            wanted = ", ".join(f"{f} ({n})" for f, n in counts.head(3).items())
            more = f" and {len(counts) - 3} more figures" if len(counts) > 3 else ""
            line += f"; for {len(need)} more its card needs {wanted}{more}"
        out.append(line)
    return out


def page(study: str, answers: pd.DataFrame, verdicts: pd.DataFrame, quality: list[str]) -> str:
    """The study's answer page (an HTML fragment, ASCII): the answer table, how good (per family),
    how clean (the quality lines)."""
    df = read_answers(answers)
    table, tips = _series_rows(df)
    targets = list(tips.columns[:-1])
    answered = int((df["status"] == ANSWERED).sum())
    good = how_good(verdicts)
    parts = [
        STYLE, f'<div class="benchcast-answer" id="answer-{html.escape(study)}">',
        f"<h2>{html.escape(study)}: what the application would do on {html.escape(', '.join(targets))}</h2>",
        f"<p>{answered} of {len(df)} target and series pairs have a validated prediction: the result in the "
        "series' unit, its interval in brackets; the others name the card figure that would give one. Held-out "
        "error: the procedure's mean absolute percentage error on measured devices it did not see; noise floor: "
        "what a perfect model would still miss by. Hover a cell for its sentence.</p>",
        "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in target_lines(answers)) + "</ul>",
        _table(table, numeric=targets, tips=tips, group=["application", "result"]),
        "<h3>How good is it: held-out error beside the noise floor, per family</h3>",
        _table(good, numeric=[c for c in good.columns if c not in ("family", "verdicts")]) if len(good)
        else "<p>No series validated.</p>",
        "<h3>How clean was the measurement</h3>",
        "".join(f"<p>{html.escape(q)}</p>" for q in quality) or "<p>No quality record.</p>",
        "</div>",
    ]
    return "\n".join(parts).encode("ascii", "xmlcharrefreplace").decode()
