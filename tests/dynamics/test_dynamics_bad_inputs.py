"""Solvers that run out of iterations say so, and bad inputs to jaxkit.dynamics give clear errors (issue 20,
finding 3: ``gradient_flow(..., max_steps=3)`` returned ``[0, .0797, .0797, .0797]`` with no error; the true
values are about ``[0, 2.53, 3.0, 3.0]``)."""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxkit.dynamics as dyn

TS = jnp.array([0.0, 2.0, 4.0, 8.0])
P0 = {"a": jnp.array(0.01), "b": jnp.array(0.01)}


def _scalar_loss(p):
    """One balanced Saxe mode: with a = b, u = ab obeys du/dt = 2u(3 - u) (closed form: ``dyn.saxe_mode``)."""
    return 0.5 * (3.0 - p["a"] * p["b"]) ** 2


def test_flow_that_runs_out_of_steps_raises_or_flags():
    # default settings in float32 are solvable and match the closed form
    res = dyn.gradient_flow(_scalar_loss, P0, TS)
    u = np.asarray(res.params["a"] * res.params["b"])
    np.testing.assert_allclose(u, dyn.saxe_mode(np.asarray(TS), 3.0, 1e-4), rtol=2e-3)
    assert bool(res.solved) and not bool(res.converged)
    # max_steps exhausted: an error naming where it stopped, not a plausible number (tsit5: cheaper to compile)
    with pytest.raises(dyn.SolveError, match=r"stopped at t = [0-9.]+ of t1 = 8.*max_steps \(now 3\)"):
        dyn.gradient_flow(_scalar_loss, P0, TS, solver=diffrax.Tsit5(), max_steps=3)
    flagged = dyn.gradient_flow(_scalar_loss, P0, TS, solver=diffrax.Tsit5(), max_steps=3, on_failure="flag")
    assert not bool(flagged.solved) and float(flagged.t_stop) < 8.0
    after = np.asarray(TS) > float(flagged.t_stop)
    assert np.all(np.isnan(np.asarray(flagged.loss)[after])) and np.all(
        np.isfinite(np.asarray(flagged.loss)[~after])
    )
    with pytest.raises((ValueError, TypeError), match="on_failure"):  # TypeError: the suite's beartype hook
        dyn.gradient_flow(_scalar_loss, P0, TS, on_failure="ignore")


def test_flow_failure_is_caught_under_an_outer_jit():
    run = jax.jit(lambda p: dyn.gradient_flow(_scalar_loss, p, TS, solver=diffrax.Tsit5(), max_steps=2).loss)
    with pytest.raises(Exception, match="the solve stopped before t1"):
        jax.block_until_ready(run(P0))


def test_diverging_descent_and_truncated_jumps_are_reported():
    with pytest.raises(dyn.SolveError, match="diverged at step"):
        dyn.gradient_descent(_scalar_loss, P0, 10.0, 40)
    out = dyn.gradient_descent(_scalar_loss, P0, 10.0, 40, on_failure="flag")
    assert not bool(out.solved)
    assert bool(dyn.gradient_descent(_scalar_loss, P0, 0.05, 40).solved)
    rng = np.random.default_rng(80)
    X = rng.normal(size=(5, 8))
    y = X @ np.array([2.0, 0, 0, -1.2, 0, 0.6, 0, 0])
    full = dyn.diagonal_jumps(X, y)
    assert full.complete and len(full.times) >= 2
    with pytest.raises(dyn.SolveError, match="1 jumps did not reach a critical point"):
        dyn.diagonal_jumps(X, y, max_jumps=1)
    part = dyn.diagonal_jumps(X, y, max_jumps=1, on_failure="flag")
    assert not part.complete and len(part.times) == 1
    np.testing.assert_array_equal(part.times, full.times[:1])


def test_plateau_saddle_checks_match_the_two_mode_closed_form():
    """Two decoupled balanced modes s = (3, 1): the plateau after the first drop is the saddle where mode 2 is
    still at 0; there the Hessian block of mode 2 is [[0, -1], [-1, 0]], so the smallest eigenvalue is -s2 = -1."""
    s = jnp.array([3.0, 1.0])

    def loss(p):
        return 0.5 * jnp.sum((s - p["a"] * p["b"]) ** 2)

    p0 = {"a": jnp.full(2, 1e-3), "b": jnp.full(2, 1e-3)}
    res = dyn.gradient_descent(loss, p0, 0.02, 1200, save_every=4)
    checks = dyn.plateau_saddle_checks(loss, res)
    assert len(checks) >= 1
    mid = [c for c in checks if abs(c.level - 0.5) < 0.05]  # loss 0.5 s2^2 with mode 1 learned
    assert len(mid) == 1 and mid[0].is_saddle
    np.testing.assert_allclose(mid[0].min_eig, -1.0, atol=0.02)
    assert all(c.is_saddle for c in checks)
    assert checks == dyn.plateau_saddle_checks(loss, res)  # deterministic
    with pytest.raises(TypeError, match="result"):
        dyn.plateau_saddle_checks(loss, {"ts": 1})


