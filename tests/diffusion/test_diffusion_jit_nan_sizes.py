"""Value checks under ``jax.jit`` (diffusion time ``t = 1.5`` and IGSO(3) ``sigma = 100`` passed silently), the NaN
policy for user callables (NaN from ``eps_fn``/``score_fn``/the SE(3) model flowed into the sample), sizes refused
up front (``discrete_schedule(10**11)`` tried to allocate TiBs) and default chunking, one PRNG key check."""

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit import diffusion as dm
from jaxkit.diffusion import igso3, so3_diffusion
from jaxkit.geometry import so3

KEY = jax.random.key(0)
SCHED = dm.discrete_schedule("linear", 10)
VP = dm.VPSchedule()
NAN_EPS = lambda x, t: x * jnp.nan  # noqa: E731
SE3 = dm.SE3Diffusion()


def _runtime(fn, match):
    with pytest.raises(RuntimeError, match=match):
        jax.block_until_ready(fn())


def _eager(fn, match):
    """A compiled entry point called eagerly: the run-time check comes back as ValueError (issue 49)."""
    with pytest.raises(ValueError, match=match):
        jax.block_until_ready(fn())


def test_time_and_sigma_checks_hold_under_jit():
    x0 = jnp.ones(3)
    with pytest.raises(ValueError, match=r"t: expected diffusion times in \[0, 1\]"):
        dm.q_sample(VP, x0, 1.5, x0)
    _runtime(
        lambda: jax.jit(lambda t: dm.q_sample(VP, x0, t, x0))(1.5), r"t: diffusion time outside \[0, 1\]"
    )
    _runtime(lambda: jax.jit(lambda t: dm.marginal_coefs(VP, t))(jnp.nan), "diffusion time outside")
    _runtime(lambda: jax.jit(lambda t: SE3.rot_score(jnp.eye(3)[None], jnp.eye(3)[None], t))(1.5), "outside")
    with pytest.raises(ValueError, match=r"sigma: expected values in \[0.001, 5.0\]"):
        igso3.sample(KEY, 100.0, (2,))
    for f in (
        lambda s: igso3.sample(KEY, s, (2,)),
        lambda s: igso3.log_density(jnp.ones(2), s),
        lambda s: igso3.score_norm(s),
        lambda s: so3_diffusion.perturb(KEY, jnp.eye(3), s),
    ):
        _runtime(lambda f=f: jax.jit(f)(100.0), r"sigma: expected values in \[0.001, 5.0\]")
    _runtime(
        lambda: jax.jit(lambda w: igso3.log_density(w, 0.5))(4.0),
        r"omega: expected rotation angles in \[0, pi\]",
    )
    _runtime(lambda: jax.jit(lambda R: igso3.score(R, 0.5))(2 * jnp.eye(3)), "R: expected rotation matrices")
    _runtime(lambda: jax.jit(lambda ts: dm.check_time_grid(ts))(jnp.array([0.1, 0.5])), "descending")
    # valid values: same result under jit
    np.testing.assert_allclose(
        jax.jit(lambda s: igso3.log_density(jnp.ones(2), s))(0.5),
        igso3.log_density(jnp.ones(2), 0.5),
        rtol=1e-6,
    )


def test_nan_from_a_user_callable_is_an_error_unless_the_check_is_off():
    xT = jnp.ones((2, 3))
    msg = "eps_fn: the callable returned NaN/inf"
    for sampler in (dm.ddim_sample, dm.ddpm_sample):
        _eager(lambda s=sampler: s(NAN_EPS, SCHED, xT, KEY), msg)
        _runtime(lambda s=sampler: jax.jit(lambda x: s(NAN_EPS, SCHED, x, KEY))(xT), msg)
        assert np.all(
            np.isnan(sampler(NAN_EPS, SCHED, xT, KEY, check_output=False))
        )  # the documented opt-out
    ok = dm.ddim_sample(lambda x, t: 0.1 * x, SCHED, xT, KEY)
    assert np.all(np.isfinite(ok))
    ts = dm.time_grid(5, 1e-3, 1.0)
    _eager(lambda: dm.reverse_sde_sample(NAN_EPS, VP, xT, KEY, ts), "score_fn: the callable returned NaN")
    _eager(lambda: dm.probability_flow_sample(NAN_EPS, VP, xT, ts), "score_fn: the callable returned NaN")
    _eager(
        lambda: so3_diffusion.reverse_sde_sample(
            lambda R, t: jnp.full(R.shape[:-1], jnp.nan), dm.VESchedule(0.1, 1.5), jnp.eye(3), KEY, ts
        ),
        "score_fn: the callable returned NaN",
    )
    # SE(3): a model with a NaN rotation output
    R, x = SE3.prior_sample(KEY, 3)
    bad = lambda R, x, t: (jnp.full(x.shape, jnp.nan), x * 0)  # noqa: E731
    _eager(lambda: SE3.sample(bad, R, x, KEY, ts), "model: the callable returned NaN/inf")
    _runtime(
        lambda: jax.jit(lambda R, x: SE3.sample(bad, R, x, KEY, ts))(R, x), "model: the callable returned NaN"
    )
    Rg, xg = SE3.sample(lambda R, x, t: (x * 0, x * 0), R, x, KEY, ts)
    assert np.all(np.isfinite(np.asarray(xg))) and so3.is_rotation(Rg).all()


