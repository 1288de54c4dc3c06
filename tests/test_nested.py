"""Tests of benchcast.validation.nested: the nested choice (each held-out device's model chosen without
it), and the same choice restricted to the models of a card's figures, by hand."""

import numpy as np
import pytest

from analysis_util import make_agg
from benchcast.validation import choice
from benchcast.validation import nested as vnested
from benchcast.validation import folds as vfolds
from validation_util import F4, F64, hand_loo, six_tiers


def test_nested_choice_never_sees_the_held_out_device():
    """For each held-out device the feature is chosen by leave-one-out error over the others only,
    and the prediction is the fold fitted without that device: checked by hand for every device."""
    agg, x64, x4, y = six_tiers()
    folds, _ = vfolds.loo_simple(agg)
    nested = vnested.nested_choice(agg, folds, None)
    devs = list(x64)
    for d in devs:
        rest = [e for e in devs if e != d]
        # inner choice: leave-one-out MAPE over the other five devices, per feature
        mapes = {}
        for fid, xd in (("randwrite_64K_lat_mean", x64), ("randwrite_4K_lat_mean", x4)):
            xv, yv = np.array([xd[e] for e in rest]), np.array([y[e] for e in rest])
            pred = hand_loo(xv, yv)[:, 0]
            mapes[fid] = np.mean(np.abs(100 * (pred - yv) / yv))
        chosen = min(mapes, key=mapes.get)
        row = nested[nested["held_out"] == d]
        assert row["features"].tolist() == [chosen]
        xd = x64 if chosen == "randwrite_64K_lat_mean" else x4
        xv, yv = np.array([xd[e] for e in rest]), np.array([y[e] for e in rest])
        b, a = np.polyfit(xv, yv, 1)
        assert row["prediction"].iloc[0] == pytest.approx(a + b * xd[d])


