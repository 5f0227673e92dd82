"""Diagonal linear nets: gradient flow at α = 1e-6 vs the Pesme–Flammarion jump algorithm and scipy linprog."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import linprog

import jaxkit.dynamics as dyn

ALPHA = 1e-6


def _instance(seed=80, n=5, d=8):
    # seed chosen from the *theory* only: well separated jumps (ratio > 1.3) and a dual margin > 0.35, so that
    # inactive coordinates stay below α^(2·margin) and the finite-α flow can approach the min-ℓ1 vertex.
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    beta_star = np.zeros(d)
    beta_star[[0, 3, 5]] = [2.0, -1.2, 0.6]
    return X, X @ beta_star


@pytest.fixture(scope="module")
def diag_run():
    X, y = _instance()
    jumps = dyn.diagonal_jumps(X, y)
    with jax.enable_x64(True):
        Xj, yj = jnp.asarray(X), jnp.asarray(y)

        def loss(p):
            return dyn.mse_loss(dyn.diagonal_apply, p, Xj, yj)

        ts = dyn.log_times(80.0, 1200, 0.1)
        # default solver: Kvaerno5 (implicit, L-stable)
        res = dyn.gradient_flow(loss, dyn.init_diagonal(8, ALPHA), ts, rtol=1e-8, atol=1e-12)
        beta = np.asarray(res.params["u"] * res.params["v"])
        return X, y, jumps, np.asarray(ts), beta, np.asarray(res.loss)


def test_jump_algorithm_reaches_min_l1():
    X, y = _instance()
    jumps = dyn.diagonal_jumps(X, y)
    lp = linprog(np.ones(16), A_eq=np.hstack([X, -X]), b_eq=y, bounds=(0, None), method="highs")
    b_l1 = lp.x[:8] - lp.x[8:]
    assert np.abs(jumps.saddles[-1] - b_l1).max() < 1e-8
    assert np.all(np.diff(jumps.times) > 0) and np.all(np.diff(jumps.losses) < 0)
    # each saddle is a constrained least-squares minimizer: gradient vanishes on its support
    for b in jumps.saddles[1:]:
        g = -X.T @ (y - X @ b) / X.shape[0]
        assert np.abs(g[np.abs(b) > 1e-10]).max() < 1e-8


def test_jump_times_match_algorithm(diag_run):
    X, y, jumps, ts, beta, loss = diag_run
    scale = np.log(1 / ALPHA)
    measured = []
    for k, i in enumerate(jumps.coords):
        # jump k: the activating coordinate reaches half its value at the next saddle
        tc = dyn.crossing_time(ts, np.abs(beta[:, i]), 0.5 * abs(jumps.saddles[k + 1][i]))
        measured.append(tc / scale)
    measured = np.array(measured)
    rel = np.abs(measured / jumps.times - 1)
    print("jump times t/ln(1/α): measured", measured, "algorithm", jumps.times, "rel", rel)
    assert len(jumps.times) >= 3
    assert np.all(rel < 0.10)
    # the plateaus between jumps sit at the predicted saddle losses
    for k in range(1, len(jumps.times)):
        tmid = np.sqrt(jumps.times[k - 1] * jumps.times[k]) * scale
        lmid = np.interp(tmid, ts, loss)
        assert abs(lmid / jumps.losses[k] - 1) < 0.25


def test_final_solution_is_min_l1(diag_run):
    X, y, jumps, ts, beta, loss = diag_run
    lp = linprog(np.ones(16), A_eq=np.hstack([X, -X]), b_eq=y, bounds=(0, None), method="highs")
    b_l1 = lp.x[:8] - lp.x[8:]
    err = np.abs(beta[-1] - b_l1).max()
    print("final |β - β_ℓ1|_∞ =", err)
    assert err < 1e-3
    assert np.abs(dyn.min_l1_interpolator(X, y) - b_l1).max() < 1e-8


def test_diagonal_errors():
    with pytest.raises(ValueError, match="X, y"):
        dyn.diagonal_jumps(np.ones((3, 4)), np.ones(5))
    with pytest.raises(ValueError, match="scale"):
        dyn.init_diagonal(4, 0.0)
