"""IGSO(3): normalization, CDF, sampler (KS), score vs autodiff in float64, branch agreement, finiteness, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats
from scipy.integrate import cumulative_simpson, simpson

from jaxkit.diffusion import _igso3, igso3

N = 4097  # every density evaluation goes through one compiled function of this length (compile once per dtype)


@jax.jit
def _all(w, e):
    return (
        igso3.log_density(w, e),
        igso3.dlog_density(w, e),
        igso3.score_coef(w, e),
        igso3.cdf(w, e),
        igso3.score_norm(e),
    )


def ev(w, e, dtype=np.float64):
    """Evaluate ``_all`` on 1-D ``w`` (``e`` scalar or same length), padding to ``N``."""
    w = np.atleast_1d(np.asarray(w, np.float64))
    e = np.broadcast_to(np.asarray(e, np.float64), w.shape)
    n = w.size
    assert n <= N
    wp = np.concatenate([w, np.full(N - n, 0.1)])
    ep = np.concatenate([e, np.full(N - n, 0.5)])
    out = _all(jnp.asarray(wp, dtype), jnp.asarray(ep, dtype))
    return [np.asarray(o)[:n] for o in out]


_grad_log_density = jax.jit(jax.grad(lambda w, e: jnp.sum(igso3.log_density(w, e))))  # elementwise d/d omega


def _brute_force_f(w, eps, L=4000):
    """The defining series summed naively in float64 (valid where it does not cancel catastrophically)."""
    l = np.arange(L)[:, None]
    w = np.atleast_1d(w)[None, :]
    return np.sum((2 * l + 1) * np.exp(-l * (l + 1) * eps**2 / 2) * np.sin((l + 0.5) * w) / np.sin(w / 2), 0)


def test_log_density_matches_brute_force_series():
    with jax.enable_x64(True):
        for eps in (0.05, 0.3, 0.7, 1.0, 1.5, 3.0):
            w = np.linspace(0.01, min(np.pi - 0.01, 6 * eps), 25)
            ref = np.log(_brute_force_f(w, eps))
            np.testing.assert_allclose(ev(w, eps)[0], ref, rtol=1e-10, atol=1e-10)


def test_density_integrates_to_one_and_cdf():
    with jax.enable_x64(True):
        for eps in (1e-3, 0.02, 0.1, 0.5, 1.0, 2.0, 5.0):
            top = min(np.pi, 12 * eps)
            w = np.linspace(0, top, N)
            with np.errstate(divide="ignore"):
                p = np.exp(np.log((1 - np.cos(w)) / np.pi) + ev(w, eps)[0])
            assert abs(simpson(p, x=w) - 1.0) < 1e-8, eps
            # the closed-form CDF (series / complex erf) against quadrature of the density
            F = cumulative_simpson(p, x=w, initial=0.0)
            np.testing.assert_allclose(igso3.cdf_reference(w[::64], eps), F[::64], atol=1e-7)
            # the tabulated (jit-able) CDF against the reference
            ws = np.linspace(0, np.pi, 50)
            np.testing.assert_allclose(ev(ws, eps)[3], igso3.cdf_reference(ws, eps), atol=5e-4)


KS_EPS = (0.02, 0.1, 0.5, 1.0, 2.0)
_sample_angles = jax.jit(lambda key, eps: igso3.sample_angle(key, eps, eps.shape))


def test_sampler_ks():
    """KS test of the table sampler against the closed-form CDF at each eps (one compiled call for all)."""
    eps = np.repeat(np.asarray(KS_EPS, np.float32), 3000)
    w = np.asarray(_sample_angles(jax.random.key(0), jnp.asarray(eps)), np.float64).reshape(len(KS_EPS), -1)
    for e, we in zip(KS_EPS, w):
        assert stats.kstest(we, lambda x, e=e: igso3.cdf_reference(x, e)).pvalue > 1e-3, e


def test_concrete_eps_quantile_table_and_sampler():
    """Scalar eps uses a two-sided quantile table: its nodes invert the closed-form CDF to float64 precision,
    interpolation keeps ``F(q(u)) - u`` below 1e-7 (probability integral transform, float64), the angles pass
    KS and the axes of the rotation vectors are uniform (mean 0, second moment I/3)."""
    rng = np.random.default_rng(3)
    s = np.linspace(0.0, 1.0, igso3.N_QUANTILE)
    for e in (1e-3,) + KS_EPS + (5.0,):
        Q = _igso3._quantile_table64(e)
        f_max = igso3.cdf_reference(min(np.pi, igso3.OMEGA_SPAN * e), e)
        np.testing.assert_allclose(igso3.cdf_reference(Q[0], e), s**3 / 2 * f_max, atol=1e-12, rtol=0)
        np.testing.assert_allclose(igso3.cdf_reference(Q[1], e), (1 - s**3 / 2) * f_max, atol=1e-12, rtol=0)
        u = np.concatenate([rng.uniform(size=20000), [0.0, 1e-12, 0.5, 1 - 1e-12]])
        with jax.enable_x64(True):
            q = np.asarray(_igso3._quantile_concrete(jnp.asarray(u), e))
        assert np.max(np.abs(igso3.cdf_reference(q, e) - u * f_max)) < 1e-7, e
    for e in KS_EPS:
        v = np.asarray(igso3.sample_vector(jax.random.key(11), e, (3000,)), np.float64)
        w = np.linalg.norm(v, axis=-1)
        assert stats.kstest(w, lambda x, e=e: igso3.cdf_reference(x, e)).pvalue > 1e-3, e
        a = v / w[:, None]
        assert np.abs(a.mean(0)).max() < 4 * np.sqrt(1 / 3 / 3000), e  # E[a] = 0, var(a_i) = 1/3
        np.testing.assert_allclose(a.T @ a / 3000, np.eye(3) / 3, atol=0.04)
        R = np.asarray(igso3.sample(jax.random.key(11), e, (3000,)), np.float64)
        ang = np.arctan2(
            np.linalg.norm(R - np.swapaxes(R, 1, 2), axis=(1, 2)) / (2 * np.sqrt(2)),
            (np.trace(R, axis1=1, axis2=2) - 1) / 2,
        )
        assert stats.kstest(ang, lambda x, e=e: igso3.cdf_reference(x, e)).pvalue > 1e-3, e


def test_sampler_per_sample_eps_and_matrices():
    eps = np.exp(np.random.default_rng(0).uniform(np.log(1e-3), np.log(5.0), 3000 * len(KS_EPS))).astype(
        np.float32
    )
    w = _sample_angles(jax.random.key(8), jnp.asarray(eps))
    u = igso3.cdf_reference(
        np.asarray(w, np.float64), eps.astype(np.float64)
    )  # probability integral transform
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    mean = jnp.asarray(np.diag([1.0, -1.0, -1.0]))
    R = igso3.sample(jax.random.key(9), 0.3, (2, 3), mean=mean)
    assert R.shape == (2, 3, 3, 3)
    ang = np.arccos(np.clip((np.trace(np.swapaxes(mean, 0, 1) @ R, axis1=-2, axis2=-1) - 1) / 2, -1, 1))
    assert np.all(ang < 9 * 0.3) and np.all(ang > 0)


def test_score_matches_autodiff_float64():
    with jax.enable_x64(True):
        eps = np.concatenate(
            [np.geomspace(1e-3, 5.0, 15), [igso3.SIGMA_SWITCH * (1 - 1e-9), igso3.SIGMA_SWITCH]]
        )
        w = np.concatenate([np.linspace(1e-4, np.pi - 1e-4, 64) * min(1.0, 8 * e / np.pi) for e in eps])
        ee = np.repeat(eps, 64)
        pad = N - w.size
        ad = np.asarray(
            _grad_log_density(
                jnp.asarray(np.concatenate([w, np.full(pad, 0.1)])),
                jnp.asarray(np.concatenate([ee, np.full(pad, 0.5)])),
            )
        )[: w.size]
        _, an, co, _, _ = ev(w, ee)
        for i, e in enumerate(eps):
            sl = slice(64 * i, 64 * (i + 1))
            np.testing.assert_allclose(
                an[sl], ad[sl], rtol=1e-6, atol=1e-12 * np.abs(ad[sl]).max(), err_msg=str(e)
            )
        np.testing.assert_allclose(co * w, an, rtol=1e-9)
        # the vector score is the gradient of log f(|v|) in the Lie algebra (body frame), checked by autodiff
        v = jnp.asarray(np.random.default_rng(0).normal(size=(16, 3)))
        g = jax.vmap(jax.grad(lambda x: igso3.log_density(jnp.linalg.norm(x), 0.7)))(v)
        np.testing.assert_allclose(igso3.score_vector(v, 0.7), g, rtol=1e-9)


def test_small_eps_branch_agrees_with_series_at_switch():
    with jax.enable_x64(True):
        w = np.linspace(0.0, np.pi, 101)
        for e in (0.9, igso3.SIGMA_SWITCH):
            W, E = np.meshgrid(w, [e])
            a = _igso3._series(np, W, E)  # series branch
            b = _igso3._images(np, W, E)  # closed-form branch
            np.testing.assert_allclose(a[0], b[0], rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(a[1], b[1], rtol=1e-9, atol=1e-10)
            np.testing.assert_allclose(a[2], b[2], rtol=1e-9, atol=1e-10)
        # and the public (jnp) evaluation is continuous across the switch
        lo = ev(w, igso3.SIGMA_SWITCH * (1 - 1e-12))[0]
        hi = ev(w, igso3.SIGMA_SWITCH)[0]
        np.testing.assert_allclose(lo, hi, atol=1e-10)


def test_small_eps_limits():
    with jax.enable_x64(True):
        # rotation vectors ~ N(0, eps^2 I): d log f / d omega -> -omega/eps^2, score norm -> sqrt(3)/eps
        e = 2e-3
        _, _, co, _, sn = ev([0.0, 1e-4, 2e-3, 5e-3], e)
        np.testing.assert_allclose(co, -1 / e**2, rtol=1e-5)
        np.testing.assert_allclose(sn, np.sqrt(3) / e, rtol=1e-3)


def test_no_nan_or_inf_on_grid():
    t = igso3.tables()
    assert all(np.all(np.isfinite(v)) for v in t.values())
    E, W = np.meshgrid(t["sigma"][::16], np.linspace(0, np.pi, 128), indexing="ij")
    E = np.concatenate([E.ravel(), [igso3.SIGMA_MIN, igso3.SIGMA_MAX]])
    W = np.concatenate([W.ravel(), [np.pi, 0.0]])
    for dtype in (np.float32, np.float64):
        with jax.enable_x64(dtype == np.float64):
            out = ev(W, E, dtype)
            for o in out:
                assert o.dtype == dtype and np.all(np.isfinite(o))


def test_bad_input_errors():
    with pytest.raises(ValueError, match=r"sigma: expected values in \[0.001, 5.0\]"):
        igso3.sample(jax.random.key(0), 10.0, (3,))
    with pytest.raises(ValueError, match="sigma: expected values"):
        igso3.log_density(0.1, 1e-5)
    with pytest.raises(ValueError, match="sigma: expected values"):
        igso3.score_norm(jnp.array([0.5, np.nan]))
    with pytest.raises(ValueError, match="R: expected rotation matrices"):
        igso3.score(jnp.eye(3) * 1.1, 0.5)
    with pytest.raises(ValueError, match="mean: expected rotation matrices"):
        igso3.sample(jax.random.key(0), 0.5, (3,), mean=jnp.zeros((3, 3)))
