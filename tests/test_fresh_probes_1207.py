"""Fresh probes of 2026-12-07 (written from the docs alone, without reading the tests): results that were wrong
without a word, and errors that named no argument. Each test states the probe and checks against an independent
computation (a textbook float64 filter, the staircase's own levels) or the message naming the argument."""

import warnings

import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from jaxkit import dynamics as D
from jaxkit import forecast as F
from jaxkit import stability as S


def test_plateaus_of_a_staircase_are_its_three_steps():
    """B94: a step curve gave no plateau (the 98th-percentile slope is 0), and with 1e-9 noise two at level 1."""
    ts = np.linspace(0, 10, 501)
    step = np.where(ts < 3, 1.0, np.where(ts < 6, 0.5, 0.1))
    for curve in (step, step + 1e-9 * np.random.default_rng(0).normal(size=501)):
        found = D.plateaus(ts, curve)
        assert [round(p.level, 6) for p in found] == [1.0, 0.5, 0.1]
        assert [(p.start, p.end) for p in found] == [(0.0, 2.98), (3.0, 5.98), (6.0, 10.0)]


def _textbook_kalman(y, X, q, r, p0):
    T, N = y.shape
    K = X.shape[1]
    out = np.zeros((T, N, K))
    for i in range(N):
        b, P = np.zeros(K), p0 * np.eye(K)
        for t in range(T):
            P = P + q * np.eye(K)
            x = X[t]
            g = P @ x / (x @ P @ x + r)
            b = b + g * (y[t, i] - x @ b)
            P = P - np.outer(g, x @ P)
            out[t, i] = b
    return out


