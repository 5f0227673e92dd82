"""Under jit the first line a user sees is the library's own message naming the argument (issue 49): jaxkit's
compiled entry points, and `jaxkit.jit` for a function of the user's, re-raise an `eqx.error_if` check that fires
at run time as ValueError (before: `JaxRuntimeError: INTERNAL: CpuCallback error calling callback: Traceback ...`
with the message buried inside)."""

import traceback

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxkit
from jaxkit import diffusion as dm
from jaxkit._validate import library_errors, runtime_message


def _first_line(exc: BaseException) -> str:
    return traceback.format_exception_only(type(exc), exc)[0].strip()


def test_jaxkit_jit_raises_the_librarys_message_first():
    schedule = dm.VPSchedule()
    f = jaxkit.jit(lambda t: dm.marginal_coefs(schedule, t))
    a, s = f(jnp.float32(0.5))
    np.testing.assert_allclose([a, s], dm.marginal_coefs(schedule, 0.5), rtol=1e-6)  # same numbers as eager
    for bad in (1.5, -0.1, float("nan")):
        with pytest.raises(ValueError) as e:
            f(jnp.float32(bad))
        assert _first_line(e.value) == "ValueError: t: diffusion time outside [0, 1] (or NaN)"
        assert e.value.__cause__ is None and e.value.__suppress_context__
    with pytest.raises(TypeError, match="fun"):  # jaxtyping's runtime check in the tests, ours without
        jaxkit.jit(3)


def test_plain_jax_jit_buries_the_message_that_jaxkit_jit_surfaces():
    """The independent reference: what JAX itself raises for the same check (why the translation is needed)."""
    schedule = dm.VPSchedule()
    with pytest.raises(jax.errors.JaxRuntimeError) as e:
        jax.jit(lambda t: dm.marginal_coefs(schedule, t))(jnp.float32(1.5))
    assert not _first_line(e.value).startswith("JaxRuntimeError: t:")
    assert runtime_message(e.value) == "t: diffusion time outside [0, 1] (or NaN)"
    with pytest.raises(eqx.EquinoxRuntimeError) as e:
        eqx.filter_jit(lambda t: dm.marginal_coefs(schedule, t))(jnp.float32(1.5))
    assert runtime_message(e.value) == "t: diffusion time outside [0, 1] (or NaN)"


def test_compiled_entry_points_raise_the_librarys_message_when_called_eagerly():
    """A sampler runs its loop compiled (lax.scan): a NaN from the user's eps_fn was a JaxRuntimeError."""
    schedule = dm.discrete_schedule("linear", n_steps=8)
    x_T = jnp.zeros(3)
    ok = dm.ddpm_sample(lambda x, t: jnp.zeros_like(x), schedule, x_T, jax.random.key(0))
    assert ok.shape == (3,) and np.all(np.isfinite(ok))
    with pytest.raises(ValueError) as e:
        dm.ddpm_sample(lambda x, t: x * jnp.nan, schedule, x_T, jax.random.key(0))
    assert _first_line(e.value).startswith("ValueError: eps_fn: the callable returned NaN/inf values")
    with pytest.raises(ValueError) as e:
        dm.ddim_sample(lambda x, t: x + jnp.inf, schedule, x_T, jax.random.key(0), n_steps=4)
    assert _first_line(e.value).startswith("ValueError: eps_fn: ")


def test_other_errors_pass_through_unchanged():
    @library_errors
    def f():
        raise jax.errors.JaxRuntimeError("INTERNAL: something else")

    with pytest.raises(jax.errors.JaxRuntimeError, match="something else"):
        f()


def test_the_check_helper_raises_value_error_eagerly_and_a_runtime_error_under_jit():
    """Before: `eqx.error_if` on concrete values raised EquinoxRuntimeError whose first line was "Above is the
    stack outside of JIT..."."""
    from jaxkit._validate import error_if_invalid

    x = jnp.array([1.0, -1.0])
    with pytest.raises(ValueError) as e:
        error_if_invalid(x, x < 0, "x: expected values >= 0")
    assert _first_line(e.value) == "ValueError: x: expected values >= 0"
    np.testing.assert_array_equal(error_if_invalid(x, x < -5, "x: never"), x)
    with pytest.raises(jax.errors.JaxRuntimeError, match="x: expected values >= 0"):
        jax.jit(lambda v: error_if_invalid(v, v < 0, "x: expected values >= 0"))(x)
    with pytest.raises(ValueError, match="^x: expected values >= 0$"):
        jaxkit.jit(lambda v: error_if_invalid(v, v < 0, "x: expected values >= 0"))(x)


