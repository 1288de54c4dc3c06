"""The report's answer page, the first thing a study shows: one line per spec card (how many series
it answers, the median held-out error, the figure worth asking for), the figure worth asking for per
family, then per application series the predicted result on every card with its interval and the
held-out error of the procedure that made it (``validation/answers.csv``), what each card gives and
what the datasheet rules fixed from it (``validation/card_figures.csv``), how good the study's
predictions are per family (held-out error beside the noise alone and the floor, ``validation/verdicts.csv``) and
how clean the measurement was (the quality lines). One HTML fragment, ASCII only: the report shows
it on its landing page and as a result."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from .. import BenchcastError
from ..prediction.answers import ANSWER_COLUMNS, ANSWERED, BY_MEAN, NO_ANSWER, card_lines, family_text
from ..core.units import quantity_text, size_text
from ..records import FAMILY_COLUMNS as FAMILY_KEYS

#: What names a series on the page, in its order.
SERIES_KEYS = ["benchmark", "engine", "workload", "op", "metric", "unit", "threads", "data_size"]

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
    """What one target's cell says: the prediction with its interval ("(mean)" where the measured
    devices' mean answers). A result is above zero: a prediction at or below zero is not shown, a
    bound at or below zero leaves the interval open below ("[up to 150]")."""
    if row["status"] == NO_ANSWER:
        return "no answer"
    if not row["prediction"] > 0:
        return "no prediction above zero"
    text = number(row["prediction"])
    if np.isfinite(row["upper"]):
        low = f"{number(row['lower'])}-" if row["lower"] > 0 else "up to "
        text += f" [{low}{number(row['upper'])}]"
    return text + (" (mean)" if row["status"] == BY_MEAN else "")


def read_answers(df: pd.DataFrame) -> pd.DataFrame:
    """``answers.csv`` checked (its columns, a status each row), numbers as floats, text as text."""
    missing = [c for c in ANSWER_COLUMNS if c not in df.columns]
    if missing:
        raise BenchcastError(f"answers.csv: missing column(s) {', '.join(missing)}")
    out = df.copy()
    for c in ("prediction", "lower", "upper", "heldout_mape", "noise_mape", "floor_mape", "data_size", "threads"):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    for c in ("figures", "line", "verdict", "model", "status", "procedure"):
        out[c] = out[c].fillna("").astype(str)
    known = [ANSWERED, BY_MEAN, NO_ANSWER]
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
        n = int(k["threads"]) if np.isfinite(k["threads"]) else 0
        threads = f", {n} thread{'s' * (n != 1)}" if n > 0 else ""
        row = {"application": f"{k['engine']} {k['workload']}", "result": f"{k['op']} {k['metric']} ({k['unit']})",
               "data size": size_text(k["data_size"]) + threads}
        by = {t: r for t, r in zip(part["target"], part.to_dict("records"))}
        for t in targets:
            row[t] = _cell(by[t]) if t in by else ""
            row[f"{t} error"] = percent(by[t]["heldout_mape"]) if t in by else ""
        row["noise alone"] = _span(part["noise_mape"], percent)
        row["noise floor"] = _span(part["floor_mape"], percent)
        rows.append(row)
        tips.append({**{t: r["line"] for t, r in by.items()}, **{f"{t} error": r["verdict"] for t, r in by.items()}})
    columns = ["application", "result", "data size", *(c for t in targets for c in (t, f"{t} error")), "noise alone",
               "noise floor"]
    return pd.DataFrame(rows, columns=columns), pd.DataFrame(tips, columns=columns[3:-2]).fillna("")


def answer_table(answers: pd.DataFrame) -> pd.DataFrame:
    """The answer as the page shows it, one row per series (the databases first, :data:`BENCHMARK_ORDER`,
    then sorted by its keys): the application (engine, workload), the result (op, metric, unit), the
    data size, per target the prediction with its interval in brackets ("(mean)" where the measured
    devices' mean answers) and the held-out error of the procedure that made it, what the measured
    noise alone costs the study's nested choice there (``noise_mape``) and the noise floor."""
    return _series_rows(read_answers(answers))[0]


def asking(value: pd.DataFrame) -> pd.DataFrame:
    """The figure worth asking for, per card and family (``validation/figure_value.csv``): the card's
    held-out error now, the figure that would cut it most and the error it would then have."""
    rows = []
    for v in value.to_dict("records"):
        ask = v["figure_text"] if isinstance(v["figure_text"], str) and v["figure_text"] else ""
        rows.append({"card": v["target"], "family": family_text(v["family"]), "series": int(v["series"]),
                     "held-out error": percent(v["error"]), "ask for": ask or "no one figure cuts it",
                     "error then": percent(v["error_with"]) if ask else ""})
    return pd.DataFrame(rows, columns=["card", "family", "series", "held-out error", "ask for", "error then"])


def card_figures(figures: pd.DataFrame) -> pd.DataFrame:
    """What each card gives, and what the datasheet rules fixed from it, with the rule and its
    numbers (``validation/card_figures.csv``)."""
    return pd.DataFrame({"card": figures["target"], "figure": figures["figure"],
                         "value": [quantity_text(v, u) for v, u in zip(figures["value"], figures["unit"])],
                         "how": figures["how"]})


def how_good(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per family (engine, op and metric of a benchmark), the mean over its series of the held-out
    error on interior devices (``interior_mape``), of what the measured noise alone costs it
    (``interior_noise_mape``), of its noise floor (``interior_floor_mape``)
    and of the baseline's error (the mean of the other devices), the error over the floor, and how
    many series got each verdict."""
    if verdicts.empty:
        return pd.DataFrame(columns=["family", "series", "held-out error (%)", "noise alone (%)", "noise floor (%)",
                                     "ratio",
                                     "baseline error (%)", "verdicts"])
    rows = []
    for key, part in _in_order(verdicts, FAMILY_KEYS):
        k = dict(zip(FAMILY_KEYS, key))
        err, floor = part["interior_mape"].mean(), part["interior_floor_mape"].mean()
        alone = part["interior_noise_mape"].mean() if "interior_noise_mape" in part else np.nan
        counts = part["verdict"].fillna("").astype(str).str.split(" \\(").str[0].value_counts(sort=True)
        rows.append({"family": f"{k['engine']} {k['op']} {k['metric']} ({k['unit']})", "series": len(part),
                     "held-out error (%)": err, "noise alone (%)": alone, "noise floor (%)": floor,
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
        if isinstance(v, str) and (v.startswith("no ") or v.endswith("(mean)")):
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


def page(study: str, answers: pd.DataFrame, verdicts: pd.DataFrame, quality: list[str],
         value: pd.DataFrame | None = None, figures: pd.DataFrame | None = None) -> str:
    """The study's answer page (an HTML fragment, ASCII): a line per card, the figure worth asking
    for (``value``), the answer table, what each card gives (``figures``), how good (per family), how
    clean (the quality lines)."""
    df = read_answers(answers)
    table, tips = _series_rows(df)
    targets = list(dict.fromkeys(df["target"]))
    value = value if value is not None else pd.DataFrame(columns=["target", "family", "series", "error", "figure",
                                                                  "figure_text", "error_with"])
    good = how_good(verdicts)
    ask = asking(value)
    parts = [
        STYLE, f'<div class="benchcast-answer" id="answer-{html.escape(study)}">',
        f"<h2>{html.escape(study)}: what the application would do on {html.escape(', '.join(targets))}</h2>",
        "<p>Each card is answered from the figures it gives and those the datasheet rules fix from them "
        "(a bandwidth from IOPS, a latency by Little's law, a larger block's latency from a sequential rate): "
        "by the models of those figures that held on measured devices they never saw, or, where none beats "
        "it, by the measured devices' mean (marked \"(mean)\"). Beside each answer, the held-out error of "
        "the procedure that made it (its mean absolute percentage error on measured devices it did not "
        "see); noise alone: what the measured noise alone costs the study's procedure (its own scatter over "
        "noisy copies of the measurement with the results'), noise floor: what a perfect model would still "
        "miss by. An error near the noise alone asks for longer measurements, not another model. Hover a cell "
        "for its sentence.</p>",
        "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in card_lines(df, value)) + "</ul>",
        "<h3>The answers</h3>",
        _table(table, numeric=[c for c in table.columns[3:]], tips=tips, group=["application", "result"]),
        "<h3>The figure worth asking for, per family</h3>",
        _table(ask, numeric=["series", "held-out error", "error then"], group=["card"]) if len(ask)
        else "<p>No card to improve.</p>",
        "<h3>What each card gives</h3>",
        _table(card_figures(figures), numeric=["value"], group=["card"]) if figures is not None and len(figures)
        else "<p>No card.</p>",
        "<h3>How good is it: held-out error beside what the noise alone costs, per family</h3>",
        _table(good, numeric=[c for c in good.columns if c not in ("family", "verdicts")]) if len(good)
        else "<p>No series validated.</p>",
        "<h3>How clean was the measurement</h3>",
        "".join(f"<p>{html.escape(q)}</p>" for q in quality) or "<p>No quality record.</p>",
        "</div>",
    ]
    return "\n".join(parts).encode("ascii", "xmlcharrefreplace").decode()
