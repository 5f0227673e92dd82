r"""Walk-forward backtest engine: periodic rebalancing, weight drift between rebalances, proportional costs.

Timing convention (no look-ahead). ``asset_returns[t]`` is the simple return from close ``t-1`` to close ``t``.
On day ``t`` the held weights $w_{t-1}$ earn $r^p_t = w_{t-1}^\top r_t$ (any remainder is cash at 0%)
and drift to $\tilde w_t = w_{t-1}\odot(1+r_t)/(1+r^p_t)$. If ``t`` is a rebalance date the strategy,
seeing prices up to and including close ``t`` only, sets a target $w^*_t$; trading at the close costs
``cost`` × turnover $\tau_t = \sum_i|w^*_{t,i} - \tilde w_{t,i}|$ of wealth, so the day's net return is
$(1+r^p_t)(1-c\,\tau_t) - 1$, and $w_t = w^*_t$. Before the first rebalance the book is all cash.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jaxtyping import Array, Bool, Float

from jaxkit._typing import ArrayInput
from jaxkit._validate import check_dims, check_finite, check_int, check_ndim, check_positive
from jaxkit.portfolio._labels import check_axis_labels, is_default_index

__all__ = [
    "BacktestResult",
    "check_prices",
    "rebalance_indices",
    "run_backtest",
    "simulate",
    "walk_forward",
]


@dataclass(frozen=True)
class BacktestResult:
    """Daily net portfolio returns, held weights (after each close), and per-rebalance turnover and targets."""

    dates: np.ndarray
    returns: np.ndarray
    weights: np.ndarray
    rebalance_index: np.ndarray
    targets: np.ndarray
    turnover: np.ndarray
    costs: np.ndarray

    def __post_init__(self) -> None:
        # a record of a backtest: every numeric field finite (dates may be datetime64, which has no NaN here)
        for f in ("dates", "returns", "weights", "rebalance_index", "targets", "turnover", "costs"):
            check_finite(f, getattr(self, f))

    @property
    def wealth(self) -> np.ndarray:
        return np.cumprod(1.0 + self.returns)


@jax.jit
def simulate(
    asset_returns: Float[Array, "t n"],
    targets: Float[Array, "t n"],
    rebalance: Bool[Array, " t"],
    cost: float | Float[Array, ""],
) -> tuple[Float[Array, " t"], Float[Array, "t n"], Float[Array, " t"]]:
    """Traceable core: returns ``(net portfolio returns, weights after each close, turnover per day)``. Values
    are not checked; shapes are (known when tracing), naming the argument."""
    check_dims(
        asset_returns=(asset_returns, ("t", "n")), targets=(targets, ("t", "n")), rebalance=(rebalance, ("t",)),
        cost=(cost, ()),
    )  # fmt: skip

    def step(w, inp):
        r, target, reb = inp
        rp = jnp.dot(w, r)
        drifted = w * (1 + r) / (1 + rp)
        tau = jnp.where(reb, jnp.sum(jnp.abs(target - drifted)), 0.0)
        net = (1 + rp) * (1 - cost * tau) - 1
        w_new = jnp.where(reb, target, drifted)
        return w_new, (net, w_new, tau)

    w0 = jnp.zeros(asset_returns.shape[1], asset_returns.dtype)
    _, (net, weights, tau) = jax.lax.scan(step, w0, (asset_returns, targets, rebalance))
    return net, weights, tau


def check_prices(prices: ArrayInput, dates: ArrayInput | None = None, *, name: str = "prices") -> None:
    """(time, assets) prices: finite, strictly positive; ``dates`` strictly increasing and of matching length."""
    check_ndim(name, prices, 2, what="a (time, assets) price matrix")
    arr = np.asarray(prices, dtype=np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        t, i = np.argwhere(bad)[0]
        raise ValueError(
            f"{name}: expected finite prices, found {int(bad.sum())} NaN/inf entries (first at row {t}, "
            f"column {i})"
        )
    if np.any(arr <= 0):
        raise ValueError(
            f"{name}: expected strictly positive prices, found {int(np.sum(arr <= 0))} entries <= 0"
        )
    if dates is None and isinstance(prices, pd.DataFrame) and isinstance(prices.index, pd.DatetimeIndex):
        own = prices.index  # a frame's own dates are its time axis: never taken in whatever order they come
        if not own.is_monotonic_increasing or own.has_duplicates:
            pos = int(np.argmax(np.diff(own.asi8) <= 0)) + 1
            raise ValueError(
                f"{name}: expected a strictly increasing DatetimeIndex (time order), out of order at position "
                f"{pos} ({own[pos]}); sort it with {name}.sort_index()"
            )
    if dates is not None:
        d = pd.DatetimeIndex(dates)
        if len(d) != arr.shape[0]:
            raise ValueError(f"dates: expected {arr.shape[0]} dates to match {name}, received {len(d)}")
        if not d.is_monotonic_increasing or d.has_duplicates:
            pos = int(np.argmax(np.diff(d.asi8) <= 0)) + 1
            raise ValueError(
                f"dates: expected strictly increasing dates, out of order at position {pos} ({d[pos]})"
            )


def rebalance_indices(dates: ArrayInput, freq: str = "M", *, start: int = 0) -> np.ndarray:
    """Indices of the last trading day of each period (``"M"`` month, ``"Q"`` quarter, ``"W"`` week, ``"D"``
    day, or an integer-string step such as ``"21"``) at or after ``start``."""
    d = pd.DatetimeIndex(dates)
    check_int("start", start, minimum=0)
    if d.has_duplicates or not d.is_monotonic_increasing:
        bad = int(np.argmax(np.diff(d.asi8) <= 0)) + 1
        raise ValueError(
            f"dates: expected strictly increasing dates, out of order at position {bad} ({d[bad].date()})"
        )
    if not isinstance(freq, str) or (freq.isdigit() and int(freq) < 1):
        raise ValueError(f"freq: expected 'D', 'W', 'M', 'Q' or a step >= 1 like '21', received {freq!r}")
    if freq == "D":
        idx = np.arange(len(d))
    elif freq.isdigit():
        idx = np.arange(start, len(d), int(freq))
    else:
        if freq == "M":
            key = d.year * 12 + d.month
        elif freq == "Q":
            key = d.year * 4 + (d.month - 1) // 3
        elif freq == "W":
            iso = d.isocalendar()
            key = np.asarray(iso.year) * 53 + np.asarray(iso.week)
        else:
            raise ValueError(f"freq: expected 'D', 'W', 'M', 'Q' or a step like '21', received {freq!r}")
        key = np.asarray(key)
        last = np.flatnonzero(np.r_[key[1:] != key[:-1], True])
        idx = last
    return idx[idx >= start]


def run_backtest(
    prices: ArrayInput,
    rebalance_index: ArrayInput,
    target_weights: ArrayInput,
    *,
    cost: float = 0.0,
    dates: ArrayInput | None = None,
) -> BacktestResult:
    """Simulate given decisions: ``target_weights[j]`` is set at the close of day ``rebalance_index[j]``.

    ``prices`` (time, assets) on the backtest grid (daily closes); ``cost`` a fraction of traded value (0.001 =
    10 bp) per rebalance; the returned ``returns`` are per-period (daily) simple returns, not annualised."""
    check_prices(prices, dates)
    _check_frame_labels(prices, target_weights, dates)
    p = np.asarray(prices, dtype=np.float64)
    if p.shape[0] == 0 or p.shape[1] == 0:
        raise ValueError(f"prices: expected at least one day and one asset, received shape {p.shape}")
    check_positive("cost", cost, strict=False)
    check_ndim("rebalance_index", rebalance_index, 1, what="indices of the rebalance days")
    check_finite("rebalance_index", rebalance_index)
    idx = np.asarray(rebalance_index, dtype=int)
    w = np.asarray(target_weights, dtype=np.float64)
    check_ndim("target_weights", w, 2)
    if w.shape != (idx.shape[0], p.shape[1]):
        raise ValueError(
            f"target_weights: expected shape ({idx.shape[0]}, {p.shape[1]}) (one row per rebalance_index entry, "
            f"one column per asset of prices), received {w.shape}"
        )
    check_finite("target_weights", w)
    if idx.size and (np.any(np.diff(idx) <= 0) or idx[0] < 0 or idx[-1] >= p.shape[0]):
        raise ValueError(
            f"rebalance_index: expected strictly increasing indices inside the price history [0, {p.shape[0]})"
        )
    r = np.zeros_like(p)
    r[1:] = p[1:] / p[:-1] - 1
    targets = np.zeros_like(p)
    targets[idx] = w
    mask = np.zeros(p.shape[0], bool)
    mask[idx] = True
    net, held, tau = simulate(jnp.asarray(r), jnp.asarray(targets), jnp.asarray(mask), cost)
    net, held, tau = (np.asarray(a, dtype=np.float64) for a in (net, held, tau))
    if not (np.isfinite(net).all() and np.isfinite(held).all() and np.isfinite(tau).all()):
        jump = float(np.max(np.maximum(p[1:] / p[:-1], p[:-1] / p[1:]), initial=1.0))
        raise ValueError(
            f"prices: the simulated portfolio is not finite in {jnp.asarray(r).dtype} arithmetic: consecutive prices "
            f"change by up to a factor {jump:.3g}, and the held weights overflow between rebalances; check the "
            "prices (or run with jax_enable_x64 for float64)"
        )
    if dates is None and isinstance(prices, pd.DataFrame) and isinstance(prices.index, pd.DatetimeIndex):
        dates = prices.index  # the frame's own dates (checked increasing above), not positions
    d = np.asarray(pd.DatetimeIndex(dates)) if dates is not None else np.arange(p.shape[0])
    return BacktestResult(d, net, held, idx, w, tau[idx], cost * tau)


def _check_frame_labels(prices: Any, target_weights: Any, dates: Any) -> None:
    """Labeled inputs are used by label or refused, never by position against labels that disagree: the weights'
    columns are the assets of ``prices``, and ``dates`` are the dates of a DataFrame's DatetimeIndex."""
    if not isinstance(prices, pd.DataFrame):
        return
    if isinstance(target_weights, pd.DataFrame):
        check_axis_labels(
            "target_weights", target_weights.columns, prices.columns, "its columns (the assets of prices)",
            "target_weights[prices.columns]",
        )  # fmt: skip
    if dates is not None and isinstance(prices.index, pd.DatetimeIndex):
        d = pd.DatetimeIndex(dates)
        if len(d) == len(prices.index) and not d.equals(prices.index):
            first = int(np.argmax(np.asarray(d) != np.asarray(prices.index)))
            raise ValueError(
                f"dates: expected the dates of prices' DatetimeIndex, received other dates (first difference at "
                f"position {first}: {d[first]} for {prices.index[first]}); leave dates out or pass prices.index"
            )


