"""Fresh probes of 2026-12-08 (written from the public docs): each case returned a wrong value or deleted a
user's files without a word before its fix."""

from __future__ import annotations

import os
import re
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxkit.ssm as ssm
import jaxkit.stability as stab
import jaxkit.train as jt
from jaxkit.pde import burgers, grf_periodic
from jaxkit.pde import navier_stokes as ns


def test_burgers_finite_blow_up_beyond_the_maximum_principle_is_refused():
    x = np.arange(64) / 64
    u0 = (5 * np.sin(2 * np.pi * x)).astype(np.float32)
    with pytest.raises(ValueError, match="^n_steps: .*maximum-principle"):
        burgers.solve(u0, nu=1e-3, t_final=5.0, n_steps=1)  # was max|u| = 8.6e23, finite
    u = np.asarray(burgers.solve(u0, nu=1e-1, t_final=0.5))  # resolved: within max|u0| = 5
    assert np.abs(u).max() <= 5.0


@pytest.mark.parametrize("scheme", ["cn", "ifrk4"])
def test_navier_stokes_finite_blow_up_beyond_the_maximum_principle_is_refused(scheme):
    w0 = grf_periodic(jax.random.key(0), (32, 32), alpha=2.5, tau=7.0)
    w0 = 20 * w0 / jnp.max(jnp.abs(w0))
    with pytest.raises(ValueError, match="^dt: .*maximum-principle"):
        ns.solve(w0, nu=1e-4, t_final=1.0, dt=1.0, scheme=scheme)  # was max|w| 210 (cn), 5e9 (ifrk4)
    w = np.asarray(ns.solve(w0, nu=1e-3, t_final=0.1, dt=1e-3, scheme=scheme))
    assert np.abs(w).max() <= 20.0 * (1 + 1e-3)  # unforced: max|w| does not grow


def test_navier_stokes_forced_bound_includes_the_forcing():
    w0 = jnp.zeros((16, 16))
    xs = jnp.arange(16) / 16
    f = 0.1 * jnp.sin(2 * jnp.pi * (xs[:, None] + xs[None, :]))
    w = np.asarray(ns.solve(w0, nu=1e-3, t_final=1.0, dt=1e-2, forcing=f))
    assert np.isfinite(w).all() and np.abs(w).max() <= 0.1 * 1.0 + 1e-6  # max|w0| + t·max|f|


def test_fixed_windows_refuses_more_windows_than_the_stream_holds():
    with pytest.raises(ValueError, match="^n_windows: .*2 distinct windows"):
        stab.fixed_windows(np.arange(10), 20, 8)  # was 20 windows, 18 of them copies of the first
    x, y = stab.fixed_windows(np.arange(10), 2, 8)
    np.testing.assert_array_equal(x, [np.arange(8), np.arange(1, 9)])
    np.testing.assert_array_equal(y, x + 1)


def test_verify_accepts_a_single_random_string():
    out = ssm.verify(ssm.construct("parity", "selective_signed"), exhaustive_len=6, n_random=1, max_len=50)
    assert out["random_strings"] == 1 and out["random_errors"] == 0 and out["exhaustive_errors"] == 0


def test_save_checkpoint_refuses_non_finite_leaves_unless_allowed(tmp_path):
    tree = {"w": jnp.array([jnp.nan, 1.0])}
    with pytest.raises(ValueError, match=r"^tree: leaf \['w'\] holds 1 NaN/inf"):
        jt.save_checkpoint(tmp_path / "c", tree)
    assert not (tmp_path / "c").exists()
    p = jt.save_checkpoint(tmp_path / "c", tree, allow_nonfinite=True)
    back, _ = jt.load_checkpoint(p, {"w": jnp.zeros(2)})
    np.testing.assert_array_equal(np.asarray(back["w"]), [np.nan, 1.0])


