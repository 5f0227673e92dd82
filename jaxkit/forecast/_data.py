r"""Offline market data for diffusion forecasters: S&P 500 stocks (skfolio), macro context (arch.data, statsmodels),
publication-lag alignment, rolling normalization, stock signals (momentum, volatility, Kalman-filtered macro
betas), forecast windows and walk-forward splits.

No look-ahead. Every macro series is stamped with the first date its value was *public* and joined to trading dates
with an as-of (backward) merge:

============================  =====================  ==============================================================
series (source)               native frequency       available from
============================  =====================  ==============================================================
S&P 500 index, stock closes   daily (skfolio)        the same close ``t``
WTI crude (arch ``wti``)      daily                  the next trading day (``t+1``)
VIX (arch ``vix``, 2014–19)   daily                  the next trading day
AAA/BAA yields (``default``)  monthly averages       first day of the following month
core CPI (``core_cpi``)       monthly                the 20th of the following month (BLS release ~ mid-month)
Fama–French (``frenchdata``)  monthly                first day of the second following month
US macro (statsmodels)        quarterly (to 2009)    45 days after the quarter ends
============================  =====================  ==============================================================

Rolling normalization uses trailing windows only, ``(x_t - mean_{t-w+1..t}) / std_{t-w+1..t}``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jaxtyping import Array, Float

from jaxkit._typing import ArrayInput
from jaxkit._validate import check_finite, check_int, check_positive, check_range, check_time_order

__all__ = [
    "MarketData",
    "SP500_TICKERS",
    "align_published",
    "build_market_data",
    "ewma_volatility",
    "forecast_windows",
    "market_data_from_frames",
    "stable_macro_features",
    "stable_macro_frame",
    "kalman_betas",
    "load_macro",
    "load_prices",
    "rolling_zscore",
    "stock_signals",
    "walk_forward_splits",
]

SP500_TICKERS = (
    "AAPL", "AMD", "BAC", "BBY", "CVX", "GE", "HD", "JNJ", "JPM", "KO",
    "LLY", "MRK", "MSFT", "PEP", "PFE", "PG", "RRC", "UNH", "WMT", "XOM",
)  # fmt: skip


def _check_dates(dates: pd.DatetimeIndex, name: str = "dates") -> None:
    if dates.has_duplicates or not dates.is_monotonic_increasing:
        bad = int(np.argmax(np.diff(dates.asi8) <= 0)) + 1
        raise ValueError(
            f"{name}: expected strictly increasing dates, out of order at position {bad} ({dates[bad]})"
        )


def _check_frame(df: pd.DataFrame, name: str) -> None:
    _check_dates(pd.DatetimeIndex(df.index), f"{name}.index")
    bad = ~np.isfinite(df.to_numpy(dtype=np.float64))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(
            f"{name}: expected finite values, found {int(bad.sum())} NaN/inf (first at {df.index[r].date()}, "
            f"column {df.columns[c]!r})"
        )


def _skfolio_csv(name: str) -> pd.DataFrame:
    """Read a CSV shipped in ``skfolio/datasets/data`` without importing skfolio (and scikit-learn): the same
    files ``skfolio.datasets.load_sp500_dataset`` / ``load_sp500_index`` read."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("skfolio")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "load_prices needs the 'skfolio' package (pip install skfolio) for its bundled data"
        )
    path = Path(spec.submodule_search_locations[0]) / "datasets" / "data" / name
    df = pd.read_csv(path, sep=",", index_col=0)
    df.index = pd.to_datetime(df.index)
    return df


