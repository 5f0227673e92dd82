r"""Performance metrics of a series of periodic (simple) portfolio returns $r_1,\dots,r_T$.

- annualised return $(\prod_t (1+r_t))^{f/T} - 1$ (geometric, ``f`` periods per year);
- annualised volatility $\sqrt f\,\mathrm{sd}(r)$ (``ddof=1``);
- Sharpe $\sqrt f\,\overline{r - r_f}/\mathrm{sd}(r - r_f)$; Sortino $\sqrt f\,\overline{r-r_f}/
  \sqrt{\overline{\min(r-r_f,0)^2}}$ (downside deviation about zero, Sortino & Price 1994);
- maximum drawdown $\max_t 1 - W_t/\max_{s\le t} W_s$ with $W_0 = 1$, $W_t=\prod_{s\le t}(1+r_s)$;
- Calmar: annualised return / maximum drawdown; turnover: $\sum_i |w^+_i - w^-_i|$ per rebalance.

``rf`` is a per-period risk-free rate. A series whose excess returns have (numerically) zero spread,
$\mathrm{sd} \le 10^{-12}\max(|\bar x|, 10^{-300})$ — e.g. a constant series, whose float sd is rounding
noise — has no defined Sharpe (or Sortino, without downside) ratio: ``nan`` is returned with a
``RuntimeWarning`` saying why (a constant 1% series used to give 6.9e16); so does Calmar without a drawdown
(it used to give ``inf``). Compounding functions (annualised return, drawdown, Calmar) need simple returns > -1. These are reporting functions: they run in NumPy float64 and return
Python floats (a differentiable Sharpe for training belongs in a loss, not here).
"""

from __future__ import annotations

import warnings
from typing import Any

import jax
import numpy as np

from jaxkit._typing import ArrayInput
from jaxkit._validate import (
    align_pairs,
    check_finite,
    check_int,
    check_ndim,
    check_size,
    check_time_order,
    seed_rng,
)

__all__ = [
    "annualized_return",
    "annualized_volatility",
    "calmar_ratio",
    "drawdown",
    "max_drawdown",
    "performance_summary",
    "sharpe_confidence_interval",
    "sharpe_difference_test",
    "sharpe_ratio",
    "sortino_ratio",
]


def _r(returns: Any, name: str = "returns") -> np.ndarray:
    if isinstance(
        returns, jax.core.Tracer
    ):  # np.asarray of a tracer: JAX's TracerArrayConversionError names nothing
        raise TypeError(
            f"{name}: expected concrete values (the performance metrics compute in NumPy float64, outside "
            "jax.jit/vmap), received a traced array; call the metric on the arrays a compiled function returns"
        )
    check_ndim(name, returns, 1, what="a series of periodic returns")
    check_time_order(name, returns, "a series", "compounding, drawdown and annualisation follow row order")
    if np.shape(returns)[0] < 2:
        raise ValueError(f"{name}: expected at least 2 periods, received shape {np.shape(returns)}")
    check_finite(name, returns)
    return np.asarray(returns, dtype=np.float64)


def _rf(rf: Any) -> float:
    """A per-period simple risk-free rate: finite and > -1 (a rate of -100% or below has no meaning)."""
    if not (np.isfinite(rf) and rf > -1):
        raise ValueError(f"rf: expected a finite per-period risk-free rate > -1, received {rf!r}")
    return float(rf)


def _bootstrap_args(level: Any, n_boot: Any, seed: Any) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level: expected a value in (0, 1), received {level}")
    check_int("n_boot", n_boot, minimum=1)
    check_int("seed", seed, minimum=0)


def _simple(returns: Any) -> np.ndarray:
    """Simple returns that compound into wealth: each must be > -1 (a loss of more than 100% has no log)."""
    r = _r(returns)
    if np.any(r <= -1):
        raise ValueError(
            f"returns: expected simple returns > -1 (wealth compounds as prod(1 + r)), received "
            f"{int(np.sum(r <= -1))} values <= -1 (min {r.min():.3g})"
        )
    return r


def _ppy(periods_per_year: Any) -> int:
    check_int("periods_per_year", periods_per_year, minimum=1)
    return int(periods_per_year)


def annualized_return(returns: ArrayInput, periods_per_year: int = 252) -> float:
    """Geometric annualised return (a fraction per year) of per-period simple ``returns``, ``periods_per_year``
    periods a year (252: daily)."""
    periods_per_year = _ppy(periods_per_year)
    r = _simple(returns)
    log_growth = np.sum(np.log1p(r)) * periods_per_year / r.shape[0]
    if log_growth > _MAX_LOG:
        raise ValueError(
            f"returns: the annualised return overflows float64 (log growth {log_growth:.4g} per year, above "
            f"{_MAX_LOG:.4g}): are these per-period simple returns (0.01 = 1%) at periods_per_year="
            f"{periods_per_year}?"
        )
    return np.exp(log_growth) - 1


