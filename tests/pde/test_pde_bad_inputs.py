"""Bad inputs to the PDE solvers and dataset layer: named errors, non-convergence and runaway-step guards.

Wrong rank or dtype of an annotated array argument is caught by the suite's jaxtyping/beartype hook before the
function's own check runs (a ``TypeCheckError`` naming the argument); outside the tests the function's own
``ValueError``/``TypeError`` is raised. Both are accepted for those cases."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxtyping import TypeCheckError

from jaxkit.pde import darcy, grf, lno, make_dataset, navier_stokes, subsample

ANNOT = TypeCheckError


def _high_contrast(n=9):
    g = grf.grf_neumann(jax.random.key(3), (n, n), alpha=2.0, tau=3.0, sigma=3.0)
    return darcy.coefficient_from_grf(g, high=1000.0, low=1.0)


def test_darcy_reports_non_convergence():
    a = _high_contrast()
    with pytest.raises(
        ValueError, match="maxiter=4"
    ):  # the run-time check, re-raised with its message (issue 49)
        darcy.solve(a, maxiter=4)
    # the flag, also under vmap: a constant field converges at once (exact preconditioner), the 1000/1 field not
    batch = jnp.stack([jnp.full_like(a, 2.0), a])
    _, info = jax.vmap(lambda b: darcy.solve(b, maxiter=4, on_failure="ignore", return_info=True))(batch)
    assert info.converged.tolist() == [True, False] and info.iterations.tolist()[1] == 4
    assert float(info.residual[1]) > 1e-3
    u, info = darcy.solve(a, return_info=True)  # enough iterations: converged, and = spsolve
    assert bool(info.converged) and 4 < int(info.iterations) < 500 and float(info.residual) <= 1e-6
    ref = darcy.reference_solve(np.asarray(a))
    assert np.linalg.norm(np.asarray(u) - ref) / np.linalg.norm(ref) < 1e-4


def test_navier_stokes_guards_runaway_step_counts():
    w0 = np.zeros((8, 8), np.float32)
    with pytest.raises(ValueError, match="max_steps"):
        navier_stokes.solve(w0, nu=1e-3, t_final=1.0, dt=1e-9)
    out = navier_stokes.solve(w0, nu=1e-3, t_final=1.0, dt=0.25, max_steps=4)
    assert out.shape == (1, 8, 8)
    with pytest.raises(ValueError, match="max_steps"):
        navier_stokes.solve(w0, nu=1e-3, t_final=1.0, dt=0.25, max_steps=3)


def test_lists_are_accepted_like_arrays():
    a = [[2.0] * 5 for _ in range(5)]
    np.testing.assert_allclose(darcy.solve(a), darcy.solve(np.asarray(a, np.float32)))
    w = np.random.default_rng(0).normal(size=(8, 8)).astype(np.float32)
    kw = dict(nu=0.1, t_final=0.1, dt=0.05)
    np.testing.assert_allclose(navier_stokes.solve(w.tolist(), **kw), navier_stokes.solve(w, **kw), atol=1e-6)
    from jaxkit.pde import burgers

    u0 = np.sin(2 * np.pi * np.arange(8) / 8).astype(np.float32)
    np.testing.assert_allclose(
        burgers.solve(u0.tolist(), nu=0.1, t_final=0.01), burgers.solve(u0, nu=0.1, t_final=0.01), atol=1e-6
    )


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: darcy.solve(np.ones((5, 6))), ValueError, "square"),  # wrong shape
        (lambda: darcy.solve(np.ones((5, 5, 1))), (ValueError, ANNOT), "dimensions|a"),  # wrong rank
        (lambda: darcy.solve(np.full((5, 5), np.nan)), ValueError, "finite"),  # NaN
        (lambda: darcy.solve(np.ones((5, 5)), f=np.inf), ValueError, "finite"),  # inf source
        (lambda: darcy.solve(np.ones((0, 0))), ValueError, "3×3"),  # empty
        (lambda: darcy.solve(np.ones((5, 5), int)), (TypeError, ANNOT), "float|a"),  # wrong dtype
        (lambda: darcy.solve(-np.ones((5, 5))), ValueError, "positive"),  # out of range
        (lambda: darcy.solve(np.ones((5, 5)), on_failure="warn"), (ValueError, ANNOT), "on_failure"),
        (lambda: navier_stokes.solve(np.ones((8, 8)), nu=-1.0, t_final=1.0, dt=0.1), ValueError, "nu"),
        (lambda: navier_stokes.solve(np.ones((7, 7)), nu=1.0, t_final=1.0, dt=0.1), ValueError, "even"),
        (
            lambda: navier_stokes.solve(np.full((8, 8), np.inf), nu=1.0, t_final=1.0, dt=0.1),
            ValueError,
            "finite",
        ),
        (
            lambda: navier_stokes.solve(np.ones((8, 8), int), nu=1.0, t_final=1.0, dt=0.1),
            (TypeError, ANNOT),
            "float|w0",
        ),
        (lambda: lno.duffing(jnp.sin, np.zeros(1)), ValueError, "ts"),  # one time point
        (lambda: lno.reaction_diffusion_published("validation"), (ValueError, ANNOT), "split"),
        (lambda: subsample(np.zeros((2, 1, 8)), "nope", stride=2), ValueError, "name"),
        (lambda: subsample(np.zeros((2, 1, 8)), "burgers", stride=0), ValueError, "stride"),
        (
            lambda: make_dataset("burgers", n_train=0, n_test=1, resolution=8, fine_resolution=16),
            ValueError,
            "n_train",
        ),
        (
            lambda: make_dataset("burgers", n_train=1, n_test=1, seed=-1, resolution=8, fine_resolution=16),
            ValueError,
            "seed",
        ),
    ],
)
def test_named_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_reprobe_silent_results_and_unbounded_steps_now_raise():
    """Issue 20 re-probe: negative viscosity/time grew the exact solutions exponentially (2.7e3 for a unit
    Taylor-Green field), and burgers.solve started any number of steps (1e9 would run for days)."""
    from jaxkit.pde import burgers

    with pytest.raises(ValueError, match="nu: expected a finite value >= 0"):
        navier_stokes.taylor_green(8, 0.1, nu=-1.0)
    with pytest.raises(ValueError, match="t: expected a finite value >= 0"):
        burgers.cole_hopf_solution(np.linspace(0, 1, 8), -1.0, nu=0.1)
    with pytest.raises(ValueError, match=r"amplitude: expected a value in \(0.0, 1.0\)"):
        burgers.cole_hopf_solution(np.linspace(0, 1, 8), 0.1, nu=0.1, amplitude=1.5)
    with pytest.raises(ValueError, match="n: expected an integer >= 1"):
        burgers.default_steps(0, 0.1, 1.0)
    with pytest.raises(ValueError, match="n_steps: 1000000000 time steps is more than max_steps=1000000"):
        burgers.solve(np.zeros(8), nu=0.1, t_final=1.0, n_steps=10**9)
    with pytest.raises(ValueError, match="ts: expected finite, strictly increasing times"):
        lno.duffing(jnp.sin, np.array([0.0, 1.0, 0.5]))  # was a diffrax error inside jit
    with pytest.raises(ValueError, match=r"u_interior: expected the interior shape \(6, 6\)"):
        darcy.apply_operator(np.ones((8, 8)), np.ones((4, 4)))  # was a broadcasting error inside jnp
    with pytest.raises(ValueError, match="n_steps: .* more than max_steps"):
        burgers.solve(np.zeros(8), nu=1e-9, t_final=1e9)  # default steps = t_final / 0.01


def test_times_as_a_list_are_accepted_under_the_type_hook():
    """Under the suite's jaxtyping/beartype hook: 1-D times given as a Python list (the runtime accepts them)."""
    x = lno.duffing(lambda t: jnp.zeros_like(t), [0.0, 0.5, 1.0], x0=0.0, v0=0.0)
    np.testing.assert_allclose(np.asarray(x), 0.0, atol=1e-12)  # at rest, no forcing: stays at rest