def _arch_csv(folder: str, name: str) -> pd.DataFrame:
    """Read a data set bundled with ``arch`` (``arch/data/<folder>/<name>``) the way ``arch.data.*.load`` does,
    without importing ``arch`` itself (whose import pulls in scipy.stats and matplotlib)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("arch")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("load_macro needs the 'arch' package (pip install arch) for its bundled data")
    data = pd.read_csv(Path(spec.submodule_search_locations[0]) / "data" / folder / name)
    if "Date" in data:
        data["Date"] = pd.to_datetime(data["Date"])
        data = data.set_index("Date")
    for col in data:
        data[col] = pd.to_numeric(data[col], errors="coerce")
    return data


def load_prices(
    tickers: Sequence[str] | None = None, start: str | None = None, end: str | None = None
) -> tuple[pd.DataFrame, pd.Series]:
    """Daily closes of S&P 500 stocks and the S&P 500 index shipped with ``skfolio`` (1990-01-02 .. 2022-12-28).

    Returns ``(stocks, index)``. Raises ``ValueError`` for unknown tickers, NaN prices or unordered dates.
    """
    stocks = _skfolio_csv("sp500_dataset.csv.gz")
    index = _skfolio_csv("sp500_index.csv.gz")["SP500"]
    if tickers is not None:
        tickers = list(tickers)
        missing = [t for t in tickers if t not in stocks.columns]
        if missing:
            raise ValueError(f"tickers: unknown {missing}; available are {list(stocks.columns)}")
        stocks = stocks[tickers]
    stocks = stocks.loc[start:end]
    index = index.loc[start:end]
    _check_frame(stocks, "prices")
    _check_frame(index.to_frame(), "index")
    return stocks, index


def align_published(
    values: pd.Series | pd.DataFrame,
    available: ArrayInput,
    dates: ArrayInput,
    *,
    max_age_days: int | None = None,
) -> pd.DataFrame:
    """As-of join: the value on trading date ``d`` is the latest one whose availability date is ``<= d``
    (NaN if none, or if it became available more than ``max_age_days`` before ``d``)."""
    vals = values.to_frame() if isinstance(values, pd.Series) else values
    if isinstance(available, pd.Series):  # labeled: matched to values by label, not by position
        if not available.index.equals(vals.index):
            if set(available.index) != set(vals.index) or available.index.has_duplicates:
                raise ValueError(
                    "available: a Series must be indexed by the same labels as values (one availability date "
                    "per value)"
                )
            available = available.reindex(vals.index)
    avail = pd.DatetimeIndex(available)
    if len(avail) != len(vals):
        raise ValueError(f"available: expected {len(vals)} dates, received {len(avail)}")
    _check_dates(pd.DatetimeIndex(dates), "dates")
    src = vals.reset_index(drop=True).assign(_avail=avail.values).sort_values("_avail")
    src = src.drop_duplicates("_avail", keep="last")
    tgt = pd.DataFrame({"_date": pd.DatetimeIndex(dates).values})
    out = pd.merge_asof(tgt, src, left_on="_date", right_on="_avail", direction="backward")
    if max_age_days is not None:
        stale = (out["_date"] - out["_avail"]) > pd.Timedelta(days=max_age_days)
        out.loc[stale, [c for c in out.columns if c not in ("_date", "_avail")]] = np.nan
    return out.drop(columns=["_avail"]).set_index("_date").rename_axis("Date")


def _month_start_plus(index: pd.DatetimeIndex, months: int, day: int = 1) -> pd.DatetimeIndex:
    first = index.to_period("M").to_timestamp()
    return pd.DatetimeIndex([d + pd.DateOffset(months=months, days=day - 1) for d in first])


def load_macro(
    dates: ArrayInput, *, include_vix: bool = False, include_quarterly: bool = False
) -> pd.DataFrame:
    """Macro context on ``dates`` (publication-lag aligned, see the module table; NaN before a series starts).

    Columns: ``credit_spread`` (BAA - AAA), ``core_cpi_yoy``, ``oil_ret_21`` and ``oil_ret_1`` (WTI 21-day and
    1-day log returns), ``ff_mkt``,
    ``ff_smb``, ``ff_hml``, ``ff_rf`` (last published monthly Fama–French factors, %); ``vix`` with
    ``include_vix``; ``unemp``, ``tbilrate``, ``infl`` (statsmodels quarterly, ends 2009) with
    ``include_quarterly``.
    """
    dates = pd.DatetimeIndex(dates)
    _check_dates(dates)
    cols = []
    yields = _arch_csv("default", "default.csv.gz")
    cols.append(
        align_published(
            (yields["BAA"] - yields["AAA"]).rename("credit_spread"), _month_start_plus(yields.index, 1), dates
        )
    )
    cpi = _arch_csv("core_cpi", "core-cpi.csv.gz")["CPILFESL"]
    yoy = (np.log(cpi) - np.log(cpi.shift(12))).rename("core_cpi_yoy").dropna()
    cols.append(align_published(yoy, _month_start_plus(yoy.index, 1, day=20), dates))
    wti = _arch_csv("wti", "wti.csv.gz")["DCOILWTICO"].dropna()
    wti = wti[wti > 0]
    lw = np.log(wti)
    oil = pd.concat(
        [(lw - lw.shift(21)).rename("oil_ret_21"), (lw - lw.shift(1)).rename("oil_ret_1")], axis=1
    )
    oil = oil.dropna()
    cols.append(align_published(oil, oil.index + pd.Timedelta(days=1), dates))
    ff = _arch_csv("frenchdata", "frenchdata.csv.gz")
    ym = np.asarray(ff.index.asi8)  # stored as YYYYMM nanoseconds
    month = pd.DatetimeIndex(pd.to_datetime({"year": ym // 100, "month": ym % 100, "day": 1}))
    ff = ff.set_axis(month).rename(
        columns={"Mkt-RF": "ff_mkt", "SMB": "ff_smb", "HML": "ff_hml", "RF": "ff_rf"}
    )
    cols.append(align_published(ff, _month_start_plus(month, 2), dates))
    if include_vix:
        vix = _arch_csv("vix", "vix.csv.gz")["vix"]
        # NaN outside the shipped window (2014-01-03 .. 2019-01-03)
        cols.append(align_published(vix, vix.index + pd.Timedelta(days=1), dates, max_age_days=7))
    if include_quarterly:
        import statsmodels.api as sm

        md = sm.datasets.macrodata.load_pandas().data
        qend = pd.PeriodIndex.from_fields(
            year=md["year"].astype(int), quarter=md["quarter"].astype(int), freq="Q"
        )
        avail = qend.to_timestamp(how="end").normalize() + pd.Timedelta(days=45)
        cols.append(align_published(md[["unemp", "tbilrate", "infl"]], avail, dates, max_age_days=100))
    out = pd.concat(cols, axis=1)
    out.index = dates
    return out


def rolling_zscore(df: pd.DataFrame, window: int = 252, min_periods: int | None = None) -> pd.DataFrame:
    """Trailing z-score ``(x_t - mean) / std`` over the last ``window`` rows up to and including ``t`` (0 where
    the window is constant, NaN until ``min_periods`` rows exist). A date index out of time order is refused."""
    check_int("window", window, minimum=2)
    check_time_order("df", df, "rows", "the window trails over rows")
    mp = window // 2 if min_periods is None else min_periods
    roll = df.rolling(window, min_periods=mp)
    sd = roll.std()
    z = (df - roll.mean()) / sd.where(sd > 1e-12, 1.0)
    return z.where(sd > 1e-12, 0.0).where(sd.notna())  # a constant window has z = 0


@jax.jit
def _kalman_one(y, X, q, r, p0):
    k = X.shape[1]

    def step(carry, inp):
        b, P = carry
        yt, xt = inp
        P = P + q * jnp.eye(k, dtype=X.dtype)
        s = xt @ P @ xt + r
        gain = P @ xt / s
        b = b + gain * (yt - xt @ b)
        P = P - jnp.outer(gain, xt @ P)
        return (b, 0.5 * (P + P.T)), b

    init = (jnp.zeros(k, X.dtype), p0 * jnp.eye(k, dtype=X.dtype))
    _, betas = jax.lax.scan(step, init, (y, X))
    return betas


def ewma_volatility(log_returns: ArrayInput, *, decay: float = 0.94, floor: float = 1e-4) -> np.ndarray:
    r"""RiskMetrics volatility known at the close of each row (J.P. Morgan/Reuters 1996, daily $\lambda = 0.94$):
    $\sigma_t^2 = \sum_{j\ge0}\lambda^j r_{t-j}^2 / \sum_{j\ge0}\lambda^j$ over the rows up to and
    including $t$ (zero mean; finite-sample normalized), floored at ``floor``. Rows before the first return
    get the first value. Returns (T, N). A pandas input on a date index out of time order is refused."""
    check_time_order(
        "log_returns", log_returns, "rows", "the average runs over rows, so later rows would enter"
    )
    r = np.asarray(log_returns, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError(f"log_returns: expected a (time, assets) array, received shape {r.shape}")
    if not 0.0 < decay < 1.0:
        raise ValueError(f"decay: expected a value in (0, 1), received {decay}")
    if not (np.isfinite(floor) and floor >= 0):
        raise ValueError(f"floor: expected a finite value >= 0, received {floor!r}")
    if np.any(np.isinf(r)):
        raise ValueError(
            f"log_returns: expected finite values or NaN (missing), received {int(np.isinf(r).sum())} inf"
        )
    empty = np.flatnonzero(~np.any(np.isfinite(r), axis=0)) if r.shape[0] else np.arange(r.shape[1])
    if empty.size:
        raise ValueError(
            f"log_returns: expected at least one finite return per asset (NaN = missing), columns "
            f"{empty.tolist()[:10]} have none"
        )
    v = pd.DataFrame(r**2).ewm(alpha=1.0 - decay, adjust=True, ignore_na=True).mean().bfill().to_numpy()
    return np.maximum(np.sqrt(np.nan_to_num(v, nan=floor**2)), floor)


def kalman_betas(
    y: ArrayInput, X: ArrayInput, *, q: float = 1e-4, r: float = 1.0, p0: float = 1e4
) -> Float[Array, "t n k"]:
    r"""Time-varying regression betas by a Kalman *filter* (uses data up to ``t`` only).

    State $\beta_t = \beta_{t-1} + \eta_t$, $\eta\sim N(0, qI)$; observation
    $y_{t,i} = x_t^\top\beta_{t,i} + e$, $e\sim N(0, r)$; diffuse start $\beta_0 \sim
    N(0, p_0 I)$. With ``q = 0`` the last filtered beta is recursive least squares (= OLS as ``p0`` grows).

    Args:
        y: (T, N) responses (e.g. standardized stock returns). X: (T, K) regressors shared by all stocks.
    Returns:
        (T, N, K) filtered betas, computed in float64 and returned in JAX's default float dtype (float32 unless
        ``jax_enable_x64``). Pandas inputs are paired by label: ``y`` and ``X`` on different indexes are refused
        (align them first, e.g. ``X.reindex(y.index)``), as is a date index out of time order.
    """
    check_time_order("y", y, "rows", "the filter runs over rows")
    check_time_order("X", X, "rows", "the filter runs over rows")
    iy, ix = getattr(y, "index", None), getattr(X, "index", None)
    if isinstance(iy, pd.Index) and isinstance(ix, pd.Index) and not iy.equals(ix):
        raise ValueError(
            "X: expected the same index as y (rows are paired by label), received a different one "
            f"({len(ix)} rows, first {list(ix[:2])} vs y's {list(iy[:2])}); align them first, e.g. X.reindex(y.index)"
        )
    y, X = np.asarray(y), np.asarray(X)
    if y.ndim != 2 or X.ndim != 2 or y.shape[0] != X.shape[0]:
        raise ValueError(
            f"y, X: expected (T, N) and (T, K) with the same T, received {y.shape} and {X.shape}"
        )
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(X))):
        raise ValueError("y, X: expected finite values (fill or drop NaN rows first)")
    for name, v, strict in (("q", q, False), ("r", r, True), ("p0", p0, True)):
        if not (np.isfinite(float(v)) and (float(v) > 0 if strict else float(v) >= 0)):
            raise ValueError(
                f"{name}: expected a finite variance {'> 0' if strict else '>= 0'}, received {v!r}"
            )
    # computed in float64 whatever JAX's default: the covariance update P - g x^T P cancels catastrophically in
    # float32 once p0 is large against r (the diffuse start: p0 = 1e8, r = 0.01 was off by 0.86 at t = 3)
    dtype = jnp.result_type(float)
    with jax.enable_x64(True):
        yj, Xj = jnp.asarray(y, jnp.float64), jnp.asarray(X, jnp.float64)
        f = jax.vmap(_kalman_one, in_axes=(1, None, None, None, None), out_axes=1)
        betas = np.asarray(f(yj, Xj, float(q), float(r), float(p0)))
    return jnp.asarray(betas, dtype)


def stock_signals(
    log_returns: pd.DataFrame, market: pd.Series, oil: pd.Series, *, kalman_q: float = 1e-4
) -> dict[str, pd.DataFrame]:
    """Per-stock signals on each date from information up to that close: 21/63/252-day momentum, 21-day realized
    volatility, and Kalman-filtered betas on the market and on oil (returns standardized by a trailing 252-day
    volatility before filtering)."""
    if not isinstance(log_returns, pd.DataFrame):
        raise TypeError(
            f"log_returns: expected a DataFrame (dates x assets), received {type(log_returns).__name__}"
        )
    if not (np.isfinite(float(kalman_q)) and float(kalman_q) >= 0):
        raise ValueError(f"kalman_q: expected a finite variance >= 0, received {kalman_q!r}")
    _check_dates(pd.DatetimeIndex(log_returns.index), "log_returns.index")
    market, oil = (_aligned_series(v, n, log_returns.index) for v, n in ((market, "market"), (oil, "oil")))
    lr = log_returns
    out = {
        "mom_21": lr.rolling(21).sum(),
        "mom_63": lr.rolling(63).sum(),
        "mom_252": lr.rolling(252).sum(),
        "vol_21": lr.rolling(21).std() * np.sqrt(252),
    }
    scale = lr.rolling(252, min_periods=21).std().bfill()  # trailing; bfill only fills the first 20 rows
    y = (lr / scale).fillna(0.0).clip(-10, 10)
    mscale = market.rolling(252, min_periods=21).std().bfill()
    oscale = oil.rolling(252, min_periods=21).std().bfill()
    X = np.stack(
        [
            np.ones(len(lr)),
            (market / mscale).fillna(0.0).clip(-10, 10).to_numpy(),
            (oil / oscale).fillna(0.0).clip(-10, 10).to_numpy(),
        ],
        axis=1,
    )
    b = np.asarray(kalman_betas(y.to_numpy(), X, q=kalman_q))
    out["beta_mkt"] = pd.DataFrame(b[:, :, 1], index=lr.index, columns=lr.columns)
    out["beta_oil"] = pd.DataFrame(b[:, :, 2], index=lr.index, columns=lr.columns)
    return out


def _aligned_series(s: Any, name: str, index: pd.Index) -> pd.Series:
    """``s`` taken by label on ``index`` (never by position): every date of ``index`` must be in ``s``."""
    if not isinstance(s, pd.Series):
        raise TypeError(f"{name}: expected a pandas Series indexed by date, received {type(s).__name__}")
    if s.index.has_duplicates:
        dup = s.index[s.index.duplicated()][0]
        raise ValueError(f"{name}: expected unique dates in its index, {dup} appears more than once")
    missing = index.difference(s.index)
    if len(missing):
        raise ValueError(
            f"{name}: expected a value on every date of log_returns.index, {len(missing)} missing (first "
            f"{missing[0]})"
        )
    return s.reindex(index)


@dataclass(frozen=True)
class MarketData:
    """Aligned arrays on a grid of dates (daily or week-ends).

    ``log_returns[t]`` is the log return from the previous grid date to ``t``; ``macro[t]`` and ``signals[t]``
    use information available at the close of ``t`` (rolling z-scores). ``prices`` are closes on the grid.
    """

    dates: np.ndarray
    tickers: tuple[str, ...]
    prices: np.ndarray  # (T, N)
    log_returns: np.ndarray  # (T, N)
    macro: np.ndarray  # (T, M)
    signals: np.ndarray  # (T, N, F)
    macro_names: tuple[str, ...]
    signal_names: tuple[str, ...]
    scale: np.ndarray | None = None  # (T, N) EWMA volatility of the grid returns known at t (per_date_scale)
    warmup_rows: int = 0  # leading input rows dropped as feature warm-up (market_data_from_frames)

    def __post_init__(self) -> None:
        for name in ("prices", "log_returns", "macro", "signals", "scale"):
            v = getattr(self, name)
            if v is not None:
                check_finite(name, v)
        check_int("warmup_rows", self.warmup_rows, minimum=0)

    @property
    def n_assets(self) -> int:
        return self.prices.shape[1]


def build_market_data(
    start: str = "1990-01-01",
    end: str = "2018-10-31",
    *,
    tickers: Sequence[str] | None = None,
    freq: str = "D",
    norm_window: int = 252,
    include_vix: bool = False,
) -> MarketData:
    """Prices, log returns, normalized macro context and stock signals on a daily (``"D"``) or weekly (``"W"``,
    last trading day of each week) grid. The default ``end`` is the last month every macro series covers.

    Rows before every feature is defined (the first ~1.5 years: 252-day momentum, then the 252-day z-score) are
    dropped; VIX (2014–2019 only) is filled with 0 (its mean) outside its window when ``include_vix``.
    """
    if freq not in ("D", "W"):
        raise ValueError(f"freq: expected 'D' or 'W', received {freq!r}")
    check_int("norm_window", norm_window, minimum=2)
    stocks, index = load_prices(tickers, None, end)
    dates = stocks.index
    lr = np.log(stocks).diff()
    mkt = np.log(index).diff()
    macro = load_macro(dates, include_vix=include_vix)
    oil = macro.pop("oil_ret_1").fillna(0.0)
    macro["mkt_ret_21"] = mkt.rolling(21).sum()
    macro["mkt_vol_21"] = mkt.rolling(21).std() * np.sqrt(252)
    macro["mkt_vol_63"] = mkt.rolling(63).std() * np.sqrt(252)
    sig = stock_signals(lr, mkt, oil)
    zmacro = rolling_zscore(macro, norm_window).clip(-5, 5)
    if include_vix:
        zmacro["vix"] = zmacro["vix"].fillna(0.0)
    zsig = {k: rolling_zscore(v, norm_window).clip(-5, 5) for k, v in sig.items()}
    sig_arr = np.stack([zsig[k].to_numpy() for k in zsig], axis=-1)
    ok = (
        np.isfinite(zmacro.to_numpy()).all(1)
        & np.isfinite(sig_arr).all((1, 2))
        & np.isfinite(lr.to_numpy()).all(1)
    )
    ok &= np.asarray(dates >= pd.Timestamp(start))
    first = int(np.argmax(ok))
    if not ok[first:].all():
        bad = first + int(np.argmin(ok[first:]))
        raise ValueError(f"build_market_data: features undefined inside the window at {dates[bad].date()}")
    sel = np.arange(first, len(dates))
    logret = lr.to_numpy()
    if freq == "W":
        from jaxkit.portfolio import rebalance_indices

        grid = rebalance_indices(dates[sel], "W") + first
        cum = np.nancumsum(np.nan_to_num(logret), axis=0)
        wk = np.diff(cum[grid], axis=0)
        grid = grid[1:]
        logret_grid = wk
    else:
        grid = sel
        logret_grid = logret[grid]
    return MarketData(
        dates=np.asarray(dates[grid]),
        tickers=tuple(stocks.columns),
        prices=stocks.to_numpy()[grid],
        log_returns=logret_grid,
        macro=zmacro.to_numpy()[grid],
        signals=sig_arr[grid],
        macro_names=tuple(zmacro.columns),
        signal_names=tuple(zsig),
    )


def forecast_windows(
    data: MarketData, index: ArrayInput, *, history: int, horizon: int
) -> dict[str, np.ndarray]:
    """Conditioning and targets for decision dates ``index`` (grid positions ``t``):

    ``history`` (B, L, N) returns ``t-L+1..t``; ``target`` (B, H, N) returns ``t+1..t+H`` (NaN past the data end);
    ``macro`` (B, M) and ``signals`` (B, N, F) at ``t``.
    """
    check_int("history", history, minimum=1)
    check_int("horizon", horizon, minimum=1)
    idx = np.asarray(index, dtype=int)
    T = data.log_returns.shape[0]
    if idx.size and (idx.min() < history - 1 or idx.max() >= T):
        raise ValueError(
            f"index: expected positions in [{history - 1}, {T - 1}], received {idx.min()}..{idx.max()}"
        )
    late = int(np.sum(idx > T - 1 - horizon))
    if late:
        warnings.warn(
            f"index: {late} of {idx.size} decision positions are within horizon={horizon} of the data end (last "
            f"position with a full target window: {T - 1 - horizon}); their target rows past the end are NaN (no "
            "realized returns yet): drop those positions to train or score, keep them to forecast",
            UserWarning,
            stacklevel=2,
        )
    padded = np.concatenate([data.log_returns, np.full((horizon, data.n_assets), np.nan)], axis=0)
    hist = np.stack([data.log_returns[t - history + 1 : t + 1] for t in idx]) if idx.size else None
    tgt = np.stack([padded[t + 1 : t + 1 + horizon] for t in idx]) if idx.size else None
    out = {"history": hist, "target": tgt, "macro": data.macro[idx], "signals": data.signals[idx]}
    if data.scale is not None:
        out["scale"] = data.scale[idx]
    return out


def walk_forward_splits(
    dates: ArrayInput,
    test_years: Sequence[int],
    *,
    horizon: int,
    history: int,
    train_years: int | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Expanding (or ``train_years``-long rolling) yearly splits of decision positions.

    For test year ``y`` the training positions ``t`` have their whole target window ``t+1..t+horizon`` strictly
    before the first test date (purged), and start after ``history`` rows; test positions are the dates in ``y``.
    """
    check_int("horizon", horizon, minimum=1)
    check_int("history", history, minimum=1)
    d = pd.DatetimeIndex(dates)
    _check_dates(d)
    out = []
    for y in test_years:
        test = np.flatnonzero(d.year == y)
        if test.size == 0:
            raise ValueError(f"test_years: no dates in {y} (data spans {d[0].date()} .. {d[-1].date()})")
        last_train = test[0] - 1 - horizon
        lo = history - 1
        if train_years is not None:
            lo = max(lo, int(np.searchsorted(d, pd.Timestamp(year=y - train_years, month=1, day=1))))
        train = np.arange(lo, last_train + 1)
        if train.size == 0:
            raise ValueError(f"test_years: no training dates before {y}")
        out.append((train, test))
    return out