_MAX_LOG = float(np.log(np.finfo(np.float64).max))


def annualized_volatility(returns: ArrayInput, periods_per_year: int = 252) -> float:
    """Annualised volatility $\\sqrt f\\,\\mathrm{sd}(r)$ of per-period ``returns`` (``f = periods_per_year``)."""
    return np.std(_r(returns), ddof=1) * np.sqrt(_ppy(periods_per_year))


def _ratio(num: float, den: float, what: str) -> float:
    if not den > 1e-12 * max(abs(num), 1e-300):
        warnings.warn(f"{what} is undefined: {den:.3g} spread for a mean of {num:.3g}; returning nan", RuntimeWarning,
                      stacklevel=3)  # fmt: skip
        return float("nan")
    return num / den


def sharpe_ratio(returns: ArrayInput, rf: float = 0.0, periods_per_year: int = 252) -> float:
    """Annualised Sharpe ratio of per-period ``returns``; ``rf`` is the per-period risk-free rate (a daily rate
    for daily returns: annual / 252)."""
    x = _r(returns) - _rf(rf)
    return np.sqrt(_ppy(periods_per_year)) * _ratio(
        np.mean(x), np.std(x, ddof=1), "sharpe_ratio (constant returns)"
    )


def sortino_ratio(returns: ArrayInput, rf: float = 0.0, periods_per_year: int = 252) -> float:
    """Annualised Sortino ratio of per-period ``returns``; ``rf`` per period."""
    x = _r(returns) - _rf(rf)
    down = np.sqrt(np.mean(np.minimum(x, 0.0) ** 2))
    return np.sqrt(_ppy(periods_per_year)) * _ratio(np.mean(x), down, "sortino_ratio (no downside deviation)")


def drawdown(returns: ArrayInput) -> np.ndarray:
    """Drawdown series $1 - W_t / \\max_{s \\le t} W_s$ (with the initial wealth 1 in the running max)."""
    w = np.exp(np.cumsum(np.log1p(_simple(returns))))
    peak = np.maximum(np.maximum.accumulate(w), 1.0)
    return 1.0 - w / peak


def max_drawdown(returns: ArrayInput) -> float:
    """Largest peak-to-trough loss of the wealth compounded from per-period simple ``returns`` (a fraction)."""
    return np.max(drawdown(returns))


def calmar_ratio(returns: ArrayInput, periods_per_year: int = 252) -> float:
    """Annualised return over maximum drawdown of per-period simple ``returns``."""
    return _ratio(
        annualized_return(returns, periods_per_year), max_drawdown(returns), "calmar_ratio (no drawdown)"
    )


def performance_summary(
    returns: ArrayInput, *, turnover: ArrayInput | None = None, rf: float = 0.0, periods_per_year: int = 252
) -> dict[str, float]:
    """All metrics as Python floats; ``turnover`` (per rebalance: a 1-D sequence of finite values >= 0) adds mean
    and annualised turnover."""
    out = {
        "ann_return": float(annualized_return(returns, periods_per_year)),
        "ann_volatility": float(annualized_volatility(returns, periods_per_year)),
        "sharpe": float(sharpe_ratio(returns, rf, periods_per_year)),
        "sortino": float(sortino_ratio(returns, rf, periods_per_year)),
        "max_drawdown": float(max_drawdown(returns)),
        "calmar": float(calmar_ratio(returns, periods_per_year)),
    }
    if turnover is not None:
        t = np.asarray(turnover, dtype=np.float64)
        check_ndim("turnover", t, 1)
        check_finite("turnover", t)
        if np.any(t < 0):
            raise ValueError(
                f"turnover: expected values >= 0 (a fraction of the portfolio traded), min {t.min()}"
            )
        years = np.shape(returns)[0] / periods_per_year
        out["turnover_per_rebalance"] = float(np.mean(t)) if t.size else 0.0
        out["turnover_per_year"] = float(np.sum(t) / years)
    return out


def _check_bootstrap_size(n_boot: int, T: int, n_series: int) -> None:
    """Refuse up front a bootstrap whose (n_boot, T) index and resample arrays would not fit under the size cap
    (the int64 indices and their block layout, and one float64 resample per series)."""
    check_size("n_boot", 8 * int(n_boot) * int(T) * (2 + n_series), hint="pass a smaller n_boot")


