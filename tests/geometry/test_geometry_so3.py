"""SO(3), SE(3) and Kabsch: group axioms (hypothesis), stable exp/log, quaternions, SciPy as the oracle."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.spatial.transform import Rotation

from jaxkit.geometry import kabsch, kabsch_rmsd, rmsd, se3, so3

SETTINGS = settings(max_examples=20, deadline=None)
seeds = st.integers(0, 2**31 - 1)


@jax.jit
def _axioms(v):
    A, B, C = (so3.exp(v[i::3]) for i in range(3))
    I = jnp.eye(3, dtype=v.dtype)
    return {
        "assoc": so3.compose(so3.compose(A, B), C) - so3.compose(A, so3.compose(B, C)),
        "ident": so3.compose(A, I) - A,
        "inv": so3.compose(A, so3.inverse(A)) - I,
        "AB": so3.compose(A, B),
        "hom": so3.compose(so3.exp(0.3 * v), so3.exp(0.7 * v)) - so3.exp(v),
        "d1": so3.geodesic_distance(A, B),
        "dl": so3.geodesic_distance(so3.compose(C, A), so3.compose(C, B)),
        "dr": so3.geodesic_distance(so3.compose(A, C), so3.compose(B, C)),
    }


@jax.jit
def _roundtrip(v):
    R = so3.exp(v)
    w = so3.log(R)
    return R, w, so3.exp(w), so3.angle(R)


@jax.jit
def _quat(q):
    R = so3.from_quaternion(q)
    return R, so3.from_quaternion(-q), so3.to_quaternion(R), so3.compose(R[:8], R[8:])


@jax.jit
def _kabsch(P, Q, Qn):
    R, t = kabsch(P, Q)
    R2, t2 = kabsch(P, Qn)
    return R, t, kabsch_rmsd(P, Q), R2, t2, rmsd(P @ R2.T + t2, Qn)


@jax.jit
def _se3(xi, x):
    R, t = se3.exp(xi)
    R2, t2 = se3.compose(R[:4], t[:4], R[4:], t[4:])
    Ri, ti = se3.inverse(R, t)
    return (
        R,
        t,
        se3.log(R, t),
        se3.to_matrix(R, t),
        se3.to_matrix(R2, t2),
        se3.apply(Ri, ti, se3.apply(R, t, x)),
    )


def _rotvecs(seed: int, n: int = 16, max_angle: float = np.pi) -> np.ndarray:
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    return axis * rng.uniform(0, max_angle, (n, 1))


@SETTINGS
@given(seeds)
def test_group_axioms(seed):
    with jax.enable_x64(True):
        v = jnp.asarray(_rotvecs(seed, 12))
        r = _axioms(v)
        for k in ("assoc", "ident", "inv", "hom"):
            np.testing.assert_allclose(r[k], 0.0, atol=1e-12, err_msg=k)
        assert np.all(so3.is_rotation(r["AB"], atol=1e-12))
        np.testing.assert_allclose(r["dl"], r["d1"], atol=1e-7)  # bi-invariant distance
        np.testing.assert_allclose(r["dr"], r["d1"], atol=1e-7)


@SETTINGS
@given(seeds, st.sampled_from([0.0, 1e-9, 1e-7, 1e-6, 1e-3, 1.0]), st.booleans())
def test_exp_log_round_trip_near_0_and_pi(seed, delta, near_pi):
    """Angles within 1e-6 of 0 and pi: log(exp(v)) = v (up to the antipodal axis at exactly pi), float64."""
    with jax.enable_x64(True):
        rng = np.random.default_rng(seed)
        axis = rng.normal(size=(8, 3))
        axis /= np.linalg.norm(axis, axis=1, keepdims=True)
        ang = np.pi - delta if near_pi else np.maximum(delta, 1e-12) * rng.uniform(0.5, 1.0, 8)
        v = axis * np.broadcast_to(ang, (8,))[:, None]
        R, w, R2, _ = _roundtrip(jnp.asarray(v))
        np.testing.assert_allclose(R, Rotation.from_rotvec(v).as_matrix(), atol=1e-12)
        w = np.asarray(w)
        if near_pi and delta == 0.0:  # v and -v are the same rotation
            w = np.where(np.sum(w * v, -1, keepdims=True) < 0, -w, w)
        np.testing.assert_allclose(w, v, atol=1e-9, rtol=1e-9)
        np.testing.assert_allclose(R2, R, atol=1e-12)


def test_exp_log_float32_and_scipy():
    v = _rotvecs(0, 2000)
    R, w, _, _ = _roundtrip(jnp.asarray(v, jnp.float32))
    np.testing.assert_allclose(R, Rotation.from_rotvec(v).as_matrix(), atol=2e-6)
    np.testing.assert_allclose(w, Rotation.from_matrix(np.asarray(R, np.float64)).as_rotvec(), atol=2e-5)
    vs = np.concatenate([_rotvecs(1, 1000, 1e-6), (np.pi - 1e-6) * _unit(3, 1000)])
    R, w, R2, ang = _roundtrip(jnp.asarray(vs, jnp.float32))
    np.testing.assert_allclose(R2, Rotation.from_rotvec(vs).as_matrix(), atol=1e-6)
    np.testing.assert_allclose(ang, np.linalg.norm(vs, axis=1), atol=3e-6)


def _unit(seed, n):
    a = np.random.default_rng(seed).normal(size=(n, 3))
    return a / np.linalg.norm(a, axis=1, keepdims=True)


@SETTINGS
@given(seeds)
def test_quaternion_double_cover(seed):
    with jax.enable_x64(True):
        q = np.random.default_rng(seed).normal(size=(16, 4))
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        R, Rm, q2, RR = _quat(jnp.asarray(q))
        np.testing.assert_allclose(Rm, R, atol=1e-14)
        scipy_R = Rotation.from_quat(
            np.concatenate([q[:, 1:], q[:, :1]], 1)
        ).as_matrix()  # SciPy: scalar last
        np.testing.assert_allclose(R, scipy_R, atol=1e-12)
        q2 = np.asarray(q2)
        assert np.all(q2[:, 0] >= 0)
        np.testing.assert_allclose(q2, q * np.sign(q[:, :1]), atol=1e-12)
        # quaternion product <-> matrix product
        w1, x1, y1, z1 = q[:8].T
        w2, x2, y2, z2 = q[8:].T
        ab = np.stack(
            [
                w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
            ],
            1,
        )
        np.testing.assert_allclose(
            Rotation.from_quat(np.concatenate([ab[:, 1:], ab[:, :1]], 1)).as_matrix(), RR, atol=1e-12
        )


def test_haar_sampling_angle_law():
    R, w = jax.jit(lambda k: (lambda R: (R, so3.angle(R)))(so3.random_uniform(k, (4000,))))(jax.random.key(0))
    w = np.asarray(w, np.float64)
    assert stats.kstest(w, lambda x: (x - np.sin(x)) / np.pi).pvalue > 1e-3
    assert np.all(so3.is_rotation(R, atol=1e-5))
    # Haar: every column is uniform on the sphere (mean 0, second moment I/3), and R is as likely as R^T
    R = np.asarray(R, np.float64)
    for j in range(3):
        c = R[:, :, j]
        assert np.abs(c.mean(0)).max() < 4 * np.sqrt(1 / 3 / 4000)
        np.testing.assert_allclose(c.T @ c / 4000, np.eye(3) / 3, atol=0.035)
    assert stats.ks_2samp(R[:, 0, 1], R[:, 1, 0]).pvalue > 1e-3


@SETTINGS
@given(seeds, st.sampled_from([3, 17]), st.floats(0.0, 0.01))
def test_kabsch_recovers_rigid_motion(seed, n, noise):
    with jax.enable_x64(True):
        rng = np.random.default_rng(seed)
        P = rng.normal(size=(n, 3)) * 3
        Rt = Rotation.random(random_state=seed).as_matrix()
        t = rng.normal(size=3) * 5
        Q = P @ Rt.T + t
        Qn = Q + noise * rng.normal(size=Q.shape)
        R, tt, rms, R2, t2, rms2 = _kabsch(P, Q, Qn)
        np.testing.assert_allclose(R, Rt, atol=1e-5)
        np.testing.assert_allclose(tt, t, atol=1e-5)
        assert float(rms) < 1e-5
        # noisy: same optimum as SciPy's align_vectors, and no worse than the true motion
        ref, _ = Rotation.align_vectors(Qn - Qn.mean(0), P - P.mean(0))
        np.testing.assert_allclose(R2, ref.as_matrix(), atol=1e-6 + 100 * noise)
        assert float(rms2) <= np.sqrt(np.mean(np.sum((P @ Rt.T + t - Qn) ** 2, 1))) + 1e-9


def test_kabsch_reflection_guard():
    rng = np.random.default_rng(0)
    P = rng.normal(size=(10, 3))
    Q = P * np.array([1.0, 1.0, -1.0])  # a mirror image: the best *proper* rotation must be returned
    R, _ = kabsch(P, Q)
    assert np.isclose(float(jnp.linalg.det(R)), 1.0, atol=1e-5)
    assert np.all(so3.is_rotation(R))


@SETTINGS
@given(seeds)
def test_se3_exp_log_compose(seed):
    with jax.enable_x64(True):
        rng = np.random.default_rng(seed)
        xi = np.concatenate([_rotvecs(seed, 8, 3.0), rng.normal(size=(8, 3))], 1)
        xi[0, :3] = 1e-9 * xi[0, :3]
        x = rng.normal(size=(8, 3))
        R, t, lg, M, M2, xx = _se3(jnp.asarray(xi), jnp.asarray(x))
        np.testing.assert_allclose(lg, xi, atol=1e-9)
        # exp of the twist equals the matrix exponential of the 4x4 generator
        from scipy.linalg import expm

        G = np.zeros((4, 4))
        G[:3, :3] = np.asarray(so3.hat(xi[1, :3]))
        G[:3, 3] = xi[1, 3:]
        np.testing.assert_allclose(M[1], expm(G), atol=1e-12)
        np.testing.assert_allclose(M2, np.asarray(M[:4]) @ np.asarray(M[4:]), atol=1e-12)
        np.testing.assert_allclose(xx, x, atol=1e-12)


def test_bad_input_errors():
    with pytest.raises(ValueError, match="R: expected rotation matrices"):
        so3.check_rotation("R", np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="R: expected rotation matrices"):
        so3.check_rotation("R", 2 * np.eye(3))
    with pytest.raises(ValueError, match=r"v: expected shape \(\.\.\., 3\)"):
        so3.exp(np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"R: expected shape \(\.\.\., 3, 3\)"):
        so3.log(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="Q: expected the shape of P"):
        kabsch(np.zeros((5, 3)), np.zeros((6, 3)))
    with pytest.raises(ValueError, match="t2: expected batch shape"):
        se3.compose(np.eye(3), np.zeros(3), np.broadcast_to(np.eye(3), (2, 3, 3)), np.zeros((3, 3)))