# --------------------------------------------------------------------------------------------------------------
# User data frames and STABLE's macro inputs
# --------------------------------------------------------------------------------------------------------------


def _frame_index(df: Any, name: str) -> pd.DatetimeIndex:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(
            f"{name}: expected a pandas DataFrame (dates x columns), received {type(df).__name__}"
        )
    if not isinstance(df.index, pd.DatetimeIndex) and (
        pd.api.types.is_numeric_dtype(df.index.dtype) or pd.api.types.is_bool_dtype(df.index.dtype)
    ):
        raise ValueError(
            f"{name}: expected a DatetimeIndex of dates, received a {type(df.index).__name__} of "
            f"{df.index.dtype} (row numbers would be read as nanoseconds after 1970); set the dates first, e.g. "
            f"df.set_index(pd.to_datetime(df['Date']))"
        )
    try:
        idx = pd.DatetimeIndex(df.index)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name}: expected an index of dates, received {df.index.dtype} ({e})") from None
    if idx.has_duplicates:
        dup = idx[idx.duplicated()][0]
        raise ValueError(f"{name}: expected unique dates, {dup.date()} appears more than once")
    if not idx.is_monotonic_increasing:
        pos = int(np.argmax(np.diff(idx.asi8) < 0)) + 1
        raise ValueError(f"{name}: expected dates sorted in increasing order, {idx[pos].date()} follows "
                         f"{idx[pos - 1].date()} at row {pos}; sort with df.sort_index()")  # fmt: skip
    return idx