BAD = [
    (
        "flow ts decreasing",
        lambda: dyn.gradient_flow(_scalar_loss, P0, TS[::-1]),
        ValueError,
        "ts: expected strictly",
    ),
    (
        "flow ts NaN",
        lambda: dyn.gradient_flow(_scalar_loss, P0, jnp.array([0.0, jnp.nan])),
        ValueError,
        "ts: expected finite",
    ),
    (
        "flow ts 2D",
        lambda: dyn.gradient_flow(_scalar_loss, P0, jnp.zeros((2, 2))),
        ValueError,
        "ts: expected a 1D",
    ),
    (
        "flow params NaN",
        lambda: dyn.gradient_flow(_scalar_loss, {"a": jnp.array(jnp.nan)}, TS),
        ValueError,
        "params0: expected finite",
    ),
    (
        "flow params int",
        lambda: dyn.gradient_flow(_scalar_loss, {"a": jnp.array(1)}, TS),
        TypeError,
        "params0: expected floating",
    ),
    (
        "flow params empty",
        lambda: dyn.gradient_flow(_scalar_loss, {}, TS),
        ValueError,
        "params0: expected a non-empty",
    ),
    ("flow rtol", lambda: dyn.gradient_flow(_scalar_loss, P0, TS, rtol=-1.0), ValueError, "rtol"),
    ("flow solver", lambda: dyn.gradient_flow(_scalar_loss, P0, TS, solver="tsit5"), TypeError, "solver"),
    (
        "gd params NaN",
        lambda: dyn.gradient_descent(_scalar_loss, {"a": jnp.array(jnp.nan)}, 0.1, 2),
        ValueError,
        "params0",
    ),
    (
        "gd save_every",
        lambda: dyn.gradient_descent(_scalar_loss, P0, 0.1, 10, save_every=3),
        ValueError,
        "save_every",
    ),
    (
        "gd key",
        lambda: dyn.gradient_descent(_scalar_loss, P0, 0.1, 2, batch_fn=lambda k: None, key=3),
        TypeError,
        "key",
    ),
    ("log_times t1 NaN", lambda: dyn.log_times(float("nan")), ValueError, "t1"),
    ("init key int", lambda: dyn.init_linear(0, 2, 2, 2, 0.1), TypeError, "key"),
    ("init scale 0", lambda: dyn.init_linear(jax.random.key(0), 2, 2, 2, 0.0), ValueError, "scale"),
    (
        "init target NaN",
        lambda: dyn.init_linear(jax.random.key(0), 2, 2, 2, 0.1, "aligned", np.full((2, 2), np.nan)),
        ValueError,
        "target: expected finite",
    ),
    ("init dims", lambda: dyn.init_deep_linear(jax.random.key(0), (2, 0, 2), 0.1), ValueError, "dims"),
    (
        "apply x shape",
        lambda: dyn.linear_apply(dyn.init_linear(jax.random.key(0), 3, 2, 1, 0.1), jnp.ones(4)),
        ValueError,
        r"x: expected one input vector of shape \(3,\)",
    ),
    (
        "apply params",
        lambda: dyn.relu_apply({"W": jnp.ones((2, 2))}, jnp.ones(2)),
        ValueError,
        "params: expected a dict",
    ),
    (
        "mse targets NaN",
        lambda: dyn.mse_loss(
            dyn.diagonal_apply, dyn.init_diagonal(2, 0.1), jnp.ones((3, 2)), jnp.array([1.0, jnp.nan, 0.0])
        ),
        ValueError,
        "targets: expected finite",
    ),
    (
        "mse sizes",
        lambda: dyn.mse_loss(dyn.diagonal_apply, dyn.init_diagonal(2, 0.1), jnp.ones((3, 2)), jnp.ones(4)),
        ValueError,
        "same number of samples",
    ),
    (
        "effective_rank NaN",
        lambda: dyn.effective_rank(np.full((2, 2), np.nan)),
        ValueError,
        "matrix: expected finite",
    ),
    ("effective_rank empty", lambda: dyn.effective_rank(np.zeros((0, 2))), ValueError, "non-empty"),
    ("effective_rank 1D", lambda: dyn.effective_rank(np.ones(3)), ValueError, "2D"),
    ("kink_count keys", lambda: dyn.kink_count({"w": np.ones(2)}, (-1, 1)), ValueError, "keys"),
    (
        "kink_count NaN",
        lambda: dyn.kink_count({"w": np.ones(2), "b": np.ones(2), "a": np.array([1.0, np.nan])}, (-1, 1)),
        ValueError,
        "params\\['a'\\]: expected finite",
    ),
    (
        "kink_count range",
        lambda: dyn.kink_count({"w": np.ones(2), "b": np.ones(2), "a": np.ones(2)}, (1, -1)),
        ValueError,
        "x_range",
    ),
    (
        "crossing NaN",
        lambda: dyn.crossing_time([0, 1, 2], [0.0, np.nan, 2.0], 1.0),
        ValueError,
        "values: expected finite",
    ),
    (
        "crossing ts",
        lambda: dyn.crossing_time([0, 2, 1], [0.0, 1.0, 2.0], 1.0),
        ValueError,
        "ts: expected strictly",
    ),
    (
        "plateaus inf",
        lambda: dyn.plateaus(np.arange(5.0), [1, 1, np.inf, 0, 0]),
        ValueError,
        "loss: expected finite",
    ),
    (
        "saddle_check NaN",
        lambda: dyn.saddle_check(_scalar_loss, {"a": jnp.array(jnp.nan), "b": jnp.array(0.0)}),
        ValueError,
        "params: expected finite",
    ),
    ("active_heads keys", lambda: dyn.active_heads({"v": jnp.ones(2)}), ValueError, "keys"),
    ("saxe_mode t NaN", lambda: dyn.saxe_mode([0.0, np.nan], 3.0, 1e-3), ValueError, "t: expected finite"),
    ("saxe_mode s<0", lambda: dyn.saxe_mode(1.0, -3.0, 1e-3), ValueError, "s: expected finite values > 0"),
    ("plateau_losses empty", lambda: dyn.plateau_losses([]), ValueError, "s: expected a non-empty"),
    (
        "learning_order NaN",
        lambda: dyn.learning_order([1.0, np.nan]),
        ValueError,
        "strengths: expected finite",
    ),
    (
        "deep mode t",
        lambda: dyn.deep_linear_mode([1.0, 0.5], 3.0, 1e-3, 3),
        ValueError,
        "t: expected strictly",
    ),
    (
        "fixed point NaN",
        lambda: dyn.linear_fixed_point(np.full((2, 2), np.nan), [0], 2),
        ValueError,
        "sigma_yx",
    ),
    ("embed axis", lambda: dyn.embed_unit({"W1": jnp.ones((2, 3))}, {"W1": (2, "in")}), ValueError, "axis 2"),
    (
        "min_l1 NaN",
        lambda: dyn.min_l1_interpolator(np.full((2, 3), np.nan), np.ones(2)),
        ValueError,
        "X: expected finite",
    ),
    (
        "jumps shapes",
        lambda: dyn.diagonal_jumps(np.ones((3, 2)), np.ones(4)),
        ValueError,
        r"X, y: expected shapes",
    ),
    ("jumps str", lambda: dyn.diagonal_jumps([["a", "b"]], ["c"]), TypeError, "X: expected a numeric array"),
]


