"""Diffusion processes on R^n, SO(3) and SE(3)^N: schedules, forward marginals, scores, losses, samplers.

Euclidean API (used by ``jaxkit.forecast``)::

    from jaxkit import diffusion as dm
    sched = dm.discrete_schedule("quadratic", 50, beta_start=1e-4, beta_end=0.5)   # CSDI; also "linear", "cosine"
    sched.betas, sched.alphas, sched.alpha_bars, sched.alpha_bars_prev, sched.posterior_variance  # (T,) tables
    x_t = dm.q_sample(sched, x0, t_index, noise)            # sqrt(abar) x0 + sqrt(1-abar) noise
    loss = dm.eps_loss(eps_fn, sched, x0, key)               # one sample; vmap over (x0, key)
    dm.conditional_score(sched, x_t, x0, t_index)            # -(x_t - sqrt(abar) x0)/(1-abar)
    dm.q_posterior(sched, x0, x_t, t_index) -> (mean, var);  dm.predict_x0, dm.eps_to_score, dm.score_to_eps
    x0 = dm.ddim_sample(eps_fn, sched, x_T, key, n_steps=10, eta=0.0)   # eps_fn(x_t, t_index int32)
    x0 = dm.ddpm_sample(eps_fn, sched, x_T, key)                          # ancestral, posterior variance
    # time_input="fraction" passes (t_index+1)/T as a float instead of the index.
    # jit: jax.jit(lambda xT, k: dm.ddim_sample(eps_fn, sched, xT, k, n_steps=10)); vmap over (xT, k).

Continuous schedules (``t in [0, 1]``, ``x_t = alpha(t) x0 + sigma(t) eps``): ``VPSchedule(beta_min=0.1,
beta_max=20)``, ``CosineVPSchedule()``, ``VESchedule(sigma_min, sigma_max)`` (geometric); methods ``alpha, sigma,
drift_coef (f), diffusion (g)``. ``edm_grid(n, lo, hi, rho)`` / ``edm_sigma_grid`` / ``time_grid(n, t_min, t_max,
kind="uniform"|"edm")``. The same ``q_sample``, ``conditional_score``, ``gaussian_marginal_score`` and
``dsm_loss(score_fn, sched, x0, key)`` (normalized ``|sigma s + eps|^2``) accept continuous schedules with a float
``t``. ``reverse_sde_sample(score_fn, sched, x_T, key, ts)`` (Euler–Maruyama, diffrax) and
``probability_flow_sample(score_fn, sched, x_T, ts)`` (Heun, diffrax) integrate from ``ts[0]`` down to ``ts[-1]``.

SO(3) and SE(3)^N API (used by ``jaxkit.docking``); one convention: body-frame rotations ``R_t = R_0 exp(hat v)``::

    from jaxkit.diffusion import igso3, so3_diffusion   # IGSO(3)(sigma) law; VE diffusion on SO(3)
    igso3.sample(key, sigma, shape, mean=None)         # (*shape, 3, 3) rotations; sigma in [1e-3, 5], may be an array
    igso3.sample_vector / sample_angle                 # rotation vectors / angles
    igso3.log_density(omega, sigma), angle_density, cdf, cdf_reference (NumPy float64), dlog_density
    igso3.score(R, sigma, mean=None) -> (..., 3)       # body frame: grad_R log p = R hat(s)
    igso3.score_vector(v, sigma) = v/|v| dlogf/domega;  igso3.score_norm(sigma) = sqrt(E (dlogf/domega)^2)
    so3_diffusion.perturb(key, R0, sigma) -> (R_t, v);  conditional_score(R_t, R0, sigma);  dsm_loss(...)
    so3_diffusion.brownian_motion(key, R0, total_time, n_steps)
    so3_diffusion.reverse_sde_sample(score_fn, ve_sched, R_T, key, ts);  probability_flow_sample(score_fn, ve_sched, R_T, ts)

    sd = SE3Diffusion(rot=VESchedule(0.1, 1.5), trans=VPSchedule(0.1, 20.0), parametrization="score" | "eps")
    m = sd.forward_marginal(key, R0, x0, t)   # SE3Marginal(R_t, x_t, rot_score, trans_score, v, z, sigma_rot, sigma_trans)
    loss = sd.dsm_loss(model, R0, x0, key, t=None, mask=None)   # model(R, x, t) -> (rot_out (N,3), trans_out (N,3))
    R, x = sd.prior_sample(key, N)                     # Haar rotations, N(0, sigma_tr(1)^2) translations
    R, x = sd.sample(model, R, x, key, time_grid(30, 1e-3, 1.0, kind="edm", rho=3), sampler=dm.DDIM(eta=1.0))
    # samplers: dm.EulerMaruyama() (default), dm.ProbabilityFlowODE(), dm.DDIM(eta, x0_clip)
    normalize(x, center, scale=2.7) / denormalize      # SigmaDock coordinate convention

Every function that takes a continuous schedule takes an :class:`AbstractSchedule` (subclass it for a new one);
discrete-time functions take a :class:`DiscreteSchedule` and an integer step index in ``[0, T-1]``
(:func:`check_time` rejects anything else instead of wrapping or clamping it).

Geometry (rotations, quaternions, Kabsch) lives in ``jaxkit.geometry``. Time grids are descending (``t_max -> t_min``).

Checks. Value checks (times in ``[0, 1]``, step indices, IGSO(3) ``sigma`` in ``[1e-3, 5]``, rotations, finite
inputs) raise ``ValueError`` on concrete values and a run-time error (``equinox.error_if``) under ``jax.jit``.
NaN policy: every sampler checks what the user's model function returns; NaN/inf from ``eps_fn``, ``score_fn``
or an SE(3) model raises an error naming it instead of flowing into the sample, and ``check_output=False`` skips
that check. Requests above the size cap (4 GiB; ``JAXKIT_MAX_BYTES``) are refused up front with the memory they
would need, and IGSO(3) density evaluations run in chunks below it.
"""