def _frame_values(df: pd.DataFrame, name: str) -> np.ndarray:
    try:
        v = df.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: expected numeric columns ({e})") from None
    bad = ~np.isfinite(v)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(
            f"{name}: expected no gaps, found {int(bad.sum())} NaN/inf values (first on {df.index[r].date()}, column "
            f"{df.columns[c]!r}); fill or drop them first (e.g. df.ffill() for prices, or drop the asset)"
        )
    return v


def stable_macro_features(macro: pd.DataFrame, *, norm_window: int = 252) -> pd.DataFrame:
    r"""STABLE's macro transform: for each column $x$, its log-difference $\log x_t - \log x_{t-1}$ (or the
    plain difference for a series that is not strictly positive, e.g. a spread), and its level, each normalized
    by a trailing ``norm_window``-row ($\nu$) rolling z-score (:func:`rolling_zscore`, clipped to ±5).
    Columns ``<name>:dlog`` (or ``:diff``) and ``<name>:level``."""
    check_int("norm_window", norm_window, minimum=2)
    check_time_order("macro", macro, "rows", "differences and trailing z-scores run over rows")
    cols = {}
    for c in macro.columns:
        x = macro[c].astype(np.float64)
        if (x > 0).all():
            cols[f"{c}:dlog"] = np.log(x).diff()
        else:
            cols[f"{c}:diff"] = x.diff()
        cols[f"{c}:level"] = x
    return rolling_zscore(pd.DataFrame(cols, index=macro.index), norm_window).clip(-5, 5)


