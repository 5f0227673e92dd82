"""The verdict module against scipy/statsmodels, published worked examples and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import signal, stats

from jaxkit.evaluation import (
    AgreementEndpoint,
    Endpoint,
    ToleranceEndpoint,
    block_bootstrap,
    cell_status,
    default_block_length,
    endpoint_from_dict,
    holm,
    mcnemar,
    paired_comparison,
    secondary,
    tolerance_status,
    verdict,
    wilson_interval,
)


def _ar1(rng, n, phi):
    e = rng.normal(size=n + 200)
    return signal.lfilter([1.0], [1.0, -phi], e)[200:]  # 200 burn-in steps: stationary to ~phi^200


def test_block_bootstrap_covers_the_mean_of_an_ar1_series():
    """Coverage of the 95% circular-block-bootstrap interval for the mean (0) of AR(1) series, phi = 0.5, n = 500.

    Tolerance: 400 series give a Monte-Carlo standard error sqrt(0.95 * 0.05 / 400) = 1.1 points; the block
    bootstrap's variance estimate has a known downward bias of about (1/b) sum_k |k| rho_k / sum_k rho_k = 4 / (3b)
    (17% at the default b = 8, i.e. the standard error 9% short: nominal 95% -> about 92.6%). We accept
    [0.95 - 0.025 - 3 * 0.011, 0.95 + 3 * 0.011] = [0.892, 0.983]. The i.i.d. bootstrap (block = 1) ignores the
    autocorrelation: its standard error is sqrt(1 / 3) of the true one (long-run variance 3 times the marginal
    one at phi = 0.5), coverage about 74%: it must come out below 0.85, so the test can tell the two apart."""
    R, n, phi = 400, 500, 0.5
    assert default_block_length(n) == 8
    cover = {}
    for block in (None, 1):
        rng = np.random.default_rng(1)
        hits = 0
        for r in range(R):
            res = block_bootstrap(_ar1(rng, n, phi), block=block, n_resamples=1000, seed=r)
            hits += res["ci_low"] <= 0.0 <= res["ci_high"]
        cover[block] = hits / R
    assert 0.892 <= cover[None] <= 0.983, cover
    assert cover[1] < 0.85, cover


def test_block_bootstrap_closed_forms_and_p_inverts_the_interval():
    x = np.arange(10.0)
    assert [default_block_length(n) for n in (1, 8, 9, 100, 1000)] == [1, 2, 3, 5, 10]
    # one block as long as the series: every resample is a rotation, so every resampled mean is the mean
    res = block_bootstrap(x, block=10, n_resamples=200)
    assert res["ci_low"] == pytest.approx(4.5) and res["ci_high"] == pytest.approx(4.5) and res["p"] == 0.0
    rng = np.random.default_rng(3)
    d = rng.normal(0.3, 1.0, size=100)
    res = block_bootstrap(d, n_resamples=2000, seed=2)
    assert res["block"] == 5 and res["estimate"] == pytest.approx(d.mean())
    # p < 0.05 exactly when 0 lies outside the 95% percentile interval
    assert (res["p"] < 0.05) == (res["ci_low"] > 0 or res["ci_high"] < 0)
    # the i.i.d. case (block 1) agrees with scipy's percentile bootstrap to Monte-Carlo precision
    iid = block_bootstrap(d, block=1, n_resamples=10_000, seed=0)
    ref = stats.bootstrap(
        (d,), np.mean, method="percentile", n_resamples=10_000, rng=np.random.default_rng(0)
    )
    se = d.std() / 10
    assert iid["ci_low"] == pytest.approx(ref.confidence_interval.low, abs=0.1 * se)
    assert iid["ci_high"] == pytest.approx(ref.confidence_interval.high, abs=0.1 * se)
    with pytest.raises(ValueError, match="block: expected a block length of at most"):
        block_bootstrap(x, block=11)
    with pytest.raises(ValueError, match="block: expected an integer >= 1"):
        block_bootstrap(x, block=0)
    with pytest.raises(ValueError, match="x: expected finite"):
        block_bootstrap([1.0, float("nan"), 2.0])


def test_holm_on_the_textbook_example_and_against_statsmodels():
    # Wikipedia, "Holm-Bonferroni method", example: four hypotheses, p = 0.01, 0.04, 0.03, 0.005, alpha = 0.05:
    # sorted 0.005 < 0.05/4, 0.01 < 0.05/3, 0.03 > 0.05/2 -> reject H4 and H1 only
    p = [0.01, 0.04, 0.03, 0.005]
    adj = holm(p)
    assert adj == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert list(adj < 0.05) == [True, False, False, True]
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = rng.uniform(0, 0.2, size=int(rng.integers(1, 15)))
        assert holm(q) == pytest.approx(multitest.multipletests(q, method="holm")[1])
    with pytest.raises(ValueError, match="pvalues"):
        holm([0.1, 1.2])


def test_wilson_against_newcombe_1998():
    # Newcombe (1998), Stat. Med. 17:857, Table I, method 3 (Wilson score, no continuity correction)
    published = {(81, 263): (0.2553, 0.3662), (15, 148): (0.0624, 0.1605), (0, 20): (0.0, 0.1611),
                 (1, 29): (0.0061, 0.1718)}  # fmt: skip
    for (k, n), (lo, hi) in published.items():
        got = wilson_interval(k, n)
        assert got == pytest.approx((lo, hi), abs=5e-5)


def test_mcnemar_exact_against_the_binomial_sum_and_scipy():
    m = [1] * 6 + [0] * 1 + [1] * 10 + [0] * 3  # 6 method-only successes, 1 comparator-only
    c = [0] * 6 + [1] * 1 + [1] * 10 + [0] * 3
    res = mcnemar(m, c)
    assert (res["b"], res["c"], res["n"]) == (6, 1, 20)
    # two-sided exact: 2 * P(X <= 1), X ~ Bin(7, 1/2) = 2 * (1 + 7) / 128
    assert res["p"] == pytest.approx(2 * (math.comb(7, 0) + math.comb(7, 1)) / 2**7)
    assert res["p"] == pytest.approx(stats.binomtest(6, 7, 0.5).pvalue)
    contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
    table = [[10, 6], [1, 3]]
    assert res["p"] == pytest.approx(contingency.mcnemar(table, exact=True).pvalue)
    assert mcnemar([1, 0], [1, 0])["p"] == 1.0
    with pytest.raises(ValueError, match="comparator: expected 0/1"):
        mcnemar([1, 0], [2, 0])


def _series_records(rng, n=120):
    """Per-date records of a method and three baselines on a validation and a test split (AR(1) noise)."""
    recs = []
    for split in ("validation", "test"):
        common = _ar1(rng, n, 0.5)
        for arm, shift in (("method", -0.5), ("a", 0.0), ("b", 0.3), ("c", 0.6)):
            noise = 0.5 * _ar1(rng, n, 0.5)
            for t in range(n):
                recs.append({"item": f"{split}-{t:03d}", "split": split, "arm": arm,
                             "score": 10 + shift + common[t] + noise[t]})  # fmt: skip
    return recs


def test_paired_verdict_block_bootstrap_from_records():
    rng = np.random.default_rng(0)
    recs = _series_records(rng)
    ep = Endpoint(metric="score", method="method", comparator=("c", "b", "a"), test="block_bootstrap",
                  direction="lower", split="test", choose_on="validation")  # fmt: skip
    v = verdict(ep, recs)
    # the comparator rule: the lowest validation mean among the candidates
    val = {
        a: np.mean([r["score"] for r in recs if r["arm"] == a and r["split"] == "validation"]) for a in "abc"
    }
    assert v.comparator == min(val, key=val.get) == "a"
    m = np.array([r["score"] for r in recs if r["arm"] == "method" and r["split"] == "test"])
    c = np.array([r["score"] for r in recs if r["arm"] == "a" and r["split"] == "test"])
    direct = block_bootstrap(m - c, n_resamples=10_000, level=0.95, seed=0)
    assert v.estimate == pytest.approx((m - c).mean()) and v.block == direct["block"] == 5
    assert v.ci == pytest.approx((direct["ci_low"], direct["ci_high"])) and v.p == pytest.approx(direct["p"])
    assert v.word == "better" and v.n == 120
    assert "**Verdict: better**" in v.markdown() and "block 5" in v.markdown()
    # against an arm with the same level: inconclusive; higher-is-better flips the word
    worse = verdict(Endpoint("score", "c", "b", "block_bootstrap", "higher", split="test", block=10), recs)
    assert worse.word == "better" and worse.block == 10
    assert (
        verdict(Endpoint("score", "c", "b", "block_bootstrap", "lower", split="test"), recs).word == "worse"
    )
    # round trip through the stored form
    assert endpoint_from_dict(ep.to_dict()) == ep


def test_paired_verdict_wilcoxon_sign_and_mcnemar_match_scipy():
    base = [5250, 2150, 5300, 5200, 2850, 4600, 5200, 4200, 1350, 1350]
    reg = [4000, 2050, 2500, 3000, 2700, 3500, 4500, 3500, 1400, 1450]
    recs = [
        {"item": s, "arm": a, "steps": v}
        for a, vals in (("base", base), ("reg", reg))
        for s, v in enumerate(vals)
    ]
    w = verdict(Endpoint("steps", "reg", "base", "wilcoxon", "lower"), recs)
    ref = paired_comparison(base, reg)
    assert w.p == pytest.approx(stats.wilcoxon(reg, base).pvalue) == pytest.approx(0.01171875)
    assert w.estimate == pytest.approx(ref["median"]) and w.ci == pytest.approx(
        (ref["ci_low"], ref["ci_high"])
    )
    assert w.word == "better"
    s = verdict(Endpoint("steps", "reg", "base", "sign", "lower"), recs)
    assert s.p == pytest.approx(stats.binomtest(2, 10).pvalue) and s.word == "inconclusive"  # p = 0.109
    mc = [{"item": i, "arm": "m", "ok": int(i < 12)} for i in range(20)]
    mc += [{"item": i, "arm": "c", "ok": int(i < 4 or i == 19)} for i in range(20)]
    v = verdict(Endpoint("ok", "m", "c", "mcnemar", "higher"), mc)
    assert v.details["discordant"] == {"method_only": 8, "comparator_only": 1}
    assert v.p == pytest.approx(stats.binomtest(8, 9, 0.5).pvalue) and v.estimate == pytest.approx(
        12 / 20 - 5 / 20
    )
    assert v.word == "better" and v.details["method_rate"]["wilson"] == pytest.approx(
        list(wilson_interval(12, 20))
    )


def test_secondary_holm_corrects_the_family():
    rng = np.random.default_rng(5)
    fam = {}
    for j, shift in enumerate((0.0, 0.2, 1.5)):
        recs = []
        for i in range(12):
            b = rng.normal()
            recs += [
                {"item": i, "arm": "b", "x": b},
                {"item": i, "arm": "m", "x": b + shift + 0.3 * rng.normal()},
            ]
        fam[f"c{j}"] = (Endpoint("x", "m", "b", "wilcoxon", "higher"), recs)
    out = secondary(fam)
    raw = [verdict(*fam[k]).p for k in fam]
    assert [out[k].p for k in fam] == pytest.approx(raw)
    assert [out[k].p_adjusted for k in fam] == pytest.approx(list(holm(raw)))
    for k in fam:
        assert out[k].word == ("inconclusive" if out[k].p_adjusted >= 0.05 else "better")
    assert out["c2"].word == "better" and "Holm-adjusted" in out["c2"].markdown()


def _cells():
    # unit A: can x (learned), can y (not learned, exact construction), cannot z (not learned; control x learned),
    # cannot s (no control listed); unit B: cannot z (not learned, its control x not learned), no-claim y,
    # cannot w learned (contradiction), can x not learned
    return [
        {"unit": "A", "item": "x", "claim": True, "learned": True, "construction": True},
        {"unit": "A", "item": "y", "claim": True, "learned": False, "construction": True},
        {"unit": "A", "item": "z", "claim": False, "learned": False},
        {"unit": "A", "item": "s", "claim": False, "learned": False},
        {"unit": "B", "item": "z", "claim": False, "learned": False},
        {"unit": "B", "item": "y", "claim": None, "learned": True},
        {"unit": "B", "item": "w", "claim": False, "learned": True},
        {"unit": "B", "item": "x", "claim": True, "learned": False, "construction": None},
    ]


def test_agreement_can_fail_and_needs_the_units_own_control():
    ep = AgreementEndpoint(controls={"z": ("y", "x"), "w": ("x",)})
    status = {f"{c['unit']}/{c['item']}": c["status"] for c in cell_status(ep, _cells())}
    assert status["A/x"] == "agrees (learned)"
    assert (
        status["A/y"] == "does not agree (not learned; exact construction)"
    )  # a construction is not counted
    assert status["A/z"] == "agrees (not learned; own control x learned)"
    assert status["A/s"].startswith("not settled")  # no same-difficulty control declared
    assert status["B/z"].startswith("not settled")  # B's own control x was not learned; A's does not count
    assert status["B/y"] == "no claim" and status["B/w"].startswith("does not agree (learned")
    v = verdict(ep, _cells())
    # settled: A/x, A/y, A/z, B/w, B/x -> 2 agree of 5
    assert (v.n, v.details["agree"], v.word) == (5, 2, "does not agree")
    assert v.estimate == pytest.approx(0.4) and v.ci == pytest.approx(wilson_interval(2, 5))
    assert v.details["contradictions"] == ["B/w"] and v.details["not_settled_count"] == 2
    good = [c for c in _cells() if c["item"] in ("x", "z") and c["unit"] == "A"]
    assert verdict(ep, good).word == "agrees" and "**Verdict: agrees**" in verdict(ep, good).markdown()
    assert endpoint_from_dict(ep.to_dict()) == ep


def test_inputs_are_validated_with_the_argument_named():
    with pytest.raises(ValueError, match="test: expected one of"):
        Endpoint("x", "m", "c", "t-test", "lower")
    with pytest.raises(ValueError, match="direction"):
        Endpoint("x", "m", "c", "wilcoxon", "smaller")
    with pytest.raises(ValueError, match="comparator: expected an arm other than the method"):
        Endpoint("x", "m", "m", "wilcoxon", "lower")
    with pytest.raises(ValueError, match="choose_on"):
        Endpoint("x", "m", ("a", "b"), "wilcoxon", "lower", split="test")
    with pytest.raises(ValueError, match="choose_on: expected a split other than"):
        Endpoint("x", "m", ("a", "b"), "wilcoxon", "lower", split="test", choose_on="test")
    with pytest.raises(ValueError, match="block: only the block bootstrap"):
        Endpoint("x", "m", "c", "wilcoxon", "lower", block=5)
    with pytest.raises(ValueError, match="alpha"):
        Endpoint("x", "m", "c", "wilcoxon", "lower", alpha=0.7)
    ep = Endpoint("x", "m", "c", "wilcoxon", "lower")
    with pytest.raises(ValueError, match="records: record 0 has no field 'x'"):
        verdict(ep, [{"item": 0, "arm": "m", "y": 1.0}])
    with pytest.raises(ValueError, match="records: the method 'm' and the comparator 'c' must share"):
        verdict(
            ep, [{"item": i, "arm": "m", "x": 1.0} for i in range(3)] + [{"item": 9, "arm": "c", "x": 0.0}]
        )
    with pytest.raises(ValueError, match="appears twice"):
        verdict(ep, [{"item": 0, "arm": "m", "x": 1.0}] * 2)
    with pytest.raises(TypeError, match="records"):
        verdict(ep, {"item": 0})
    with pytest.raises(ValueError, match="records: expected per-item records, received none"):
        verdict(ep, [])
    with pytest.raises(ValueError, match="records: claim of cell A/x"):
        verdict(AgreementEndpoint(controls={}), [{"unit": "A", "item": "x", "claim": "can", "learned": True}])
    with pytest.raises(ValueError, match="controls: item 'z' cannot be its own"):
        AgreementEndpoint(controls={"z": ("z",)})


def test_time_to_event_endpoint_is_the_paired_or_censored_headline():
    from jaxkit.evaluation import time_to_event

    base = [5250, 2150, 5300, 5200, 2850, 4600, 5200, 4200, 1350, 1350]
    reg = [4000, 2050, 2500, 3000, 2700, 3500, 4500, 3500, 1400, 1450]
    gf = [6600, 7500, 2500, 3350, None, 6050, None, 3050, 5800, 4400]
    recs = [
        {"item": s, "arm": a, "steps": v}
        for a, vals in (("baseline", base), ("regularizer", reg), ("grokfast", gf))
        for s, v in enumerate(vals)
    ]
    ep = Endpoint("steps", "regularizer", "baseline", "time_to_event", "lower", horizon=10_000)
    v = verdict(ep, recs)
    ref = paired_comparison(base, reg, effect="speedup")
    assert v.details["headline"] == "paired" and v.estimate == pytest.approx(ref["median"])  # +15.06%
    assert v.p == pytest.approx(stats.wilcoxon(reg, base).pvalue) and v.word == "better"
    assert v.ci == pytest.approx((ref["ci_low"], ref["ci_high"]))
    g = verdict(Endpoint("steps", "grokfast", "baseline", "time_to_event", "lower", horizon=10_000), recs)
    tte = time_to_event(base, gf, 10_000)
    assert g.details["headline"] == "censored" and g.estimate == pytest.approx(tte["rmst_speedup"]["value"])
    x = stats.CensoredData(uncensored=[t for t in gf if t is not None], right=[10_000, 10_000])
    assert g.p == pytest.approx(stats.logrank(x, stats.CensoredData(uncensored=base)).pvalue)
    assert g.word == "worse" and "log-rank" in g.markdown()
    fam = secondary(
        {"g": (Endpoint("steps", "grokfast", "baseline", "time_to_event", "lower", horizon=10_000), recs)}
    )
    assert fam["g"].word == "worse" and fam["g"].p_adjusted == pytest.approx(g.p)
    with pytest.raises(ValueError, match="horizon"):
        Endpoint("steps", "regularizer", "baseline", "time_to_event", "lower")
    with pytest.raises(TypeError, match="records: steps of record"):
        verdict(Endpoint("steps", "grokfast", "baseline", "wilcoxon", "lower"), recs)


def _wilson_closed_form(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson (1927) score interval: (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    p = k / n
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return center - half, center + half


def _predictions():
    # hand-checked: a/t0 |1.005 - 1| = 0.005 <= 0.01 * 1 agrees; a/t1 |2.03 - 2| / 2 = 0.015 > 0.01 outside;
    # b/L0 |0.95 - 1| = 0.05 <= 0.1 agrees; b/L1 undetected (None); b/L2 predicted 0: absolute |0.08| <= 0.1
    # agrees; c/order exact (tol 0): 3 == 3 agrees
    return [
        {"unit": "a", "item": "t0", "quantity": "time", "predicted": 1.0, "measured": 1.005},
        {"unit": "a", "item": "t1", "quantity": "time", "predicted": 2.0, "measured": 2.03},
        {"unit": "b", "item": "L0", "quantity": "level", "predicted": 1.0, "measured": 0.95},
        {"unit": "b", "item": "L1", "quantity": "level", "predicted": 0.5, "measured": None},
        {"unit": "b", "item": "L2", "quantity": "level", "predicted": 0.0, "measured": 0.08},
        {"unit": "c", "item": "order", "quantity": "order", "predicted": 3, "measured": 3},
    ]


def test_tolerance_endpoint_rule_by_hand():
    ep = ToleranceEndpoint({"time": 0.01, "level": 0.1, "order": 0.0})
    st = {f"{c['unit']}/{c['item']}": c for c in tolerance_status(ep, _predictions())}
    assert [c["status"] for c in st.values()] == [
        "agrees", "outside tolerance", "agrees", "undetected", "agrees", "agrees"
    ]  # fmt: skip
    assert st["a/t1"]["error"] == pytest.approx(0.015) and st["b/L2"]["error"] == pytest.approx(0.08)
    assert st["b/L1"]["error"] is None
    v = verdict(ep, _predictions())
    assert (v.word, v.n, v.details["agree"], v.p) == ("does not agree", 6, 4, None)
    assert v.estimate == pytest.approx(4 / 6)
    z = stats.norm.ppf(0.975)
    assert v.ci == pytest.approx(_wilson_closed_form(4, 6, z), abs=1e-12)
    assert v.details["disagree"] == ["a/t1"] and v.details["undetected"] == ["b/L1"]
    assert v.details["per_quantity"] == {"time": {"n": 2, "agree": 1}, "level": {"n": 3, "agree": 2},
                                         "order": {"n": 1, "agree": 1}}  # fmt: skip
    md = v.markdown()
    assert "**Verdict: does not agree**: 4 of 6 predictions agree" in md
    assert "outside tolerance: a/t1; undetected: b/L1." in md and "time 0.01" in md
    # the 90% interval at alpha = 0.1
    v90 = verdict(ToleranceEndpoint(ep.tolerances, alpha=0.1), _predictions())
    assert v90.ci == pytest.approx(_wilson_closed_form(4, 6, stats.norm.ppf(0.95)), abs=1e-12)


def test_tolerance_endpoint_all_agree_one_outside_one_undetected():
    ep = ToleranceEndpoint({"time": 0.01, "level": 0.1, "order": 0.0})
    good = [r for r in _predictions() if r["item"] not in ("t1", "L1")]
    v = verdict(ep, good)
    assert (v.word, v.details["agree"], v.n, v.estimate) == ("agrees", 4, 4, 1.0)
    assert v.ci == pytest.approx(_wilson_closed_form(4, 4, stats.norm.ppf(0.975)), abs=1e-12)
    assert v.details["disagree"] == [] and "**Verdict: agrees**" in v.markdown()
    # one prediction just outside its tolerance: the rule fails
    outside = good + [{"unit": "a", "item": "t1", "quantity": "time", "predicted": 2.0, "measured": 2.0201}]
    assert verdict(ep, outside).word == "does not agree"
    assert verdict(ep, outside).details["disagree"] == ["a/t1"]
    # exactly on the tolerance agrees (<=)
    quarter = ToleranceEndpoint({"x": 0.25})  # binary-exact: |5 - 4| = 1 = 0.25 * 4

    def one(ep, p, m, q="x"):
        return verdict(ep, [{"unit": "u", "item": "i", "quantity": q, "predicted": p, "measured": m}]).word

    assert one(quarter, 4.0, 5.0) == "agrees" and one(quarter, 4.0, 5.001) == "does not agree"
    # one undetected prediction (None or NaN) does not agree: not confirmed by a feature that never showed
    for missing in (None, float("nan")):
        und = good + [{"unit": "b", "item": "L1", "quantity": "level", "predicted": 0.5, "measured": missing}]
        v = verdict(ep, und)
        assert (
            v.word == "does not agree" and v.details["undetected"] == ["b/L1"] and v.details["disagree"] == []
        )
    # an infinite measurement is outside any tolerance
    inf = good + [
        {"unit": "b", "item": "L1", "quantity": "level", "predicted": 0.5, "measured": float("inf")}
    ]
    assert verdict(ep, inf).details["disagree"] == ["b/L1"]
    # exact quantities (tol 0): an order off by one does not agree; predicted 0 uses the absolute tolerance
    assert one(ep, 0, 1, "order") == "does not agree" and one(ep, 0, 0, "order") == "agrees"
    assert one(ep, 0.0, 0.08, "level") == "agrees" and one(ep, 0.0, -0.11, "level") == "does not agree"


def test_tolerance_endpoint_round_trip_and_validation():
    ep = ToleranceEndpoint({"time": 1e-3, "level": 0.05}, alpha=0.1)
    d = ep.to_dict()
    assert d == {"kind": "tolerance", "tolerances": {"time": 1e-3, "level": 0.05}, "alpha": 0.1}
    assert endpoint_from_dict(d) == ep and isinstance(endpoint_from_dict(d), ToleranceEndpoint)
    assert verdict(ep, _predictions()[:2]).endpoint == d
    with pytest.raises(TypeError, match="tolerances: expected a non-empty mapping"):
        ToleranceEndpoint({})
    with pytest.raises(TypeError, match="tolerances"):
        ToleranceEndpoint([0.1])
    with pytest.raises(ValueError, match="tolerances: the tolerance of 'x' must be finite and >= 0"):
        ToleranceEndpoint({"x": -0.1})
    with pytest.raises(ValueError, match="tolerances: the tolerance of 'x' must be finite"):
        ToleranceEndpoint({"x": float("nan")})
    with pytest.raises(TypeError, match="tolerances"):
        ToleranceEndpoint({"x": "0.1"})
    with pytest.raises(TypeError, match="tolerances"):
        ToleranceEndpoint({1: 0.1})
    with pytest.raises(ValueError, match="alpha"):
        ToleranceEndpoint({"x": 0.1}, alpha=0.5)
    with pytest.raises(ValueError, match="kind: expected one of"):
        endpoint_from_dict({"kind": "tolerances", "tolerances": {"x": 0.1}})
    rec = {"unit": "a", "item": "t", "quantity": "time", "predicted": 1.0, "measured": 1.0}
    with pytest.raises(ValueError, match="records: quantity 'speed' of a/t has no declared tolerance"):
        verdict(ep, [dict(rec, quantity="speed")])
    with pytest.raises(ValueError, match="records: prediction a/t appears twice"):
        verdict(ep, [rec, rec])
    with pytest.raises(ValueError, match="records: predicted of a/t is nan"):
        verdict(ep, [dict(rec, predicted=float("nan"))])
    with pytest.raises(TypeError, match="records: measured of a/t is 'x', expected a number"):
        verdict(ep, [dict(rec, measured="x")])
    with pytest.raises(ValueError, match="records: record 0 has no field 'measured'"):
        verdict(ep, [{k: v for k, v in rec.items() if k != "measured"}])
    with pytest.raises(TypeError, match="endpoint"):
        tolerance_status(Endpoint("x", "m", "c", "wilcoxon", "lower"), [rec])
