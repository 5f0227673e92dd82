"""Diffusion forecasters of multi-asset return paths (STABLE-style): offline market data with publication lags,
a conditional CSDI-like denoiser with multi-level guidance, DDIM/ancestral sampling, baselines and metrics."""

from jaxkit.forecast._baselines import garch_paths, historical_bootstrap, rolling_gaussian
from jaxkit.forecast._data import (
    SP500_TICKERS,
    MarketData,
    align_published,
    build_market_data,
    ewma_volatility,
    forecast_windows,
    kalman_betas,
    load_macro,
    load_prices,
    rolling_zscore,
    stock_signals,
    walk_forward_splits,
)
from jaxkit.forecast._denoiser import ConditionalDenoiser, MLPDenoiser, ResidualLayer, step_embedding
from jaxkit.forecast._metrics import (
    coverage,
    crps,
    crps_sum,
    energy_distance,
    energy_test,
    moment_z_scores,
    mse,
)
from jaxkit.forecast._model import (
    DiffusionForecaster,
    forecaster_loss,
    make_forecaster,
    sample_paths,
    train_forecaster,
)
from jaxkit.forecast._synthetic import ar1_conditional_law, ar1_windows

__all__ = [
    "SP500_TICKERS",
    "ConditionalDenoiser",
    "DiffusionForecaster",
    "MLPDenoiser",
    "MarketData",
    "ResidualLayer",
    "align_published",
    "ar1_conditional_law",
    "ar1_windows",
    "build_market_data",
    "ewma_volatility",
    "coverage",
    "crps",
    "crps_sum",
    "energy_distance",
    "energy_test",
    "forecast_windows",
    "forecaster_loss",
    "garch_paths",
    "historical_bootstrap",
    "kalman_betas",
    "load_macro",
    "load_prices",
    "make_forecaster",
    "moment_z_scores",
    "mse",
    "rolling_gaussian",
    "rolling_zscore",
    "sample_paths",
    "stock_signals",
    "step_embedding",
    "train_forecaster",
    "walk_forward_splits",
]