def stable_macro_frame(
    start: str | None = None, end: str | None = None, *, variant: str = "long"
) -> pd.DataFrame:
    """Raw macro levels for STABLE's inputs from the offline data (no download), on the S&P 500 trading days.

    ``variant="long"`` (1990-01 .. 2022-12, skfolio): ``sp500`` (S&P 500 index, the market input) and
    ``vix_proxy`` (21-day realized volatility of the S&P 500 in % p.a.; VIX itself ships only for 2014–2019).
    ``variant="rich"`` (to 2018-10; arch): adds ``credit_spread`` (Moody's BAA − AAA yield, monthly, stamped the
    next month — the offline stand-in for Treasury spreads) and ``oil`` (WTI, stamped the next day — the offline
    stand-in for gold). No offline source has a US dollar index: it is omitted in both variants.
    """
    if variant not in ("long", "rich"):
        raise ValueError(f"variant: expected 'long' or 'rich', received {variant!r}")
    index = _skfolio_csv("sp500_index.csv.gz")["SP500"]
    r = np.log(index).diff()
    out = pd.DataFrame({"sp500": index, "vix_proxy": 100 * np.sqrt(252) * r.rolling(21).std()})
    if variant == "rich":
        out = out.loc[:"2018-10-31"]
        yields = _arch_csv("default", "default.csv.gz")
        out["credit_spread"] = align_published(
            yields["BAA"] - yields["AAA"], _month_start_plus(yields.index, 1), out.index
        ).to_numpy()[:, 0]
        wti = _arch_csv("wti", "wti.csv.gz")["DCOILWTICO"].dropna()
        wti = wti[wti > 0]
        out["oil"] = align_published(wti, wti.index + pd.Timedelta(days=1), out.index).to_numpy()[:, 0]
    return out.dropna().loc[start:end]