def test_a_check_firing_inside_fit_surfaces_as_the_librarys_message():
    import optax

    from jaxkit._validate import error_if_invalid
    from jaxkit.train import fit, full_batch

    def loss(p, batch, key):
        p = error_if_invalid(p, p["w"] < 0, "params: went negative")
        return jnp.sum((p["w"] + 5.0) ** 2)

    data = full_batch({"x": np.zeros((4, 1), np.float32)})
    with pytest.raises(
        ValueError
    ) as e:  # SGD walks w from 1 towards -5: the check fires inside the compiled step
        fit({"w": jnp.ones(2)}, optax.sgd(0.1), loss, data, n_steps=20, key=jax.random.key(0), progress=False)
    assert _first_line(e.value) == "ValueError: params: went negative"


_USER_SCRIPT = """
import jax, jax.numpy as jnp, equinox as eqx
from jaxkit import diffusion as dm
schedule = dm.VPSchedule()
if {own}:
    f = jax.jit(lambda t: eqx.error_if(t, t > 1, "my own check"))
elif {vmap_only}:
    f = jax.vmap(lambda t: dm.marginal_coefs(schedule, t))
else:
    f = jax.jit(jax.vmap(lambda t: dm.marginal_coefs(schedule, t)))
f(jnp.asarray({t}))
"""


@pytest.mark.parametrize(
    ("own", "vmap_only", "t", "first", "raised"),
    [
        (False, False, "[0.5, 1.5]", "t: diffusion time outside [0, 1] (or NaN)", "JaxRuntimeError"),
        (False, True, "[0.5, 1.5]", "t: diffusion time outside [0, 1] (or NaN)", "EquinoxRuntimeError"),
        (
            True,
            False,
            "1.5",
            "jax.pure_callback failed",
            "JaxRuntimeError",
        ),  # a user's own check: as jax logs it
    ],
)
def test_under_a_users_plain_jax_jit_the_first_line_on_stderr_is_the_librarys_message(
    own, vmap_only, t, first, raised
):
    """A script of the user's with plain ``jax.jit`` (and ``vmap``): the exception is still jax's, but the first
    line the user reads (stderr, where jax logs the failed callback before raising) is jaxkit's own message, not
    "jax.pure_callback failed" followed by a callback traceback. Only jaxkit's checks are rewritten."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", _USER_SCRIPT.format(own=own, vmap_only=vmap_only, t=t)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines[0].startswith(first), proc.stderr[:2000]
    assert any(
        ln.startswith(("jax.errors.", "equinox.")) and raised in ln for ln in lines
    )  # raised unchanged


def test_every_run_time_check_goes_through_the_registered_helper():
    """A direct ``eqx.error_if`` in jaxkit (outside the helper and the kernels, which list their own messages) is
    a check whose message the stderr filter does not know: under a user's ``jax.jit`` its first line would again
    be "jax.pure_callback failed" (fresh probe R03: noise_stability's rho check)."""
    import re
    from pathlib import Path

    root = Path(jaxkit.__file__).parent
    direct = [
        f"{p.relative_to(root)}:{i}"
        for p in sorted(root.rglob("*.py"))
        if p.name != "_validate.py" and "kernels" not in p.parts
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\b(eqx|equinox)\.error_if\(", line)
    ]
    assert direct == [], f"use jaxkit._validate.traced_check (or error_if_invalid) instead at {direct}"


def test_the_first_line_is_the_message_when_only_the_kernels_are_imported():
    """Fresh probe K07 (2026-12-07): ``from jaxkit.kernels.linear_scan import linear_scan`` alone, under the
    user's ``jax.jit``: the stderr filter was added only when another subpackage imported ``jaxkit._validate``, so
    the first line was jax's "jax.pure_callback failed". ``import jaxkit`` now adds it."""
    import subprocess
    import sys

    script = (
        "import jax, jax.numpy as jnp\n"
        "from jaxkit.kernels.linear_scan import linear_scan\n"
        "jax.jit(linear_scan)(jnp.ones((10, 4)).at[1, 1].set(jnp.inf), jnp.ones((10, 4)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines[0].startswith("linear_scan: a: expected finite values"), proc.stderr[:2000]
