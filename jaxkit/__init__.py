"""jaxkit: JAX-first reference implementations of six recent ideas in scientific ML.

Subpackages (import them explicitly, e.g. ``from jaxkit import train``):

- ``jaxkit.train``      shared optax fit loop, atomic checkpoint/resume, data-parallel sharding
- ``jaxkit.pde``        PDE solvers that regenerate the FNO / LNO benchmark data
- ``jaxkit.operators``  Fourier and Riesz neural operators
- ``jaxkit.dynamics``   saddle-to-saddle gradient-flow simulations and closed-form theory
- ``jaxkit.stability``  noise stability estimators, propagation and regularizer
- ``jaxkit.ssm``        state space model expressivity probes
- ``jaxkit.geometry`` / ``jaxkit.diffusion`` / ``jaxkit.docking``  SE(3) diffusion and docking
- ``jaxkit.forecast`` / ``jaxkit.portfolio``  diffusion forecasters and Black–Litterman allocation

Conventions shared by every subpackage:

- Randomness comes from explicit keys, ``key=jax.random.key(seed)``. Legacy raw keys (the ``uint32`` arrays of
  shape ``(2,)`` that ``jax.random.PRNGKey`` and ``jax.random.key_data`` return) are accepted as the same key and
  give identical results; anything else (an integer seed, a ``uint32`` array of another shape) raises
  ``TypeError``.
- Precision: JAX computes in float32 unless ``jax_enable_x64`` is on. Where jaxkit converts float64 data it is
  given (training loaders, neural-operator training) it says so with a ``UserWarning``; functions with a
  ``dtype=`` argument (the dynamics flows, the portfolio solvers) compute in the precision asked for.
- Data handling is never silent: a batch size larger than the data, samples left out of every epoch and
  feature warm-up rows dropped by a data builder are each announced by one ``UserWarning`` per call.
- Errors: a bad argument raises ``ValueError``/``TypeError`` naming it. A check that can only run inside compiled
  code (``equinox.error_if``) fires at run time; jaxkit's own compiled entry points re-raise it as ``ValueError``
  with the library's message first, and :func:`jaxkit.jit` does the same for a function of yours. Under plain
  ``jax.jit`` the exception is jax's ``JaxRuntimeError: INTERNAL: CpuCallback error ...`` (its text ends with the
  message), and the first line written to stderr is the library's message instead of jax's "jax.pure_callback
  failed" and a callback traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__version__ = "0.1.0"


def jit(fun: Callable[..., Any], **jit_kwargs: Any) -> Callable[..., Any]:
    """``equinox.filter_jit(fun, **jit_kwargs)`` whose run-time check failures come back as ``ValueError`` with the
    library's own message first (e.g. ``t: diffusion time outside [0, 1] (or NaN)``), not buried in a
    ``JaxRuntimeError`` traceback. Arrays are traced, every other argument is static (Equinox's rule)."""
    import equinox as eqx

    from jaxkit._validate import library_errors

    if not callable(fun):
        raise TypeError(f"fun: expected a callable, received {type(fun).__name__}")
    return library_errors(eqx.filter_jit(fun, **jit_kwargs))


__all__ = ["__version__", "jit"]

# The first line a user reads when a jaxkit check fires inside their own jax.jit is the check's message, whichever
# subpackage (the kernels included, which import nothing from the rest of jaxkit) they imported: importing
# jaxkit._validate adds the filter to jax's callback logger (idempotent).
from jaxkit._validate import install_runtime_message_filter as _install_runtime_message_filter  # noqa: E402

_install_runtime_message_filter()
