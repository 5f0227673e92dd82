r"""Synthetic return paths with a known conditional law, for checking a forecaster end to end.

Vector AR(1) with isotropic persistence: $x_s = \phi\,x_{s-1} + A\,\xi_s$, $\xi_s\sim N(0, I_N)$,
started from the stationary law $N(0, AA^\top/(1-\phi^2))$. Given the last observed value $x_0$, the
future path $(x_1,\dots,x_H)$ is Gaussian with mean $(\phi^h x_0)_h$ and covariance
$\mathrm{Cov}(x_h, x_{h'}) = \phi^{|h-h'|}\sum_{j=0}^{\min(h,h')-1}\phi^{2j}\,AA^\top$ (flattened in
(horizon, asset) order, as the forecaster's (H, N) targets).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxkit._typing import ArrayInput
from jaxkit._validate import check_finite, check_size, seed_rng

__all__ = ["ar1_conditional_law", "ar1_windows"]


def _check(phi: float, A: Any) -> np.ndarray:
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A: expected a square (N, N) matrix, received shape {A.shape}")
    check_finite("A", A)
    if not -1.0 < phi < 1.0:
        raise ValueError(f"phi: expected a value in (-1, 1) (stationary), received {phi}")
    return A


def ar1_windows(
    n: int, history: int, horizon: int, phi: float, A: ArrayInput, *, seed: int
) -> dict[str, np.ndarray]:
    """``n`` independent stationary windows as forecaster training data: ``history (n, L, N)``, ``target
    (n, H, N)``, and constant ``macro (n, 1)`` / ``signals (n, N, 1)`` (zeros: the law needs no context)."""
    A = _check(phi, A)
    for name, v, lo in (("n", n, 1), ("history", history, 1), ("horizon", horizon, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name}: expected an integer >= {lo}, received {v!r}")
    N = A.shape[0]
    check_size(
        "n", 8 * n * (history + horizon) * N * 2, hint=f"{n} windows of {history + horizon} steps x {N}"
    )
    rng = seed_rng(seed)
    x = np.zeros((n, history + horizon, N))
    x[:, 0] = rng.normal(size=(n, N)) @ A.T / np.sqrt(1 - phi**2)
    for s in range(1, history + horizon):
        x[:, s] = phi * x[:, s - 1] + rng.normal(size=(n, N)) @ A.T
    return {
        "history": x[:, :history],
        "target": x[:, history:],
        "macro": np.zeros((n, 1)),
        "signals": np.zeros((n, N, 1)),
    }


def ar1_conditional_law(
    last: ArrayInput, horizon: int, phi: float, A: ArrayInput
) -> tuple[np.ndarray, np.ndarray]:
    """Mean ``(H N,)`` and covariance ``(H N, H N)`` of the next ``horizon`` values given the last value."""
    A = _check(phi, A)
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
        raise ValueError(f"horizon: expected an integer >= 1, received {horizon!r}")
    last = np.asarray(last, dtype=np.float64)
    if last.shape != (A.shape[0],):
        raise ValueError(f"last: expected shape ({A.shape[0]},), received {last.shape}")
    check_finite("last", last)
    S = A @ A.T
    mean = np.concatenate([phi**h * last for h in range(1, horizon + 1)])
    blocks = [
        [phi ** abs(h - g) * sum(phi ** (2 * j) for j in range(min(h, g))) * S for g in range(1, horizon + 1)]
        for h in range(1, horizon + 1)
    ]
    return mean, np.block(blocks)
