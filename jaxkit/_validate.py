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
