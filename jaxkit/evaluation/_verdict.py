"""Verdicts by construction: a declared primary endpoint, per-item records, one function that computes the headline.

An experiment declares its **primary endpoint** in its preset before it runs (:class:`Endpoint` for a paired
comparison of two arms, :class:`AgreementEndpoint` for cells checked against a theory), stores **per-item records**
with the run (one mapping per item and arm: a date, a complex, a seed, a cell) and states as its headline what
:func:`verdict` computes from the two; every other comparison of the page goes through :func:`secondary`, which
Holm-corrects them as one family.

Statistics (thin over :mod:`scipy.stats` where it has them):

* paired differences $d_i = m_i - c_i$ of the method $m$ and the comparator $c$ on the same items;
* time series: the **circular block bootstrap** (Politis & Romano 1992) of the mean $\\bar d$, blocks of
  ``block`` consecutive items wrapping around the end, $\\lceil n / b\\rceil$ uniform block starts per resample
  truncated to $n$ items; default block length $b = \\lceil n^{1/3} \\rceil$ (the rate of the MSE-optimal block
  length for variance and bias estimation, Hall, Horowitz & Jing 1995), always reported; percentile interval; the
  two-sided p-value is the inversion of that interval, $p = \\min(1, 2\\min(P^*(\\bar d^* \\le 0),
  P^*(\\bar d^* \\ge 0)))$, so $p < \\alpha$ when 0 lies outside the $1 - \\alpha$ percentile interval (up to
  the resampling's discreteness);
* independent items (seeds): the median of $d_i$ with a percentile-bootstrap CI (``scipy.stats.bootstrap``) and
  the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, exact for small samples without ties) or the exact sign test
  (``scipy.stats.binomtest`` on the non-zero signs);
* paired successes (0/1): the difference of the success rates with a paired percentile-bootstrap CI and the exact
  McNemar test (``scipy.stats.binomtest`` on the discordant pairs $b$, $c$ with $p = 1/2$);
* times to a target, runs that never reach it censored at the declared horizon: :func:`jaxkit.evaluation.time_to_event`'s
  headline (median paired speedup and Wilcoxon without censoring, else restricted-mean speedup and log-rank);
* every rate with its Wilson interval (:func:`jaxkit.evaluation.wilson_interval`);
* Holm's step-down correction (Holm 1979): with the $m$ p-values sorted $p_{(1)} \\le \\dots \\le p_{(m)}$, the
  adjusted $\\tilde p_{(i)} = \\max_{j \\le i} \\min(1, (m - j + 1) p_{(j)})$; reject where $\\tilde p < \\alpha$.

The verdict word of a paired endpoint is ``"better"`` / ``"worse"`` (the method against the comparator in the
declared direction, $p < \\alpha$) or ``"inconclusive"``; of an agreement endpoint ``"agrees"`` (every settled
cell agrees), ``"does not agree"`` or ``"not settled"`` (no settled cell); of a tolerance endpoint
(:class:`ToleranceEndpoint`, predicted quantities of a theory against a simulation) ``"agrees"`` (every prediction
within its declared tolerance, none undetected) or ``"does not agree"``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from .._validate import check_choice, check_int, check_range, check_size, check_time_order
from ._paired import align_pairs, time_to_event, wilson_interval

Test = Literal["block_bootstrap", "wilcoxon", "sign", "mcnemar", "time_to_event"]
Direction = Literal["lower", "higher"]
TESTS: tuple[str, ...] = ("block_bootstrap", "wilcoxon", "sign", "mcnemar", "time_to_event")
DIRECTIONS: tuple[str, ...] = ("lower", "higher")
Records = Sequence[Mapping[str, Any]]


# ----------------------------------------------------------------------------------------------- building blocks
def default_block_length(n: int) -> int:
    """The default block length $\\lceil n^{1/3} \\rceil$ of :func:`block_bootstrap` for a series of ``n`` items."""
    check_int("n", n, minimum=1)
    b = math.ceil(n ** (1.0 / 3.0) - 1e-12)
    return int(max(1, min(b, n)))


def _series(name: str, x: Any) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a sequence of numbers, received {type(x).__name__}") from None
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"{name}: expected a 1-D series of at least 2 values, received shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(
            f"{name}: expected finite values, received {int((~np.isfinite(arr)).sum())} non-finite"
        )
    return arr


def block_bootstrap(
    x: Sequence[float] | np.ndarray | pd.Series,
    statistic: Callable[..., float | np.ndarray] = np.mean,
    *,
    block: int | None = None,
    n_resamples: int = 10_000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, object]:
    """Circular block bootstrap (Politis & Romano 1992) of ``statistic`` over a time series ``x`` (time order).

    Each resample joins $\\lceil n / b \\rceil$ blocks of ``block`` = $b$ consecutive values with uniform starts
    (wrapping around the end) and keeps the first $n$. ``statistic(resamples, axis=-1)`` must reduce the last
    axis (``np.mean``, ``np.median``).

    Args:
        x: the series, at least 2 finite values, in time order.
        block: block length $1 \\le b \\le n$; ``None`` uses :func:`default_block_length` ($\\lceil n^{1/3}\\rceil$).
            ``block=1`` is the i.i.d. bootstrap.
        n_resamples: number of resamples (>= 100).
        level: confidence level of the percentile interval.
        seed: seed of the NumPy generator.

    Returns:
        ``{"estimate", "ci_low", "ci_high", "p", "block", "n", "n_resamples", "level"}``: the statistic of ``x``,
        the percentile interval, the two-sided p-value of "the statistic is 0" by inverting that interval
        ($\\min(1, 2\\min(P^*(s^* \\le 0), P^*(s^* \\ge 0)))$), and the block length used.
    """
    check_time_order("x", x, "values", "blocks of consecutive values keep the serial dependence")
    arr = _series("x", x)
    n = arr.size
    if block is None:
        block = default_block_length(n)
    check_int("block", block, minimum=1)
    if block > n:
        raise ValueError(f"block: expected a block length of at most the series length {n}, received {block}")
    check_int("n_resamples", n_resamples, minimum=100)
    check_range("level", level, 0.0, 1.0, closed=False)
    check_int("seed", seed, minimum=0)
    if not callable(statistic):
        raise TypeError(f"statistic: expected a callable statistic(x, axis=-1), received {statistic!r}")
    k = -(-n // block)
    check_size(
        "n_resamples", 16 * n_resamples * k * block, hint=f"lower n_resamples ({n_resamples} of {n} items)"
    )
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, n, size=(n_resamples, k))
    idx = (starts[:, :, None] + np.arange(block)[None, None, :]).reshape(n_resamples, k * block)[:, :n] % n
    try:
        boot = np.asarray(statistic(arr[idx], axis=-1), dtype=float)
        est_arr = np.asarray(statistic(arr, axis=-1), dtype=float)
    except TypeError as e:
        raise TypeError(
            f"statistic: expected a callable statistic(x, axis=-1) that reduces the last axis (e.g. np.mean), "
            f"calling it raised TypeError: {e}"
        ) from e
    if boot.shape != (n_resamples,) or est_arr.shape != ():
        raise ValueError(
            f"statistic: expected a callable that reduces the last axis (a ({n_resamples}, {n}) array of "
            f"resamples -> shape ({n_resamples},); the series -> a scalar), received output shapes "
            f"{boot.shape} and {est_arr.shape}"
        )
    est = float(est_arr)
    if not (np.isfinite(est) and np.isfinite(boot).all()):
        raise ValueError("statistic: returned NaN/inf on the series or on a resample; expected finite values")
    alpha = 1.0 - level
    lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    p = min(1.0, 2.0 * min(float(np.mean(boot <= 0)), float(np.mean(boot >= 0))))
    return {
        "estimate": est,
        "ci_low": float(lo),
        "ci_high": float(hi),
        "p": p,
        "block": int(block),
        "n": int(n),
        "n_resamples": int(n_resamples),
        "level": float(level),
    }


def holm(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979), in the order given.

    $\\tilde p_{(i)} = \\max_{j \\le i} \\min(1, (m - j + 1)\\,p_{(j)})$ over the ascending p-values; rejecting
    where $\\tilde p < \\alpha$ controls the family-wise error rate at $\\alpha$."""
    try:
        p = np.asarray(pvalues, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(
            f"pvalues: expected a sequence of numbers, received {type(pvalues).__name__}"
        ) from None
    if p.ndim != 1 or p.size < 1:
        raise ValueError(f"pvalues: expected a non-empty 1-D sequence, received shape {p.shape}")
    if not (np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()):
        raise ValueError(f"pvalues: expected values in [0, 1], received {p.tolist()}")
    m = p.size
    order = np.argsort(p, kind="stable")
    adj_sorted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj_sorted
    return out


def mcnemar(
    method: Sequence[int | bool] | np.ndarray | pd.Series,
    comparator: Sequence[int | bool] | np.ndarray | pd.Series,
) -> dict[str, object]:
    """Exact McNemar test of paired successes (item $i$ of both arms belongs together).

    Discordant pairs $b$ (method succeeds, comparator fails) and $c$ (the reverse); under $H_0$, $b \\sim
    \\mathrm{Bin}(b + c, 1/2)$: ``scipy.stats.binomtest(b, b + c)``, two-sided. Returns ``{"b", "c", "n", "p"}``
    (``p = 1`` when there is no discordant pair). Two ``pandas.Series`` are paired by label, anything else by
    position."""
    method, comparator = align_pairs("method", method, "comparator", comparator)
    m, c = _binary("method", method), _binary("comparator", comparator)
    if m.shape != c.shape:
        raise ValueError(f"comparator: expected one outcome per method item, received {c.size} and {m.size}")
    b_, c_ = int((m & ~c).sum()), int((~m & c).sum())
    p = 1.0 if b_ + c_ == 0 else float(stats.binomtest(b_, b_ + c_, 0.5).pvalue)
    return {"b": b_, "c": c_, "n": int(m.size), "p": p}


def _binary(name: str, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(
            f"{name}: expected a non-empty 1-D sequence of 0/1 outcomes, received shape {arr.shape}"
        )
    vals = np.asarray(arr, dtype=float)
    if not np.isin(vals, (0.0, 1.0)).all():
        raise ValueError(
            f"{name}: expected 0/1 (or bool) outcomes, received values {sorted(set(vals.tolist()))[:6]}"
        )
    return vals.astype(bool)


# ----------------------------------------------------------------------------------------------- endpoints
def _check_name(name: str, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name}: expected a non-empty string, received {value!r}")


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """A declared primary endpoint: a paired comparison of ``method`` against a comparator on ``metric``.

    Declared in an experiment's preset before the run; :func:`verdict` computes the headline from it and the run's
    per-item records, nothing else.

    Attributes:
        metric: the record field compared (``"energy"``, ``"success"``, ``"steps"``).
        method: the arm of the method (``records``' ``"arm"``).
        comparator: the comparator arm, or a tuple of candidate arms: the comparator is then the best of them
            (lowest or highest mean ``metric`` in ``direction``) on the split ``choose_on`` — the rule, declared
            before the run, not a choice made after it.
        test: ``"block_bootstrap"`` (time series: mean difference, circular block bootstrap), ``"wilcoxon"`` or
            ``"sign"`` (independent items: median difference), ``"mcnemar"`` (0/1 outcomes: difference of the
            rates, exact McNemar), ``"time_to_event"`` (times to a target, ``None`` = not reached within
            ``horizon``: :func:`jaxkit.evaluation.time_to_event`'s headline, the median paired speedup
            $100(1 - m_i/c_i)$ with the Wilcoxon test when no run is censored, else the restricted-mean speedup
            with the log-rank test; positive = the method reaches the target sooner).
        direction: ``"lower"`` or ``"higher"``: which values of ``metric`` are better.
        alpha: the test's level; intervals are at $1 - \\alpha$.
        split: the records' ``"split"`` that is reported (``None``: records carry no split).
        choose_on: the split the comparator rule reads (needed when ``comparator`` is a tuple).
        block: block length of the block bootstrap (``None``: :func:`default_block_length` of the series,
            reported in the verdict); only with ``test="block_bootstrap"``.
        n_resamples, seed: the bootstrap's resamples and seed.
        horizon: the run length at which runs that never reached the target are censored (``time_to_event``
            only).
    """

    metric: str
    method: str
    comparator: str | tuple[str, ...]
    test: str
    direction: str
    alpha: float = 0.05
    split: str | None = None
    choose_on: str | None = None
    block: int | None = None
    n_resamples: int = 10_000
    seed: int = 0
    horizon: float | int | None = None

    def __post_init__(self):
        _check_name("metric", self.metric)
        _check_name("method", self.method)
        comp = self.comparator
        if isinstance(comp, list):
            object.__setattr__(self, "comparator", comp := tuple(comp))
        if isinstance(comp, tuple):
            if not comp or not all(isinstance(c, str) and c for c in comp):
                raise TypeError(
                    f"comparator: expected an arm name or a tuple of arm names, received {comp!r}"
                )
            if self.method in comp:
                raise ValueError(
                    f"comparator: the candidates {list(comp)} include the method {self.method!r}"
                )
            if self.choose_on is None:
                raise ValueError(
                    "choose_on: a comparator rule (a tuple of candidate arms) needs the split it is chosen on, "
                    "received None"
                )
            if self.choose_on == self.split:
                raise ValueError(
                    f"choose_on: expected a split other than the reported split {self.split!r} (the comparator "
                    "is chosen on data the verdict does not score), received the same"
                )
        else:
            _check_name("comparator", comp)
            if comp == self.method:
                raise ValueError(f"comparator: expected an arm other than the method, received {comp!r}")
        check_choice("test", self.test, TESTS)
        check_choice("direction", self.direction, DIRECTIONS)
        check_range("alpha", self.alpha, 0.0, 0.5, closed=False)
        if self.block is not None:
            if self.test != "block_bootstrap":
                raise ValueError(
                    f"block: only the block bootstrap takes a block length, received test={self.test!r}"
                )
            check_int("block", self.block, minimum=1)
        check_int("n_resamples", self.n_resamples, minimum=100)
        check_int("seed", self.seed, minimum=0)
        if (self.test == "time_to_event") != (self.horizon is not None):
            raise ValueError(
                f"horizon: expected a run length exactly when test='time_to_event', received horizon="
                f"{self.horizon!r} with test={self.test!r}"
            )
        if self.horizon is not None:
            check_range("horizon", self.horizon, 0.0, np.inf, closed=False)
            if self.direction != "lower":
                raise ValueError(
                    f"direction: a time to a target is better lower, received {self.direction!r}"
                )
        for name in ("split", "choose_on"):
            v = getattr(self, name)
            if v is not None:
                _check_name(name, v)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        if isinstance(self.comparator, tuple):
            d["comparator"] = list(self.comparator)
        return {"kind": "paired", **d}

    @property
    def rule(self) -> str:
        """The comparator, as words."""
        if isinstance(self.comparator, tuple):
            best = "lowest" if self.direction == "lower" else "highest"
            return f"the {best} mean {self.metric} on {self.choose_on} among {', '.join(self.comparator)}"
        return self.comparator


@dataclasses.dataclass(frozen=True)
class AgreementEndpoint:
    """A declared endpoint for cells (a class $\\times$ an item, e.g. a gate class $\\times$ a language) checked
    against a theory's "can" / "cannot" claims.

    The rule (each record is one cell: ``unit``, ``item``, ``claim`` ``True``/``False``/``None``, ``learned``, and
    optionally ``construction``):

    * a "can" cell **agrees only when learned**; a construction alone is reported beside it and not counted: the
      cell then does *not* agree;
    * a "cannot" cell that is learned contradicts the claim; one that is not learned is **settled only when the same
      unit learned one of ``controls[item]``** — tasks the theory puts at the same difficulty, that the unit is
      claimed to do, at the same budget — its own positive control; otherwise it reads "not settled";
    * cells without a claim are not counted.

    The estimate is the agreeing fraction of the settled cells with its Wilson interval at $1 - \\alpha$.
    """

    controls: Mapping[str, Sequence[str]]
    alpha: float = 0.05
    metric: str = "learned"

    def __post_init__(self):
        if not isinstance(self.controls, Mapping):
            raise TypeError(
                f"controls: expected a mapping item -> tuple of items, received {self.controls!r}"
            )
        fixed = {}
        for k, v in self.controls.items():
            if not isinstance(k, str) or isinstance(v, str) or not all(isinstance(t, str) for t in v):
                raise TypeError(f"controls: expected item -> sequence of item names, received {k!r}: {v!r}")
            if k in v:
                raise ValueError(f"controls: item {k!r} cannot be its own positive control")
            fixed[k] = tuple(v)
        object.__setattr__(self, "controls", fixed)
        check_range("alpha", self.alpha, 0.0, 0.5, closed=False)
        _check_name("metric", self.metric)

    def to_dict(self) -> dict:
        return {
            "kind": "agreement",
            "controls": {k: list(v) for k, v in self.controls.items()},
            "alpha": self.alpha,
            "metric": self.metric,
        }


@dataclasses.dataclass(frozen=True)
class ToleranceEndpoint:
    """A declared endpoint for a theory's predicted quantities held against a simulation, each within a tolerance
    declared per kind of quantity.

    Each record is one prediction: ``unit`` (the network or section), ``item`` (which prediction: a mode, a
    plateau), ``quantity`` (a key of ``tolerances``), ``predicted`` (finite) and ``measured`` (a number, or
    ``None`` when the simulation did not show the predicted feature, e.g. an undetected plateau). The rule:

    * an item **agrees** iff ``measured`` is finite and $|m - p| \\le \\mathrm{tol}_q \\, |p|$ (a *relative*
      tolerance); where the prediction is exactly $p = 0$ the tolerance is *absolute*, $|m| \\le \\mathrm{tol}_q$
      (so ``tol = 0`` asks for an exact match either way: learning orders, counts);
    * ``measured`` ``None`` (or NaN) is an **undetected** prediction: it does *not* agree (a theory is not confirmed
      by features the simulation never showed); an infinite measurement does not agree either.

    The word is ``"agrees"`` iff every item agrees, else ``"does not agree"``; the estimate is the agreeing fraction
    of all items with its Wilson interval at $1 - \\alpha$ (:func:`jaxkit.evaluation.wilson_interval`).

    Attributes:
        tolerances: ``{quantity: tol}``, each ``tol`` a finite number >= 0 (relative; absolute where the prediction
            is 0), chosen from the theory's own precision before the run.
        alpha: the level of the interval, in (0, 0.5).
    """

    tolerances: Mapping[str, float]
    alpha: float = 0.05

    def __post_init__(self):
        if not isinstance(self.tolerances, Mapping) or not self.tolerances:
            raise TypeError(
                f"tolerances: expected a non-empty mapping quantity -> relative tolerance, received "
                f"{self.tolerances!r:.80}"
            )
        fixed = {}
        for k, v in self.tolerances.items():
            if not isinstance(k, str) or not k:
                raise TypeError(f"tolerances: expected quantity names (non-empty strings), received {k!r}")
            if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
                raise TypeError(f"tolerances: the tolerance of {k!r} must be a number, received {v!r}")
            if not (math.isfinite(float(v)) and float(v) >= 0):
                raise ValueError(
                    f"tolerances: the tolerance of {k!r} must be finite and >= 0, received {v!r}"
                )
            fixed[k] = float(v)
        object.__setattr__(self, "tolerances", fixed)
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, int | float | np.integer | np.floating):
            raise TypeError(f"alpha: expected a number in (0, 0.5), received {self.alpha!r}")
        check_range("alpha", self.alpha, 0.0, 0.5, closed=False)

    def to_dict(self) -> dict:
        return {"kind": "tolerance", "tolerances": dict(self.tolerances), "alpha": self.alpha}


def endpoint_from_dict(d: Mapping[str, object]) -> Endpoint | AgreementEndpoint | ToleranceEndpoint:
    """The endpoint a ``to_dict()`` (as stored in a run's config or metrics) describes. Missing required keys and
    unknown keys raise ``ValueError`` naming them."""
    if not isinstance(d, Mapping):
        raise TypeError(f"d: expected a mapping from Endpoint.to_dict(), received {type(d).__name__}")
    d = dict(d)
    kind = d.pop("kind", "paired")
    check_choice("kind", kind, ("paired", "agreement", "tolerance"))
    cls = {"paired": Endpoint, "agreement": AgreementEndpoint, "tolerance": ToleranceEndpoint}[kind]
    fields = [f for f in dataclasses.fields(cls) if f.init]
    required = [
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [k for k in required if k not in d]
    unknown = [k for k in d if k not in {f.name for f in fields}]
    if missing or unknown:
        problems = ([f"missing keys {missing}"] if missing else []) + (
            [f"unknown keys {unknown}"] if unknown else []
        )
        raise ValueError(
            f"d: expected the keys of {cls.__name__}.to_dict() (kind {kind!r}: required {required}, optional "
            f"{[f.name for f in fields if f.name not in required]}), received {' and '.join(problems)}"
        )
    if kind == "agreement":
        return AgreementEndpoint(**d)
    if kind == "tolerance":
        return ToleranceEndpoint(**d)
    if isinstance(d.get("comparator"), list):
        d["comparator"] = tuple(d["comparator"])
    return Endpoint(**d)


# ----------------------------------------------------------------------------------------------- verdicts
_VERDICT_WORDS = ("better", "worse", "inconclusive", "agrees", "does not agree", "not settled")


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The headline an endpoint computes: ``word`` (``"better"``/``"worse"``/``"inconclusive"``, or
    ``"agrees"``/``"does not agree"``/``"not settled"``), ``estimate`` with its interval ``ci`` at
    $1 - \\alpha$, the test's two-sided ``p`` (``None`` for agreement and tolerance endpoints), ``p_adjusted`` (Holm, secondary
    comparisons only), ``n`` items, the resolved ``comparator``, the ``block`` length used (block bootstrap) and
    ``details`` (counts, per-cell statuses, the statistic's name). ``estimate`` is NaN only when no item was
    counted (``n = 0``, an agreement endpoint with no settled cell); every other field is checked at construction."""

    word: str
    estimate: float
    ci: tuple[float, float]
    p: float | None
    n: int
    alpha: float
    endpoint: dict
    comparator: str | None = None
    block: int | None = None
    p_adjusted: float | None = None
    details: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        if self.word not in _VERDICT_WORDS:
            raise ValueError(f"word: expected one of {list(_VERDICT_WORDS)}, received {self.word!r}")
        if isinstance(self.n, bool) or not isinstance(self.n, int | np.integer) or self.n < 0:
            raise ValueError(f"n: expected a count of items (an integer >= 0), received {self.n!r}")
        if not (isinstance(self.alpha, int | float | np.floating) and 0.0 < float(self.alpha) < 1.0):
            raise ValueError(f"alpha: expected a level in (0, 1), received {self.alpha!r}")
        est = float(self.estimate)
        if not (math.isfinite(est) or (math.isnan(est) and self.n == 0)):
            raise ValueError(
                f"estimate: expected a finite number (NaN only when no item was counted, n = 0), received "
                f"{self.estimate!r} with n = {self.n}"
            )
        if len(self.ci) != 2 or not all(math.isfinite(float(c)) for c in self.ci) or self.ci[0] > self.ci[1]:
            raise ValueError(f"ci: expected (low, high), finite, low <= high, received {self.ci!r}")
        for name in ("p", "p_adjusted"):
            v = getattr(self, name)
            if v is not None and not (0.0 <= float(v) <= 1.0):
                raise ValueError(f"{name}: expected a p-value in [0, 1] (or None), received {v!r}")
        if self.block is not None and (
            isinstance(self.block, bool) or int(self.block) != self.block or self.block < 1
        ):
            raise ValueError(f"block: expected a block length >= 1 (or None), received {self.block!r}")

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["ci"] = list(self.ci)
        return d

    def markdown(self) -> str:
        """One line for a summary: the declared endpoint and **Verdict: word**, with the estimate, interval and p
        (tests parse ``**Verdict: ...**`` and compare it with :func:`verdict` of the stored records)."""
        e = self.endpoint
        lo, hi = self.ci
        level = f"{100 * (1 - self.alpha):.0f}%"
        if e.get("kind") == "agreement":
            d = self.details
            return (
                f"**Primary endpoint** (declared): agreement of each settled cell with the theory ('can' agrees only "
                f"when learned; 'cannot' settled only beside the same class's own positive control). **Verdict: "
                f"{self.word}**: {d['agree']} of {self.n} settled cells agree ({self.estimate:.0%}, Wilson {level} "
                f"[{lo:.0%}, {hi:.0%}]); {d['not_settled_count']} not settled."
            )
        if e.get("kind") == "tolerance":
            d = self.details
            tols = ", ".join(f"{q} {t:g}" for q, t in e["tolerances"].items())
            outside = ", ".join(d["disagree"]) or "none"
            undetected = ", ".join(d["undetected"]) or "none"
            return (
                f"**Primary endpoint** (declared): every predicted quantity within its tolerance of the simulation "
                f"(|measured − predicted| ≤ tol·|predicted|, absolute where predicted = 0; an undetected "
                f"prediction does not agree); tolerances: {tols}. **Verdict: {self.word}**: {d['agree']} of "
                f"{self.n} predictions agree ({self.estimate:.0%}, Wilson {level} [{lo:.0%}, {hi:.0%}]); outside "
                f"tolerance: {outside}; undetected: {undetected}."
            )
        stat = self.details.get("statistic", "estimate")
        test = {
            "block_bootstrap": f"circular block bootstrap, block {self.block}, {e['n_resamples']:,} resamples",
            "wilcoxon": "Wilcoxon signed-rank test",
            "sign": "exact sign test",
            "mcnemar": "exact McNemar test",
            "time_to_event": (
                "paired per item, Wilcoxon signed-rank test"
                if self.details.get("headline") == "paired"
                else f"runs not reaching the target censored at {e.get('horizon')}, log-rank test"
            ),
        }[e["test"]]
        p = f"p = {self.p:.3g}" + (
            "" if self.p_adjusted is None else f", Holm-adjusted {self.p_adjusted:.3g}"
        )
        return (
            f"**Primary endpoint** (declared): {e['metric']} ({e['direction']} is better), {e['method']} "
            f"{'vs' if e['test'] == 'time_to_event' else '−'} {self.comparator}; {test}; α = {self.alpha:g}. "
            f"**Verdict: {self.word}**: {stat} {self.estimate:+.4g} [{lo:+.4g}, {hi:+.4g}] ({level}, n = {self.n}), "
            f"{p}."
        )


def _records(records: Any) -> list[Mapping[str, Any]]:
    if isinstance(records, Mapping) or isinstance(records, str) or not isinstance(records, Sequence):
        raise TypeError(
            f"records: expected a sequence of per-item mappings, received {type(records).__name__}"
        )
    out = list(records)
    if not out:
        raise ValueError("records: expected per-item records, received none")
    for i, r in enumerate(out):
        if not isinstance(r, Mapping):
            raise TypeError(f"records: expected mappings, received {type(r).__name__} at position {i}")
    return out


def _need(r: Mapping[str, Any], key: str, i: int) -> Any:
    if key not in r:
        raise ValueError(f"records: record {i} has no field {key!r} (fields: {sorted(r)})")
    return r[key]


def _arm_values(recs: list, endpoint: Endpoint, arm: str, split: str | None) -> dict:
    """``{item: value}`` of one arm on one split, in record order; duplicates refused."""
    out: dict = {}
    for i, r in enumerate(recs):
        if _need(r, "arm", i) != arm or (split is not None and _need(r, "split", i) != split):
            continue
        item = _need(r, "item", i)
        if item in out:
            raise ValueError(f"records: item {item!r} of arm {arm!r} (split {split!r}) appears twice")
        v = _need(r, endpoint.metric, i)
        if v is None and endpoint.test == "time_to_event":  # not reached within the horizon: censored
            out[item] = None
            continue
        try:
            v = float(v)
        except (TypeError, ValueError):
            raise TypeError(f"records: {endpoint.metric} of record {i} is {v!r}, expected a number") from None
        if not math.isfinite(v):
            raise ValueError(f"records: {endpoint.metric} of record {i} (item {item!r}, arm {arm!r}) is {v}")
        out[item] = v
    if not out:
        raise ValueError(
            f"records: no record of arm {arm!r}" + ("" if split is None else f" on split {split!r}")
        )
    return out


def _comparator(endpoint: Endpoint, recs: list) -> tuple[str, dict]:
    if not isinstance(endpoint.comparator, tuple):
        return endpoint.comparator, {}
    means = {
        a: float(
            np.mean([v for v in _arm_values(recs, endpoint, a, endpoint.choose_on).values() if v is not None])
        )
        for a in endpoint.comparator
    }
    pick = min if endpoint.direction == "lower" else max
    return pick(means, key=means.__getitem__), {"choice_means": means}


def _word(estimate: float, p: float, alpha: float, direction: str) -> str:
    if p >= alpha or estimate == 0:
        return "inconclusive"
    good = estimate < 0 if direction == "lower" else estimate > 0
    return "better" if good else "worse"


def _paired_verdict(endpoint: Endpoint, recs: list) -> Verdict:
    comp, extra = _comparator(endpoint, recs)
    m = _arm_values(recs, endpoint, endpoint.method, endpoint.split)
    c = _arm_values(recs, endpoint, comp, endpoint.split)
    if set(m) != set(c):
        only = sorted(map(str, set(m) ^ set(c)))[:5]
        raise ValueError(
            f"records: the method {endpoint.method!r} and the comparator {comp!r} must share their items (paired), "
            f"received {len(m)} and {len(c)} items, unpaired e.g. {only}"
        )
    items = list(m)
    if endpoint.test == "time_to_event":
        return _time_verdict(endpoint, comp, items, m, c, extra)
    mv = np.array([m[i] for i in items])
    cv = np.array([c[i] for i in items])
    if mv.size < 2:
        raise ValueError(f"records: expected at least 2 paired items, received {mv.size}")
    d = mv - cv
    level = 1.0 - endpoint.alpha
    block = None
    details: dict = {"items": [str(i) for i in items], "differences": d.tolist(), **extra}
    if endpoint.test == "block_bootstrap":
        bb = block_bootstrap(
            d,
            np.mean,
            block=endpoint.block,
            n_resamples=endpoint.n_resamples,
            level=level,
            seed=endpoint.seed,
        )
        est, lo, hi, p, block = bb["estimate"], bb["ci_low"], bb["ci_high"], bb["p"], bb["block"]
        details["statistic"] = "mean difference"
    elif endpoint.test == "mcnemar":
        mb, cb = _binary("records", mv), _binary("records", cv)
        mc = mcnemar(mb, cb)
        est, p = float(mb.mean() - cb.mean()), mc["p"]
        lo, hi = _iid_ci((mb.astype(float), cb.astype(float)), _rate_diff, endpoint, paired=True, const=est)
        details |= {
            "statistic": "difference of success rates",
            "discordant": {"method_only": mc["b"], "comparator_only": mc["c"]},
            "method_rate": {"k": int(mb.sum()), "n": int(mb.size), "wilson": list(wilson_interval(int(mb.sum()), int(mb.size), level=level))},
            "comparator_rate": {"k": int(cb.sum()), "n": int(cb.size), "wilson": list(wilson_interval(int(cb.sum()), int(cb.size), level=level))},
        }  # fmt: skip
    else:
        est = float(np.median(d))
        nz = d[d != 0]
        if nz.size == 0:
            p = 1.0
        elif endpoint.test == "wilcoxon":
            p = float(stats.wilcoxon(mv, cv, zero_method="wilcox").pvalue)
        else:
            p = float(stats.binomtest(int((nz > 0).sum()), int(nz.size)).pvalue)
        lo, hi = _iid_ci((d,), np.median, endpoint, paired=False, const=est)
        details["statistic"] = "median difference"
    return Verdict(
        word=_word(est, p, endpoint.alpha, endpoint.direction),
        estimate=float(est),
        ci=(float(lo), float(hi)),
        p=float(p),
        n=int(d.size),
        alpha=endpoint.alpha,
        endpoint=endpoint.to_dict(),
        comparator=comp,
        block=block,
        details=details,
    )


def _time_verdict(endpoint: Endpoint, comp: str, items: list, m: dict, c: dict, extra: dict) -> Verdict:
    """Times to a target, paired per item, censored at the horizon (:func:`jaxkit.evaluation.time_to_event`)."""
    res = time_to_event(
        [c[i] for i in items], [m[i] for i in items], endpoint.horizon, level=1.0 - endpoint.alpha,
        n_resamples=endpoint.n_resamples, seed=endpoint.seed,
    )  # fmt: skip
    if res["headline"] == "paired":
        pc = res["paired"]
        est, lo, hi, p = pc["median"], pc["ci_low"], pc["ci_high"], pc["wilcoxon_p"]
        stat = "median paired speedup %"
    else:
        rs = res["rmst_speedup"]
        est, lo, hi = rs["value"], rs["ci_low"], rs["ci_high"]
        p = 1.0 if res["logrank_p"] is None else res["logrank_p"]
        stat = "restricted-mean speedup %"
    word = "inconclusive" if p >= endpoint.alpha or est == 0 else ("better" if est > 0 else "worse")
    details = {
        "statistic": stat, "headline": res["headline"], "items": [str(i) for i in items],
        "reached": {"method": res["method"]["reached"]["k"], "comparator": res["baseline"]["reached"]["k"]},
        **extra,
    }  # fmt: skip
    return Verdict(
        word=word, estimate=float(est), ci=(float(lo), float(hi)), p=float(p), n=len(items), alpha=endpoint.alpha,
        endpoint=endpoint.to_dict(), comparator=comp, details=details,
    )  # fmt: skip


def _rate_diff(m, c, axis=-1):
    return np.mean(m, axis=axis) - np.mean(c, axis=axis)


def _iid_ci(data: tuple, stat, endpoint: Endpoint, *, paired: bool, const: float) -> tuple[float, float]:
    if all(np.ptp(x) == 0 for x in data) or (paired and np.ptp(data[0] - data[1]) == 0):
        return const, const
    with np.errstate(all="ignore"):
        res = stats.bootstrap(
            data, stat, paired=paired, vectorized=True, confidence_level=1.0 - endpoint.alpha,
            n_resamples=endpoint.n_resamples, method="percentile", rng=np.random.default_rng(endpoint.seed),
        )  # fmt: skip
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def cell_status(endpoint: AgreementEndpoint, records: Records) -> list[dict[str, object]]:
    """Per cell (record order): ``{"unit", "item", "claim", "learned", "construction", "control", "status",
    "counted", "agrees"}`` under the rule of :class:`AgreementEndpoint`; ``control`` names the unit's learned
    same-difficulty task (or ``None``)."""
    if not isinstance(endpoint, AgreementEndpoint):
        raise TypeError(f"endpoint: expected an AgreementEndpoint, received {type(endpoint).__name__}")
    recs = _records(records)
    cells = {}
    for i, r in enumerate(recs):
        key = (_need(r, "unit", i), _need(r, "item", i))
        if key in cells:
            raise ValueError(f"records: cell {key[0]}/{key[1]} appears twice")
        claim = _need(r, "claim", i)
        if claim not in (True, False, None):
            raise ValueError(
                f"records: claim of cell {key[0]}/{key[1]} is {claim!r}, expected True, False or None"
            )
        learned = _need(r, endpoint.metric, i)
        if not isinstance(learned, bool | np.bool_):
            raise TypeError(
                f"records: {endpoint.metric} of cell {key[0]}/{key[1]} is {learned!r}, expected a bool"
            )
        cells[key] = {"claim": claim, "learned": bool(learned), "construction": r.get("construction")}
    out = []
    for (unit, item), c in cells.items():
        control = None
        if c["claim"] is None:
            status, counted, agrees = "no claim", False, False
        elif c["claim"]:
            counted, agrees = True, c["learned"]
            if agrees:
                status = "agrees (learned)"
            else:
                cons = {True: "; exact construction", False: "; construction has errors"}.get(
                    c["construction"], ""
                )
                status = f"does not agree (not learned{cons})"
        elif c["learned"]:
            status, counted, agrees = "does not agree (learned: contradicts 'cannot')", True, False
        else:
            for t in endpoint.controls.get(item, ()):
                o = cells.get((unit, t))
                if o is not None and o["claim"] is True and o["learned"]:
                    control = t
                    break
            if control is None:
                status, counted, agrees = "not settled (no own positive control learned)", False, False
            else:
                status, counted, agrees = f"agrees (not learned; own control {control} learned)", True, True
        out.append({"unit": unit, "item": item, **c, "control": control, "status": status, "counted": counted,
                    "agrees": agrees})  # fmt: skip
    return out


def _agreement_verdict(endpoint: AgreementEndpoint, recs: list) -> Verdict:
    cells = cell_status(endpoint, recs)
    settled = [c for c in cells if c["counted"]]
    agree = sum(c["agrees"] for c in settled)
    n = len(settled)
    if n:
        lo, hi = wilson_interval(agree, n, level=1.0 - endpoint.alpha)
        est = agree / n
    else:
        lo, hi, est = 0.0, 1.0, float("nan")
    word = "not settled" if n == 0 else ("agrees" if agree == n else "does not agree")
    can = [c for c in cells if c["claim"] is True]
    cannot = [c for c in cells if c["claim"] is False]
    details = {
        "statistic": "fraction of settled cells that agree",
        "cells": len(cells),
        "agree": agree,
        "settled": n,
        "can_cells": len(can),
        "can_learned": sum(c["learned"] for c in can),
        "can_not_learned_with_construction": sum(
            (not c["learned"]) and c["construction"] is True for c in can
        ),
        "cannot_cells": len(cannot),
        "cannot_settled": sum(c["counted"] for c in cannot),
        "contradictions": [f"{c['unit']}/{c['item']}" for c in cannot if c["learned"]],
        "not_settled": [f"{c['unit']}/{c['item']}" for c in cells if c["status"].startswith("not settled")],
        "not_settled_count": sum(c["status"].startswith("not settled") for c in cells),
        "disagree": [f"{c['unit']}/{c['item']}" for c in settled if not c["agrees"]],
        "status": {f"{c['unit']}/{c['item']}": c["status"] for c in cells},
    }
    return Verdict(
        word=word, estimate=est, ci=(lo, hi), p=None, n=n, alpha=endpoint.alpha, endpoint=endpoint.to_dict(),
        details=details,
    )  # fmt: skip


def tolerance_status(endpoint: ToleranceEndpoint, records: Records) -> list[dict[str, object]]:
    """Per prediction (record order): ``{"unit", "item", "quantity", "predicted", "measured", "tolerance",
    "error", "status", "agrees"}`` under the rule of :class:`ToleranceEndpoint`; ``error`` is the relative error
    $|m - p| / |p|$ (the absolute one where $p = 0$; ``None`` when undetected), ``status`` one of ``"agrees"``,
    ``"outside tolerance"``, ``"undetected"``."""
    if not isinstance(endpoint, ToleranceEndpoint):
        raise TypeError(f"endpoint: expected a ToleranceEndpoint, received {type(endpoint).__name__}")
    recs = _records(records)
    seen: set = set()
    out = []
    for i, r in enumerate(recs):
        unit, item, q = _need(r, "unit", i), _need(r, "item", i), _need(r, "quantity", i)
        if (unit, item) in seen:
            raise ValueError(f"records: prediction {unit}/{item} appears twice")
        seen.add((unit, item))
        if q not in endpoint.tolerances:
            raise ValueError(
                f"records: quantity {q!r} of {unit}/{item} has no declared tolerance (declared: "
                f"{sorted(endpoint.tolerances)})"
            )
        vals = {}
        for key in ("predicted", "measured"):
            v = _need(r, key, i)
            if v is None and key == "measured":
                vals[key] = None
                continue
            if isinstance(v, bool | np.bool_):
                raise TypeError(f"records: {key} of {unit}/{item} is {v!r}, expected a number")
            try:
                vals[key] = float(v)
            except (TypeError, ValueError):
                raise TypeError(f"records: {key} of {unit}/{item} is {v!r}, expected a number") from None
        p, m = vals["predicted"], vals["measured"]
        if not math.isfinite(p):
            raise ValueError(f"records: predicted of {unit}/{item} is {p}, expected a finite number")
        tol = endpoint.tolerances[q]
        if m is None or math.isnan(m):
            err, status = None, "undetected"
        else:
            err = abs(m - p) / abs(p) if p != 0 else abs(m)
            status = "agrees" if math.isfinite(m) and err <= tol else "outside tolerance"
            if not math.isfinite(err):
                err = None
        out.append({"unit": unit, "item": item, "quantity": q, "predicted": p, "measured": m, "tolerance": tol,
                    "error": err, "status": status, "agrees": status == "agrees"})  # fmt: skip
    return out


def _tolerance_verdict(endpoint: ToleranceEndpoint, recs: list) -> Verdict:
    items = tolerance_status(endpoint, recs)
    n = len(items)
    agree = sum(c["agrees"] for c in items)
    lo, hi = wilson_interval(agree, n, level=1.0 - endpoint.alpha)
    name = lambda c: f"{c['unit']}/{c['item']}"  # noqa: E731
    per_q: dict = {}
    for c in items:
        qd = per_q.setdefault(c["quantity"], {"n": 0, "agree": 0})
        qd["n"] += 1
        qd["agree"] += int(c["agrees"])
    details = {
        "statistic": "fraction of predictions within tolerance",
        "agree": agree,
        "items": n,
        "outside_tolerance_count": sum(c["status"] == "outside tolerance" for c in items),
        "undetected_count": sum(c["status"] == "undetected" for c in items),
        "disagree": [name(c) for c in items if c["status"] == "outside tolerance"],
        "undetected": [name(c) for c in items if c["status"] == "undetected"],
        "per_quantity": per_q,
        "status": {name(c): c["status"] for c in items},
        "errors": {name(c): c["error"] for c in items},
    }
    return Verdict(
        word="agrees" if agree == n else "does not agree", estimate=agree / n, ci=(lo, hi), p=None, n=n,
        alpha=endpoint.alpha, endpoint=endpoint.to_dict(), details=details,
    )  # fmt: skip


def verdict(endpoint: Endpoint | AgreementEndpoint | ToleranceEndpoint, records: Records) -> Verdict:
    """The headline of ``endpoint`` computed from the run's per-item ``records`` alone.

    Args:
        endpoint: the declared :class:`Endpoint` (paired), :class:`AgreementEndpoint` (cells vs a theory) or
            :class:`ToleranceEndpoint` (predicted quantities vs a simulation).
        records: per-item mappings. Paired: ``{"item", "arm", endpoint.metric}`` and ``"split"`` when the
            endpoint names one; items are paired by ``"item"`` and, for the block bootstrap, taken in record order
            (store them in time order). Agreement: one per cell, ``{"unit", "item", "claim", "learned"}`` and
            optionally ``"construction"``. Tolerance: one per prediction, ``{"unit", "item", "quantity",
            "predicted", "measured"}`` (``measured`` ``None``: not detected).

    Returns:
        A :class:`Verdict`. The paired estimate is the mean difference (block bootstrap), the median difference
        (Wilcoxon, sign) or the difference of success rates (McNemar), method minus comparator.
    """
    if isinstance(endpoint, AgreementEndpoint):
        return _agreement_verdict(endpoint, _records(records))
    if isinstance(endpoint, ToleranceEndpoint):
        return _tolerance_verdict(endpoint, _records(records))
    if not isinstance(endpoint, Endpoint):
        raise TypeError(
            f"endpoint: expected an Endpoint, AgreementEndpoint or ToleranceEndpoint, received "
            f"{type(endpoint).__name__}"
        )
    return _paired_verdict(endpoint, _records(records))


def secondary(comparisons: Mapping[str, tuple[Endpoint, Records]]) -> dict[str, Verdict]:
    """Every other comparison of a page, as one Holm-corrected family.

    Args:
        comparisons: ``{name: (endpoint, records)}`` (paired endpoints); the primary endpoint is not among them.

    Returns:
        ``{name: Verdict}`` with ``p_adjusted`` the Holm-adjusted p-value over the family and ``word`` decided on
        it (intervals are per comparison, not adjusted)."""
    if not isinstance(comparisons, Mapping) or not comparisons:
        raise ValueError(
            f"comparisons: expected a non-empty mapping name -> (endpoint, records), received {comparisons!r:.80}"
        )
    raw = {}
    for name, pair in comparisons.items():
        if not (isinstance(pair, tuple | list) and len(pair) == 2):
            raise TypeError(
                f"comparisons: {name!r} must be an (endpoint, records) pair, received {type(pair).__name__}"
            )
        ep, recs = pair
        if not isinstance(ep, Endpoint):
            raise TypeError(f"comparisons: {name!r} needs a paired Endpoint, received {type(ep).__name__}")
        raw[name] = verdict(ep, recs)
    adj = holm([v.p for v in raw.values()])
    out = {}
    for (name, v), pa in zip(raw.items(), adj):
        ep = v.endpoint
        direction = (
            "higher" if ep["test"] == "time_to_event" else ep["direction"]
        )  # a speedup: higher is better
        out[name] = dataclasses.replace(
            v, p_adjusted=float(pa), word=_word(v.estimate, float(pa), v.alpha, direction)
        )
    return out