def market_data_from_frames(
    prices: pd.DataFrame,
    macro: pd.DataFrame | None = None,
    *,
    kind: str = "prices",
    history: int = 1,
    horizon: int = 1,
    norm_window: int = 252,
    kalman_q: float = 1e-4,
    vol_decay: float = 0.94,
) -> MarketData:
    r"""A :class:`MarketData` (daily grid = the frame's rows) from your own data, for :func:`forecast_windows`,
    :func:`train_forecaster` and :func:`sample_paths`.

    Args:
        prices: dates x assets, prices (``kind="prices"``) or simple returns (``kind="returns"``); no gaps.
        macro: optional dates x series of macro *levels* on the same dates (e.g. from
            :func:`stable_macro_frame`); transformed by :func:`stable_macro_features`. Without it the macro
            context is the equal-weight index of ``prices`` (its level and log-difference).
        history, horizon: the window sizes you will use (only to check that enough rows remain).
    Features at date $t$ use rows up to $t$ only: macro z-scores; per asset 21/63-day momentum and 21-day
    volatility (z-scored), and Kalman time-varying betas (:func:`kalman_betas`) of the asset's standardized log
    return on the standardized macro log-differences (STABLE's stock embedding); ``scale`` = RiskMetrics EWMA
    volatility (:func:`ewma_volatility`). The first ``norm_window // 2 + 63`` rows (or more, while a feature is
    undefined) are warm-up and dropped: a ``UserWarning`` says how many and from which date the data starts, and
    ``warmup_rows`` of the result holds the count.

    Raises ``TypeError`` for a non-DataFrame, ``ValueError`` for unsorted or duplicated dates, NaN gaps,
    non-positive prices, a macro frame missing some dates, or too few rows for the warm-up plus the window.
    """
    if kind not in ("prices", "returns"):
        raise ValueError(f"kind: expected 'prices' or 'returns', received {kind!r}")
    check_int("history", history, minimum=1)
    check_int("horizon", horizon, minimum=1)
    check_int("norm_window", norm_window, minimum=2)
    check_positive("kalman_q", kalman_q, strict=False)
    check_range("vol_decay", vol_decay, 0.0, 1.0, closed=False)
    idx = _frame_index(prices, "prices")
    v = _frame_values(prices, "prices")
    if kind == "prices":
        if np.any(v <= 0):
            r, c = np.argwhere(v <= 0)[0]
            raise ValueError(f"prices: expected positive prices, found {v[r, c]} on {idx[r].date()} "
                             f"(column {prices.columns[c]!r}); pass kind='returns' for returns")  # fmt: skip
        px = v
    else:
        if np.any(v <= -1):
            raise ValueError("prices: simple returns must be > -1 (kind='returns')")
        px = np.cumprod(np.vstack([np.ones((1, v.shape[1])), 1 + v]), axis=0)[1:]
    warm = norm_window // 2 + 63
    need = warm + history + horizon + 1
    if len(idx) < need:
        raise ValueError(
            f"prices: expected at least {need} rows ({warm} feature warm-up rows for norm_window={norm_window}, "
            f"+ history={history} + horizon={horizon} + 1), received {len(idx)}"
        )
    lr = pd.DataFrame(np.log(px), index=idx, columns=[str(c) for c in prices.columns]).diff()
    if kind == "returns":
        lr.iloc[0] = np.log1p(v[0])
    if macro is None:
        mac = pd.DataFrame({"equal_weight_index": np.exp(lr.fillna(0.0).mean(axis=1).cumsum())}, index=idx)
    else:
        midx = _frame_index(macro, "macro")
        missing = idx.difference(midx)
        if len(missing):
            raise ValueError(f"macro: expected a row for every date of prices, {len(missing)} missing "
                             f"(first {missing[0].date()})")  # fmt: skip
        mac = macro.loc[idx]
        _frame_values(mac, "macro")
    zmac = stable_macro_features(mac, norm_window=norm_window)
    diffs = zmac[[c for c in zmac.columns if not c.endswith(":level")]].fillna(0.0).to_numpy()
    X = np.concatenate([np.ones((len(idx), 1)), diffs], axis=1)
    scale = lr.rolling(norm_window, min_periods=min(21, norm_window)).std().bfill()
    y = (lr / scale).fillna(0.0).clip(-10, 10)
    betas = np.asarray(kalman_betas(y.to_numpy(), X, q=kalman_q))[:, :, 1:]  # (T, N, K) without the intercept
    feats = {
        "mom_21": lr.rolling(21).sum(),
        "mom_63": lr.rolling(63).sum(),
        "vol_21": lr.rolling(21).std(),
    }
    zf = [rolling_zscore(f, norm_window).clip(-5, 5).to_numpy() for f in feats.values()]
    sig = np.concatenate([np.stack(zf, -1), np.clip(betas, -5, 5)], axis=-1)
    names = tuple(feats) + tuple(f"beta[{c}]" for c in zmac.columns if not c.endswith(":level"))
    first = warm
    lrv = lr.to_numpy()
    ok = np.isfinite(zmac.to_numpy()[first:]).all() and np.isfinite(sig[first:]).all()
    if not ok:  # a constant column in the warm-up can leave NaN z-scores for longer
        good = np.isfinite(zmac.to_numpy()).all(1) & np.isfinite(sig).all((1, 2))
        first = int(np.argmax(good & (np.arange(len(idx)) >= warm)))
        if not good[first:].all() or len(idx) - first < history + horizon + 1:
            raise ValueError("prices, macro: features stay undefined after the warm-up (constant series?)")
    sl = slice(first, None)
    warnings.warn(
        f"market_data_from_frames: the first {first} rows ({idx[0].date()} .. {idx[first - 1].date()}) are feature "
        f"warm-up (norm_window={norm_window}) and are dropped; the data starts on {idx[first].date()} "
        f"(MarketData.warmup_rows = {first})",
        UserWarning,
        stacklevel=2,
    )
    return MarketData(
        dates=np.asarray(idx[sl]),
        tickers=tuple(lr.columns),
        prices=px[sl],
        log_returns=lrv[sl],
        macro=zmac.to_numpy()[sl].astype(np.float64),
        signals=sig[sl],
        macro_names=tuple(zmac.columns),
        signal_names=names,
        scale=ewma_volatility(lrv[1:], decay=vol_decay)[first - 1 :] if first >= 1 else None,
        warmup_rows=int(first),
    )
