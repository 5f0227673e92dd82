r"""Docking as SE(3)^N diffusion over rigid fragments: thin adapters from :class:`DockingComplex` to
:class:`jaxkit.diffusion.SE3Diffusion` (one process, body-frame rotations, ``"eps"`` parametrization).

- :func:`docking_process`: rotations VE on SO(3), $\sigma$ from 0.1 to 1.5 rad (SigmaDock/DiffDock); translations
  VE with $\sigma$ from 0.05 to 2.0 (units of 2.7 Å), or SigmaDock's VP ($\beta$ 0.1 → 20) with
  ``translation="vp"``. VE is our default (documented choice): it does not shrink fragment centers by
  $\alpha(t)$, so the bonded geometry the bond springs of the score model pull towards is the same at every
  noise level.
- :func:`dsm_loss` / :func:`batch_loss`: the normalized DSM loss of :meth:`SE3Diffusion.dsm_loss` with padding
  fragments masked.
- :func:`sample_poses`: the reverse process from the prior (Haar rotations, Gaussian centers) on an EDM time grid
  ($\rho = 3$), DDIM with $\eta = 1$ by default (ancestral; ``sampler=EulerMaruyama()``/``ProbabilityFlowODE()`` also work), no noise on the
  last step, and the Tweedie estimate at the last time as the result (``denoise_final``); many samples per
  complex in one ``vmap`` (:func:`dock_samples`).
- :func:`exact_model`: the exact score when the data are a point mass at the target pose ``(R0, T0)``, in the
  model's parametrization; sampling with it must return the target (a check of the diffusion, not of learning).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Literal

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, PRNGKeyArray

from jaxkit import diffusion as dm
from jaxkit.diffusion import igso3
from jaxkit.geometry import so3

from .._validate import check_int, check_positive, check_range, check_size, is_tracer
from ._complex import LENGTH_SCALE, DockingComplex

DockModel = Callable[[DockingComplex, Array, Array, Array], tuple[Array, Array]]


def docking_process(translation: Literal["ve", "vp"] = "ve", trans_sigma_max: float = 2.0) -> dm.SE3Diffusion:
    """The SE(3)^N process used for docking (see the module docstring); ``trans_sigma_max`` in units of 2.7 Å."""
    if translation not in ("ve", "vp"):
        raise ValueError(f"translation: expected 've' or 'vp', received {translation!r}")
    if not (math.isfinite(trans_sigma_max) and trans_sigma_max > 0.05):
        raise ValueError(
            f"trans_sigma_max: expected a finite value > 0.05 (the schedule's sigma_min), "
            f"received {trans_sigma_max!r}"
        )
    trans = dm.VESchedule(0.05, trans_sigma_max) if translation == "ve" else dm.VPSchedule(0.1, 20.0)
    return dm.SE3Diffusion(rot=dm.VESchedule(0.1, 1.5), trans=trans, parametrization="eps")


def _bind(model: DockModel, c: DockingComplex):
    return lambda R, x, t: model(c, R, x, t)


def dsm_loss(
    model: DockModel,
    process: dm.SE3Diffusion,
    c: DockingComplex,
    key: PRNGKeyArray,
    *,
    t: Array | None = None,
    t_min: float = 1e-3,
) -> Array:
    """Normalized DSM loss of one complex (``fn, process, data, key, *, t, t_min`` as every ``dsm_loss``)."""
    if not is_tracer(t_min):
        check_range("t_min", t_min, 0.0, 1.0, closed=False)
    return process.dsm_loss(_bind(model, c), c.R0, c.T0, key, t=t, t_min=t_min, mask=c.fragment_mask)


def batch_loss(
    model: DockModel,
    process: dm.SE3Diffusion,
    batch: DockingComplex,
    key: PRNGKeyArray,
    *,
    t_power: float = 1.0,
) -> Array:
    """Mean :func:`dsm_loss` over a stacked batch (one key per complex; times stratified over the batch).

    ``t = t_min + (1 - t_min) u^t_power`` with stratified uniform ``u``: ``t_power < 1`` puts more of the batch at
    high noise (where the global placement is decided)."""
    if not is_tracer(t_power):
        check_positive("t_power", t_power)
    b = batch.T0.shape[0]
    k_t, k_n = jax.random.split(key)
    t_min = 1e-3
    u = (jnp.arange(b) + jax.random.uniform(k_t, (b,))) / b  # stratified U(0, 1): lower-variance batches
    ts = t_min + (1.0 - t_min) * u**t_power
    keys = jax.random.split(k_n, b)
    return jnp.mean(jax.vmap(lambda c, k, t: dsm_loss(model, process, c, k, t=t))(batch, keys, ts))


def exact_model(process: dm.SE3Diffusion) -> DockModel:
    """Exact conditional score of a point mass at ``(c.R0, c.T0)``, in ``process``'s parametrization."""

    def model(c: DockingComplex, R: Array, T: Array, t: Array) -> tuple[Array, Array]:
        s_rot = igso3.score(R, process.rot.sigma(t), mean=c.R0)
        s_tr = -(T - process.trans.alpha(t) * c.T0) / process.trans.sigma(t) ** 2
        return process.from_scores(s_rot, s_tr, t)

    return model


