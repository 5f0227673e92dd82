"""Bad inputs to jaxkit.diffusion raise errors that name the argument (never wrap, clamp or mislabel).

Under the suite's runtime type checks (jaxtyping + beartype) a wrong *type* is caught by the annotation
before our own check runs; both messages name the argument, so both are accepted where that applies."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit import diffusion as dm
from jaxkit.diffusion import igso3, so3_diffusion
from jaxkit.geometry import so3 as g

SCHED = dm.discrete_schedule("linear", 10)
KEY = jax.random.key(0)


def test_q_sample_rejects_out_of_range_and_float_indices():
    x0 = jnp.zeros(3)
    for bad in (10, -1, 25):  # t = T and t = -1 used to act as T-1
        with pytest.raises(ValueError, match=r"t: expected step indices in \[0, 9\]"):
            dm.q_sample(SCHED, x0, bad, x0)
    with pytest.raises(TypeError, match="t: expected an integer step index"):
        dm.q_sample(SCHED, x0, 1.5, x0)
    with pytest.raises(TypeError, match="t: expected an integer step index"):
        dm.conditional_score(SCHED, x0, x0, jnp.asarray(2.0))
    # inside jit the index is checked at run time
    f = jax.jit(lambda t: dm.q_sample(SCHED, x0, t, x0))
    assert np.all(np.isfinite(np.asarray(f(jnp.int32(9)))))
    with pytest.raises(Exception, match=r"t: step index outside \[0, 9\]"):
        jax.block_until_ready(f(jnp.int32(10)))
    # valid indices give the closed form
    ab = float(SCHED.alpha_bars[9])
    np.testing.assert_allclose(
        dm.q_sample(SCHED, jnp.ones(3), 9, jnp.ones(3)), np.sqrt(ab) + np.sqrt(1 - ab), rtol=1e-6
    )


def test_continuous_times_outside_unit_interval():
    vp = dm.VPSchedule()
    with pytest.raises(
        ValueError, match=r"t: expected diffusion times in \[0, 1\], received range \[1.5, 1.5\]"
    ):
        dm.q_sample(vp, jnp.zeros(3), 1.5, jnp.zeros(3))
    sd = dm.SE3Diffusion()
    R0 = jnp.broadcast_to(jnp.eye(3), (2, 3, 3))
    with pytest.raises(ValueError, match=r"t: expected diffusion times in \[0, 1\]"):
        sd.forward_marginal(KEY, R0, jnp.zeros((2, 3)), 1.5)  # used to complain about "eps"
    with pytest.raises(ValueError, match=r"ts: expected times in \[0, 1\]"):
        sd.sample(lambda R, x, t: (x, x), R0, jnp.zeros((2, 3)), KEY, jnp.array([2.0, 1.0]))
    with pytest.raises(ValueError, match="ts: expected a strictly descending grid"):
        sd.sample(lambda R, x, t: (x, x), R0, jnp.zeros((2, 3)), KEY, jnp.array([0.1, 0.5]))


def test_schedule_types_and_options():
    with pytest.raises(
        TypeError, match="schedule: expected a DiscreteSchedule or an AbstractSchedule|parameter 'schedule'"
    ):
        dm.check_time({"alpha": 1.0}, 0.5)
    with pytest.raises(TypeError, match="trans: expected a continuous AbstractSchedule|parameter 'trans'"):
        dm.SE3Diffusion(trans=SCHED)
    with pytest.raises((ValueError, TypeError), match="parametrization"):
        dm.SE3Diffusion(parametrization="x0")
    with pytest.raises((ValueError, TypeError), match="method"):
        dm.SE3Diffusion().sample(
            lambda R, x, t: (x, x),
            jnp.eye(3)[None],
            jnp.zeros((1, 3)),
            KEY,
            jnp.array([1.0, 0.5]),
            method="heun",
        )
    with pytest.raises(TypeError, match="schedule: expected a VESchedule|parameter 'schedule'"):
        so3_diffusion.reverse_sde_sample(
            lambda R, t: R[..., 0], dm.VPSchedule(), jnp.eye(3), KEY, jnp.array([1.0, 0.0])
        )
    with pytest.raises(TypeError, match="Can't instantiate abstract class"):
        dm.AbstractSchedule()


def test_igso3_sigma_is_named_sigma():
    with pytest.raises(ValueError, match=r"sigma: expected values in \[0.001, 5.0\]"):
        igso3.sample(KEY, 0.0, (2,))
    with pytest.raises(ValueError, match="R0: expected rotation matrices"):
        so3_diffusion.perturb(KEY, 2 * jnp.eye(3), 0.5)
    with pytest.raises(ValueError, match="total_time: expected a finite value > 0"):
        so3_diffusion.brownian_motion(KEY, jnp.eye(3), -1.0, 4)
    assert g.is_rotation(igso3.sample(KEY, sigma=0.5, shape=(2,))).all()


def test_reprobe_silent_results_now_raise():
    """Issue 20 re-probe: each of these returned NaN/inf or a plausible number without an error."""
    x0 = jnp.ones((4, 2))
    with pytest.raises(ValueError, match="x0: expected finite values"):
        dm.q_sample(SCHED, jnp.full((4, 2), jnp.nan), 3, x0)  # was all-NaN
    with pytest.raises(ValueError, match="x_T: expected finite values"):
        dm.ddim_sample(lambda x, t: x * 0, SCHED, jnp.full((2, 2), jnp.nan), KEY)
    with pytest.raises(TypeError, match="t: expected an integer step index"):
        dm.q_posterior(SCHED, x0, x0, 0.5)  # was truncated to t = 0
    with pytest.raises(ValueError, match=r"t: expected step indices in \[0, 9\]"):
        dm.q_posterior(SCHED, x0, x0, 10)
    with pytest.raises(ValueError, match="x_t: expected the shape of x0"):
        dm.q_posterior(SCHED, x0, jnp.ones((3, 2)), 3)
    with pytest.raises(ValueError, match="t: the score divides by sigma_t, which is 0 at t = 0"):
        dm.eps_to_score(dm.VPSchedule(), x0, 0.0)  # was NaN
    with pytest.raises(ValueError, match="betas: expected a non-empty 1-D array"):
        dm.alpha_bars_from_betas(np.zeros(0))
    with pytest.raises(ValueError, match="s: expected a finite offset >= 0"):
        dm.CosineVPSchedule(s=-1.0)  # alpha(t) divided by cos(pi/2 * ..)
    with pytest.raises(ValueError, match="scale: expected a finite length > 0"):
        dm.normalize(x0, jnp.zeros(2), scale=0.0)  # was inf
    with pytest.raises(ValueError, match=r"omega: expected rotation angles in \[0, pi\]"):
        igso3.log_density(jnp.array([4.0]), 0.5)  # was a finite log-density
    # cryptic before: named another argument ("lo", "t") or a broadcasting error
    with pytest.raises(ValueError, match="sigma_min: expected a finite value > 0"):
        dm.edm_sigma_grid(10, sigma_min=-1.0)
    with pytest.raises(ValueError, match=r"t_min: expected a value in \[0, 1\)"):
        dm.dsm_loss(lambda x, t: x * 0, dm.VPSchedule(), x0, KEY, t_min=2.0)
    with pytest.raises(ValueError, match="center: expected a shape that broadcasts with x"):
        dm.normalize(x0, jnp.zeros(5))
    # the valid neighbors still work: score at t > 0 and the closed form of the DDPM posterior mean
    np.testing.assert_allclose(
        dm.eps_to_score(dm.VPSchedule(), x0, 0.5),
        -1.0 / dm.marginal_coefs(dm.VPSchedule(), 0.5)[1] * np.ones((4, 2)),
        rtol=1e-6,
    )
    ab, abp, b = (float(a[3]) for a in (SCHED.alpha_bars, SCHED.alpha_bars_prev, SCHED.betas))
    mean, _ = dm.q_posterior(SCHED, x0, 2 * x0, 3)
    c0, ct = np.sqrt(abp) * b / (1 - ab), np.sqrt(1 - b) * (1 - abp) / (1 - ab)
    np.testing.assert_allclose(np.asarray(mean), (c0 + 2 * ct) * np.ones((4, 2)), rtol=1e-5)


def test_betas_as_a_list_are_accepted_under_the_type_hook():
    np.testing.assert_allclose(dm.alpha_bars_from_betas([0.1, 0.2]), [0.9, 0.72])


def test_gaussian_marginal_score_refuses_a_negative_std_and_a_point_mass_without_score():
    """Fresh probes (2026-12-06): std = -1 returned the std = +1 score, std = 0 at t = 0 returned -inf."""
    vp = dm.VPSchedule()
    x = jnp.ones(3)
    with pytest.raises(ValueError, match="std: expected standard deviations >= 0"):
        dm.gaussian_marginal_score(vp, x, 0.5, 0.0, -1.0)
    with pytest.raises(ValueError, match="marginal variance .* is 0"):
        dm.gaussian_marginal_score(vp, x, 0.0, 0.0, 0.0)
    f = jax.jit(lambda std, t: dm.gaussian_marginal_score(vp, x, t, 0.0, std))
    with pytest.raises(Exception, match="std: expected standard deviations >= 0"):
        jax.block_until_ready(f(jnp.float32(-1.0), jnp.float32(0.5)))
    with pytest.raises(Exception, match="marginal variance"):
        jax.block_until_ready(f(jnp.float32(0.0), jnp.float32(0.0)))
    # valid: the closed form -(x - a m) / (a^2 s^2 + sigma^2), and std = 0 at t > 0 is the data-free marginal
    a, s = (float(c) for c in dm.marginal_coefs(vp, 0.5))
    np.testing.assert_allclose(f(jnp.float32(0.7), jnp.float32(0.5)), -1.0 / (a**2 * 0.49 + s**2), rtol=1e-5)
    np.testing.assert_allclose(f(jnp.float32(0.0), jnp.float32(0.5)), -1.0 / s**2, rtol=1e-5)


def test_long_fuzz_boundaries_name_the_argument():
    """Found by the long fuzz run: a NaN eta was blamed on eps_fn, t_min outside (0, 1) gave a message about
    sigma, and a huge n_steps overflowed inside jit."""
    x = jnp.zeros(2)
    eps = lambda x, t: jnp.zeros_like(x)  # noqa: E731
    for bad in (float("nan"), float("inf"), -0.5):
        with pytest.raises(ValueError, match="eta: expected a finite value >= 0"):
            dm.ddim_sample(eps, SCHED, x, KEY, eta=bad)
    out = dm.ddim_sample(
        eps, SCHED, x, KEY, eta=0.0
    )  # deterministic DDIM with eps = 0 keeps x0 = x_T / sqrt(abar)
    assert np.all(np.isfinite(np.asarray(out)))

    sched = dm.VESchedule(0.1, 1.5)
    R0 = jnp.eye(3)[None]
    score = lambda R, t: jnp.zeros(R.shape[:-2] + (3,))  # noqa: E731
    for bad in (0.0, 1.0, -0.1, 2.0):
        with pytest.raises(ValueError, match="t_min: expected"):
            so3_diffusion.dsm_loss(score, sched, R0, KEY, t_min=bad)
    # a zero score: the loss is E|s_target / score_norm|^2, which is finite and positive
    loss = float(so3_diffusion.dsm_loss(score, sched, R0, KEY, t_min=0.01))
    assert np.isfinite(loss) and loss > 0

    with pytest.raises(ValueError, match="n_steps: the request needs about"):
        so3_diffusion.brownian_motion(KEY, R0, 1.0, 10**12)
    R = so3_diffusion.brownian_motion(KEY, R0, 0.01, 4)
    np.testing.assert_allclose(np.asarray(R[0] @ R[0].T), np.eye(3), atol=1e-5)  # stays a rotation


def test_se3_dsm_terms_refuses_a_negative_or_misshaped_mask_and_a_time_with_zero_sigma():
    """Fresh probes D55, D56, D58: a negative weight gave a negative 'mean squared error' (-0.55, -1.77); a mask of
    4 weights for 3 bodies failed inside a multiplication; t = 0 failed naming an internal field (trans_score).
    The reference for the valid call: the same terms with the mask's zero weight dropping that body's error."""
    from jaxkit.diffusion import SE3Diffusion
    from jaxkit.geometry import so3

    se3 = SE3Diffusion()
    R0 = so3.random_uniform(jax.random.key(0), (3,))
    x0 = jax.random.normal(jax.random.key(1), (3, 3))

    def model(R, x, t):
        return jnp.zeros((3, 3)), jnp.zeros((3, 3))

    key = jax.random.key(2)
    with pytest.raises(ValueError, match="mask: expected finite weights >= 0"):
        se3.dsm_terms(model, R0, x0, key, mask=-jnp.ones(3))
    with pytest.raises(ValueError, match=r"mask: expected one weight per body, shape \(3,\)"):
        se3.dsm_terms(model, R0, x0, key, mask=jnp.ones(4))
    with pytest.raises(ValueError, match="t: the DSM targets divide by sigma_t"):
        se3.dsm_terms(model, R0, x0, key, t=0.0)
    full = se3.dsm_terms(model, R0, x0, key, t=0.5)
    ones = se3.dsm_terms(model, R0, x0, key, t=0.5, mask=jnp.ones(3))
    assert float(full.rot) == float(ones.rot) and float(full.trans) == float(ones.trans)
