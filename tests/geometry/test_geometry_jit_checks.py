"""Value checks that hold under ``jax.jit`` (issue: ``jax.jit(so3.log)(2 I)`` returned ``[0, 0, 0]`` and ``kabsch``
of collinear points an arbitrary rotation, where the eager calls raise), sizes refused up front with the memory
they would need (``random_uniform(key, (10**10,))`` then ``np.asarray`` aborted the process), one PRNG key check."""

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from jaxkit._validate import MAX_BYTES, check_size, size_cap
from jaxkit.geometry import kabsch, se3, so3

LINE = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]])
ROT = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
T_BAD = np.block([[ROT, np.ones((3, 1))], [np.array([[0.5, 0, 0, 1.0]])]])

# (name, function, arguments, message): the eager call raises ValueError with the message, the jitted call a
# run-time error with the same message
CASES = [
    ("log(2I)", so3.log, (2 * np.eye(3),), "R: expected rotation matrices"),
    ("log(reflection)", so3.log, (np.diag([1.0, 1, -1]),), "R: expected rotation matrices"),
    ("kabsch(collinear)", kabsch, (LINE, LINE + 1.0), "collinear or coincident"),
    ("kabsch(NaN)", kabsch, (np.full((4, 3), np.nan), LINE), "P: expected finite values"),
    ("exp(NaN)", so3.exp, (np.array([np.nan, 0, 0]),), "v: expected finite values"),
    ("compose(2I)", so3.compose, (np.eye(3), 2 * np.eye(3)), "R2: expected rotation matrices"),
    ("from_axis_angle", so3.from_axis_angle, (np.array([2.0, 0, 0]), 0.3), "axis: expected unit vectors"),
    ("rotation_from_uniforms", so3.rotation_from_uniforms, (1.5, 0.2, 0.3), "u1: expected U(0, 1) variates"),
    ("from_quaternion(0)", so3.from_quaternion, (np.zeros(4),), "q: expected vectors of non-zero norm"),
    ("se3.from_matrix", se3.from_matrix, (T_BAD,), "last row (0, 0, 0, 1)"),
    ("se3.apply(2I)", se3.apply, (2 * np.eye(3), np.zeros(3), np.ones(3)), "R: expected rotation matrices"),
]


@pytest.mark.parametrize("name, fn, args, msg", CASES, ids=[c[0] for c in CASES])
def test_the_eager_check_also_holds_under_jit(name, fn, args, msg):
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        fn(*args)
    with pytest.raises(RuntimeError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        jax.block_until_ready(jax.jit(fn)(*args))


def test_valid_inputs_give_the_same_result_under_jit():
    R = jnp.asarray(ROT)
    np.testing.assert_allclose(jax.jit(so3.log)(R), so3.log(R), atol=1e-6)
    np.testing.assert_allclose(jax.jit(so3.log)(R), Rotation.from_matrix(ROT).as_rotvec(), atol=1e-5)
    P = np.random.default_rng(0).normal(size=(6, 3))
    Rk, t = jax.jit(kabsch)(P, P @ ROT.T + 1.0)
    np.testing.assert_allclose(Rk, ROT, atol=1e-4)
    np.testing.assert_allclose(t, np.ones(3), atol=1e-4)
    # vmap and grad through the checked functions
    v = jnp.array([[0.1, 0.2, 0.3], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(jax.vmap(so3.log)(jax.vmap(so3.exp)(v)), v, atol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda x: so3.log(so3.exp(x)).sum())(v[0]), np.ones(3), atol=1e-5)


def test_a_huge_draw_is_refused_up_front_with_the_memory_it_needs(monkeypatch):
    t0 = time.perf_counter()
    with pytest.raises(
        ValueError, match=r"shape: the request needs about 596 GiB, above the size cap of 4 GiB"
    ):
        so3.random_uniform(jax.random.key(0), (10**10,))
    assert time.perf_counter() - t0 < 1.0
    # the cap is overridable: by the environment, then per call
    monkeypatch.setenv("JAXKIT_MAX_BYTES", "100K")
    assert size_cap() == 100 * 1024
    with pytest.raises(ValueError, match="above the size cap of 100 KiB"):
        so3.random_uniform(jax.random.key(0), (10000,))
    assert so3.random_uniform(jax.random.key(0), (100,)).shape == (100, 3, 3)
    check_size("x", 10**6, max_bytes=2 * 10**6)
    monkeypatch.setenv("JAXKIT_MAX_BYTES", "lots")
    with pytest.raises(ValueError, match="JAXKIT_MAX_BYTES: expected a number of bytes"):
        size_cap()
    monkeypatch.delenv("JAXKIT_MAX_BYTES")
    assert size_cap() == MAX_BYTES == 4 * 2**30


def test_an_integer_key_is_named():
    for fn in (lambda: so3.random_uniform(0, (2,)), lambda: so3.random_uniform(np.int32(3))):
        with pytest.raises(TypeError, match="key: expected a PRNG key|parameter 'key'"):
            fn()  # under the suite's runtime type checks the annotation may fire first, naming the parameter
