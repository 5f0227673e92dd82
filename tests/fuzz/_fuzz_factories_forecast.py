"""Fuzz factories for the ``jaxkit.forecast`` exports that had no base call from their signature (issue 49): each
returns the keyword arguments of one valid call. Merged into ``_fuzz_factories.FACTORIES`` at its end; helpers of
that module are imported inside the factories (it imports this one)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


@functools.cache
def _prices() -> tuple[Any, Any]:
    """A short slice of the shipped daily closes (skfolio's S&P 500 data): two stocks and the index, 2017."""
    from jaxkit import forecast as fc

    return fc.load_prices(["AAPL", "XOM"], "2017-01-01", "2017-12-31")


def _log_returns() -> Any:
    import numpy as np

    return np.log(_prices()[0]).diff().fillna(0.0)


def _market_data() -> Any:
    """A tiny MarketData (12 dates, 2 assets, 1 macro column, 1 signal)."""
    import numpy as np
    from _fuzz_factories import _dates, _normal

    from jaxkit import forecast as fc

    t = 12
    return fc.MarketData(
        dates=np.asarray(_dates(t)),
        tickers=("a", "b"),
        prices=np.exp(np.cumsum(0.01 * _normal(t, 2), 0)),
        log_returns=0.01 * _normal(t, 2, seed=1),
        macro=_normal(t, 1, seed=2),
        signals=_normal(t, 2, 1, seed=3),
        macro_names=("m",),
        signal_names=("s",),
    )


def _diffusion_forecaster() -> dict[str, Any]:
    from _fuzz_factories import _forecaster

    m = _forecaster()
    return {"denoiser": m.denoiser, "schedule": m.schedule, "scale": m.scale}


def _market_data_fields() -> dict[str, Any]:
    import dataclasses

    d = _market_data()
    return {
        f.name: getattr(d, f.name) for f in dataclasses.fields(d) if f.name not in ("scale", "warmup_rows")
    }


def _align_published() -> dict[str, Any]:
    import numpy as np
    import pandas as pd
    from _fuzz_factories import _dates

    monthly = pd.date_range("2015-01-01", periods=6, freq="MS")
    values = pd.Series(np.arange(6, dtype=np.float64), index=monthly, name="x")
    return {"values": values, "available": monthly + pd.Timedelta(days=14), "dates": _dates(60)[10:]}


def _baseline_paths() -> dict[str, Any]:
    import numpy as np
    from _fuzz_factories import _normal

    return {
        "log_returns": 0.01 * _normal(30, 2),
        "positions": np.array([10, 20]),
        "lookback": 10,
        "horizon": 2,
        "n_samples": 4,
        "methods": ("bootstrap", "gaussian", "ewma_gaussian"),
    }


def _calibrate_spread() -> dict[str, Any]:
    import numpy as np
    from _fuzz_factories import _normal

    return {
        "paths": _normal(4, 6, 2, 2),
        "truth": _normal(4, 2, 2, seed=1),
        "positions": np.array([3, 6, 9, 12]),
        "horizon": 2,
        "min_history": 1,
    }


def _forecast_windows() -> dict[str, Any]:
    import numpy as np

    return {"data": _market_data(), "index": np.array([4, 6, 8]), "history": 4, "horizon": 2}


def _saved_forecaster() -> Any:
    import tempfile
    from pathlib import Path

    from _fuzz_factories import _forecaster, _tmp

    from jaxkit import forecast as fc

    path = Path(tempfile.mkdtemp(prefix="forecaster-", dir=_tmp())) / "model"
    fc.save_forecaster(path, _forecaster(), {"note": "fuzz"})
    return path


def _save_forecaster() -> dict[str, Any]:
    import tempfile
    from pathlib import Path

    from _fuzz_factories import _forecaster, _tmp

    return {
        "path": Path(tempfile.mkdtemp(prefix="forecaster-", dir=_tmp())) / "model",
        "model": _forecaster(),
    }


def _load_macro() -> dict[str, Any]:
    import pandas as pd

    return {"dates": pd.bdate_range("2015-01-01", periods=20)}


def _stock_signals() -> dict[str, Any]:
    import numpy as np

    lr = _log_returns()
    index = _prices()[1]
    market = np.log(index).diff().fillna(0.0)
    oil = market.rename("oil") * 0.5
    return {"log_returns": lr, "market": market, "oil": oil}


def _train_forecaster() -> dict[str, Any]:
    from _fuzz_factories import KEY, _forecaster, _windows

    return {
        "model": _forecaster(),
        "windows": _windows(),
        "n_steps": 2,
        "batch_size": 3,
        "key": KEY,
        "progress": False,
    }


FACTORIES: dict[str, Callable[[], dict[str, Any]]] = {
    "jaxkit.forecast.DiffusionForecaster": _diffusion_forecaster,
    "jaxkit.forecast.MarketData": _market_data_fields,
    "jaxkit.forecast.align_published": _align_published,
    "jaxkit.forecast.baseline_paths": _baseline_paths,
    "jaxkit.forecast.calibrate_spread": _calibrate_spread,
    "jaxkit.forecast.forecast_windows": _forecast_windows,
    "jaxkit.forecast.load_forecaster": lambda: {"path": _saved_forecaster()},
    "jaxkit.forecast.load_macro": _load_macro,
    "jaxkit.forecast.save_forecaster": _save_forecaster,
    "jaxkit.forecast.stock_signals": _stock_signals,
    "jaxkit.forecast.train_forecaster": _train_forecaster,
}
