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
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
