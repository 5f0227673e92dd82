"""Fixed-width arithmetic for SSMs: k-bit fixed point and low-bit floats, with rounding and overflow modes.

Alsmann, Noori & Lange (ICLR 2026) separate SSMs over fixed-width arithmetic ("quantized" models, which stay
within the regular languages) from SSMs with unbounded precision (which can count). A :class:`Precision` describes
the number format that states and activations are rounded to after every operation of the recurrence:

* ``FixedPoint(int_bits, frac_bits)``: two's-complement numbers ``m · 2^-frac_bits`` with
  ``m ∈ [-2^(int_bits+frac_bits-1), 2^(int_bits+frac_bits-1) - 1]``; overflow ``"saturate"`` or ``"wrap"``.
* ``LowFloat(exp_bits, mant_bits)``: IEEE-like binary floats with ``mant_bits`` stored mantissa bits (plus the
  implicit one), ``exp_bits`` exponent bits, subnormals, saturating to the largest finite value.
* ``Native("float32" | "float64")``: just a dtype cast.

Rounding modes: ``"nearest"`` (ties to even), ``"floor"``, ``"toward_zero"``. Complex values are rounded part by
part. The carrier is the input dtype: results below float32's normal range (~1e-38) are flushed to zero by XLA on
CPU, so low-bit formats with 8 exponent bits lose their subnormals there. ``quantize(x, fmt)`` is a pure function and differentiable almost nowhere (use it for evaluation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

import jax
import jax.numpy as jnp

from jaxkit._validate import check_choice, check_int, finite_checked

ROUNDING = ("nearest", "floor", "toward_zero")
OVERFLOW = ("saturate", "wrap")


@dataclass(frozen=True)
class FixedPoint:
    """Signed two's-complement fixed point with ``int_bits`` integer bits (sign included) and ``frac_bits``."""

    int_bits: int
    frac_bits: int
    rounding: str = "nearest"
    overflow: str = "saturate"

    def __post_init__(self) -> None:
        check_int("int_bits", self.int_bits, minimum=1)
        check_int("frac_bits", self.frac_bits, minimum=0)
        check_choice("rounding", self.rounding, ROUNDING)
        check_choice("overflow", self.overflow, OVERFLOW)
        if self.int_bits + self.frac_bits > 52:
            raise ValueError(
                f"int_bits + frac_bits: expected <= 52 (float64 carrier), received "
                f"{self.int_bits + self.frac_bits}"
            )

    @property
    def bits(self) -> int:
        return self.int_bits + self.frac_bits

    @property
    def max_value(self) -> float:
        """Largest representable value ``2^(int_bits-1) - 2^-frac_bits``."""
        return 2.0 ** (self.int_bits - 1) - 2.0 ** (-self.frac_bits)

    @property
    def min_value(self) -> float:
        return -(2.0 ** (self.int_bits - 1))


@dataclass(frozen=True)
class LowFloat:
    """Binary float with ``exp_bits`` exponent bits and ``mant_bits`` stored mantissa bits (bfloat16 = (8, 7))."""

    exp_bits: int
    mant_bits: int
    rounding: str = "nearest"

    def __post_init__(self) -> None:
        check_int("exp_bits", self.exp_bits, minimum=2)
        check_int("mant_bits", self.mant_bits, minimum=0)
        check_choice("rounding", self.rounding, ROUNDING)
        if self.exp_bits > 11 or self.mant_bits > 52:
            raise ValueError(
                f"LowFloat: expected exp_bits <= 11 and mant_bits <= 52, received "
                f"({self.exp_bits}, {self.mant_bits})"
            )

    @property
    def bias(self) -> int:
        return 2 ** (self.exp_bits - 1) - 1

    @property
    def max_value(self) -> float:
        return (2.0 - 2.0 ** (-self.mant_bits)) * 2.0**self.bias

    @property
    def integer_limit(self) -> int:
        """Smallest positive integer n such that n + 1 is not representable: ``2^(mant_bits+1)``."""
        return 2 ** (self.mant_bits + 1)


@dataclass(frozen=True)
class Native:
    """Plain float32 or float64 arithmetic."""

    dtype: str = "float32"

    def __post_init__(self) -> None:
        check_choice("dtype", self.dtype, ("float32", "float64"))