def test_nested_choice_takes_the_median_of_the_three_best_by_hand():
    """top=3: for each held-out device the three figures are ranked by leave-one-out MAPE over the
    other devices, and the one whose prediction for the held-out device is the median wins; top=1
    is the best-ranked alone. Checked by hand for every device."""
    agg, x64, x4, y = six_tiers()
    x16 = {"a": 2.0, "b": 12.0, "c": 25.0, "d": 70.0, "e": 90.0, "f": 230.0}  # a rougher copy of x64
    agg = make_agg({d: {F64: x64[d], F4: x4[d], ("randwrite", 16384, "lat_mean"): x16[d]} for d in x64}, y)
    folds, _ = vfolds.loo_simple(agg)
    devs = list(x64)
    figures = {"randwrite_64K_lat_mean": x64, "randwrite_4K_lat_mean": x4, "randwrite_16K_lat_mean": x16}
    for top in (1, 3):
        nested = vnested.nested_choice(agg, folds, None, how=choice.Nested(top=top)).set_index("held_out")
        assert len(nested) == len(devs)
        for d in devs:
            rest = [e for e in devs if e != d]
            yv = np.array([y[e] for e in rest])
            scored = []
            for fid, xd in figures.items():
                xv = np.array([xd[e] for e in rest])
                mape = np.mean(np.abs(100 * (hand_loo(xv, yv)[:, 0] - yv) / yv))
                b, a = np.polyfit(xv, yv, 1)
                scored.append((mape, fid, a + b * xd[d]))
            best = sorted(scored)[:top]
            fid, pred = sorted(best, key=lambda t: t[2])[len(best) // 2][1:]
            assert nested.loc[d, "features"] == fid
            assert nested.loc[d, "prediction"] == pytest.approx(pred)
    # the median is not always the best-ranked model: the choice differs somewhere
    one = vnested.nested_choice(agg, folds, None, how=choice.Nested(top=1)).set_index("held_out")
    three = vnested.nested_choice(agg, folds, None, how=choice.Nested(top=3)).set_index("held_out")
    assert (one["features"] != three["features"]).any()


def test_nested_choice_shares_the_score_over_data_sizes_by_hand():
    """With share=[data_size] a held-out device's feature is the one of lowest mean inner MAPE over
    both sizes' series (leave-one-out over the other devices), the same for both sizes, and each
    size's prediction is its own fold."""
    x64 = {"a": 1.0, "b": 10.0, "c": 30.0, "d": 60.0, "e": 100.0, "f": 200.0}
    x4 = {"a": 2.0, "b": 9.0, "c": 35.0, "d": 50.0, "e": 110.0, "f": 190.0}
    # size 1 follows x64 but for e, size 2 follows x4 closely: alone they choose apart somewhere
    y = {d: {1: 50 + 2 * x64[d] * (1.3 if d == "e" else 1.0), 2: 40 + 3 * x4[d] * (0.9 if d == "c" else 1.0)}
         for d in x64}
    agg = make_agg({d: {F64: x64[d], F4: x4[d]} for d in x64}, y)
    folds, _ = vfolds.loo_simple(agg)
    alone = vnested.nested_choice(agg, folds, None)
    shared = vnested.nested_choice(agg, folds, None, how=choice.Nested(share=("data_size",)))
    figures = {"randwrite_64K_lat_mean": x64, "randwrite_4K_lat_mean": x4}
    devs = list(x64)
    for d in devs:
        rest = [e for e in devs if e != d]
        mape = {}
        for fid, xd in figures.items():
            xv = np.array([xd[e] for e in rest])
            per_size = []
            for size in (1, 2):
                yv = np.array([y[e][size] for e in rest])
                per_size.append(np.mean(np.abs(100 * (hand_loo(xv, yv)[:, 0] - yv) / yv)))
            mape[fid] = np.mean(per_size)
        best = min(mape, key=mape.get)
        rows = shared[shared["held_out"] == d]
        assert rows["features"].tolist() == [best, best]
        for size in (1, 2):
            xv = np.array([figures[best][e] for e in rest])
            b, a = np.polyfit(xv, np.array([y[e][size] for e in rest]), 1)
            row = rows[rows["data_size"] == size]
            assert row["prediction"].iloc[0] == pytest.approx(a + b * figures[best][d])
    # alone, the two sizes choose different figures for some device
    per = alone.pivot(index="held_out", columns="data_size", values="features")
    assert (per[1] != per[2]).any()


def test_nested_choice_weighs_multiple_models_on_the_other_devices_only():
    """y = 50 + 2 x64 + 30 x4 exactly: no single figure fits, the pair does. For every device the
    pair wins on the other devices, and its prediction is the multiple fold fitted without it."""
    agg, x64, x4, _ = six_tiers()
    y = {d: 50 + 2 * x64[d] + 30 * x4[d] for d in x64}
    agg = make_agg({d: {F64: x64[d], F4: x4[d]} for d in x64}, y)
    folds, _ = vfolds.loo_simple(agg)
    mfolds, _, _ = vfolds.loo_multiple(agg, max_figures=2)
    nested = vnested.nested_choice(agg, folds, None, mfolds, how=choice.Nested(max_figures=2)).set_index("held_out")
    assert set(nested["model"]) == {"multiple"}
    assert set(nested["features"]) == {"randwrite_4K_lat_mean+randwrite_64K_lat_mean"}
    assert nested["pct_error"].abs().max() < 1e-9
    # without the multiple candidates, the best single figure is used and misses
    simple_only = vnested.nested_choice(agg, folds, None)
    assert set(simple_only["model"]) == {"simple"} and simple_only["pct_error"].abs().max() > 1


def _scored(agg, candidates=None, restrict=True, mfolds=None, how=choice.Nested()):
    folds, summary = vfolds.loo_simple(agg, candidates)
    return vnested.scored(agg, vnested.Outer(folds, summary, mfolds), candidates, None, how, restrict)


def test_restricted_to_a_card_s_figure_the_choice_is_that_figure_s_line_by_hand():
    """A card that gives only the figure that explains nothing (x4) gets, on every held-out device,
    the line on x4 fitted on the other devices: the procedure that answers that card, checked by
    hand; unrestricted, the choice takes x64 (every figure)."""
    agg, x64, x4, y = six_tiers()
    sc = _scored(agg)
    card = vnested.choose(sc, {"randwrite_4K_lat_mean"}).set_index("held_out")
    devs = list(x64)
    for d in devs:
        rest = [e for e in devs if e != d]
        b, a = np.polyfit([x4[e] for e in rest], [y[e] for e in rest], 1)
        assert card.loc[d, "features"] == "randwrite_4K_lat_mean"
        assert card.loc[d, "prediction"] == pytest.approx(a + b * x4[d])
    every = vnested.choose(sc)
    assert "randwrite_64K_lat_mean" in set(every["features"])
    # a card with every figure is the study's own choice, to the digit
    assert vnested.choose(sc, {"randwrite_4K_lat_mean", "randwrite_64K_lat_mean"})[
        ["held_out", "features", "prediction"]].equals(every[["held_out", "features", "prediction"]])
    # and on all devices the card's models are its figure's alone
    assert set(vnested.rank(sc, {"randwrite_4K_lat_mean"})["features"]) == {"randwrite_4K_lat_mean"}
    assert vnested.choose(sc, set()).empty and vnested.rank(sc, set()).empty


def test_a_card_without_the_first_source_s_figures_takes_the_next_source():
    """Candidates tried in order (the figures shaped like the application, then the pairing rules):
    unrestricted, the series takes its first source's figure (x64) and the later source's models never
    compete; restricted to x4, which only the second source names, it takes x4's models from there."""
    agg, x64, x4, y = six_tiers()
    series = "ycsb/mysql/write-only/write/lat_mean/16GB"
    cands = ({series: ["randwrite_64K_lat_mean"]}, {series: ["randwrite_64K_lat_mean", "randwrite_4K_lat_mean"]})
    sc = _scored(agg, cands)
    assert set(vnested.choose(sc)["features"]) == {"randwrite_64K_lat_mean"}
    assert set(vnested.choose(sc, {"randwrite_4K_lat_mean"})["features"]) == {"randwrite_4K_lat_mean"}
    # without restrict, the later source is never fitted: a card with x4 alone has no model
    assert vnested.choose(_scored(agg, cands, restrict=False), {"randwrite_4K_lat_mean"}).empty
    # the study's own choice is the same with or without the later source fitted
    a, b = vnested.choose(sc), vnested.choose(_scored(agg, cands, restrict=False))
    assert a.reset_index(drop=True).equals(b.reset_index(drop=True))


def test_a_multiple_model_competes_only_where_the_card_gives_all_its_figures():
    agg, x64, x4, _ = six_tiers()
    y = {d: 50 + 2 * x64[d] + 30 * x4[d] for d in x64}
    agg = make_agg({d: {F64: x64[d], F4: x4[d]} for d in x64}, y)
    mfolds, _, _ = vfolds.loo_multiple(agg, max_figures=2)
    sc = _scored(agg, mfolds=mfolds, how=choice.Nested(max_figures=2))
    assert set(vnested.choose(sc)["model"]) == {"multiple"}
    one = vnested.choose(sc, {"randwrite_64K_lat_mean"})  # the pair needs x4: x64's models alone (one-figure
    assert set(one["features"]) == {"randwrite_64K_lat_mean"}  # multiple models among them)
