"""Diffusion processes on R^n, SO(3) and SE(3)^N: schedules, forward marginals, scores, losses, samplers.

Euclidean API (used by ``jaxkit.forecast``)::

    from jaxkit import diffusion as dm
    sched = dm.discrete_schedule("quadratic", 50, beta_start=1e-4, beta_end=0.5)   # CSDI; also "linear", "cosine"
    sched.betas, sched.alphas, sched.alpha_bars, sched.alpha_bars_prev, sched.posterior_variance  # (T,) tables
    x_t = dm.q_sample(sched, x0, t_index, noise)            # sqrt(abar) x0 + sqrt(1-abar) noise
    loss = dm.eps_loss(eps_fn, sched, x0, key)               # one sample; vmap over (x0, key)
    dm.conditional_score(sched, x_t, x0, t_index)            # -(x_t - sqrt(abar) x0)/(1-abar)
    dm.q_posterior(sched, x0, x_t, t_index) -> (mean, var);  dm.predict_x0, dm.eps_to_score, dm.score_to_eps
    x0 = dm.ddim_sample(eps_fn, sched, x_T, key, num_steps=10, eta=0.0)   # eps_fn(x_t, t_index int32)
    x0 = dm.ddpm_sample(eps_fn, sched, x_T, key)                          # ancestral, posterior variance
    # time_input="fraction" passes (t_index+1)/T as a float instead of the index.
    # jit: jax.jit(lambda xT, k: dm.ddim_sample(eps_fn, sched, xT, k, num_steps=10)); vmap over (xT, k).

Continuous schedules (``t in [0, 1]``, ``x_t = alpha(t) x0 + sigma(t) eps``): ``VPSchedule(beta_min=0.1,
beta_max=20)``, ``CosineVPSchedule()``, ``VESchedule(sigma_min, sigma_max)`` (geometric); methods ``alpha, sigma,
drift_coef (f), diffusion (g)``. ``edm_grid(n, lo, hi, rho)`` / ``edm_sigma_grid`` / ``time_grid(n, t_min, t_max,
kind="uniform"|"edm")``. The same ``q_sample``, ``conditional_score``, ``gaussian_marginal_score`` and
``dsm_loss(score_fn, sched, x0, key)`` (normalised ``|sigma s + eps|^2``) accept continuous schedules with a float
``t``. ``reverse_sde_sample(score_fn, sched, x_T, key, ts)`` (Euler–Maruyama, diffrax) and
``probability_flow_sample(score_fn, sched, x_T, ts)`` (Heun, diffrax) integrate from ``ts[0]`` down to ``ts[-1]``.
"""

from jaxkit.diffusion.euclidean import (
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
from jaxkit.diffusion.sampling import (
    ddim_sample,
    ddim_timesteps,
    ddpm_sample,
    probability_flow_sample,
    reverse_sde_sample,
    time_grid,
)
from jaxkit.diffusion.schedules import (
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

__all__ = [
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
