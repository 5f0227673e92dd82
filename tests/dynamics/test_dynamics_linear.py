"""Two-layer / deep linear nets: simulated gradient flow vs the Saxe et al. closed forms (float64)."""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxkit.dynamics as dyn

S = np.array([4.0, 1.5, 0.5])  # three distinct target singular values
U0 = 1e-4


def _problem():
    rng = np.random.default_rng(0)
    u, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    v, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    sigma = u @ np.diag(S) @ v.T
    # whitened inputs: P = 6 samples with XᵀX/P = I (two scaled orthogonal blocks)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    x = np.sqrt(3.0) * np.concatenate([q, np.eye(3)], axis=0)
    return u, v, sigma, x


@pytest.fixture(scope="module")
def linear_runs():
    """One compiled call: 1 seed x 2 init scales (1e-4 and 1e-5), aligned balanced init, float64."""
    with jax.enable_x64(True):
        u, v, sigma, x = _problem()
        assert np.allclose(x.T @ x / x.shape[0], np.eye(3), atol=1e-12)
        X, Y = jnp.asarray(x), jnp.asarray(x @ sigma.T)
        sig = jnp.asarray(sigma)

        def loss(p):
            return dyn.mse_loss(dyn.linear_apply, p, X, Y)

        def init(key, scale):
            return dyn.init_linear(key, 3, 3, 3, scale, "aligned", target=sig)

        ts = jnp.linspace(0.0, 24.0, 1201)
        keys = jax.random.split(jax.random.key(0), 1)
        res = dyn.gradient_flow_batch(
            loss,
            init,
            keys,
            jnp.array([U0, U0 / 10]),
            ts,
            solver=diffrax.Tsit5(),
            rtol=1e-8,
            atol=1e-11,
            grad_tol=1e-5,
        )
        prod = jnp.einsum("zytab,zytbc->zytac", res.params["W2"], res.params["W1"])
        modes = np.asarray(jnp.einsum("ai,zytab,bi->zyti", jnp.asarray(u), prod, jnp.asarray(v)))
        return {
            "ts": np.asarray(ts),
            "loss": np.asarray(res.loss[0]),
            "modes": modes[0],
            "prod": np.asarray(prod[0]),
            "loss_fn": loss,
            "params": jax.tree.map(lambda a: np.asarray(a[0]), res.params),
            "X": X,
            "Y": Y,
            "t_stop": np.asarray(res.t_stop[0]),
            "converged": np.asarray(res.converged[0]),
            "sigma": sigma,
            "u": u,
            "v": v,
        }


@jax.jit(static_argnums=0)
def _grad_norms(loss, params_traj):
    g = jax.vmap(jax.grad(loss))(params_traj)
    return jnp.sqrt(sum(jnp.sum(leaf**2, axis=tuple(range(1, leaf.ndim))) for leaf in jax.tree.leaves(g)))


def _half_times(ts, modes):
    return np.array([dyn.crossing_time(ts, modes[:, i], S[i] / 2) for i in range(3)])


def test_half_way_times_and_order(linear_runs):
    ts, modes = linear_runs["ts"], linear_runs["modes"][0]
    measured = _half_times(ts, modes)
    predicted = np.asarray(dyn.saxe_half_time(S, U0))
    rel = np.abs(measured / predicted - 1)
    print("half-way measured", measured, "predicted", predicted, "rel err", rel)
    assert np.all(rel < 0.05)
    # learned in decreasing singular-value order
    assert list(np.argsort(measured)) == list(dyn.learning_order(S))
    # whole trajectory follows the closed form
    theory = np.asarray(dyn.saxe_mode(ts[:, None], S[None], U0))
    assert np.max(np.abs(modes - theory)) < 1e-3 * S.max()


def test_plateau_losses_and_rank_steps(linear_runs):
    ts, loss, prod = linear_runs["ts"], linear_runs["loss"][0], linear_runs["prod"][0]
    win = ts <= 14.0  # the learning phase (the run converges and stops at t ≈ 19)
    found = dyn.plateaus(ts[win], loss[win])
    levels = np.array([p.level for p in found])
    predicted = np.asarray(dyn.plateau_losses(S))[:3]
    print("plateaus", found, "predicted levels", predicted)
    assert len(found) >= 3
    rel = np.abs(levels[:3] / predicted - 1)
    print("plateau level rel err", rel)
    assert np.all(rel < 0.05)
    ranks = np.array([int(dyn.effective_rank(jnp.asarray(m), tol=0.25)) for m in prod])
    assert list(np.unique(ranks)) == [0, 1, 2, 3]
    assert np.all(np.diff(ranks) >= 0)


