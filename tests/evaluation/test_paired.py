"""The protocol's statistics against scipy.stats directly and hand-checkable cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from jaxkit.evaluation import paired_comparison, rate, survival, time_to_event, wilson_interval

# per-seed steps to 95% validation accuracy of a published modular-addition run (baseline, regularizer)
BASE = [5250, 2150, 5300, 5200, 2850, 4600, 5200, 4200, 1350, 1350]
REG = [4000, 2050, 2500, 3000, 2700, 3500, 4500, 3500, 1400, 1450]


def test_wilson_matches_the_closed_form():
    k, n, z = 6, 10, stats.norm.ppf(0.975)
    p = k / n
    center = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(center - half, abs=1e-12) and hi == pytest.approx(center + half, abs=1e-12)
    r = rate(10, 10)
    assert (
        r["rate"] == 1.0
        and r["ci_high"] == pytest.approx(1.0)
        and r["ci_low"] == pytest.approx(0.7225, abs=1e-4)
    )
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(11, 10)


def test_paired_speedup_by_hand_and_against_scipy():
    res = paired_comparison(BASE, REG, effect="speedup")
    per = 100 * (1 - np.asarray(REG, float) / np.asarray(BASE, float))
    assert res["per_item"] == pytest.approx(per)
    assert res["median"] == pytest.approx(np.median(per))  # 15.06%
    assert res["mean"] == pytest.approx(per.mean())  # 17.18%
    assert round(res["median"], 1) == 15.1 and round(res["mean"], 1) == 17.2
    # Wilcoxon signed-rank of the step differences; exact p = 0.0117 for these 10 pairs
    assert res["wilcoxon_p"] == pytest.approx(stats.wilcoxon(REG, BASE).pvalue)
    assert res["wilcoxon_p"] == pytest.approx(0.01171875)
    # sign test: 8 of 10 seeds faster
    assert res["n_negative"] == 8 and res["sign_p"] == pytest.approx(stats.binomtest(2, 10).pvalue)
    boot = stats.bootstrap(
        (per,), np.median, method="percentile", n_resamples=10_000, rng=np.random.default_rng(0)
    )
    assert res["ci_low"] == pytest.approx(boot.confidence_interval.low)
    assert res["ci_high"] == pytest.approx(boot.confidence_interval.high)
    assert res["ci_low"] <= res["median"] <= res["ci_high"] and res["excludes_zero"]


def test_paired_difference_identical_arms_is_a_point_and_not_significant():
    res = paired_comparison([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert res["median"] == 0 and res["ci_low"] == res["ci_high"] == 0
    assert res["wilcoxon_p"] == 1.0 and res["sign_p"] == 1.0 and not res["excludes_zero"]


def test_paired_refuses_censored_and_unpaired_input():
    with pytest.raises(ValueError, match="censored"):
        paired_comparison([1.0, float("nan")], [1.0, 2.0])
    with pytest.raises(ValueError, match="paired"):
        paired_comparison([1.0, 2.0, 3.0], [1.0, 2.0])


def test_survival_rmst_is_the_mean_of_min_t_h_and_km_median():
    s = survival([3, None, 5, None], 10)
    assert s["rmst"] == pytest.approx(np.mean([3, 10, 5, 10]))
    assert s["reached"]["k"] == 2 and s["km_median"] == 5  # S drops to 0.5 at t = 5
    assert survival([None, None, 4], 10)["km_median"] is None  # fewer than half reach it
    assert survival([None, None], 10) == {"reached": rate(0, 2), "km_median": None, "rmst": 10.0}


def test_time_to_event_censored_matches_scipy_logrank():
    b = [100, 120, 150, 130]
    m = [200, None, None, 180]
    res = time_to_event(b, m, 300)
    assert res["headline"] == "censored" and res["paired"] is None
    x = stats.CensoredData(uncensored=[200, 180], right=[300, 300])
    y = stats.CensoredData(uncensored=b)
    assert res["logrank_p"] == pytest.approx(stats.logrank(x, y).pvalue)
    rm, rb = np.mean([200, 300, 300, 180]), np.mean(b)
    assert res["rmst_speedup"]["value"] == pytest.approx(100 * (1 - rm / rb))
    assert res["order"] == {"method_first": 0, "baseline_first": 4, "ties": 0, "sign_p": 0.125}
    assert res["method"]["reached"]["k"] == 2


def test_time_to_event_uncensored_headline_is_the_paired_comparison():
    res = time_to_event(BASE, REG, 10_000)
    assert res["headline"] == "paired"
    assert res["paired"]["median"] == pytest.approx(paired_comparison(BASE, REG, effect="speedup")["median"])
    with pytest.raises(ValueError, match="horizon"):
        time_to_event([1, 20], [1, 2], 10)


def test_labeled_inputs_pair_by_label_not_position():
    """Two pandas Series are paired by label (a fresh probe found them paired by position): the median paired
    difference of a shuffled method Series is the label-aligned one, median(m - b) = 3, not 13."""
    import pandas as pd

    from jaxkit.evaluation import mcnemar

    b = pd.Series([10.0, 20, 30, 40, 50], index=list("abcde"))
    m = pd.Series([11.0, 22, 33, 44, 150], index=list("abcde"))
    shuffled = m[["b", "c", "d", "e", "a"]]
    res = paired_comparison(b, shuffled, n_resamples=200)
    assert res["median"] == float(np.median(m.to_numpy() - b.to_numpy())) == 3.0
    t = time_to_event(b, shuffled, 200)
    assert t["paired"]["median"] == time_to_event(b.to_numpy(), m.to_numpy(), 200)["paired"]["median"]
    a = pd.Series([1, 1, 0, 0], index=list("abcd"))
    assert mcnemar(a, a[["d", "c", "b", "a"]]) == {"b": 0, "c": 0, "n": 4, "p": 1.0}
    with pytest.raises(ValueError, match="comparator: expected the labels of method"):
        mcnemar(a, pd.Series([1, 0, 1, 0], index=list("abcx")))
    with pytest.raises(ValueError, match="method: expected the labels of baseline"):
        paired_comparison(b, pd.Series([1.0, 2, 3, 4, 5], index=list("aabcd")))
    # unlabeled inputs still pair by position
    assert paired_comparison([1.0, 2, 3], [2.0, 3, 5], n_resamples=200)["median"] == 1.0
