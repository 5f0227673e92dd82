"""Cases a fresh set of bad-input probes found unbounded in jaxkit.dynamics: refused up front, in well under a
second, with the memory they would need (they ran out of memory after seconds, or ran ~forever)."""

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit import dynamics as dy


def _refused_fast(fn, match):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        fn()
    assert time.perf_counter() - t0 < 5.0  # generous for a loaded machine; nothing is allocated


def test_huge_requests_are_refused_with_the_memory_needed():
    # 1e12 save times of 8 B = 7.28 TiB
    _refused_fast(lambda: dy.log_times(1.0, 10**12), r"n: the request needs about 7\.28 TiB")
    # 1e6 x (1e6 + 1 + 2) float32 parameters of 4 B = 3.64 TiB
    _refused_fast(lambda: dy.init_relu(jax.random.key(0), 10**6, 10**6, 2, 0.1), r"hidden: .*3\.64 TiB")
    _refused_fast(lambda: dy.init_deep_linear(jax.random.key(0), (10**6, 10**6, 1), 0.1), "dims: .*size cap")
    _refused_fast(lambda: dy.init_attention_merged(jax.random.key(0), 10**5, 10**3, 0.1), "dim: .*size cap")
    # 1e9 saved iterates of 1e4 + 2 float32 values = 36.4 TiB
    loss = lambda p: jnp.sum((p["w"] - 1.0) ** 2)
    _refused_fast(
        lambda: dy.gradient_descent(loss, {"w": jnp.zeros(10**4)}, 0.1, 10**9),
        r"n_steps: the request needs about 36\.4 TiB.*raise save_every",
    )


def test_ordinary_sizes_still_work():
    assert dy.log_times(1.0, 50).shape == (50,)
    assert dy.init_relu(jax.random.key(0), 3, 4, 2, 0.1)["W"].shape == (4, 3)
    loss = lambda p: jnp.sum((p["w"] - 1.0) ** 2)
    out = dy.gradient_descent(loss, {"w": jnp.zeros(3)}, 0.1, 20, save_every=5)
    assert out.loss.shape[0] == 5


def test_entropy_effective_rank_of_the_zero_matrix_is_refused():
    """Fresh probe (2026-12-06): the zero matrix returned 1.0 (p = 0/0 read as rank one)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import pytest

    from jaxkit.dynamics import effective_rank

    for shape in ((3, 3), (2, 5)):
        with pytest.raises(
            ValueError, match="matrix: the entropy effective rank of the zero matrix is undefined"
        ):
            effective_rank(jnp.zeros(shape), method="entropy")
    f = jax.jit(lambda m: effective_rank(m, method="entropy"))
    with pytest.raises(Exception, match="zero matrix is undefined"):
        jax.block_until_ready(f(jnp.zeros((3, 3))))
    # valid: exp(entropy of sigma / sum sigma), against numpy
    m = np.diag([3.0, 1.0, 0.0])
    p = np.array([0.75, 0.25])
    np.testing.assert_allclose(float(f(jnp.asarray(m))), np.exp(-np.sum(p * np.log(p))), rtol=1e-5)
    assert int(effective_rank(jnp.zeros((3, 3)), tol=0.1)) == 0  # threshold: no singular value above tol


def test_min_l1_interpolator_refuses_a_non_unique_minimizer():
    """Fresh probe: X = [[1, 1]], y = [1] returned [1, 0], one vertex of the segment of minimizers
    {[a, 1 - a], 0 <= a <= 1} (a duplicated feature); a tie between other columns is caught too."""
    import numpy as np

    with pytest.raises(
        ValueError, match=r"X: expected a design .* unique.*columns 0 and 1 are equal up to sign"
    ):
        dy.min_l1_interpolator(np.array([[1.0, 1.0]]), np.array([1.0]))
    with pytest.raises(ValueError, match=r"columns 0 and 2 are equal up to sign"):  # a negated copy
        dy.min_l1_interpolator(np.array([[1.0, 0.3, -1.0], [2.0, 1.0, -2.0]]), np.array([1.0, 2.0]))
    # [1, 1, 0] and [0, 0, 2] both interpolate with norm 2 (no duplicate column: the dual certificate says so)
    with pytest.raises(ValueError, match=r"X: .*columns \[2\] .* same ℓ1 norm"):
        dy.min_l1_interpolator(np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5]]), np.array([1.0, 1.0]))
    # unique answers are kept: a duplicated column with no weight, y = 0, a strictly better column
    np.testing.assert_allclose(
        dy.min_l1_interpolator(np.array([[1.0, 0, 0], [0, 1, 1]]), [1.0, 0]), [1, 0, 0]
    )
    np.testing.assert_allclose(dy.min_l1_interpolator(np.array([[1.0, 1.0]]), [0.0]), [0, 0])
    np.testing.assert_allclose(
        dy.min_l1_interpolator(np.array([[1.0, 0, 1], [0, 1, 1]]), [1.0, 1]), [0, 0, 1]
    )


def test_min_l1_interpolator_of_gaussian_designs_is_the_linprog_answer():
    """The uniqueness check does not refuse random Gaussian designs (unique with probability 1), as in the
    saddle-to-saddle experiment (n = 5, d = 8, a sparse target) and with a dense y."""
    import numpy as np
    from scipy.optimize import linprog

    for seed in range(40):
        rng = np.random.default_rng(seed)
        n, d = int(rng.integers(2, 8)), int(rng.integers(8, 16))
        X = rng.normal(size=(n, d))
        b = np.zeros(d)
        b[[0, 3, 5]] = [2.0, -1.2, 0.6]
        y = X @ b if seed % 2 else rng.normal(size=n)
        lp = linprog(np.ones(2 * d), A_eq=np.hstack([X, -X]), b_eq=y, bounds=(0, None), method="highs")
        np.testing.assert_allclose(dy.min_l1_interpolator(X, y), lp.x[:d] - lp.x[d:], atol=1e-10)


def test_gradient_flow_with_a_non_finite_start_names_loss_fn():
    """Before (fresh probe y34): a loss that is NaN at params0 failed as "SolveError: stopped at t = 0 ... raise
    max_steps", a hint that cannot help. Now the start is diagnosed; a finite loss still solves."""
    gradient_flow = dy.gradient_flow
    ts = jnp.linspace(0.0, 1.0, 5)
    with pytest.raises(ValueError, match=r"loss_fn: at params0 the loss is nan"):
        gradient_flow(lambda p: jnp.sum(jnp.log(p - 1.0)), jnp.array([0.5]), ts)
    with pytest.raises(ValueError, match=r"loss_fn: at params0 its gradient is not finite"):
        gradient_flow(lambda p: jnp.sum(jnp.sqrt(jnp.abs(p))), jnp.array([0.0]), ts)
    res = gradient_flow(lambda p: 0.5 * jnp.sum(p**2), jnp.array([1.0]), ts)
    np.testing.assert_allclose(np.asarray(res.params)[:, 0], np.exp(-np.asarray(ts)), rtol=1e-3)
