"""Input checks shared by the portfolio functions (run before tracing, on concrete arrays)."""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxkit._validate import check_finite, check_ndim, is_tracer

AnyArray = Any


def check_vector(name: str, x: Any, n: int | None = None) -> None:
    check_ndim(name, x, 1, what="a vector")
    if n is not None and np.shape(x)[0] != n:
        raise ValueError(f"{name}: expected length {n}, received shape {np.shape(x)}")
    check_finite(name, x)


def check_covariance(name: str, cov: Any, n: int | None = None, *, tol: float = 1e-10) -> None:
    """Square, symmetric, finite and positive semi-definite (eigenvalues >= -tol * max|eig|)."""
    check_ndim(name, cov, 2, what="a covariance matrix")
    shape = np.shape(cov)
    if shape[0] != shape[1]:
        raise ValueError(f"{name}: expected a square (n, n) covariance matrix, received shape {shape}")
    if n is not None and shape[0] != n:
        raise ValueError(f"{name}: expected shape ({n}, {n}) to match the {n} assets, received shape {shape}")
    check_finite(name, cov)
    if is_tracer(cov):
        return
    single = np.asarray(cov).dtype != np.float64
    c = np.asarray(cov, dtype=np.float64)
    scale = max(float(np.max(np.abs(c))), 1e-300)
    if np.max(np.abs(c - c.T)) > (1e-5 if single else 1e-9) * scale:
        raise ValueError(
            f"{name}: expected a symmetric matrix, max |C - C^T| = {np.max(np.abs(c - c.T)):.3g}"
        )
    lo = float(np.linalg.eigvalsh(0.5 * (c + c.T))[0])
    if lo < -(1e-6 if single else tol) * scale:
        raise ValueError(
            f"{name}: expected a positive semi-definite covariance matrix, smallest eigenvalue is {lo:.3g}"
        )