from jaxkit.diffusion._euclidean import (
    Schedule,
    check_time,
    conditional_score,
    dsm_loss,
    eps_loss,
    eps_to_score,
    gaussian_marginal_score,
    marginal_coefs,
    predict_x0,
    q_posterior,
    q_sample,
    score_to_eps,
)
from jaxkit.diffusion._sampling import (
    check_time_grid,
    ddim_sample,
    ddim_timesteps,
    ddpm_sample,
    probability_flow_sample,
    reverse_sde_sample,
    time_grid,
)
from jaxkit.diffusion._schedules import (
    AbstractSchedule,
    CosineVPSchedule,
    DiscreteSchedule,
    VESchedule,
    VPSchedule,
    alpha_bars_from_betas,
    cosine_beta_schedule,
    discrete_schedule,
    edm_grid,
    edm_sigma_grid,
    linear_beta_schedule,
    quadratic_beta_schedule,
)
from jaxkit.diffusion._se3 import (
    DDIM,
    AbstractSE3Sampler,
    DSMTerms,
    EulerMaruyama,
    Parametrization,
    ProbabilityFlowODE,
    SE3Diffusion,
    SE3Marginal,
    denormalize,
    normalize,
)

from . import igso3, so3_diffusion

__all__ = [
    "AbstractSchedule",
    "DSMTerms",
    "Parametrization",
    "SE3Diffusion",
    "SE3Marginal",
    "AbstractSE3Sampler",
    "DDIM",
    "EulerMaruyama",
    "ProbabilityFlowODE",
    "Schedule",
    "check_time",
    "check_time_grid",
    "denormalize",
    "igso3",
    "normalize",
    "so3_diffusion",
    "CosineVPSchedule",
    "DiscreteSchedule",
    "VESchedule",
    "VPSchedule",
    "alpha_bars_from_betas",
    "conditional_score",
    "cosine_beta_schedule",
    "ddim_sample",
    "ddim_timesteps",
    "ddpm_sample",
    "discrete_schedule",
    "dsm_loss",
    "edm_grid",
    "edm_sigma_grid",
    "eps_loss",
    "eps_to_score",
    "gaussian_marginal_score",
    "linear_beta_schedule",
    "marginal_coefs",
    "predict_x0",
    "probability_flow_sample",
    "q_posterior",
    "q_sample",
    "quadratic_beta_schedule",
    "reverse_sde_sample",
    "score_to_eps",
    "time_grid",
]