def test_kalman_betas_with_a_diffuse_start_match_a_float64_filter():
    """B167: p0 = 1e8 against r = 0.01 in float32 was off by 0.86 at t = 3 (the covariance update cancels)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 2))
    y = X @ np.array([[1, -0.5], [0.3, 2.0]]).T + 0.1 * rng.normal(size=(400, 2))
    got = np.asarray(F.kalman_betas(y, X, q=0.0, r=0.01, p0=1e8))
    np.testing.assert_allclose(got, _textbook_kalman(y, X, 0.0, 0.01, 1e8), atol=1e-5)


def test_forecast_windows_past_the_data_end_are_announced():
    """B194: target rows past the data end came back NaN without a word (the docstring said so; the call did not)."""
    dates = pd.bdate_range("2020-01-01", periods=300)
    rng = np.random.default_rng(0)
    prices = pd.DataFrame(
        100 * np.exp(np.cumsum(0.01 * rng.normal(size=(300, 3)), 0)), index=dates, columns=list("abc")
    )
    md = F.market_data_from_frames(prices, history=20, horizon=5)
    T = len(md.dates)
    with pytest.warns(
        UserWarning, match=r"^index: 1 of 2 decision positions are within horizon=5 of the data end"
    ):
        w = F.forecast_windows(md, np.array([T - 7, T - 1]), history=20, horizon=5)
    assert np.isfinite(w["target"][0]).all() and np.isnan(w["target"][1]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.forecast_windows(md, np.array([T - 6]), history=20, horizon=5)  # a full window: nothing to announce


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: D.saxe_mode(jnp.array([0.0, 1.0]), jnp.array([1.0, 2.0, 3.0]), jnp.array([1e-3, 1e-3])),
            "t, s, u0:",
        ),
        (lambda: D.saxe_half_time(jnp.array([1.0, 2.0, 3.0]), jnp.array([1e-3, 1e-3])), "s, u0:"),
        (lambda: S.relu_second_moment(jnp.ones(3), jnp.ones(2), jnp.zeros(3)), "q1, q2, c:"),
        (
            lambda: D.deep_linear_mode(
                jnp.array([0.0, 1.0]), jnp.array([1.0, 2.0]), jnp.array([1e-3] * 3), 3
            ),
            "s, u0:",
        ),
    ],
)
def test_shapes_that_do_not_broadcast_are_named(call, message):
    """B405-B408: NumPy's or JAX's broadcasting error named neither argument."""
    with pytest.raises(ValueError, match=f"^{message} expected shapes that broadcast together"):
        call()


def test_an_array_where_a_number_is_expected_is_named():
    """B411: plateau_shift(factor=array of 3) gave "Only scalar arrays can be converted". (In this suite the
    runtime type checking of ``factor: float`` names it first; the library's own check is called directly.)"""
    from jaxkit._validate import check_positive

    with pytest.raises(TypeError, match="factor"):
        D.plateau_shift(jnp.array([1.0, 2.0]), factor=jnp.array([10.0, 10.0, 10.0]))
    with pytest.raises(TypeError, match=r"^factor: expected a number, received an array of shape \(3,\)"):
        check_positive("factor", jnp.array([10.0, 10.0, 10.0]))


def test_ragged_samples_are_named():
    """B398: crps of a ragged list gave NumPy's "setting an array element with a sequence"."""
    with pytest.raises(TypeError, match="^samples: expected a numeric array"):
        F.crps([[1, 2], [3]], [1, 2])


def test_ddpm_posterior_coefficients_match_float64_at_every_step():
    """B24: in float32 q_posterior's x0 coefficient at t = 0 was 0.99983 (exactly 1: x_{-1} = x0), from
    1 - alpha_bar computed by subtraction; now within 1e-6 of a float64 computation at every t."""
    from jaxkit import diffusion as dm

    sch = dm.discrete_schedule("linear", 1000)
    b = np.linspace(1e-4, 0.02, 1000)
    ab = np.cumprod(1 - b)
    abp = np.r_[1.0, ab[:-1]]
    ts = np.array([0, 1, 10, 100, 500, 999])
    m = np.stack(
        [
            np.asarray(dm.q_posterior(sch, jnp.array([1.0, 0.0]), jnp.array([0.0, 1.0]), jnp.array(t))[0])
            for t in ts
        ]
    )
    c0 = np.sqrt(abp[ts]) * b[ts] / (1 - ab[ts])
    ct = np.sqrt(1 - b[ts]) * (1 - abp[ts]) / (1 - ab[ts])
    np.testing.assert_allclose(m[:, 0], c0, rtol=1e-6)
    np.testing.assert_allclose(m[:, 1], ct, rtol=1e-6, atol=1e-12)


def test_diffusion_shape_mismatches_are_named():
    """B39 and H05: JAX's broadcasting errors named neither argument."""
    import jax

    from jaxkit import diffusion as dm
    from jaxkit.diffusion import igso3

    with pytest.raises(
        ValueError, match=r"^sigma: expected a scalar or a shape that broadcasts to shape=\(4,\)"
    ):
        igso3.sample(jax.random.key(0), jnp.array([0.1, 0.2, 0.3]), (4,))
    assert igso3.sample(jax.random.key(0), jnp.array([0.1, 0.2, 0.3]), (2, 3)).shape == (2, 3, 3, 3)
    with pytest.raises(ValueError, match="^x_t, x0: expected shapes that broadcast together"):
        dm.SE3Diffusion().trans_score(jnp.ones((3, 3)), jnp.ones((4, 3)), jnp.array(0.5))


def test_real_set_table_refuses_a_record_without_its_fields():
    """M06: a hand-written record without cpu_seconds gave a bare KeyError; a missing top1_rmsd was read as a
    failure."""
    from jaxkit import docking

    ok = {
        "n_poses": 1,
        "top1_rmsd": 1.0,
        "top1_pb_valid": True,
        "best_rmsd": 1.0,
        "cpu_seconds": 1.0,
        "seconds": 1.0,
    }
    rec = {"id": "x1", "split": "val", "source": "s", "seed": 0, "methods": {"a": ok, "b": {"error": "boom"}}}
    with pytest.raises(ValueError, match=r"^records: method 'b' of record 'x1' lacks \['cpu_seconds'\]"):
        docking.real_set_table([rec], reference="a")
    no_rmsd = {k: v for k, v in ok.items() if k != "top1_rmsd"}
    with pytest.raises(ValueError, match=r"lacks \['top1_rmsd'\]"):
        docking.real_set_table([{**rec, "methods": {"a": ok, "b": no_rmsd}}], reference="a")


def test_first_failure_names_its_construction_argument():
    """B393b: the message named the function, not its argument ``c``."""
    from jaxkit import ssm

    with pytest.raises(ValueError, match=r"^c: expected a counting construction .* task 'parity'"):
        ssm.first_failure(ssm.construct("parity", "selective_signed"), ssm.parse_precision("fixed4.2"))


def test_consensus_counts_count_the_other_poses_and_refuse_a_threshold_at_or_below_zero():
    """Round-4 probes D154/D211 (written on b838432): threshold <= 0 gave a count of -1 for every pose (the pose
    itself subtracted but not counted). Counts are checked against a NumPy double loop."""
    from jaxkit.docking import consensus_counts

    pos = np.random.default_rng(0).normal(size=(5, 6, 3))
    pos[1] = pos[0] + 0.01  # one close pair
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match="^threshold: expected a finite value > 0"):
            consensus_counts(pos, bad)
    for threshold in (1e-9, 0.05, 2.0, 100.0):
        counts, mean = consensus_counts(pos, threshold)
        rmsd = np.array([[np.sqrt(np.mean(np.sum((a - b) ** 2, -1))) for b in pos] for a in pos])
        expected = [sum(rmsd[i, j] < threshold for j in range(5) if j != i) for i in range(5)]
        np.testing.assert_array_equal(counts, expected)
        np.testing.assert_allclose(mean, rmsd.sum(1) / 4)