def test_sizes_are_refused_up_front_and_evaluations_are_chunked(monkeypatch):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"n_steps: the request needs about 8.73 TiB, above the size cap"):
        dm.discrete_schedule("linear", 10**11)
    with pytest.raises(ValueError, match="above the size cap"):
        dm.time_grid(10**10)
    with pytest.raises(ValueError, match="shape: the request needs about"):
        igso3.sample(KEY, 0.5, (10**9,))
    assert time.perf_counter() - t0 < 1.0
    # evaluations whose temporaries exceed the cap run in chunks: same values with a tiny cap
    w = jnp.linspace(0.0, 3.0, 3001)
    ref = [np.asarray(f(w, 0.7)) for f in (igso3.log_density, igso3.dlog_density, igso3.score_coef)]
    monkeypatch.setenv("JAXKIT_MAX_BYTES", "64K")
    for r, f in zip(ref, (igso3.log_density, igso3.dlog_density, igso3.score_coef)):
        np.testing.assert_allclose(np.asarray(f(w, 0.7)), r, rtol=1e-6, atol=1e-6)


KEY_PROBE = """
import jax, jax.numpy as jnp
from jaxkit import diffusion as dm
from jaxkit.diffusion import igso3
from jaxkit.geometry import so3
from jaxkit.docking import ModelConfig, build_model, dock
from jaxkit.train import fit
S, SE3, ts = dm.discrete_schedule("linear", 5), dm.SE3Diffusion(), dm.time_grid(3)
R, x = SE3.prior_sample(jax.random.key(0), 2)
calls = {
    "ddim_sample": lambda: dm.ddim_sample(lambda x, t: x, S, jnp.ones(3), 0),
    "ddpm_sample": lambda: dm.ddpm_sample(lambda x, t: x, S, jnp.ones(3), 0),
    "reverse_sde_sample": lambda: dm.reverse_sde_sample(lambda x, t: x, dm.VPSchedule(), jnp.ones(3), 0, ts),
    "igso3.sample": lambda: igso3.sample(0, 0.5, (2,)),
    "so3.random_uniform": lambda: so3.random_uniform(0, (2,)),
    "SE3Diffusion.sample": lambda: SE3.sample(lambda R, x, t: (x, x), R, x, 0, ts),
    "SE3Diffusion.forward_marginal": lambda: SE3.forward_marginal(0, R, x, 0.5),
    "build_model": lambda: build_model(ModelConfig(width=8, depth=1), 0),
    "dock": lambda: dock("p.pdb", "CCO", pocket=(0.0, 0.0, 0.0), model="m.jkc", key=0),
}
for name, f in calls.items():
    try:
        f()
        print(name, "NO ERROR")
    except TypeError as e:
        print(name, "OK" if str(e).startswith("key: expected a PRNG key") else "WRONG " + str(e)[:120])
"""


def test_an_integer_key_gets_one_message_everywhere(subprocess_env, python, repo_root):
    """Before: JAX's "invalid PRNG key data" in ddim_sample and dock, while so3 said "key: expected a PRNG key".
    Run without the suite's runtime type checks (which catch a wrong key type first, naming the parameter)."""
    import subprocess

    out = subprocess.run(
        [python, "-c", KEY_PROBE],
        capture_output=True,
        text=True,
        env=subprocess_env,
        cwd=repo_root,
        timeout=300,
    )
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 9 and all(line.endswith(" OK") for line in lines), out.stdout + out.stderr[-2000:]


def test_an_integer_key_is_named():
    xT = jnp.ones(3)
    R, x = SE3.prior_sample(KEY, 2)
    ts = dm.time_grid(3)
    for fn in (
        lambda: dm.ddim_sample(lambda x, t: x, SCHED, xT, 0),
        lambda: dm.ddpm_sample(lambda x, t: x, SCHED, xT, 0),
        lambda: dm.reverse_sde_sample(lambda x, t: x, VP, xT, 0, ts),
        lambda: igso3.sample(0, 0.5, (2,)),
        lambda: igso3.sample_angle(0, 0.5),
        lambda: SE3.sample(lambda R, x, t: (x, x), R, x, 0, ts),
        lambda: SE3.forward_marginal(0, R, x, 0.5),
    ):
        with pytest.raises(TypeError, match="key: expected a PRNG key|parameter 'key'"):
            fn()  # under the suite's runtime type checks the annotation may fire first, naming the parameter
