"""Forecaster mechanics: vmapped k-path sampling per date, independence across dates, samplers on the CSDI
schedule with the exact Gaussian ε (DDIM with many steps vs ancestral), bad input.

Training on a known AR(1) Gaussian and comparing samples with the exact conditional law (energy distance,
moments) runs in ``python -m experiments run stable`` (stage ``sanity``): a training compile does not fit the
test-time budget on the shared CPU.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit import diffusion as dm
from jaxkit.forecast import make_forecaster, sample_paths

N, L, H, M, F = 3, 2, 2, 2, 1


@pytest.fixture(scope="module")
def model():
    return make_forecaster(
        n_assets=N, history=L, horizon=H, n_macro=M, n_signals=F, scale=np.full(N, 0.02), channels=8, layers=1,
        heads=2, diffusion_steps=20, key=jax.random.PRNGKey(0),
    )  # fmt: skip


def test_sample_paths_vmapped_over_dates(model):
    rng = np.random.default_rng(0)
    hist = rng.normal(0, 0.02, (2, L, N))
    macro, sig = rng.normal(size=(2, M)), rng.normal(size=(2, N, F))
    key = jax.random.PRNGKey(1)
    a = np.asarray(sample_paths(model, hist, macro, sig, key, num_samples=5, num_steps=4))
    assert a.shape == (2, 5, H, N) and np.all(np.isfinite(a))
    b = np.asarray(sample_paths(model, hist, macro, sig, key, num_samples=5, num_steps=4))
    np.testing.assert_array_equal(a, b)  # same key, same paths
    hist2 = hist.copy()
    hist2[1] += 0.05
    c = np.asarray(sample_paths(model, hist2, macro, sig, key, num_samples=5, num_steps=4))
    np.testing.assert_array_equal(a[0], c[0])  # date 0 does not see date 1's condition
    assert a[0].std(0).min() > 0  # k distinct paths per date


def test_ddim_many_steps_agrees_with_ancestral_sampler():
    sched = dm.discrete_schedule("linear", 1000)
    m, s2 = jnp.array([0.5, -1.0]), jnp.array([0.3, 2.0])

    def eps_fn(x, t):  # exact eps for x0 ~ N(m, diag(s2))
        ab = sched.alpha_bars[t]
        return jnp.sqrt(1 - ab) * (x - jnp.sqrt(ab) * m) / (ab * s2 + 1 - ab)

    keys = jax.random.split(jax.random.PRNGKey(0), 4000)
    xT = jax.vmap(lambda k: jax.random.normal(k, (2,)))(keys)
    ddim = np.asarray(
        jax.jit(jax.vmap(lambda x, k: dm.ddim_sample(eps_fn, sched, x, k, num_steps=200)))(xT, keys)
    )
    ddpm = np.asarray(jax.jit(jax.vmap(lambda x, k: dm.ddpm_sample(eps_fn, sched, x, k)))(xT, keys))
    for s in (ddim, ddpm):
        np.testing.assert_allclose(s.mean(0), m, atol=0.08)
        np.testing.assert_allclose(s.var(0), s2, rtol=0.08)
    np.testing.assert_allclose(ddim.mean(0), ddpm.mean(0), atol=0.1)
    np.testing.assert_allclose(ddim.var(0), ddpm.var(0), rtol=0.1)


def test_sample_paths_rejects_bad_condition(model):
    with pytest.raises(ValueError, match="history: expected shape \\(B, 2, 3\\)"):
        sample_paths(
            model, np.zeros((2, L + 1, N)), np.zeros((2, M)), np.zeros((2, N, F)), jax.random.PRNGKey(0)
        )
    with pytest.raises(ValueError, match="macro, signals: expected 2 dates"):
        sample_paths(model, np.zeros((2, L, N)), np.zeros((3, M)), np.zeros((2, N, F)), jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="history, macro: expected finite"):
        sample_paths(
            model, np.full((1, L, N), np.nan), np.zeros((1, M)), np.zeros((1, N, F)), jax.random.PRNGKey(0)
        )
