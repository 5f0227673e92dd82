"""Shared helpers for the Pallas kernels: backend detection, dispatch decisions, block-size heuristics, padding and
real/imaginary planes.

Pallas has no complex dtype, so complex arrays travel as a tuple of planes ``(real, imag)``; real arrays travel as a
1-tuple ``(x,)``. Helpers here import nothing from the rest of ``jaxkit``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

Planes = tuple[jax.Array, ...]


def backend() -> str:
    """The default backend's platform name: ``'cpu'``, ``'gpu'`` or ``'tpu'``."""
    return jax.default_backend()


def use_pallas(
    interpret: bool | None, name: str, default_backends: tuple[str, ...] = ("gpu", "tpu")
) -> tuple[bool, bool]:
    """Decide the path of a kernel call.

    Returns ``(use_pallas, interpret_mode)``. ``interpret=None``: Pallas (compiled) on ``default_backends``, the
    XLA reference elsewhere (a kernel lists only the backends where it was measured faster than XLA, or not
    measured; see docs/benchmarks.md). ``interpret=True``: the Pallas body through the interpreter on any backend. ``interpret=False``: the
    compiled Pallas kernel, which needs a GPU or TPU.
    """
    if interpret is not None and not isinstance(interpret, bool):
        raise TypeError(f"{name}: interpret: expected None or a bool, received {interpret!r}")
    plat = backend()
    if interpret is None:
        return (plat in default_backends, False)
    if interpret:
        return (True, True)
    if plat not in ("gpu", "tpu"):
        raise ValueError(
            f"{name}: interpret=False asks for the compiled Pallas kernel, which needs a GPU or TPU backend; "
            f"the default backend is {plat!r}. Use interpret=None (XLA reference on CPU) or interpret=True."
        )
    return (True, False)


def compiler_params(interpret: bool, *, num_warps: int = 4, num_stages: int = 2, dims: int = 2) -> Any:
    """Backend-specific ``compiler_params`` for ``pl.pallas_call`` (``None`` in interpret mode)."""
    if interpret:
        return None
    plat = backend()
    if plat == "gpu":
        from jax.experimental.pallas import triton as plgpu

        return plgpu.CompilerParams(num_warps=num_warps, num_stages=num_stages)
    if plat == "tpu":
        from jax.experimental.pallas import tpu as pltpu

        return pltpu.CompilerParams(dimension_semantics=("parallel",) * dims)
    return None


def check_block(value: int | None, name: str, fn: str, interpret: bool) -> int | None:
    """Validate a user block size: a positive int; a power of two when compiled for GPU (Triton needs it)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{fn}: {name}: expected a positive int, received {value!r}")
    if not interpret and backend() == "gpu" and value & (value - 1):
        raise ValueError(f"{fn}: {name}: expected a power of two (Triton lowering), received {value}")
    return value


def next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def pow2_block(n: int, cap: int, floor: int = 1) -> int:
    """Power-of-two block for an axis of length ``n``: the largest power of two <= cap that divides ``n`` when it
    is at least ``floor`` (no padding needed), else ``min(cap, next_pow2(n))`` (the axis is padded)."""
    b = cap
    while b >= max(floor, 1):
        if n % b == 0:
            return b
        b //= 2
    return min(cap, next_pow2(n))


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def pad_axis(x: jax.Array, axis: int, multiple: int) -> jax.Array:
    """Zero-pad ``x`` along ``axis`` up to a multiple of ``multiple`` (no copy when already a multiple)."""
    n = x.shape[axis]
    extra = (-n) % multiple
    if extra == 0:
        return x
    widths = [(0, 0)] * x.ndim
    widths[axis] = (0, extra)
    return jnp.pad(x, widths)


def to_planes(x: jax.Array, is_complex: bool) -> Planes:
    """Split into real/imaginary planes (a 1-tuple for real computations)."""
    if is_complex:
        return (jnp.real(x), jnp.imag(x))
    return (x,)


def from_planes(p: Planes) -> jax.Array:
    return jax.lax.complex(p[0], p[1]) if len(p) == 2 else p[0]


def real_dtype(dtype: Any) -> Any:
    return jnp.finfo(dtype).dtype


def check_float_dtype(x: Any, name: str, fn: str) -> None:
    dt = jnp.result_type(x)
    if not (jnp.issubdtype(dt, jnp.floating) or jnp.issubdtype(dt, jnp.complexfloating)):
        raise TypeError(f"{fn}: {name}: expected a real floating or complex dtype, received {dt}")


# The messages of the run-time checks made here: jaxkit's filter on JAX's callback logger rewrites the stderr record of
# a check that fires under a user's ``jax.jit`` into its message when the message is listed here.
TRACED_MESSAGES: dict[str, None] = {}


def finite_checked(x: jax.Array, name: str, fn: str) -> jax.Array:
    """``x``, refused with ``ValueError`` naming ``name`` when it holds NaN or ±inf: eagerly for a concrete array,
    at run time (``equinox.error_if``, also under ``jax.jit``/``vmap``) for a traced one."""
    import equinox as eqx
    import numpy as np

    msg = f"{fn}: {name}: expected finite values, received NaN/inf entries"
    if isinstance(x, jax.core.Tracer):
        TRACED_MESSAGES[msg] = None  # one per kernel and argument
        return eqx.error_if(x, ~jnp.all(jnp.isfinite(x)), msg)
    arr = np.asarray(x)
    if not np.all(np.isfinite(arr)):
        n_bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{msg} ({n_bad} of {arr.size}, shape {arr.shape})")
    return x


def as_array(x: Any, name: str, fn: str) -> jax.Array:
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        raise TypeError(f"{fn}: {name}: expected an array, received {type(x).__name__}")
    check_float_dtype(x, name, fn)
    return x
