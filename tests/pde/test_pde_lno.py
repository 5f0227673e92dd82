"""LNO problems vs independent solutions: scipy solve_ivp (Duffing, Brusselator) and closed forms."""

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp

from jaxkit.pde import lno


def test_duffing_vs_solve_ivp():
    with jax.enable_x64(True):
        ts = np.arange(200) * 0.01
        amp = 3.0
        x = jax.jit(lambda a: lno.duffing(lambda t: a * jnp.sin(5 * t), ts, c=0.5))(amp)
        ref = solve_ivp(
            lambda t, y: [y[1], amp * np.sin(5 * t) - 0.5 * y[1] - y[0] - y[0] ** 3],
            (0, ts[-1]),
            [0.0, 0.0],
            t_eval=ts,
            rtol=1e-12,
            atol=1e-12,
            method="DOP853",
        )
        assert np.max(np.abs(np.asarray(x) - ref.y[0])) < 1e-8 * np.max(np.abs(ref.y[0]))


def test_beam_and_diffusion_vs_closed_forms():
    with jax.enable_x64(True):
        x = np.linspace(0, 1, 21)
        h = x[1] - x[0]
        amp = 2.0
        forcing = lambda xx, t: amp * jnp.sin(jnp.pi * xx) * jnp.sin(5 * t)

        @jax.jit
        def both():
            return (
                lno.beam(forcing, x, np.linspace(0, 1, 11)),
                lno.diffusion(forcing, x, np.linspace(0, 1, 11)),
            )

        ub, ud = both()
        ts = np.linspace(0, 1, 11)
        lam2 = 4 / h**2 * np.sin(np.pi * h / 2) ** 2  # eigenvalue of the discrete -d²/dx² on sin(πx)
        # semi-discrete exact (tests the time integration), then the PDE closed form (tests the spatial scheme)
        np.testing.assert_allclose(ub, lno.beam_exact(amp, x, ts, eigenvalue=lam2**2), atol=1e-9)
        np.testing.assert_allclose(ud, lno.diffusion_exact(amp, x, ts, eigenvalue=lam2), atol=1e-9)
        scale_b, scale_d = np.abs(ub).max(), np.abs(ud).max()
        assert 1e-5 < np.abs(ub - lno.beam_exact(amp, x, ts)).max() / scale_b < 2e-2
        assert np.abs(ud - lno.diffusion_exact(amp, x, ts)).max() / scale_d < 2e-2


def test_reaction_diffusion_reproduces_published_family():
    with jax.enable_x64(True):
        x = np.linspace(0, 2, 79)  # the published 40-node grid refined 2x
        ts = np.linspace(0, 1, 20)
        f, u_exact, f_fn = lno.reaction_diffusion_manufactured(1.5, x, ts)
        u = jax.jit(lambda: lno.reaction_diffusion(f_fn, x, ts, u0=u_exact[:, 0]))()
        assert np.abs(u - u_exact).max() < 2e-3 * np.abs(u_exact).max()
        # the forcing of the published data: f = -(π² - 1)u + u² for the e^{-0.05t} family
        np.testing.assert_allclose(f, -(np.pi**2 - 1) * u_exact + u_exact**2, atol=1e-12)


def test_brusselator_vs_solve_ivp():
    with jax.enable_x64(True):
        n, ts = 5, np.linspace(0, 2, 5)
        amp, om = 0.7, 1.3
        uv = jax.jit(lambda: lno.brusselator(lambda t: amp * jnp.sin(om * t), n, ts, dtype=jnp.float64))()
        h = 1 / (n - 1)
        g = np.linspace(0, 1, n)

        def lap(z):  # independent zero-flux 5-point Laplacian via reflected padding
            zp = np.pad(z, 1, mode="reflect")
            return (zp[2:, 1:-1] + zp[:-2, 1:-1] + zp[1:-1, 2:] + zp[1:-1, :-2] - 4 * z) / h**2

        def rhs(t, y):
            u, v = y[: n * n].reshape(n, n), y[n * n :].reshape(n, n)
            du = 0.01 * lap(u) + 1 - 4 * u + u * u * v + amp * np.sin(om * t)
            dv = 0.01 * lap(v) + 3 * u - u * u * v
            return np.concatenate([du.ravel(), dv.ravel()])

        u0 = 1 + 0.1 * np.cos(np.pi * g)[:, None] * np.cos(np.pi * g)[None, :]
        y0 = np.concatenate([u0.ravel(), np.full(n * n, 3.0)])
        ref = solve_ivp(rhs, (0, 2), y0, t_eval=ts, rtol=1e-11, atol=1e-12, method="DOP853")
        np.testing.assert_allclose(np.asarray(uv[0]).reshape(len(ts), -1), ref.y[: n * n].T, atol=1e-7)


def test_published_reaction_diffusion_splits_and_their_equations():
    """The repository's split: train satisfies u_t = D u_xx + u² - f with D = 1 - 0.95/π² (note.txt), the
    validation/test pairs (decay 1) only with D = 1; checked with finite differences, independent of the formula."""
    splits = {s: lno.reaction_diffusion_published(s) for s in ("train", "val", "test")}
    assert [splits[s][0].shape for s in splits] == [(200, 40, 20), (50, 40, 20), (130, 40, 20)]
    x, t = splits["train"][2], splits["train"][3]
    np.testing.assert_allclose(x, np.linspace(0, 2, 40))
    amps = {s: splits[s][1][:, 10, 0] / np.sin(np.pi * x[10]) for s in splits}
    np.testing.assert_allclose(amps["train"], 0.05 * np.arange(1, 201), rtol=1e-12)
    held = np.round((np.concatenate([amps["val"], amps["test"]]) - 0.04) / 0.05)
    assert sorted(held.astype(int).tolist()) == list(
        range(2, 182)
    )  # a split of A = 0.04 + 0.05 j, j = 2..181
    hx, ht = x[1] - x[0], t[1] - t[0]

    def residual(f, u, d):
        u_t = (u[:, 1:-1, 2:] - u[:, 1:-1, :-2]) / (2 * ht)
        u_xx = (u[:, 2:, 1:-1] - 2 * u[:, 1:-1, 1:-1] + u[:, :-2, 1:-1]) / hx**2
        r = u_t - d * u_xx - u[:, 1:-1, 1:-1] ** 2 + f[:, 1:-1, 1:-1]
        return np.abs(r).max() / np.abs(f).max()

    d_note = 1 - 0.95 / np.pi**2
    assert residual(*splits["train"][:2], d_note) < 2e-3
    assert residual(*splits["test"][:2], 1.0) < 2e-3
    assert residual(*splits["test"][:2], d_note) > 2e-2  # not the training operator
    assert residual(*splits["val"][:2], 1.0) < 2e-3
