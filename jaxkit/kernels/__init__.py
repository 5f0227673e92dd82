"""Pallas kernels. Each ``jaxkit/kernels/<name>.py`` exposes ``<name>(...)`` (dispatcher: Pallas on GPU/TPU, the XLA
reference on CPU, ``interpret=True`` forces the Pallas body through the interpreter), ``<name>_reference(...)``,
and a ``jax.custom_vjp`` whose backward pass is itself a kernel. It imports nothing from the rest of ``jaxkit``.

- :func:`jaxkit.kernels.spectral_mix.spectral_mix`: ``out[b,o,k] = Σ_i x[b,i,k] w[i,o,k]`` (FNO/RNO mode mixing).
- :func:`jaxkit.kernels.linear_scan.linear_scan`: ``h_t = a_t ⊙ h_{t-1} + b_t`` (diagonal SSM recurrence).

Import from the modules (``from jaxkit.kernels.spectral_mix import spectral_mix``): the package does not re-export the
functions, so ``jaxkit.kernels.spectral_mix`` stays the module.
"""

from . import linear_scan as linear_scan
from . import spectral_mix as spectral_mix

__all__ = ["linear_scan", "spectral_mix"]
