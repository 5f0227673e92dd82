"""Bad inputs to every public entry point of jaxkit.geometry: wrong shape/rank, NaN/inf, empty, wrong dtype,
out-of-range values and non-rotations give a clear error naming the argument (issue 20, finding 5: ``log(2 I)`` and
``log`` of a reflection returned ``[0, 0, 0]``, ``to_quaternion(zeros)`` the identity, ``se3.from_matrix(ones)``
``R = ones``, and the gradient of ``log(exp(v))`` at ``v = 0`` was NaN)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from jaxkit.geometry import kabsch, kabsch_rmsd, rmsd, se3, so3

I3 = np.eye(3)
REFLECT = np.diag([1.0, 1.0, -1.0])
NAN_R = np.where(np.eye(3) > 0, np.nan, 0.0)
ROT = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
P = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]])
T_OK = np.block([[ROT, np.ones((3, 1))], [np.zeros((1, 3)), np.ones((1, 1))]])
T_BAD_ROW = T_OK.copy()
T_BAD_ROW[3, 0] = 0.5
NOT_ROT = "expected rotation matrices"

CASES = [
    # finding 5
    ("log(2I)", lambda: so3.log(2 * I3), ValueError, "R: " + NOT_ROT),
    ("log(reflection)", lambda: so3.log(REFLECT), ValueError, "R: " + NOT_ROT),
    ("to_quaternion(zeros)", lambda: so3.to_quaternion(np.zeros((3, 3))), ValueError, "R: " + NOT_ROT),
    ("se3.from_matrix(ones)", lambda: se3.from_matrix(np.ones((4, 4))), ValueError, NOT_ROT),
    # rotations in, everywhere
    ("log(NaN)", lambda: so3.log(NAN_R), ValueError, "NaN"),
    ("angle(reflection)", lambda: so3.angle(REFLECT), ValueError, "R: " + NOT_ROT),
    ("to_quaternion(2I)", lambda: so3.to_quaternion(2 * I3), ValueError, NOT_ROT),
    ("compose(R, 2I)", lambda: so3.compose(ROT, 2 * I3), ValueError, "R2: " + NOT_ROT),
    ("compose batch", lambda: so3.compose(np.stack([ROT] * 2), np.stack([ROT] * 3)), ValueError, "R2: "),
    ("inverse(2I)", lambda: so3.inverse(2 * I3), ValueError, NOT_ROT),
    ("apply(reflection)", lambda: so3.apply(REFLECT, np.ones(3)), ValueError, NOT_ROT),
    ("apply(x NaN)", lambda: so3.apply(ROT, [np.nan, 0, 0]), ValueError, "x: expected finite"),
    ("apply(x shape)", lambda: so3.apply(ROT, np.ones(2)), ValueError, "x: expected shape"),
    ("apply batch", lambda: so3.apply(np.stack([ROT] * 2), np.ones((3, 3))), ValueError, "x: expected batch"),
    ("geodesic(R, refl)", lambda: so3.geodesic_distance(ROT, REFLECT), ValueError, "R2: " + NOT_ROT),
    ("log(shape)", lambda: so3.log(np.zeros((3, 4))), ValueError, r"R: expected shape \(\.\.\., 3, 3\)"),
    ("log(rank 1)", lambda: so3.log(np.zeros(9)), ValueError, "R: expected shape"),
    ("log(str)", lambda: so3.log("abc"), TypeError, "R: expected a numeric array"),
    ("log(None)", lambda: so3.log(None), TypeError, "R: expected a numeric array|parameter 'R'"),
    ("log(complex)", lambda: so3.log(ROT.astype(complex)), TypeError, "R: expected a real array"),
    # vectors and quaternions
    ("exp(NaN)", lambda: so3.exp([np.nan, 0.0, 0.0]), ValueError, "v: expected finite"),
    ("exp(inf)", lambda: so3.exp([np.inf, 0.0, 0.0]), ValueError, "v: expected finite"),
    ("exp(shape)", lambda: so3.exp(np.zeros((4, 2))), ValueError, r"v: expected shape \(\.\.\., 3\)"),
    ("exp(empty)", lambda: so3.exp([]), ValueError, "v: expected shape"),
    ("exp(ragged)", lambda: so3.exp([[1.0, 2.0, 3.0], [1.0]]), ValueError, "v: expected a rectangular"),
    ("hat(shape)", lambda: so3.hat([1.0, 2.0]), ValueError, "v: expected shape"),
    ("vee(NaN)", lambda: so3.vee(NAN_R), ValueError, "M: expected finite"),
    ("project(inf)", lambda: so3.project(np.full((3, 3), np.inf)), ValueError, "M: expected finite"),
    (
        "from_quaternion(0)",
        lambda: so3.from_quaternion(np.zeros(4)),
        ValueError,
        "q: expected vectors of non-zero",
    ),
    (
        "from_quaternion(NaN)",
        lambda: so3.from_quaternion([np.nan, 0, 0, 1]),
        ValueError,
        "q: expected finite",
    ),
    ("from_quaternion(shape)", lambda: so3.from_quaternion(np.ones(3)), ValueError, "q: expected shape"),
    (
        "from_axis_angle(|a|=2)",
        lambda: so3.from_axis_angle([2.0, 0, 0], 0.5),
        ValueError,
        "axis: expected unit",
    ),
    (
        "from_axis_angle(NaN)",
        lambda: so3.from_axis_angle([1.0, 0, 0], np.nan),
        ValueError,
        "angle_: expected finite",
    ),
    (
        "from_axis_angle(bcast)",
        lambda: so3.from_axis_angle(np.eye(3), np.ones(2)),
        ValueError,
        "angle_: expected a",
    ),
    ("uniform_axis(u>1)", lambda: so3.uniform_axis(1.5, 0.2), ValueError, r"u1: expected U\(0, 1\)"),
    (
        "rotation_from_uniforms(NaN)",
        lambda: so3.rotation_from_uniforms(0.1, 0.2, np.nan),
        ValueError,
        "omega",
    ),
    (
        "random_uniform(key=0)",
        lambda: so3.random_uniform(0, (2,)),
        TypeError,
        "key: expected a PRNG key|parameter 'key'",
    ),
    ("random_uniform(shape)", lambda: so3.random_uniform(jax.random.key(0), (-1,)), ValueError, "shape"),
    (
        "random_uniform(dtype)",
        lambda: so3.random_uniform(jax.random.key(0), (2,), jnp.int32),
        TypeError,
        "dtype",
    ),
    # SE(3)
    ("from_matrix(last row)", lambda: se3.from_matrix(T_BAD_ROW), ValueError, r"last row \(0, 0, 0, 1\)"),
    ("from_matrix(NaN)", lambda: se3.from_matrix(np.full((4, 4), np.nan)), ValueError, "T: expected finite"),
    ("from_matrix(shape)", lambda: se3.from_matrix(I3), ValueError, r"T: expected shape \(\.\.\., 4, 4\)"),
    ("se3.exp(shape)", lambda: se3.exp(np.zeros(5)), ValueError, "xi: expected shape"),
    ("se3.exp(NaN)", lambda: se3.exp(np.full(6, np.nan)), ValueError, "xi: expected finite"),
    ("se3.log(reflection)", lambda: se3.log(REFLECT, np.zeros(3)), ValueError, "R: " + NOT_ROT),
    ("se3.log(t NaN)", lambda: se3.log(ROT, [np.nan, 0, 0]), ValueError, "t: expected finite"),
    ("se3.inverse(t shape)", lambda: se3.inverse(ROT, np.zeros(2)), ValueError, "t: expected shape"),
    ("se3.to_matrix(2I)", lambda: se3.to_matrix(2 * I3, np.zeros(3)), ValueError, NOT_ROT),
    ("se3.apply(x)", lambda: se3.apply(ROT, np.zeros(3), np.zeros((2, 2))), ValueError, "x: expected shape"),
    ("se3.compose(t1 batch)", lambda: se3.compose(I3, np.zeros((2, 3)), I3, np.zeros(3)), ValueError, "t1: "),
    ("se3.identity(shape)", lambda: se3.identity((2, -1)), ValueError, "shape"),
    # alignment
    ("kabsch(collinear)", lambda: kabsch(np.outer(np.arange(5.0), [1, 2, 3]), P), ValueError, "collinear"),
    ("kabsch(coincident)", lambda: kabsch(np.ones((5, 3)), np.ones((5, 3))), ValueError, "collinear"),
    ("kabsch(NaN)", lambda: kabsch(np.where(P > 0, np.nan, P), P), ValueError, "P: expected finite"),
    ("kabsch(2 points)", lambda: kabsch(P[:2], P[:2]), ValueError, "at least 3 points"),
    ("kabsch(weights<0)", lambda: kabsch(P, P, -np.ones(5)), ValueError, "weights: expected non-negative"),
    ("kabsch(weights=0)", lambda: kabsch(P, P, np.zeros(5)), ValueError, "positive sum"),
    (
        "kabsch(weights shape)",
        lambda: kabsch(P, P, np.ones(4)),
        ValueError,
        r"weights: expected shape \(5,\)",
    ),
    ("kabsch(Q shape)", lambda: kabsch(P, P[:4]), ValueError, "Q: expected the shape of P"),
    ("rmsd(inf)", lambda: rmsd(P, np.full((5, 3), np.inf)), ValueError, "Q: expected finite"),
    ("rmsd(empty)", lambda: rmsd(np.zeros((0, 3)), np.zeros((0, 3))), ValueError, "at least 1 points"),
    ("rmsd(str)", lambda: rmsd([["a"] * 3], [["b"] * 3]), TypeError, "P: expected a numeric array"),
    (
        "kabsch_rmsd(2D pts)",
        lambda: kabsch_rmsd(np.zeros((5, 2)), np.zeros((5, 2))),
        ValueError,
        "P: expected",
    ),
]


@pytest.mark.parametrize(("call", "exc", "match"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_reported(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_gradient_of_log_exp_is_the_identity_at_zero():
    """Finding 5: the gradient of ``log(exp(v))`` was NaN at ``v = 0``."""
    jac = jax.jit(jax.vmap(jax.jacrev(lambda v: so3.log(so3.exp(v)))))
    vs = np.array([[0.0, 0, 0], [1e-9, 0, 0], [0.3, -0.2, 0.1]])
    np.testing.assert_allclose(
        jac(jnp.asarray(vs, jnp.float32)), np.broadcast_to(np.eye(3), (3, 3, 3)), atol=1e-5
    )
    g = jax.jit(jax.grad(lambda xi: jnp.sum(se3.log(*se3.exp(xi)))))(jnp.zeros(6))
    np.testing.assert_allclose(g, np.ones(6), atol=1e-6)


def test_lists_numpy_jax_and_ints_are_accepted_alike():
    v = [[0.3, -0.2, 0.5], [0.0, 0.0, 0.0]]
    ref = so3.exp(jnp.asarray(v))
    for form in (v, np.asarray(v), np.asarray(v, np.float32), tuple(map(tuple, v))):
        np.testing.assert_array_equal(so3.exp(form), ref)
    np.testing.assert_allclose(so3.exp([1, 0, 0]), so3.exp([1.0, 0.0, 0.0]))
    R = np.asarray(ref)
    np.testing.assert_allclose(so3.log(R.tolist()), so3.log(R))
    np.testing.assert_allclose(rmsd(P.tolist(), (P + 1).tolist()), np.sqrt(3.0), rtol=1e-6)
    Rk, tk = kabsch(P.astype(int).tolist(), (P @ ROT.T + 1).tolist())
    np.testing.assert_allclose(Rk, ROT, atol=1e-5)
    np.testing.assert_allclose(tk, np.ones(3), atol=1e-5)
    Rm, tm = se3.from_matrix(T_OK.tolist())
    np.testing.assert_allclose(Rm, ROT, atol=1e-6)
    assert so3.exp(np.zeros((0, 3))).shape == (0, 3, 3)  # an empty batch is a valid batch


def test_tolerance_accepts_float32_rotations_and_small_noise():
    R = np.asarray(so3.random_uniform(jax.random.key(0), (500,), jnp.float32))
    assert so3.is_rotation(R).all()
    so3.log(R)  # float32 round-off is well inside 1e-4
    so3.log(ROT + 5e-6)  # user data rounded to ~6 digits
    with pytest.raises(ValueError, match=NOT_ROT):
        so3.log(ROT + 1e-3)
    assert not so3.is_rotation(NAN_R) and not so3.is_rotation(REFLECT)


def test_shapes_are_still_checked_inside_jit():
    with pytest.raises(ValueError, match="R: expected shape"):
        jax.jit(so3.log)(jnp.zeros((3, 4)))
    with pytest.raises(TypeError, match="real array"):
        jax.jit(so3.exp)(jnp.zeros(3, jnp.complex64))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_random_matrices_are_rejected_and_random_rotations_accepted(seed):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(3, 3))  # a Gaussian matrix is almost surely not a rotation
    for fn in (so3.log, so3.to_quaternion, so3.angle, so3.inverse):
        with pytest.raises(ValueError, match=NOT_ROT):
            fn(M)
    R = Rotation.random(random_state=seed).as_matrix()
    np.testing.assert_allclose(so3.exp(so3.log(R)), R, atol=1e-5)
    Q = -R  # det = -1: a rotoreflection
    with pytest.raises(ValueError, match=NOT_ROT):
        so3.log(Q)


def test_project_refuses_matrices_without_a_unique_nearest_rotation():
    """project(zeros) returned the identity: every rotation is equally near a matrix of rank < 2."""
    for M in (np.zeros((3, 3)), np.outer([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])):
        with pytest.raises(ValueError, match="M: expected a matrix of rank >= 2"):
            so3.project(M)
    with pytest.raises(Exception, match="M: expected a matrix of rank >= 2"):
        jax.block_until_ready(jax.jit(so3.project)(jnp.zeros((2, 3, 3))))
    # rank 2 still has a unique answer, checked against the SVD solution of the orthogonal Procrustes problem
    R = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
    M = R @ np.diag([2.0, 1.0, 0.0])
    U, _, Vt = np.linalg.svd(M)
    expected = U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt
    np.testing.assert_allclose(np.asarray(so3.project(M)), expected, atol=1e-5)


@pytest.mark.parametrize("atol", [0.0, -1.0, np.nan, -np.inf])
def test_check_rotation_refuses_a_tolerance_that_no_rotation_meets(atol):
    """The fuzz suite's finding: atol=0 (or below, or NaN) refused every rotation with a message about R, as if the
    rotation were wrong; the tolerance itself is refused now, naming atol."""
    R = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
    np.testing.assert_array_equal(np.asarray(so3.check_rotation("R", R, atol=1e-4)), R)
    with pytest.raises(ValueError, match="atol: expected a finite value > 0"):
        so3.check_rotation("R", R, atol=atol)


def test_from_axis_angle_names_its_angle_parameter_as_spelled():
    """The parameter is ``angle_`` (``angle`` is the module's function): the errors name it so."""
    with pytest.raises(ValueError, match="angle_: expected finite"):
        so3.from_axis_angle([1.0, 0.0, 0.0], np.array([np.inf]))
    with pytest.raises(ValueError, match=r"angle_: expected a shape broadcastable with axis \(2,\)"):
        so3.from_axis_angle(np.eye(3)[:2], np.zeros(0))