def _tiny_fit(checkpoint_dir, n_steps):
    x = jnp.linspace(-1, 1, 16)[:, None]
    model = eqx.nn.MLP(1, 1, 4, 1, key=jax.random.key(1))

    def loss(m, b, k):
        return jnp.mean((jax.vmap(m)(b["x"]) - b["y"]) ** 2)

    data = jt.full_batch({"x": x, "y": x**2})
    return jt.fit(
        model, optax.adam(1e-2), loss, data, n_steps=n_steps, key=jax.random.key(2), progress=False,
        checkpoint_dir=checkpoint_dir,
    )  # fmt: skip


def test_fit_starting_over_keeps_a_users_folder_named_like_a_checkpoint(tmp_path):
    ck = tmp_path / "ck"
    _tiny_fit(str(ck), 2)
    mine = ck / "ckpt_000000099"
    mine.mkdir()
    (mine / "mywork.txt").write_text("user data")
    with pytest.warns(jt.CheckpointWarning):  # the look-alike is skipped as damaged when resuming
        _tiny_fit(str(ck), 3)
    assert (mine / "mywork.txt").read_text() == "user data"


def test_checkpoint_manager_never_prunes_or_replaces_a_users_folder(tmp_path):
    md = tmp_path / "mgr"
    (md / "ckpt_000000001").mkdir(parents=True)
    (md / "ckpt_000000001" / "thesis.tex").write_text("x")
    mg = jt.CheckpointManager(md, keep=1)
    mg.save(5, {"w": jnp.ones(2)})
    mg.save(6, {"w": jnp.ones(2)})
    assert (md / "ckpt_000000001" / "thesis.tex").read_text() == "x"
    assert not (md / "ckpt_000000005").exists()  # its own older checkpoint is pruned
    (md / "ckpt_000000007").mkdir()
    (md / "ckpt_000000007" / "notes.txt").write_text("y")
    with pytest.raises(
        FileExistsError, match="^step: .*ckpt_000000007 exists and is not a jaxkit checkpoint"
    ):
        mg.save(7, {"w": jnp.ones(2)})
    assert (md / "ckpt_000000007" / "notes.txt").read_text() == "y"
    assert mg.clear() == [6]
    assert sorted(os.listdir(md)) == ["ckpt_000000001", "ckpt_000000007"]


# ---- second set (geometry/diffusion, portfolio, forecast, evaluation) ------------------------------------------
import pandas as pd  # noqa: E402

import jaxkit.evaluation as ev  # noqa: E402
import jaxkit.forecast as fc  # noqa: E402
import jaxkit.portfolio as pf  # noqa: E402
from jaxkit import diffusion as dm  # noqa: E402


def test_cosine_schedule_refuses_a_t_max_where_alpha_vanishes():
    with pytest.raises(ValueError, match=r"^t_max: expected a value in \(0, 1\)"):
        dm.CosineVPSchedule(t_max=1.0)  # was alpha, sigma = NaN at t = 1
    with pytest.raises(ValueError, match="^t_max: expected cos"):
        dm.CosineVPSchedule(t_max=0.99999, s=0.008)
    s = dm.CosineVPSchedule()  # the default t_max = 0.9946 stays finite at t = 1
    a, sig = dm.marginal_coefs(s, jnp.array(1.0))
    assert np.isfinite([float(a), float(sig), float(s.diffusion(jnp.array(1.0)))]).all()
    np.testing.assert_allclose(float(a) ** 2 + float(sig) ** 2, 1.0, rtol=1e-5)


def test_se3_prior_sample_refuses_zero_bodies_and_forward_marginal_names_t():
    diff = dm.SE3Diffusion()
    with pytest.raises(ValueError, match="^n_bodies: expected an integer >= 1"):
        diff.prior_sample(jax.random.key(0), 0)
    R0, x0 = jnp.stack([jnp.eye(3)] * 2), jnp.zeros((2, 3))
    with pytest.raises(ValueError, match="^t: the score divides by sigma_t"):
        diff.forward_marginal(jax.random.key(0), R0, x0, jnp.array(0.0))
    m = diff.forward_marginal(jax.random.key(0), R0, x0, jnp.array(0.5))
    np.testing.assert_allclose(np.asarray(m.trans_score), -np.asarray(m.z) / float(m.sigma_trans), rtol=1e-6)