def _circular_block_indices(rng: np.random.Generator, T: int, block: int, n_boot: int) -> np.ndarray:
    """(n_boot, T) indices of circular block-bootstrap resamples (Politis & Romano 1992)."""
    n_blocks = -(-T // block)
    starts = rng.integers(0, T, (n_boot, n_blocks))
    idx = (starts[:, :, None] + np.arange(block)[None, None, :]) % T
    return idx.reshape(n_boot, -1)[:, :T]


def _sharpe_rows(x: np.ndarray, periods_per_year: int) -> Any:
    sd = x.std(axis=-1, ddof=1)
    return np.sqrt(periods_per_year) * x.mean(-1) / np.where(sd > 0, sd, np.nan)


def sharpe_confidence_interval(
    returns: ArrayInput,
    *,
    level: float = 0.95,
    block: int = 21,
    n_boot: int = 2000,
    rf: float = 0.0,
    periods_per_year: int = 252,
    seed: int = 0,
) -> tuple[float, float, float]:
    r"""``(sharpe, lo, hi)``: annualised Sharpe ratio with a percentile interval from a circular block bootstrap
    (blocks of ``block`` periods keep volatility clustering and serial dependence; Politis & Romano 1992)."""
    x = _r(returns) - _rf(rf)
    _bootstrap_args(level, n_boot, seed)
    periods_per_year = _ppy(periods_per_year)
    if block < 1 or block > x.shape[0]:
        raise ValueError(f"block: expected an integer in [1, {x.shape[0]}], received {block}")
    _check_bootstrap_size(n_boot, x.shape[0], 1)
    idx = _circular_block_indices(seed_rng(seed), x.shape[0], int(block), int(n_boot))
    sr = _sharpe_rows(x[idx], periods_per_year)
    lo, hi = np.nanquantile(sr, [(1 - level) / 2, (1 + level) / 2])
    return float(sharpe_ratio(x, 0.0, periods_per_year)), float(lo), float(hi)


def sharpe_difference_test(
    returns_a: ArrayInput,
    returns_b: ArrayInput,
    *,
    level: float = 0.95,
    block: int = 21,
    n_boot: int = 2000,
    periods_per_year: int = 252,
    seed: int = 0,
) -> dict[str, float]:
    r"""Test $H_0: SR_a = SR_b$ for two return series on the same dates (paired circular block bootstrap, in the
    spirit of Ledoit & Wolf 2008, "Robust performance hypothesis testing with the Sharpe ratio").

    Returns ``diff`` $= \widehat{SR}_a - \widehat{SR}_b$ (annualised), its percentile interval ``lo``/``hi`` and
    the two-sided p-value $\Pr^*(|\Delta^* - \hat\Delta| \ge |\hat\Delta|)$ from the centered bootstrap
    distribution. Two ``pandas.Series`` are paired by label (``returns_b`` taken in ``returns_a``'s order; labels
    that do not match one to one are refused); arrays pair by position."""
    returns_a, returns_b = align_pairs("returns_a", returns_a, "returns_b", returns_b)
    a, b = _r(returns_a, "returns_a"), _r(returns_b, "returns_b")
    _bootstrap_args(level, n_boot, seed)
    periods_per_year = _ppy(periods_per_year)
    if a.shape != b.shape:
        raise ValueError(f"returns_a, returns_b: expected the same dates, received {a.shape} and {b.shape}")
    if block < 1 or block > a.shape[0]:
        raise ValueError(f"block: expected an integer in [1, {a.shape[0]}], received {block}")
    _check_bootstrap_size(n_boot, a.shape[0], 2)
    for name, x in (("returns_a", a), ("returns_b", b)):
        sd, mean = np.std(x, ddof=1), np.mean(x)
        if not sd > 1e-12 * max(abs(mean), 1e-300):  # the rule of sharpe_ratio (module docstring)
            raise ValueError(
                f"{name}: constant returns (spread {sd:.3g} for a mean of {mean:.3g}) have no Sharpe ratio, so "
                "no difference of Sharpe ratios can be tested"
            )
    idx = _circular_block_indices(seed_rng(seed), a.shape[0], int(block), int(n_boot))
    d_hat = float(_sharpe_rows(a, periods_per_year) - _sharpe_rows(b, periods_per_year))
    d = _sharpe_rows(a[idx], periods_per_year) - _sharpe_rows(b[idx], periods_per_year)
    d = d[np.isfinite(d)]
    if d.size == 0:
        raise ValueError(
            "returns_a, returns_b: no bootstrap resample has a finite Sharpe difference (every resample of "
            f"blocks of {block} periods has a constant series); pass a smaller block or a longer series"
        )
    lo, hi = np.quantile(d, [(1 - level) / 2, (1 + level) / 2])
    p = float((1 + np.sum(np.abs(d - d_hat) >= abs(d_hat))) / (1 + d.size))
    return {"diff": d_hat, "lo": float(lo), "hi": float(hi), "p_value": p}
