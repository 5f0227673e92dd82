"""Validation shared inside :mod:`jaxkit.stability` (token ids, correlations, strengths, point batches)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from .._validate import check_range, is_tracer, traced_check


def check_token_ids(name: str, tokens: Any, vocab_size: int) -> Any:
    """Integer ids in ``[0, vocab_size)``: a ``ValueError`` on concrete input, an Equinox runtime error under jit
    (``eqx.error_if``) instead of the silent clamping of an out-of-range gather. Returns ``tokens`` (as array)."""
    if not is_tracer(tokens):
        arr = np.asarray(tokens)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name}: expected integer token ids, received dtype {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() >= vocab_size):
            bad = arr[(arr < 0) | (arr >= vocab_size)]
            raise ValueError(
                f"{name}: expected token ids in [0, {vocab_size}) (the vocabulary), received "
                f"{bad.size} out-of-range ids, e.g. {int(bad.flat[0])}"
            )
        return jnp.asarray(arr)
    if not jnp.issubdtype(tokens.dtype, jnp.integer):
        raise TypeError(f"{name}: expected integer token ids, received dtype {tokens.dtype}")
    return traced_check(
        tokens,
        (tokens < 0) | (tokens >= vocab_size),
        f"{name}: token ids outside the vocabulary [0, {vocab_size})",
    )


def check_rho(rho: Any, name: str = "rho") -> None:
    """``ρ`` a real number in ``[-1, 1]`` (arrays: every entry)."""
    if is_tracer(rho):
        return
    arr = np.asarray(rho, dtype=float) if not isinstance(rho, str) else None
    if arr is None or arr.dtype.kind not in "f":
        raise TypeError(f"{name}: expected a real number in [-1, 1], received {rho!r}")
    if arr.ndim == 0:
        check_range(name, float(arr), -1.0, 1.0)
    elif not (np.all(np.isfinite(arr)) and np.all(arr >= -1) and np.all(arr <= 1)):
        raise ValueError(f"{name}: expected values in [-1, 1], received {arr.tolist()}")


def rho_checked(rho: Any, name: str = "rho") -> Any:
    """``rho`` after :func:`check_rho`; a traced ``rho`` gets a run-time check (``eqx.error_if``) that it lies in
    ``[-1, 1]``, so the eager contract also holds under ``jax.jit``."""
    check_rho(rho, name)
    if not is_tracer(rho):
        return rho
    return traced_check(rho, ~((rho >= -1.0) & (rho <= 1.0)), f"{name}: expected values in [-1, 1]")


def check_gamma(gamma: Any, name: str = "gamma") -> None:
    """Regularization strength ``γ >= 0`` (finite; arrays: every entry)."""
    if is_tracer(gamma):
        return
    arr = np.asarray(gamma, dtype=float)
    if not (np.all(np.isfinite(arr)) and np.all(arr >= 0)):
        raise ValueError(f"{name}: expected a finite strength >= 0, received {gamma!r}")