def test_convergence_event(linear_runs):
    """The diffrax Event stops each run once ||∇L|| < 1e-5; later saves repeat the final state."""
    t_stop, conv = linear_runs["t_stop"], linear_runs["converged"]
    print("event times", t_stop, conv)
    assert np.all(conv) and np.all(t_stop < 24.0) and np.all(t_stop > 15.0)
    ts, prod = linear_runs["ts"], linear_runs["prod"]
    for k in range(2):
        after = ts > t_stop[k]
        assert after.sum() > 10 and np.all(prod[k][after] == prod[k][after][-1])
        assert np.allclose(prod[k][-1], linear_runs["sigma"], atol=1e-4)


def test_init_scale_shift_ln10(linear_runs):
    ts, modes = linear_runs["ts"], linear_runs["modes"]
    shift = _half_times(ts, modes[1]) - _half_times(ts, modes[0])
    predicted = np.asarray(dyn.plateau_shift(S, 10.0))
    rel = np.abs(shift / predicted - 1)
    print("shift measured", shift, "predicted (τ/2s) ln10", predicted, "rel", rel)
    assert np.all(rel < 0.05)


def test_plateau_is_saddle_and_embedding(linear_runs):
    """Plateau params pass the saddle check; the embedded width-k fixed point matches the plateau loss."""
    with jax.enable_x64(True):
        ts, loss_traj = linear_runs["ts"], linear_runs["loss"][0]
        loss = linear_runs["loss_fn"]
        half = _half_times(ts, linear_runs["modes"][0])
        all_params = jax.tree.map(lambda a: jnp.asarray(a[0]), linear_runs["params"])
        g_max = float(jnp.max(_grad_norms(loss, all_params)))
        for k in range(1, 3):  # plateaus between learned modes
            lo, hi = np.searchsorted(ts, half[k - 1]), np.searchsorted(ts, half[k])
            seg = jax.tree.map(lambda a, lo=lo, hi=hi: a[lo:hi], all_params)
            j = lo + int(np.argmin(np.asarray(_grad_norms(loss, seg))))
            # "small gradient" relative to the fastest part of the trajectory
            chk = dyn.saddle_check(loss, jax.tree.map(lambda a, j=j: a[j], all_params), grad_tol=0.1 * g_max)
            print("plateau", k, chk)
            assert chk.is_saddle
            # embedding construction: width-k critical point + silent units
            fp = dyn.linear_fixed_point(jnp.asarray(linear_runs["sigma"]), list(range(k)), k)
            fp3 = fp
            for _ in range(3 - k):
                fp3 = dyn.embed_unit(fp3, dyn.NETWORKS["linear"].unit_spec, "zero")
            chk_fp = dyn.saddle_check(loss, fp3, grad_tol=1e-10)
            assert chk_fp.is_saddle and chk_fp.min_eig < -0.1
            assert abs(float(loss(fp3)) - float(dyn.plateau_losses(S)[k])) < 1e-10
            assert abs(float(loss(fp3)) - loss_traj[j]) / loss_traj[j] < 0.05
        # the global minimum (all modes learned) is not a saddle
        full = dyn.linear_fixed_point(jnp.asarray(linear_runs["sigma"]), [0, 1, 2], 3)
        assert not dyn.saddle_check(loss, full, grad_tol=1e-8).is_saddle