@pytest.mark.parametrize(("call", "exc", "match"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_input_is_reported(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_lists_and_numpy_are_accepted_like_arrays():
    assert int(dyn.effective_rank([[1, 0], [0, 1]])) == 2
    np.testing.assert_allclose(
        dyn.saxe_mode([0.0, 1.0], [3.0], [1e-3]), dyn.saxe_mode(np.array([0.0, 1.0]), 3.0, 1e-3)
    )
    assert dyn.crossing_time([0, 1, 2], [0, 1, 2], 1.5) == 1.5
    np.testing.assert_allclose(dyn.plateau_losses([1, 2]), [2.5, 0.5, 0.0])
    assert dyn.learning_order((0.5, 2.0, 1.0)).tolist() == [1, 2, 0]


def test_step_counts_past_the_int32_counter_are_named():
    with pytest.raises(
        ValueError, match=r"n_steps: expected at most 2\*\*31 - 1 steps, received 1000000000000"
    ):
        dyn.gradient_descent(_scalar_loss, P0, 0.1, 10**12)
    with pytest.raises(ValueError, match="hidden: expected an integer >= 1, received 0"):
        dyn.init_linear(jax.random.key(0), 2, 0, 2, 0.1)  # named 'dims[1]' before


def test_plateau_losses_refuses_a_negative_singular_value():
    """Fresh probe D30: [1, 2, -3] returned [7, 2.5, 0.5, 0] (|s| taken without a word). The reference for a valid
    call: the docstring's formula ½ Σ_{i>k} s_i² over s sorted decreasingly, written out in NumPy."""
    from jaxkit.dynamics import plateau_losses

    with pytest.raises(ValueError, match="s: expected singular values >= 0"):
        plateau_losses(np.array([1.0, 2.0, -3.0]))
    s = np.array([1.0, 3.0, 2.0, 0.0])
    srt = np.sort(s)[::-1]
    ref = [0.5 * np.sum(srt[k:] ** 2) for k in range(len(s) + 1)]
    np.testing.assert_allclose(plateau_losses(s), ref, rtol=1e-6)
