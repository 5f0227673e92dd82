r"""Performance metrics of a series of periodic (simple) portfolio returns $r_1,\dots,r_T$.

- annualised return $(\prod_t (1+r_t))^{f/T} - 1$ (geometric, ``f`` periods per year);
- annualised volatility $\sqrt f\,\mathrm{sd}(r)$ (``ddof=1``);
- Sharpe $\sqrt f\,\overline{r - r_f}/\mathrm{sd}(r - r_f)$; Sortino $\sqrt f\,\overline{r-r_f}/
  \sqrt{\overline{\min(r-r_f,0)^2}}$ (downside deviation about zero, Sortino & Price 1994);
- maximum drawdown $\max_t 1 - W_t/\max_{s\le t} W_s$ with $W_0 = 1$, $W_t=\prod_{s\le t}(1+r_s)$;
- Calmar: annualised return / maximum drawdown; turnover: $\sum_i |w^+_i - w^-_i|$ per rebalance.

``rf`` is a per-period risk-free rate. These are reporting functions: they run in NumPy float64 and return
Python floats (a differentiable Sharpe for training belongs in a loss, not here).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxkit._validate import check_finite, check_ndim

__all__ = [
    "annualized_return",
    "annualized_volatility",
    "calmar_ratio",
    "drawdown",
    "max_drawdown",
    "performance_summary",
    "sharpe_ratio",
    "sortino_ratio",
]


def _r(returns: Any) -> np.ndarray:
    check_ndim("returns", returns, 1, what="a series of periodic returns")
    if np.shape(returns)[0] < 2:
        raise ValueError(f"returns: expected at least 2 periods, received shape {np.shape(returns)}")
    check_finite("returns", returns)
    return np.asarray(returns, dtype=np.float64)


def annualized_return(returns: Any, periods_per_year: int = 252) -> float:
    r = _r(returns)
    return np.exp(np.sum(np.log1p(r)) * periods_per_year / r.shape[0]) - 1


def annualized_volatility(returns: Any, periods_per_year: int = 252) -> float:
    return np.std(_r(returns), ddof=1) * np.sqrt(periods_per_year)


def sharpe_ratio(returns: Any, rf: float = 0.0, periods_per_year: int = 252) -> float:
    x = _r(returns) - rf
    return np.sqrt(periods_per_year) * np.mean(x) / np.std(x, ddof=1)


def sortino_ratio(returns: Any, rf: float = 0.0, periods_per_year: int = 252) -> float:
    x = _r(returns) - rf
    down = np.sqrt(np.mean(np.minimum(x, 0.0) ** 2))
    return np.sqrt(periods_per_year) * np.mean(x) / down


def drawdown(returns: Any) -> np.ndarray:
    """Drawdown series $1 - W_t / \\max_{s \\le t} W_s$ (with the initial wealth 1 in the running max)."""
    w = np.exp(np.cumsum(np.log1p(_r(returns))))
    peak = np.maximum(np.maximum.accumulate(w), 1.0)
    return 1.0 - w / peak


def max_drawdown(returns: Any) -> float:
    return np.max(drawdown(returns))


def calmar_ratio(returns: Any, periods_per_year: int = 252) -> float:
    return annualized_return(returns, periods_per_year) / max_drawdown(returns)


def performance_summary(
    returns: Any, *, turnover: Any = None, rf: float = 0.0, periods_per_year: int = 252
) -> dict[str, float]:
    """All metrics as Python floats; ``turnover`` (per rebalance) adds mean and annualised turnover."""
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
        years = np.shape(returns)[0] / periods_per_year
        out["turnover_per_rebalance"] = float(np.mean(t)) if t.size else 0.0
        out["turnover_per_year"] = float(np.sum(t) / years)
    return out