def test_gd_matches_flow(linear_runs):
    """Small-step GD after n steps ≈ gradient flow with τ = 1/η at t = n·η (same aligned start, float64)."""
    with jax.enable_x64(True):
        loss = linear_runs["loss_fn"]
        p0 = jax.tree.map(lambda a: jnp.asarray(a[0, 0]), linear_runs["params"])  # u0 = 1e-4 start
        lr = 0.005
        gd = dyn.gradient_descent(loss, p0, lr, 2800, save_every=20)  # t = 0 … 14 every 0.1
        t_gd = np.asarray(gd.ts) * lr
        flow_loss = np.interp(t_gd, linear_runs["ts"], linear_runs["loss"][0])
        rel = np.abs(np.asarray(gd.loss) / flow_loss - 1)
        # GD runs a little ahead/behind in time (O(η)); compare the half-way times as well
        u, v = jnp.asarray(linear_runs["u"]), jnp.asarray(linear_runs["v"])
        gd_modes = np.asarray(jnp.einsum("ai,tab,tbc,ci->ti", u, gd.params["W2"], gd.params["W1"], v))
        t_half_gd = _half_times(t_gd, gd_modes)
        t_half_flow = _half_times(linear_runs["ts"], linear_runs["modes"][0])
        print("GD vs flow: max loss rel diff", rel.max(), "half-way times", t_half_gd, t_half_flow)
        assert np.all(np.abs(t_half_gd / t_half_flow - 1) < 0.01)
        assert rel[t_gd < 12].max() < 0.1


def test_deep_linear_mode_ode():
    """Depth-3 net from an aligned balanced start follows τ du/dt = 3u^{4/3}(s-u) (simulated with small-step GD,
    τ = 1/η); the depth-2 quadrature reduces to the Saxe closed form."""
    with jax.enable_x64(True):
        u, v, sigma, x = _problem()
        X, Y = jnp.asarray(x), jnp.asarray(x @ sigma.T)
        s_, u0, lr = S[:2], 1e-3, 2e-3

        def loss(p):
            return dyn.mse_loss(dyn.deep_linear_apply, p, X, Y)

        p0 = dyn.init_deep_linear(jax.random.key(0), (3, 3, 3, 3), u0, "aligned", target=jnp.asarray(sigma))
        res = dyn.gradient_descent(loss, p0, lr, 5000, save_every=50)  # t = 0 … 10
        w1, w2, w3 = res.params["layers"]
        prod = jnp.einsum("tab,tbc,tcd->tad", w3, w2, w1)
        modes = np.asarray(jnp.einsum("ai,tab,bi->ti", jnp.asarray(u), prod, jnp.asarray(v)))[:, :2]
        ts = np.asarray(res.ts) * lr
        theory = np.asarray(dyn.deep_linear_mode(jnp.asarray(ts), s_, u0, 3))
        err = np.max(np.abs(modes - theory))
        th = dyn.deep_linear_half_time(float(s_[0]), u0, 3)
        meas = dyn.crossing_time(ts, modes[:, 0], s_[0] / 2)
        print("depth-3: max |u_GD - u_ODE|", err, "half-way", meas, "quadrature", th)
        assert err < 0.02 * s_[0]
        assert abs(meas / th - 1) < 0.01
        assert abs(dyn.deep_linear_half_time(2.0, 1e-3, 2) / float(dyn.saxe_half_time(2.0, 1e-3)) - 1) < 1e-8


@settings(max_examples=15, deadline=None)
@given(
    s=st.floats(0.1, 10.0),
    u0=st.floats(1e-8, 1e-2),
    t=st.floats(0.0, 5.0),
    tau=st.floats(0.1, 10.0),
)
def test_saxe_mode_solves_logistic(s, u0, t, tau):
    u = lambda tt: dyn.saxe_mode(tt, s, u0, tau)  # noqa: E731
    du = float(jax.grad(lambda tt: u(tt))(jnp.float32(t)))
    val = float(u(t))
    assert abs(tau * du - 2 * val * (s - val)) <= 1e-3 * max(1.0, s * s)
    assert abs(float(u(0.0)) - u0) <= 1e-5 * u0 + 1e-12
    if u0 < s / 2:
        th = float(dyn.saxe_half_time(s, u0, tau))
        assert abs(float(u(th)) - s / 2) < 1e-3 * s


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), frac=st.floats(0.0, 1.0), method=st.sampled_from(["zero", "split"]))
def test_embedding_preserves_function(seed, frac, method):
    """Embedding a unit (silent or split) leaves the network function unchanged (scalar ReLU, ReLU CNN; the linear
    net's embedding is checked on its fixed points in test_plateau_is_saddle_and_embedding)."""
    key = jax.random.key(seed)
    k1, k3, k4 = jax.random.split(key, 3)
    cases = [
        ("relu_scalar", dyn.init_relu_scalar(k1, 3, 1.0), jax.random.normal(k4, (5,))),
        ("cnn_relu", dyn.init_cnn(k3, 2, 3, 2, 1.0), jax.random.normal(k4, (5, 6))),
    ]
    for name, params, xs in cases:
        net = dyn.NETWORKS[name]
        big = dyn.embed_unit(params, net.unit_spec, method, unit=1, fraction=frac)
        f0, f1 = _both(name, params, big, xs)
        assert np.allclose(f0, f1, atol=1e-5)
        for name_, (axis, _) in net.unit_spec.items():
            assert big[name_].shape[axis] == params[name_].shape[axis] + 1