def test_block_bootstrap_names_a_statistic_that_does_not_reduce():
    with pytest.raises(ValueError, match="^statistic: expected a callable that reduces the last axis"):
        ev.block_bootstrap(np.array([1.0, 2, 3, 4]), statistic=lambda a, axis=-1: a, n_resamples=100)


def _frame(vals):
    return pd.DataFrame(vals, index=pd.bdate_range("2024-01-01", periods=len(vals)), columns=["a", "b"])


def test_walk_forward_refuses_a_start_past_the_history():
    rng = np.random.default_rng(0)
    prices = _frame(np.exp(np.cumsum(rng.normal(0, 0.01, (60, 2)), 0)))
    with pytest.raises(ValueError, match="^start: no rebalance date"):
        pf.walk_forward(prices, lambda P, d: np.array([0.5, 0.5]), dates=prices.index)  # default start = 252
    r = pf.walk_forward(prices, lambda P, d: np.array([0.5, 0.5]), dates=prices.index, start=10)
    assert len(r.rebalance_index) > 0


def test_run_backtest_uses_a_frames_own_dates_and_refuses_them_out_of_order():
    vals = np.array([[100.0, 50], [110, 50], [99, 55], [99, 66], [120, 60], [100, 70]])
    asc = _frame(vals)
    with pytest.raises(ValueError, match="^prices: expected a strictly increasing DatetimeIndex"):
        pf.run_backtest(asc.iloc[::-1], np.array([0]), np.array([[0.5, 0.5]]))  # was compounded backwards
    with pytest.raises(ValueError, match="^prices: expected a strictly increasing DatetimeIndex"):
        pf.check_prices(asc.iloc[::-1])
    r = pf.run_backtest(asc, np.array([0]), np.array([[0.5, 0.5]]))
    np.testing.assert_array_equal(r.dates, np.asarray(asc.index))  # dates, not positions
    # buy-and-hold from day 0 at 50/50: the wealth ratio is the mean of the price relatives
    wealth = np.cumprod(1 + np.asarray(r.returns))[-1]
    np.testing.assert_allclose(wealth, 0.5 * (100 / 100) + 0.5 * (70 / 50), rtol=1e-6)  # float32 returns


def test_ewma_volatility_refuses_rows_out_of_time_order():
    df = pd.DataFrame(
        np.random.default_rng(14).normal(0, 0.01, (30, 2)), index=pd.bdate_range("2024-01-01", periods=30)
    )
    with pytest.raises(ValueError, match="^log_returns: expected rows in time order"):
        fc.ewma_volatility(df.iloc[::-1], floor=0.0)
    v = fc.ewma_volatility(df, floor=0.0)
    ref = np.sqrt((df**2).ewm(alpha=0.06, adjust=True).mean().to_numpy())
    np.testing.assert_allclose(v, ref, rtol=1e-12)


def test_kalman_betas_pairs_by_label_or_refuses():
    rng = np.random.default_rng(0)
    T = 40
    X = pd.DataFrame(rng.normal(size=(T, 1)), index=pd.bdate_range("2024-01-01", periods=T))
    y = pd.DataFrame(X.to_numpy() * 0.7 + 0.1 * rng.normal(size=(T, 1)), index=X.index)
    with pytest.raises(ValueError, match="^y: expected rows in time order"):
        fc.kalman_betas(y.sample(frac=1, random_state=1), X)  # was a beta of 0.08 for a true 0.7
    with pytest.raises(ValueError, match="^X: expected the same index as y"):
        fc.kalman_betas(y.iloc[1:], X.iloc[:-1])
    beta = float(np.asarray(fc.kalman_betas(y, X))[-1, 0, 0])
    ols = float(np.linalg.lstsq(X.to_numpy(), y.to_numpy(), rcond=None)[0][0, 0])
    assert abs(beta - ols) < 0.05 and abs(beta - 0.7) < 0.1


