"""Darcy: manufactured solution with second-order convergence, and scipy spsolve on the same system."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxkit.pde import darcy, grf


def _manufactured(n):
    x = np.linspace(0, 1, n)
    X, Y = np.meshgrid(x, x, indexing="ij")
    a = 1.0 + X**2 + Y
    u = np.sin(np.pi * X) * np.sin(np.pi * Y)
    ux = np.pi * np.cos(np.pi * X) * np.sin(np.pi * Y)
    uy = np.pi * np.sin(np.pi * X) * np.cos(np.pi * Y)
    f = -(2 * X * ux + 1.0 * uy) + 2 * np.pi**2 * a * u  # -∇·(a∇u) with a_x = 2x, a_y = 1
    return a, f, u


def test_manufactured_second_order():
    with jax.enable_x64(True):
        errs = []
        for n in (17, 33):
            a, f, u = _manufactured(n)
            uh = darcy.solve(jnp.asarray(a), f=jnp.asarray(f))
            errs.append(float(np.max(np.abs(np.asarray(uh) - u))))
        order = np.log2(errs[0] / errs[1])
        assert errs[-1] < 2e-3
        assert 1.85 < order < 2.2, order


def test_matches_spsolve_on_thresholded_grf():
    with jax.enable_x64(True):
        g = grf.grf_neumann(jax.random.key(1), (33, 33), alpha=2.0, tau=3.0, sigma=3.0, dtype=jnp.float64)
        a = darcy.coefficient_from_grf(g)
        assert set(np.unique(np.asarray(a))) == {3.0, 12.0}
        u = np.asarray(darcy.solve(a))
        ref = darcy.reference_solve(np.asarray(a))
        assert np.max(np.abs(u - ref)) < 1e-10 * np.max(np.abs(ref))
        assert np.all(u[0] == 0) and np.all(u[:, -1] == 0)


def test_float32_batched_matches_reference():
    keys = jax.random.split(jax.random.key(2), 3)
    a, u = jax.jit(
        jax.vmap(
            lambda k: (lambda a: (a, darcy.solve(a)))(
                darcy.coefficient_from_grf(grf.grf_neumann(k, (21, 21), alpha=2.0, tau=3.0))
            )
        )
    )(keys)
    for i in range(3):
        ref = darcy.reference_solve(np.asarray(a[i]))
        assert np.max(np.abs(np.asarray(u[i]) - ref)) < 1e-4 * np.max(np.abs(ref))


@settings(max_examples=10, deadline=None)
@given(n=st.sampled_from([5, 8]), seed=st.integers(0, 10_000))
def test_operator_is_symmetric_positive_definite(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 3.0, (n, n))
    mat, _ = darcy.assemble(a)
    dense = mat.toarray()
    np.testing.assert_allclose(dense, dense.T, atol=1e-12)
    assert np.linalg.eigvalsh(dense).min() > 0
    v = rng.normal(size=(n - 2, n - 2))
    np.testing.assert_allclose(
        np.asarray(darcy.apply_operator(a.astype(np.float32), v.astype(np.float32))).ravel(),
        dense @ v.ravel(),
        rtol=1e-4,
        atol=1e-3 * np.abs(dense @ v.ravel()).max(),
    )


def test_bad_arguments():
    a = np.ones((9, 9), np.float32)
    with pytest.raises(ValueError, match="positive"):
        darcy.solve(a.copy() * -1)
    bad = a.copy()
    bad[3, 3] = np.nan
    with pytest.raises(ValueError, match="finite"):
        darcy.solve(bad)
    with pytest.raises(ValueError, match="square"):
        darcy.solve(np.ones((9, 8), np.float32))
    with pytest.raises(ValueError, match="f"):
        darcy.solve(a, f=np.ones((5, 5), np.float32))
