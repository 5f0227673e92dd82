"""ReLU (scalar input), ReLU CNN and linear attention: complexity rises in steps; plateaus sit at saddles."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxkit.dynamics as dyn


def _check_plateaus(loss, res, min_plateaus, slope_tol=0.1):
    """Saddle check at the closest approach (smallest gradient) inside each plateau that is followed by a drop
    (``dyn.plateau_saddle_checks``)."""
    checks = dyn.plateau_saddle_checks(loss, res, slope_tol=slope_tol)
    print(
        "plateaus + saddle checks:",
        [(round(c.level, 4), round(c.grad_norm, 5), round(c.min_eig, 5)) for c in checks],
    )
    assert len(checks) >= min_plateaus
    for c in checks:
        assert c.is_saddle, c
    return checks


def _staircase(values):
    values = np.asarray(values)
    return list(np.unique(values)), bool(np.all(np.diff(values) >= 0))


def test_relu_scalar_kinks_step_up():
    x = jnp.linspace(-1.0, 1.0, 41)
    y = 2.0 * jax.nn.relu(x - 0.3) + 1.0 * jax.nn.relu(-x - 0.4)

    def loss(p):
        return dyn.mse_loss(dyn.relu_scalar_apply, p, x, y)

    p0 = dyn.init_relu_scalar(jax.random.key(0), 16, 1e-5, "random")
    res = dyn.gradient_descent(loss, p0, 0.05, 6000, save_every=20)
    kinks = [
        dyn.kink_count(jax.tree.map(lambda a, j=j: a[j], res.params), (-1.0, 1.0), 0.1, 0.05)
        for j in range(len(res.ts))
    ]
    levels, monotone = _staircase(kinks)
    print("kink counts", levels, "monotone", monotone, "loss", np.asarray(res.loss)[::50])
    assert levels[:3] == [0, 1, 2] and monotone
    _check_plateaus(loss, res, 2, slope_tol=0.2)


def test_relu_cnn_kernels_step_up():
    n, ks, channels = 12, 4, 2
    rng = np.random.default_rng(0)
    X = jnp.asarray(rng.normal(size=(32, n)), jnp.float32)
    wt = np.array([[1.0, 0.5, 0.0, 0.0], [0.0, 0.0, -0.5, 1.0]])
    teacher = {
        "w": jnp.asarray(wt / np.linalg.norm(wt, axis=1, keepdims=True)),
        "a": jnp.array([[2.0, 0.0], [0.0, 0.7]]),
    }
    apply = dyn.NETWORKS["cnn_relu"].apply
    Y = jax.vmap(apply, in_axes=(None, 0))(teacher, X)

    def loss(p):
        return dyn.mse_loss(apply, p, X, Y)

    p0 = dyn.init_cnn(jax.random.key(0), 4, ks, channels, 1e-6)
    res = dyn.gradient_descent(loss, p0, 0.004, 1000, save_every=4)
    # effective number of kernels: rank of the kernel-space map A = a w (kernels sharing a direction count once)
    eff = [
        int(dyn.effective_rank(res.params["a"][j] @ res.params["w"][j], tol=0.2)) for j in range(len(res.ts))
    ]
    act = [
        int(dyn.active_kernels(jax.tree.map(lambda a, j=j: a[j], res.params), 0.2))
        for j in range(len(res.ts))
    ]
    levels, monotone = _staircase(eff)
    print(
        "effective kernels",
        levels,
        monotone,
        "active kernels",
        _staircase(act),
        "loss",
        np.asarray(res.loss)[::25],
    )
    assert levels == [0, 1, 2] and monotone
    assert _staircase(act)[1] and max(act) >= 2
    _check_plateaus(loss, res, 2)


@pytest.fixture(scope="module")
def icl_data():
    dim, n_ctx, n_seq = 3, 32, 256
    lam = np.array([1.0, 0.6, 0.3])
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(dim, dim)))
    chol = np.linalg.cholesky(q @ np.diag(lam) @ q.T)
    k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
    xs = jax.random.normal(k1, (n_seq, n_ctx, dim)) @ chol.T
    xq = jax.random.normal(k2, (n_seq, dim)) @ chol.T
    w = jax.random.normal(k3, (n_seq, dim))
    ys, yq = jnp.einsum("bnd,bd->bn", xs, w), jnp.einsum("bd,bd->b", xq, w)
    return (xs, ys, xq), yq, lam, q


def _components(res, q, lam, merged):
    if merged:
        gam = jnp.einsum("th,thij->tji", res.params["v"], res.params["W"])  # Γ with ŷ = x_qᵀ Γ h
    else:
        gam = jnp.einsum("th,thi,thj->tij", res.params["v"], res.params["q"], res.params["k"])
    return np.asarray(jnp.einsum("di,tde,ei->ti", q, gam, q)) * lam  # γ_i λ_i → 1 when component i is learned


def test_attention_separate_learns_components_in_order(icl_data):
    data, yq, lam, q = icl_data

    def loss(p):
        return dyn.mse_loss(dyn.attention_separate_apply, p, data, yq)

    p0 = dyn.init_attention_separate(jax.random.key(1), 3, 3, 1e-3)
    res = dyn.gradient_descent(loss, p0, 0.1, 4000, save_every=10)
    comp = _components(res, q, lam, merged=False)
    ts = np.asarray(res.ts) * 0.1
    times = np.array([dyn.crossing_time(ts, comp[:, i], 0.5) for i in range(3)])
    print("component half times", times, "eigenvalues", lam)
    assert np.all(np.isfinite(times))
    assert list(np.argsort(times)) == list(dyn.learning_order(lam))
    heads = [
        int(dyn.active_heads(jax.tree.map(lambda a, j=j: a[j], res.params), 0.1)) for j in range(len(res.ts))
    ]
    levels, monotone = _staircase(heads)
    print("active heads", levels, monotone)
    assert levels == [0, 1, 2, 3] and monotone
    _check_plateaus(loss, res, 2)