# ---- third set (train checkpoints, pde cache) -------------------------------------------------------------------
def _user_folder(path, manifest=True):
    path.mkdir(parents=True)
    if manifest:  # a user's own file that merely has the manifest's name
        (path / "MANIFEST.jkx").write_text("my own manifest of my photos")
    (path / "thesis.tex").write_text("chapter")


def test_a_user_file_named_like_the_manifest_does_not_make_a_checkpoint(tmp_path):
    d = tmp_path / "mgr"
    m = jt.CheckpointManager(d, keep=5)
    m.save(1, {"a": jnp.ones(2)})
    _user_folder(d / "ckpt_000000007")
    assert m.clear() == [1]  # was [1, 7], deleting thesis.tex
    assert (d / "ckpt_000000007" / "thesis.tex").read_text() == "chapter"
    with pytest.raises(FileExistsError, match="^step: "):
        m.save(7, {"a": jnp.ones(2)})
    assert (d / "ckpt_000000007" / "thesis.tex").read_text() == "chapter"


def test_pruning_keeps_its_own_newest_checkpoints_beside_a_user_folder(tmp_path):
    d = tmp_path / "mgrk"
    m = jt.CheckpointManager(d, keep=2)
    _user_folder(d / "ckpt_000000099", manifest=False)
    _user_folder(d / "ckpt_000000000")
    for s in (1, 2, 3):
        m.save(s, {"a": jnp.full(2, float(s))})
    assert (d / "ckpt_000000099" / "thesis.tex").exists() and (d / "ckpt_000000000" / "thesis.tex").exists()
    assert [s for s in m.steps() if s in (1, 2, 3)] == [2, 3]  # was [3]: the user's folder took a slot
    assert 99 not in m.steps()  # no manifest: not a checkpoint, never the latest
    tree, meta = m.restore({"a": jnp.zeros(2)}, step=2)
    assert meta["step"] == 2 and float(tree["a"][0]) == 2.0


def test_checkpoint_manager_refuses_a_negative_step(tmp_path):
    m = jt.CheckpointManager(tmp_path / "neg")
    with pytest.raises(ValueError, match="^step: expected an integer >= 0"):
        m.save(-1, {"a": jnp.ones(2)})  # was written as ckpt_-00000001 and never found again
    assert m.steps() == []


def test_fit_refuses_zero_steps():
    x = jnp.linspace(-1, 1, 8)[:, None]
    with pytest.raises(ValueError, match="^n_steps: expected an integer >= 1"):
        jt.fit(
            eqx.nn.MLP(1, 1, 4, 1, key=jax.random.key(0)), optax.adam(1e-2),
            lambda m, b, k: jnp.mean(jax.vmap(m)(b["x"]) ** 2), jt.full_batch({"x": x}),
            n_steps=0, key=jax.random.key(2), progress=False,
        )  # fmt: skip


def test_make_dataset_refuses_a_user_file_where_a_cache_entry_goes(tmp_path):
    from jaxkit.pde import make_dataset

    kw = dict(n_train=2, n_test=1, resolution=32, fine_resolution=64, seed=1, progress=False)
    first = make_dataset("burgers", cache_dir=tmp_path / "a", **kw)
    (entry,) = [p.name for p in (tmp_path / "a").iterdir()]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / entry).write_text("user data")
    with pytest.raises(ValueError, match="^cache_dir: .* is a file, not an entry of this dataset cache"):
        make_dataset("burgers", cache_dir=tmp_path / "b", **kw)  # was a raw NotADirectoryError
    assert (tmp_path / "b" / entry).read_text() == "user data"
    again = make_dataset("burgers", cache_dir=tmp_path / "a", **kw)  # its own entry is read back
    np.testing.assert_array_equal(np.asarray(again.x_train), np.asarray(first.x_train))


# ---- fourth set (diffusion tables and broadcasting, geometry, portfolio cores) ---------------------------------
from jaxkit.diffusion import so3_diffusion  # noqa: E402
from jaxkit.geometry import so3  # noqa: E402


