"""Portfolio construction: Black–Litterman (classic and STABLE's precision form), long-only allocation by a JAX
interior-point QP, Ledoit–Wolf covariance, a walk-forward backtest engine and performance metrics."""

from jaxkit.portfolio._allocation import (
    equal_weight,
    inverse_volatility,
    max_sharpe,
    mean_variance,
    min_variance,
    solve_qp_nonneg,
    tangency,
)
from jaxkit.portfolio._backtest import (
    BacktestResult,
    check_prices,
    rebalance_indices,
    run_backtest,
    simulate,
    walk_forward,
)
from jaxkit.portfolio._black_litterman import (
    black_litterman,
    black_litterman_core,
    he_litterman_omega,
    idzorek_omega,
    market_implied_prior_returns,
    market_implied_risk_aversion,
    precision_black_litterman,
    precision_black_litterman_core,
)
from jaxkit.portfolio._covariance import ledoit_wolf, ledoit_wolf_core, sample_covariance
from jaxkit.portfolio._metrics import (
    annualized_return,
    annualized_volatility,
    calmar_ratio,
    drawdown,
    max_drawdown,
    performance_summary,
    sharpe_ratio,
    sortino_ratio,
)

__all__ = [
    "BacktestResult",
    "annualized_return",
    "annualized_volatility",
    "black_litterman",
    "black_litterman_core",
    "calmar_ratio",
    "check_prices",
    "drawdown",
    "equal_weight",
    "he_litterman_omega",
    "idzorek_omega",
    "inverse_volatility",
    "ledoit_wolf",
    "ledoit_wolf_core",
    "market_implied_prior_returns",
    "market_implied_risk_aversion",
    "max_drawdown",
    "max_sharpe",
    "mean_variance",
    "min_variance",
    "performance_summary",
    "precision_black_litterman",
    "precision_black_litterman_core",
    "rebalance_indices",
    "run_backtest",
    "sample_covariance",
    "sharpe_ratio",
    "simulate",
    "solve_qp_nonneg",
    "sortino_ratio",
    "tangency",
    "walk_forward",
]
