"""Input validation helpers for public entry points.

Every public function checks its arguments *before* tracing and raises ``ValueError``/``TypeError`` whose message
names the argument, what was expected and what was received. These helpers keep those messages uniform.
They operate on static information (shapes, dtypes, Python numbers); ``check_finite`` reads concrete values and is
skipped under tracing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(np.shape(x))


def check_ndim(name: str, x: Any, ndim: int | Sequence[int], *, what: str = "") -> None:
    """Raise ``ValueError`` unless ``x.ndim`` is ``ndim`` (or one of ``ndim``)."""
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    shape = _shape(x)
    if len(shape) not in allowed:
        exp = " or ".join(str(a) for a in allowed)
        extra = f" ({what})" if what else ""
        raise ValueError(f"{name}: expected an array with {exp} dimensions{extra}, received shape {shape}")


def check_shape(name: str, x: Any, expected: Sequence[int | None]) -> None:
    """Raise ``ValueError`` unless ``x.shape`` matches ``expected`` (``None`` matches any size)."""
    shape = _shape(x)
    exp = tuple(expected)
    if len(shape) != len(exp) or any(e is not None and e != s for e, s in zip(exp, shape)):
        pretty = "(" + ", ".join("*" if e is None else str(e) for e in exp) + ")"
        raise ValueError(f"{name}: expected shape {pretty}, received shape {shape}")


def check_trailing_shape(name: str, x: Any, shape: tuple[int, ...]) -> None:
    """Raise ``ValueError`` unless the last dimensions of ``x`` are ``shape`` (any leading batch dimensions)."""
    s = _shape(x)
    if len(s) < len(shape) or s[len(s) - len(shape) :] != tuple(shape):
        pretty = "(..., " + ", ".join(map(str, shape)) + ")"
        raise ValueError(f"{name}: expected shape {pretty}, received shape {s}")


def check_real(name: str, x: Any) -> None:
    """Raise ``TypeError`` if ``x`` is complex (or not numeric)."""
    dtype = jnp.result_type(x)
    if jnp.issubdtype(dtype, jnp.complexfloating):
        raise TypeError(f"{name}: expected a real array, received dtype {dtype}")
    if not (jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(dtype, jnp.integer) or dtype == jnp.bool_):
        raise TypeError(f"{name}: expected a numeric array, received dtype {dtype}")


def check_float(name: str, x: Any) -> None:
    """Raise ``TypeError`` unless ``x`` has a real floating dtype."""
    dtype = jnp.result_type(x)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(f"{name}: expected a real floating-point array, received dtype {dtype}")


def check_positive(name: str, value: Any, *, strict: bool = True) -> None:
    """Raise ``ValueError`` unless a Python/NumPy scalar is > 0 (or >= 0 with ``strict=False``)."""
    v = float(value)
    if not np.isfinite(v) or (v <= 0 if strict else v < 0):
        rel = "> 0" if strict else ">= 0"
        raise ValueError(f"{name}: expected a finite value {rel}, received {value!r}")


def check_range(name: str, value: Any, lo: float, hi: float, *, closed: bool = True) -> None:
    """Raise ``ValueError`` unless ``lo <= value <= hi`` (open interval with ``closed=False``)."""
    v = float(value)
    ok = (lo <= v <= hi) if closed else (lo < v < hi)
    if not ok or not np.isfinite(v):
        br = ("[", "]") if closed else ("(", ")")
        raise ValueError(f"{name}: expected a value in {br[0]}{lo}, {hi}{br[1]}, received {value!r}")


def check_int(name: str, value: Any, *, minimum: int | None = None) -> None:
    """Raise ``TypeError`` unless ``value`` is an integer, ``ValueError`` if below ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name}: expected an integer, received {type(value).__name__} {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, received {value}")


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> None:
    """Raise ``ValueError`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name}: expected one of {list(choices)}, received {value!r}")


def is_tracer(x: Any) -> bool:
    return isinstance(x, jax.core.Tracer)


def check_finite(name: str, x: Any) -> None:
    """Raise ``ValueError`` if a concrete array holds NaN or inf (no-op on tracers)."""
    if is_tracer(x):
        return
    arr = np.asarray(x)
    if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        n_bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name}: expected finite values, received {n_bad} NaN/inf entries (shape {arr.shape})")


# ==============================================================================================================
# Portfolio / forecast checks (owned by jaxkit.portfolio and jaxkit.forecast; moved from portfolio/_checks.py)
# ==============================================================================================================


def as_float_array(name: str, x: Any, *, ndim: int | None = None, what: str = "") -> np.ndarray:
    """``x`` (list, tuple, NumPy or JAX array) as a float64 NumPy array; ``TypeError`` naming ``name`` for
    non-numeric input, ``ValueError`` for a wrong number of dimensions."""
    if is_tracer(x):
        raise TypeError(f"{name}: expected a concrete array, received a traced value")
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as e:  # ragged lists
        raise TypeError(f"{name}: expected a numeric array, received {type(x).__name__} ({e})") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected a real numeric array, received dtype {arr.dtype}")
    if ndim is not None:
        check_ndim(name, arr, ndim, what=what)
    return arr.astype(np.float64)


def float_dtype(*xs: Any) -> Any:
    """The floating dtype that results from ``xs`` (lists and integers give the default float), as JAX can hold
    it (float32 unless ``jax_enable_x64``)."""
    dts = [np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype for x in xs]
    d = np.result_type(*dts)
    d = d if np.issubdtype(d, np.floating) else np.dtype(np.float64)
    return jax.dtypes.canonicalize_dtype(d)  # float32 unless jax_enable_x64


def check_vector(name: str, x: Any, n: int | None = None) -> None:
    """A finite 1-D vector (of length ``n`` if given)."""
    if not is_tracer(x):
        as_float_array(name, x)
    check_ndim(name, x, 1, what="a vector")
    if n is not None and np.shape(x)[0] != n:
        raise ValueError(f"{name}: expected length {n}, received shape {np.shape(x)}")
    check_finite(name, x)


def check_covariance(name: str, cov: Any, n: int | None = None, *, tol: float = 1e-10) -> None:
    """Square, symmetric, finite and positive semi-definite (eigenvalues >= -tol * max|eig|)."""
    if not is_tracer(cov):
        as_float_array(name, cov)
    check_ndim(name, cov, 2, what="a covariance matrix")
    shape = np.shape(cov)
    if shape[0] != shape[1]:
        raise ValueError(f"{name}: expected a square (n, n) covariance matrix, received shape {shape}")
    if n is not None and shape[0] != n:
        raise ValueError(f"{name}: expected shape ({n}, {n}) to match the {n} assets, received shape {shape}")
    check_finite(name, cov)
    if is_tracer(cov):
        return
    single = np.asarray(cov).dtype not in (np.float64, np.int64, np.int32)
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


def check_positive_definite(
    name: str, mat: Any, *, rtol: float = 1e-12, scale: float | None = None, why: str = ""
) -> None:
    """Raise ``ValueError`` unless the symmetric matrix ``mat`` has smallest eigenvalue > ``rtol * scale``
    (``scale``: the size of the problem's entries; default the largest eigenvalue)."""
    c = np.asarray(mat, dtype=np.float64)
    ev = np.linalg.eigvalsh(0.5 * (c + c.T))
    ref = ev[-1] if scale is None else max(float(scale), ev[-1])
    if not ref > 0 or ev[0] <= rtol * ref:
        extra = f" ({why})" if why else ""
        raise ValueError(
            f"{name}: expected a positive definite matrix{extra}, eigenvalues range {ev[0]:.3g} .. {ev[-1]:.3g}"
        )