def _strategy_weights(w: Any, prices: Any, t: int) -> np.ndarray:
    """A strategy's weights: a Series labeled by asset is taken by label (reordered to the columns of a
    DataFrame ``prices``); other labels are refused."""
    if isinstance(w, pd.Series) and isinstance(prices, pd.DataFrame) and not is_default_index(w.index):
        if sorted(map(str, w.index)) != sorted(map(str, prices.columns)) or w.index.has_duplicates:
            raise ValueError(
                f"strategy: returned weights labeled {list(w.index)[:5]} at t={t}, expected one weight per asset "
                f"of prices {list(prices.columns)[:5]}"
            )
        w = w.reindex(prices.columns)
    return np.asarray(w, dtype=np.float64)


def walk_forward(
    prices: ArrayInput,
    strategy: Callable[[np.ndarray, np.ndarray], ArrayInput],
    *,
    dates: ArrayInput,
    freq: str = "M",
    start: int = 252,
    cost: float = 0.0,
) -> BacktestResult:
    """Call ``strategy(past_prices, past_dates) -> weights`` at every rebalance date ``t >= start`` with copies of
    rows ``0..t`` only (so no decision can see later prices), then :func:`run_backtest`. Wrap ``strategy`` with
    ``progress`` yourself for long runs."""
    check_prices(prices, dates)
    _check_frame_labels(prices, None, dates)
    p = np.asarray(prices, dtype=np.float64)
    d = np.asarray(pd.DatetimeIndex(dates))
    idx = rebalance_indices(d, freq, start=start)
    if idx.size == 0:
        raise ValueError(
            f"start: no rebalance date (freq={freq!r}) at or after row start={start} of the {len(d)} rows of "
            f"prices, so the strategy would never be called; pass a start below {len(d)} or a longer history"
        )
    ws = []
    for t in idx:
        w = _strategy_weights(strategy(p[: t + 1].copy(), d[: t + 1].copy()), prices, int(t))
        if w.shape != (p.shape[1],):
            raise ValueError(
                f"strategy: expected weights of shape ({p.shape[1]},), received {w.shape} at t={t}"
            )
        if not np.all(np.isfinite(w)):
            raise ValueError(
                f"strategy: expected finite weights, received {w.tolist()} at t={t} ({pd.Timestamp(d[t]).date()})"
            )
        ws.append(w)
    w = np.stack(ws) if ws else np.zeros((0, p.shape[1]))
    return run_backtest(p, idx, w, cost=cost, dates=d)