def test_discrete_schedule_refuses_tables_outside_their_range():
    b = jnp.array([0.1, -0.2, 0.3])
    a = 1 - b
    ab = jnp.cumprod(a)
    with pytest.raises(ValueError, match=r"^betas: expected values in \(0, 1\)"):
        dm.DiscreteSchedule(b, a, ab, jnp.concatenate([jnp.ones(1), ab[:-1]]), b)  # q_sample then gave NaN
    s = dm.discrete_schedule("linear", 10)
    x = np.asarray(dm.q_sample(s, jnp.ones(2), jnp.array(3), jnp.zeros(2)))
    np.testing.assert_allclose(x, np.sqrt(np.asarray(s.alpha_bars)[3]) * np.ones(2), rtol=1e-6)


@pytest.mark.parametrize(
    "call",
    [
        lambda s, vp: dm.q_sample(s, jnp.ones((3, 2)), jnp.array([1, 2, 3, 4]), jnp.ones((3, 2))),
        lambda s, vp: dm.q_sample(vp, jnp.ones((3, 2)), jnp.full(4, 0.5), jnp.ones((3, 2))),
        lambda s, vp: dm.eps_to_score(vp, jnp.ones((3, 2)), jnp.full(4, 0.5)),
        lambda s, vp: dm.score_to_eps(vp, jnp.ones((3, 2)), jnp.full(4, 0.5)),
        lambda s, vp: dm.q_posterior(s, jnp.ones((3, 2)), jnp.ones((3, 2)), jnp.array([1, 2, 3, 4])),
        lambda s, vp: dm.gaussian_marginal_score(vp, jnp.ones((3, 2)), jnp.full(4, 0.5), 0.0, 1.0),
    ],
)
def test_times_that_do_not_broadcast_with_the_data_are_named(call):
    with pytest.raises(ValueError, match="^t: expected a shape that broadcasts with"):
        call(dm.discrete_schedule("linear", 10), dm.VPSchedule())


def test_times_of_a_batch_broadcast_as_documented():
    vp = dm.VPSchedule()
    t = jnp.array([0.2, 0.5, 0.9])[:, None]
    x = dm.q_sample(vp, jnp.ones((3, 2)), t, jnp.zeros((3, 2)))
    a, _ = dm.marginal_coefs(vp, t)
    np.testing.assert_allclose(np.asarray(x), np.broadcast_to(np.asarray(a), (3, 2)), rtol=1e-6)


def test_so3_perturb_and_uniform_helpers_name_mismatched_shapes():
    with pytest.raises(ValueError, match="^sigma: expected a shape that broadcasts to R0's batch shape"):
        so3_diffusion.perturb(jax.random.key(0), jnp.stack([jnp.eye(3)] * 2), jnp.array([0.3, 0.6, 0.9]))
    with pytest.raises(ValueError, match="^u1, u2: expected shapes that broadcast together"):
        so3.uniform_axis(jnp.array([0.1, 0.2]), jnp.array([0.1, 0.2, 0.3]))
    with pytest.raises(ValueError, match="^u1, u2, omega: expected shapes that broadcast together"):
        so3.rotation_from_uniforms(jnp.array([0.1, 0.2]), jnp.array([0.3, 0.4]), jnp.array([0.1, 0.2, 0.3]))
    x, y, z = so3.uniform_axis(jnp.array([0.1, 0.9]), jnp.array([0.25, 0.5]))
    np.testing.assert_allclose(np.asarray(x**2 + y**2 + z**2), 1.0, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(z), [-0.8, 0.8], rtol=1e-6)