@jax.jit(static_argnums=0)
def _both(name, small, big, xs):
    apply = jax.vmap(dyn.NETWORKS[name].apply, in_axes=(None, 0))
    return apply(small, xs), apply(big, xs)


def test_bad_configuration_errors():
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="scale"):
        dyn.init_linear(key, 3, 3, 3, 0.0)
    with pytest.raises(ValueError, match="scale"):
        dyn.init_relu_scalar(key, 4, -1.0)
    with pytest.raises(ValueError, match="hidden"):
        dyn.linear_fixed_point(jnp.eye(3), [0, 1, 2], 2)  # width smaller than the target rank
    with pytest.raises(ValueError, match="target"):
        dyn.init_linear(key, 3, 3, 3, 1e-3, "aligned")
    with pytest.raises(ValueError, match="target"):
        dyn.init_linear(key, 3, 3, 3, 1e-3, "aligned", target=jnp.eye(2))
    p = dyn.init_linear(key, 3, 3, 2, 1e-3)
    with pytest.raises(ValueError, match="inputs, targets"):
        dyn.mse_loss(dyn.linear_apply, p, jnp.ones((5, 3)), jnp.ones((4, 2)))
    with pytest.raises(ValueError, match="targets"):
        dyn.mse_loss(dyn.linear_apply, p, jnp.ones((5, 3)), jnp.ones((5, 3)))
    with pytest.raises(ValueError, match="scheme"):
        dyn.init_linear(key, 3, 3, 3, 1e-3, "xavier")
    with pytest.raises(ValueError, match="u0"):
        dyn.saxe_half_time(1.0, 0.0)
    with pytest.raises(ValueError, match="ts"):
        dyn.gradient_flow(lambda q: jnp.sum(q["W1"] ** 2), p, jnp.array([1.0, 0.5]))
    with pytest.raises(ValueError, match="scales"):
        dyn.gradient_flow_batch(
            lambda q: 0.0,
            lambda k, s: p,
            jax.random.split(key, 1),
            jnp.array([1e-3, -1.0]),
            jnp.linspace(0, 1, 3),
        )
    with pytest.raises(ValueError, match="lr"):
        dyn.gradient_descent(lambda q: jnp.sum(q["W1"] ** 2), p, 0.0, 10)


def test_sgd_minibatches_learn():
    """SGD (random minibatches of 2 of the 6 whitened samples) still learns the top mode first."""
    u, v, sigma, x = _problem()
    X, Y = jnp.asarray(x, jnp.float32), jnp.asarray(x @ sigma.T, jnp.float32)

    def batch_fn(key):
        idx = jax.random.choice(key, 6, (2,), replace=False)
        return X[idx], Y[idx]

    def loss(p, batch):
        return dyn.mse_loss(dyn.linear_apply, p, *batch)

    p0 = dyn.init_linear(jax.random.key(0), 3, 3, 3, 1e-3, "random")
    res = dyn.gradient_descent(loss, p0, 0.01, 600, save_every=300, batch_fn=batch_fn, key=jax.random.key(1))
    prod = np.asarray(res.params["W2"][-1] @ res.params["W1"][-1])
    top = float(u[:, 0] @ prod @ v[:, 0])
    print("SGD top-mode strength after 600 steps", top, "target", S[0])
    assert abs(top / S[0] - 1) < 0.1
