"""Pallas kernels. Each ``kernels/<name>.py`` exposes ``<name>(...)`` (dispatcher: Pallas on GPU/TPU, the XLA
reference on CPU, ``interpret=True`` forces the Pallas body through the interpreter), ``<name>_reference(...)``,
and a ``jax.custom_vjp`` whose backward pass is itself a kernel. ``kernels`` imports nothing from ``jaxkit``."""
