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
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