Precision: TypeAlias = FixedPoint | LowFloat | Native


def _round(x: jax.Array, mode: str) -> jax.Array:
    if mode == "nearest":
        return jnp.round(x)  # ties to even
    if mode == "floor":
        return jnp.floor(x)
    return jnp.trunc(x)


def _quantize_real(x: jax.Array, fmt: Any) -> jax.Array:
    if isinstance(fmt, Native):
        return x.astype(fmt.dtype).astype(x.dtype)
    if isinstance(fmt, FixedPoint):
        scale = 2.0**fmt.frac_bits
        m = _round(x * scale, fmt.rounding)
        lo, hi = -(2.0 ** (fmt.bits - 1)), 2.0 ** (fmt.bits - 1) - 1
        if fmt.overflow == "saturate":
            m = jnp.clip(m, lo, hi)
        else:
            span = 2.0**fmt.bits
            m = jnp.mod(m - lo, span) + lo
        return (m / scale).astype(x.dtype)
    if isinstance(fmt, LowFloat):
        ax = jnp.abs(x)
        min_exp = 1 - fmt.bias  # exponent of the smallest normal number
        e = jnp.floor(jnp.log2(jnp.where(ax > 0, ax, 1.0)))
        e = jnp.maximum(e, min_exp)  # subnormals share the smallest exponent
        # scale by 2^-e in two halves so that no intermediate power of two leaves float32's normal range
        e1 = jnp.floor(e / 2)
        e2 = e - e1
        m = _round(x * 2.0 ** (-e1) * 2.0 ** (-e2) * 2.0**fmt.mant_bits, fmt.rounding)
        q = m * 2.0 ** (-fmt.mant_bits) * 2.0**e1 * 2.0**e2
        q = jnp.clip(q, -fmt.max_value, fmt.max_value)
        return jnp.where(jnp.isfinite(x), q, x).astype(x.dtype)
    raise TypeError(f"fmt: expected FixedPoint, LowFloat or Native, received {type(fmt).__name__}")


def quantize(x: jax.Array, fmt: Precision | None) -> jax.Array:
    """Round ``x`` (real or complex, any shape) to the number format ``fmt``; ``None`` means no rounding.

    ``x`` must be finite (``ValueError`` naming it; under ``jax.jit``/``vmap`` a run-time error through
    ``equinox.error_if``). The layers' own rounding (:func:`quantize_unchecked`) passes NaN/inf through."""
    if fmt is not None and not isinstance(fmt, FixedPoint | LowFloat | Native):
        raise TypeError(f"fmt: expected FixedPoint, LowFloat, Native or None, received {type(fmt).__name__}")
    return quantize_unchecked(finite_checked("x", jnp.asarray(x)), fmt)


def quantize_unchecked(x: jax.Array, fmt: Precision | None) -> jax.Array:
    """:func:`quantize` without the finite check of ``x`` (NaN/inf pass through unchanged): the rounding used
    inside the models' forward passes."""
    if fmt is None:
        return x
    if not isinstance(fmt, FixedPoint | LowFloat | Native):
        raise TypeError(f"fmt: expected FixedPoint, LowFloat, Native or None, received {type(fmt).__name__}")
    x = jnp.asarray(x)
    if jnp.iscomplexobj(x):
        return jax.lax.complex(_quantize_real(x.real, fmt), _quantize_real(x.imag, fmt))
    return _quantize_real(x, fmt)


def parse_precision(spec: str) -> Precision:
    """Parse ``"float32"``, ``"float64"``, ``"fixed8.4"`` (8 integer, 4 fraction bits) or ``"float5e2m"``."""
    s = spec.strip().lower()
    if s in ("float32", "float64"):
        return Native(s)
    if s.startswith("fixed"):
        try:
            i, f = s[5:].split(".")
            return FixedPoint(int(i), int(f))
        except ValueError:
            pass
    if s.startswith("float") and s.endswith("m") and "e" in s:
        try:
            e, m = s[5:-1].split("e")
            return LowFloat(int(e), int(m))
        except ValueError:
            pass
    raise ValueError(
        f"spec: expected 'float32', 'float64', 'fixed<I>.<F>' or 'float<E>e<M>m', received {spec!r}"
    )


__all__ = ["FixedPoint", "LowFloat", "Native", "Precision", "parse_precision", "quantize"]