_CORES = """
import jax.numpy as jnp, jaxkit.portfolio as pf
mu = jnp.array([0.05, 0.07, 0.06]); cov = jnp.diag(jnp.array([0.04, 0.09, 0.0625]))
calls = [
    lambda: pf.black_litterman_core(mu, cov, jnp.array([[1.0, -1, 0]]), jnp.array([0.1, 0.2]), jnp.eye(1), 0.05),
    lambda: pf.precision_black_litterman_core(mu, cov, jnp.array([0.1, 0.2]), cov),
    lambda: pf.stable_weights_core(mu, cov, mu, jnp.eye(2)),
    lambda: pf.simulate(jnp.zeros((5, 2)), jnp.zeros((5, 3)), jnp.ones(5, bool), 0.0),
    lambda: pf.simulate(jnp.zeros((5, 2)), jnp.zeros((5, 2)), jnp.ones(4, bool), 0.0),
]
"""


_FIRST_LINES = """
for c in calls:
    try:
        c()
        print("no error")
    except Exception as e:
        print(type(e).__name__, str(e).splitlines()[0])
"""


def _assert_first_lines(calls_code: str, wanted: list[str]) -> None:
    """Run the ``calls`` of ``calls_code`` in a fresh interpreter (the suite's runtime type checker, beartype,
    would refuse these shapes before the library does) and match each error's first line."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", calls_code + _FIRST_LINES], capture_output=True, text=True, timeout=300
    )
    lines = out.stdout.splitlines()
    assert len(lines) == len(wanted), out.stderr[-2000:]
    for line, want in zip(lines, wanted, strict=True):
        assert re.match(want, line), line


def test_portfolio_cores_name_mismatched_shapes():
    _assert_first_lines(_CORES, [
        r"^ValueError Q: expected shape \(k,\) with k = 1",
        r"^ValueError view_mean: expected shape \(n,\) with n = 3",
        r"^ValueError view_cov: expected shape \(N, N\) with N = 3",
        r"^ValueError targets: expected shape \(t, n\) with n = 2",
        r"^ValueError rebalance: expected shape \(t,\) with t = 5",
    ])  # fmt: skip
    net, w, tau = pf.simulate(
        jnp.full((3, 2), 0.01), jnp.full((3, 2), 0.5), jnp.array([True, False, False]), 0.0
    )
    np.testing.assert_allclose(np.asarray(net)[1:], 0.01, rtol=1e-6)  # 50/50 of two +1% assets


def test_walk_forward_blames_a_strategy_returning_nan():
    d = pd.bdate_range("2021-01-01", periods=80)
    pr = 100 * np.cumprod(1 + np.random.default_rng(0).normal(0, 0.01, (80, 2)), 0)
    with pytest.raises(ValueError, match="^strategy: expected finite weights"):
        pf.walk_forward(pr, lambda past, dates: np.array([np.nan, 1.0]), dates=d, freq="M", start=20)


def test_paired_labels_error_names_the_duplicates():
    a = pd.Series([1.0, 2, 3], index=["a", "a", "b"])
    b = pd.Series([1.0, 2, 3], index=["b", "a", "a"])
    with pytest.raises(ValueError, match=r"duplicated \['a'\]"):
        ev.paired_comparison(a, b)


# ---- fifth set (block bootstrap order, ligand files) -------------------------------------------------------------
def test_block_bootstrap_refuses_a_series_out_of_time_order_and_names_a_statistic_without_axis():
    rng = np.random.default_rng(3)
    n = 200
    x = np.zeros(n)
    e = rng.normal(size=n)
    for t in range(1, n):
        x[t] = 0.9 * x[t - 1] + e[t]
    s = pd.Series(x, index=pd.bdate_range("2020-01-01", periods=n))
    with pytest.raises(ValueError, match="^x: expected values in time order"):
        ev.block_bootstrap(
            s.sample(frac=1, random_state=0), block=10, n_resamples=2000
        )  # was a 4x narrower CI
    a = ev.block_bootstrap(s, block=10, n_resamples=2000)
    assert a["ci_low"] < float(np.mean(x)) < a["ci_high"]
    with pytest.raises(TypeError, match="^statistic: expected a callable statistic"):
        ev.block_bootstrap(np.arange(10.0), statistic=lambda v: float(np.mean(v)), n_resamples=200)


def test_an_empty_sdf_is_refused_on_reading_and_never_written(tmp_path):
    import jaxkit.docking as dk

    p = tmp_path / "empty.sdf"
    p.write_text("")
    with pytest.raises(dk.StructureError, match="^ligands: file .* is empty"):
        dk.read_ligands(p)  # was RDKit's raw OSError
    with pytest.raises(ValueError, match="^poses: expected at least one pose"):
        dk.write_poses_sdf(tmp_path / "out.sdf", [])
    assert not (tmp_path / "out.sdf").exists()


# ---- sixth set (operators helpers, velocity, compare_steps) ------------------------------------------------------
import jaxkit.operators as ops  # noqa: E402


def test_kept_riesz_multipliers_pairs_lengths_with_modes_and_refuses_bad_sizes():
    for lengths in [(1.0, 2.0, 3.0), (1.0,), (1.0, -2.0)]:
        with pytest.raises(ValueError, match="^lengths: "):
            ops.kept_riesz_multipliers((3, 3), 1, lengths)  # were truncated, a (1, 6) shape, a flipped sign
    for modes in [(0, 3), (-2, 3)]:
        with pytest.raises(ValueError, match="^modes: "):
            ops.kept_riesz_multipliers(modes, 1)  # were empty (2, 0, 3) arrays
    m = ops.kept_riesz_multipliers((3, 3), 1, (1.0, 2.0))
    assert m.shape == (2, 6, 3)
    kx, ky = 2 * np.pi * 1 / 1.0, 2 * np.pi * 2 / 2.0  # mode (1, 2) on lengths (1, 2)
    np.testing.assert_allclose(
        m[:, 1, 2], [-1j * kx / np.hypot(kx, ky), -1j * ky / np.hypot(kx, ky)], rtol=1e-12
    )


def test_grid_spacing_refuses_negative_lengths_and_empty_grids():
    with pytest.raises(ValueError, match="^lengths: "):
        ops.grid_spacing((5,), (-2.0,))  # was -0.5
    with pytest.raises(ValueError, match="^grid: expected at least 1 point"):
        ops.grid_spacing((0,), (1.0,), endpoint=False)  # was ZeroDivisionError
    assert ops.grid_spacing((5, 4), (2.0, 1.0)) == (0.5, 1.0 / 3.0)


_SHAPES = """
import jax.numpy as jnp, jaxkit.operators as ops
from jaxkit.pde import navier_stokes as ns
calls = [
    lambda: ops.pointwise(jnp.ones((4, 8)), jnp.ones((3, 2)), None),
    lambda: ops.spectral_conv(jnp.ones((3, 16)), jnp.ones((4, 2, 2)), jnp.ones((4, 2, 2))),
    lambda: ops.spectral_conv(jnp.ones((1, 16)), jnp.ones((3, 1, 1)), jnp.zeros((4, 1, 1))),
    lambda: ns.velocity(jnp.ones((8, 6))),
]
"""


def test_layer_functions_and_velocity_name_mismatched_shapes():
    _assert_first_lines(_SHAPES, [
        r"^ValueError weight: expected shape \(cout, cin\) with cin = 4",
        r"^ValueError weight_re: expected shape",
        r"^ValueError weight_im: expected the shape of weight_re",
        r"^ValueError w: expected a square grid",
    ])  # fmt: skip
    y = ops.pointwise(jnp.ones((2, 5)), jnp.array([[1.0, 2.0]]), jnp.array([0.5]))
    np.testing.assert_allclose(np.asarray(y), 3.5)


def test_compare_steps_names_the_short_method():
    with pytest.raises(ValueError, match="^per_seed: .* received 2 for 'm' and 3 for 'baseline'"):
        stab.compare_steps({"baseline": [10, 20, 30], "m": [5, 6]}, 100, n_boot=100)


# ---- seventh set (docking writers, ddim indices, one-atom ligands, macro frame) ----------------------------------
def test_docking_writers_never_replace_a_users_file(tmp_path):
    import jaxkit.docking as dk
    from jaxkit.docking import _rank

    pocket = dk.Pocket(
        positions=np.random.default_rng(0).normal(size=(3, 3)), elements=np.array(["C", "N", "O"]),
        residue_ids=np.arange(3), chain_ids=np.array(["A"] * 3), residue_names=np.array(["ALA"] * 3),
        atom_names=np.array(["CA", "N", "O"]), center=np.zeros(3),
    )  # fmt: skip
    mine = tmp_path / "receptor.pdbqt"
    mine.write_text("my hand-made receptor\n")
    with pytest.raises(FileExistsError, match="^path: .* exists; pass overwrite=True"):
        dk.pocket_pdbqt(pocket, mine)  # was replaced without a word
    assert mine.read_text() == "my hand-made receptor\n"
    out = dk.pocket_pdbqt(pocket, mine, overwrite=True)
    assert out.read_text().count("ATOM") == 3
    # make_scorer's work file is named by its content: a user's pocket.pdbqt in the workdir is not touched
    work = tmp_path / "work"
    work.mkdir()
    (work / "pocket.pdbqt").write_text("USER FILE")
    path = _rank._write_named_by_content(work, "pocket", _rank._pocket_pdbqt_text(pocket))
    assert (work / "pocket.pdbqt").read_text() == "USER FILE" and path.name.startswith("pocket-")
    assert (
        _rank._write_named_by_content(work, "pocket", _rank._pocket_pdbqt_text(pocket)) == path
    )  # idempotent
    path.write_text("edited by the user")
    with pytest.raises(FileExistsError, match="^workdir: .* exists with other content"):
        _rank._write_named_by_content(work, "pocket", _rank._pocket_pdbqt_text(pocket))


def test_prepare_receptor_leaves_a_users_receptor_files_alone(tmp_path, monkeypatch):
    from jaxkit.docking import _rank

    def fake(protein_pdb, work):
        (work / "receptor.pdb").write_text("intermediate")
        (work / "receptor.pdbqt").write_text("PDBQT of " + Path(protein_pdb).read_text())
        return work / "receptor.pdbqt"

    monkeypatch.setattr(_rank, "_prepare_receptor", fake)
    monkeypatch.setattr(_rank, "_RECEPTORS", type(_rank._RECEPTORS)())  # an empty process cache: meeko "runs"
    pdb = tmp_path / "p.pdb"
    pdb.write_text("X")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "receptor.pdbqt").write_text("my hand-edited receptor\n")
    (proj / "receptor.pdb").write_text("my protein\n")
    out = _rank.prepare_receptor(pdb, proj)
    assert out.read_text() == "PDBQT of " + pdb.read_text()
    assert (proj / "receptor.pdbqt").read_text() == "my hand-edited receptor\n"  # was replaced
    assert (proj / "receptor.pdb").read_text() == "my protein\n"


def test_ddim_timesteps_refuses_indices_beyond_int32():
    with pytest.raises(ValueError, match="^total_steps: expected at most 2147483647"):
        dm.ddim_timesteps(2**31 + 10, 3)  # was [-2147483648, 1073741828, 0]
    np.testing.assert_array_equal(dm.ddim_timesteps(2**31 - 1, 3), [2**31 - 2, 2**30 - 1, 0])


def test_fragment_ligand_refuses_a_one_atom_ligand():
    from rdkit import Chem

    import jaxkit.docking as dk

    with pytest.raises(dk.FragmentationError, match="^mol: expected a ligand of at least 2 heavy atoms"):
        dk.fragment_ligand(Chem.MolFromSmiles("C"))  # was a split is_valid_cut_set rejects
    fr = dk.fragment_ligand(Chem.MolFromSmiles("CCO"))
    assert dk.is_valid_cut_set(fr.mol, fr.cut_bonds)


def test_stable_macro_features_names_macro_for_rows_out_of_order():
    m = pd.DataFrame(
        {"oil": np.exp(np.random.default_rng(1).normal(size=30))},
        index=pd.bdate_range("2020-01-01", periods=30)[::-1],
    )
    with pytest.raises(ValueError, match="^macro: expected rows in time order"):
        fc.stable_macro_features(m, norm_window=5)