def sample_poses(
    model: DockModel,
    process: dm.SE3Diffusion,
    c: DockingComplex,
    key: PRNGKeyArray,
    *,
    n_steps: int = 30,
    sampler: dm.AbstractSE3Sampler = dm.DDIM(eta=1.0),
    rho: float = 3.0,
    t_min: float = 1e-3,
    box: float | None = 12.0,
) -> tuple[Float[Array, "f 3 3"], Float[Array, "f 3"]]:
    """One sample of all fragment poses ``(R, T)`` (scaled units) from the prior; ``box`` (Å) clips the denoised
    fragment centers to a ball around the pocket center (DDIM's x0-clipping; the ligand lies in the pocket)."""
    if box is not None and not is_tracer(box):
        check_positive("box", box)
    F = c.T0.shape[0]
    k0, k1 = jax.random.split(key)
    R, T = process.prior_sample(k0, F)
    ts = dm.time_grid(n_steps, t_min, 1.0, kind="edm", rho=rho)
    if box is not None and isinstance(sampler, dm.DDIM):
        sampler = dataclasses.replace(sampler, x0_clip=box / LENGTH_SCALE)
    return process.sample(
        _bind(model, c),
        R,
        T,
        k1,
        ts,
        sampler=sampler,
        noise_final=False,
        denoise_final=True,
    )


def dock_samples(
    model: DockModel,
    process: dm.SE3Diffusion,
    c: DockingComplex,
    key: PRNGKeyArray,
    *,
    n_samples: int,
    **kw: object,
) -> tuple[Float[Array, "n f 3 3"], Float[Array, "n f 3"]]:
    """``n_samples`` independent :func:`sample_poses` in one vmapped call."""
    check_int("n_samples", n_samples, minimum=1)
    F = c.T0.shape[0]
    check_size("n_samples", n_samples * F * 12 * 4, hint=f"n_samples={n_samples} poses of {F} fragments")
    keys = jax.random.split(key, n_samples)
    return jax.vmap(lambda k: sample_poses(model, process, c, k, **kw))(keys)


def random_poses(c: DockingComplex, key: PRNGKeyArray, n: int) -> tuple[Array, Array]:
    """Prior draws (Haar rotations, N(0, 1) centers in scaled units): a sanity baseline, not a docking method."""
    check_int("n", n, minimum=1)
    F = c.T0.shape[0]
    check_size("n", n * F * 12 * jnp.dtype(jnp.float32).itemsize, hint=f"n={n} poses of {F} fragments")
    kr, kt = jax.random.split(key)
    return so3.random_uniform(kr, (n, F)), jax.random.normal(kt, (n, F, 3))
