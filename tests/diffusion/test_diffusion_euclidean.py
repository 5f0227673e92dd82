"""Euclidean diffusion: schedules against closed forms / quadrature, DDPM-DDIM identities, exact Gaussian targets."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats
from scipy.integrate import quad

from jaxkit import diffusion as dm

M, S = 1.5, 0.5  # Gaussian data N(M, S^2 I)


def test_discrete_schedules_closed_forms():
    s = dm.discrete_schedule("quadratic", 50, beta_start=1e-4, beta_end=0.5)  # CSDI
    b = np.asarray(s.betas, np.float64)
    assert b.shape == (50,) and np.isclose(b[0], 1e-4, rtol=1e-5) and np.isclose(b[-1], 0.5, rtol=1e-5)
    np.testing.assert_allclose(np.sqrt(b), np.linspace(1e-2, np.sqrt(0.5), 50), rtol=1e-5)
    np.testing.assert_allclose(s.alpha_bars, np.cumprod(1 - b), rtol=1e-5)
    np.testing.assert_allclose(s.alpha_bars_prev[1:], s.alpha_bars[:-1])
    ab, abp = np.cumprod(1 - b), np.concatenate([[1.0], np.cumprod(1 - b)[:-1]])
    np.testing.assert_allclose(s.posterior_variance, b * (1 - abp) / (1 - ab), rtol=1e-5)
    lin = dm.linear_beta_schedule(1000)
    assert np.isclose(lin[0], 1e-4) and np.isclose(lin[-1], 0.02)
    T = 100
    abar = dm.alpha_bars_from_betas(dm.cosine_beta_schedule(T))
    t = np.arange(1, T + 1) / T
    ref = np.cos((t + 0.008) / 1.008 * np.pi / 2) ** 2 / np.cos(0.008 / 1.008 * np.pi / 2) ** 2
    np.testing.assert_allclose(abar[:-5], ref[:-5], rtol=1e-10)  # equal until the max_beta clip near t = T


def test_continuous_schedules_against_quadrature():
    vp = dm.VPSchedule(0.1, 20.0)
    for t in (0.01, 0.3, 1.0):
        integral = quad(lambda u: float(vp.beta(u)), 0, t)[0]
        np.testing.assert_allclose(vp.alpha(t), np.exp(-0.5 * integral), rtol=1e-5)
        np.testing.assert_allclose(vp.sigma(t) ** 2 + vp.alpha(t) ** 2, 1.0, rtol=1e-5)
    ve = dm.VESchedule(0.1, 1.5)
    np.testing.assert_allclose([ve.sigma(0.0), ve.sigma(1.0)], [0.1, 1.5], rtol=1e-6)
    h = 1e-3
    for t in (0.2, 0.7):  # g^2 = d sigma^2 / dt
        fd = (float(ve.sigma(t + h)) ** 2 - float(ve.sigma(t - h)) ** 2) / (2 * h)
        np.testing.assert_allclose(float(ve.diffusion(t)) ** 2, fd, rtol=1e-4)
    np.testing.assert_allclose(ve.t_of_sigma(ve.sigma(0.37)), 0.37, rtol=1e-5)
    cos = dm.CosineVPSchedule()
    for t in (0.2, 0.6):  # beta = -d log alpha^2 / dt
        fd = -(2 * float(cos.log_alpha(t + h)) - 2 * float(cos.log_alpha(t - h))) / (2 * h)
        np.testing.assert_allclose(float(cos.beta(t)), fd, rtol=1e-3)
    g = np.asarray(dm.edm_grid(30, 1e-3, 1.0, rho=3.0))  # SigmaDock's 30-step grid
    i = np.arange(30) / 29
    np.testing.assert_allclose(g, (1.0 + i * (1e-3 ** (1 / 3) - 1.0)) ** 3, rtol=1e-5)
    sg = np.asarray(dm.edm_sigma_grid(18))
    assert sg[-1] == 0 and np.isclose(sg[0], 80.0) and np.isclose(sg[-2], 0.002) and np.all(np.diff(sg) < 0)


def test_forward_marginal_and_conditional_score():
    vp = dm.VPSchedule()
    x0 = jnp.array([0.5, -1.0, 2.0])
    z = jnp.array([0.1, 0.2, -0.3])
    t = 0.3
    a, s = vp.alpha(t), vp.sigma(t)
    xt = dm.q_sample(vp, x0, t, z)
    np.testing.assert_allclose(xt, a * x0 + s * z, rtol=1e-6)
    logq = lambda x: -0.5 * jnp.sum((x - a * x0) ** 2) / s**2
    np.testing.assert_allclose(dm.conditional_score(vp, xt, x0, t), jax.grad(logq)(xt), rtol=1e-5)
    np.testing.assert_allclose(dm.eps_to_score(vp, z, t), dm.conditional_score(vp, xt, x0, t), rtol=1e-4)
    np.testing.assert_allclose(dm.predict_x0(vp, xt, t, z), x0, rtol=1e-5)
    d = dm.discrete_schedule("linear", 100)
    mean, var = dm.q_posterior(d, x0, dm.q_sample(d, x0, 40, z), 40)
    # posterior mean is the Gaussian conditioning of x_{t-1} on (x_t, x_0), computed directly
    ab_prev, beta = float(d.alpha_bars[39]), float(d.betas[40])
    xt = np.asarray(dm.q_sample(d, x0, 40, z))
    prec = 1 / (1 - ab_prev) + (1 - beta) / beta
    ref = (np.sqrt(ab_prev) * np.asarray(x0) / (1 - ab_prev) + np.sqrt(1 - beta) * xt / beta) / prec
    np.testing.assert_allclose(mean, ref, rtol=1e-4)
    np.testing.assert_allclose(var, 1 / prec, rtol=1e-4)


SCHED = dm.discrete_schedule("quadratic", 50)


def _eps_exact(x, t):
    ab = SCHED.alpha_bars[t]
    return jnp.sqrt(1 - ab) * (x - jnp.sqrt(ab) * M) / (ab * S**2 + 1 - ab)


def _gaussian_law(schedule, steps, eta, variance="posterior"):
    """Exact mean/variance of the sampler output for N(M, S^2) data with the exact eps (linear-Gaussian steps)."""
    ab = np.asarray(schedule.alpha_bars, np.float64)
    mu, var = 0.0, 1.0
    for i, t in enumerate(steps):
        abp = ab[steps[i + 1]] if i + 1 < len(steps) else 1.0
        c = np.sqrt(1 - ab[t]) / (ab[t] * S**2 + 1 - ab[t])  # eps = c (x - sqrt(ab) M)
        s = eta * np.sqrt((1 - abp) / (1 - ab[t]) * (1 - ab[t] / abp))
        dcoef = np.sqrt(max(1 - abp - s**2, 0.0))
        # x_prev = sqrt(abp) (x - sqrt(1-ab) eps)/sqrt(ab) + dcoef eps + s z
        kx = np.sqrt(abp / ab[t]) * (1 - np.sqrt(1 - ab[t]) * c) + dcoef * c
        k0 = (np.sqrt(abp / ab[t]) * np.sqrt(1 - ab[t]) - dcoef) * c * np.sqrt(ab[t]) * M
        mu, var = kx * mu + k0, kx**2 * var + s**2
    return mu, var


def test_ddpm_equals_ddim_eta1_and_exact_gaussian_law():
    n = 4000
    xT = jax.random.normal(jax.random.key(0), (n, 2))
    keys = jax.random.split(jax.random.key(1), n)
    ddpm = jax.jit(jax.vmap(lambda x, k: dm.ddpm_sample(_eps_exact, SCHED, x, k)))(xT, keys)
    ddim1 = jax.jit(jax.vmap(lambda x, k: dm.ddim_sample(_eps_exact, SCHED, x, k, eta=1.0)))(xT, keys)
    np.testing.assert_allclose(ddpm, ddim1, atol=2e-5)  # DDIM(eta=1, all steps) is DDPM with beta~
    mu, var = _gaussian_law(SCHED, list(range(49, -1, -1)), 1.0)
    x = np.asarray(ddpm, np.float64).ravel()
    assert abs(x.mean() - mu) < 4 * np.sqrt(var / x.size)
    assert abs(x.var() / var - 1) < 0.06
    # deterministic DDIM with 10 steps: the output law is again exactly computable
    ddim = jax.jit(jax.vmap(lambda x, k: dm.ddim_sample(_eps_exact, SCHED, x, k, n_steps=10)))(xT, keys)
    steps = list(dm.ddim_timesteps(50, 10))
    mu, var = _gaussian_law(SCHED, steps, 0.0)
    x = np.asarray(ddim, np.float64).ravel()
    assert abs(x.mean() - mu) < 4 * np.sqrt(var / x.size)
    assert abs(x.var() / var - 1) < 0.06


def test_reverse_sde_and_probability_flow_recover_gaussian():
    vp = dm.VPSchedule()
    score = lambda x, t: dm.gaussian_marginal_score(vp, x, t, M, S)
    ts = dm.time_grid(100, 1e-3, 1.0)
    n = 2000
    xT = jax.random.normal(jax.random.key(2), (n, 2))
    keys = jax.random.split(jax.random.key(3), n)
    sde = jax.jit(jax.vmap(lambda x, k: dm.reverse_sde_sample(score, vp, x, k, ts)))(xT, keys)
    ode = jax.jit(jax.vmap(lambda x: dm.probability_flow_sample(score, vp, x, ts)))(xT)
    a, s = float(vp.alpha(1e-3)), float(vp.sigma(1e-3))
    ref = stats.norm(a * M, np.sqrt(a**2 * S**2 + s**2))
    for out in (sde, ode):
        assert stats.kstest(np.asarray(out, np.float64).ravel(), ref.cdf).pvalue > 1e-3
    assert stats.kstest(np.asarray(sde, np.float64).ravel(), stats.norm(M, 0.6).cdf).pvalue < 1e-3  # power


def test_losses():
    d = dm.discrete_schedule("linear", 100)
    keys = jax.random.split(jax.random.key(4), 64)
    x0 = jnp.full((64, 3), 0.7)
    # for a point mass at x0 the exact eps is (x_t - sqrt(ab) x0)/sqrt(1-ab): the loss vanishes
    exact = lambda x, t: (x - jnp.sqrt(d.alpha_bars[t]) * 0.7) / jnp.sqrt(1 - d.alpha_bars[t])
    vp = dm.VPSchedule()
    ex = lambda x, t: -(x - vp.alpha(t) * 0.7) / vp.sigma(t) ** 2

    @jax.jit
    def losses(x0, keys):
        l_exact = jax.vmap(lambda x, k: dm.eps_loss(exact, d, x, k))(x0, keys)
        l_zero = jax.vmap(lambda x, k: dm.eps_loss(lambda x, t: jnp.zeros_like(x), d, x, k))(x0, keys)
        return l_exact, l_zero, dm.dsm_loss(ex, vp, x0[0], keys[0])

    l_exact, l_zero, l_dsm = losses(x0, keys)
    assert float(jnp.max(l_exact)) < 1e-8 and float(l_dsm) < 1e-8
    assert 0.5 < float(l_zero.mean()) < 1.5  # E eps^2 = 1


def test_bad_inputs():
    with pytest.raises((ValueError, TypeError), match="kind: expected one of|parameter 'kind'"):
        dm.discrete_schedule("sigmoid", 10)
    with pytest.raises(ValueError, match="n_steps: expected at most the schedule length 50"):
        dm.ddim_sample(_eps_exact, SCHED, jnp.zeros(2), jax.random.key(0), n_steps=80)
    with pytest.raises(ValueError, match="eta: expected a finite value >= 0"):
        dm.ddim_sample(_eps_exact, SCHED, jnp.zeros(2), jax.random.key(0), eta=-1.0)
    with pytest.raises(ValueError, match="betas: expected values in"):
        dm.DiscreteSchedule.from_betas(np.array([0.1, 1.2]))
    with pytest.raises(ValueError, match="noise: expected the shape of x0"):
        dm.q_sample(SCHED, jnp.zeros(3), 2, jnp.zeros(4))
    with pytest.raises(TypeError, match="schedule: expected a DiscreteSchedule|parameter 'schedule'"):
        dm.ddpm_sample(_eps_exact, dm.VPSchedule(), jnp.zeros(2), jax.random.key(0))
    with pytest.raises(ValueError, match="hi: expected a value > lo"):
        dm.edm_grid(10, 1.0, 0.5)
