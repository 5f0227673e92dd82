"""Benchmark: SO(3) primitives and IGSO(3) sampling on 1e6 rotations, ours (jitted) vs SciPy / NumPy.

Ours: ``jax.jit`` of ``jaxkit.geometry._so3`` (exp, log, compose, to_quaternion, Haar sampling) and
``jaxkit.diffusion._igso3.sample`` (float64 quantile table per concrete eps, no search), float32 (the default) and float64.
Peers: ``scipy.spatial.transform.Rotation`` (float64), and a straightforward NumPy inverse-CDF IGSO(3) sampler
(series density on an 8192-point angle grid, ``cumsum``, ``np.interp``, random axes, ``Rotation.from_rotvec``).
Floor rows (a fresh ``(n, 3, 3)`` write; ``3n`` threefry uniforms) bound what any implementation can reach here.
``ratio`` = peer time / our time (> 1: ours is faster). Best of 3 after a warm-up (compilation excluded).
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from experiments import Bench, register_bench


def _best(fn, reps: int = 3) -> float:
    fn()  # warm-up / compile
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def numpy_igso3_sampler(rng: np.random.Generator, eps: float, n: int, n_grid: int = 8192, L: int = 2000):
    """The straightforward NumPy recipe: tabulate the series density, integrate, invert by interpolation."""
    from scipy.spatial.transform import Rotation

    w = np.linspace(0, np.pi, n_grid)
    l = np.arange(L)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.sum((2 * l + 1) * np.exp(-l * (l + 1) * eps**2 / 2) * np.sin((l + 0.5) * w) / np.sin(w / 2), 0)
    f[0] = np.sum((2 * l[:, 0] + 1) ** 2 * np.exp(-l[:, 0] * (l[:, 0] + 1) * eps**2 / 2))
    p = np.maximum((1 - np.cos(w)) / np.pi * f, 0)
    cdf = np.concatenate([[0.0], np.cumsum((p[1:] + p[:-1]) / 2 * np.diff(w))])
    cdf /= cdf[-1]
    ang = np.interp(rng.uniform(size=n), cdf, w)
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    return Rotation.from_rotvec(axis * ang[:, None]).as_matrix()


def run(ctx) -> list[dict]:
    from scipy import stats
    from scipy.spatial.transform import Rotation

    from jaxkit.diffusion import igso3
    from jaxkit.geometry import so3

    n = int(ctx.config.get("n", 1_000_000))
    rng = np.random.default_rng(ctx.seed)
    v64 = rng.normal(size=(n, 3))
    v64 *= (rng.uniform(0, np.pi, n) / np.linalg.norm(v64, axis=1))[:, None]
    R64 = Rotation.from_rotvec(v64).as_matrix()
    R64b = Rotation.random(n, random_state=ctx.seed + 1).as_matrix()
    r1, r2 = Rotation.from_matrix(R64), Rotation.from_matrix(R64b)
    rows = []

    def add(op, dtype, ours_s, peer, peer_s, err=None):
        rows.append(
            {
                "op": op,
                "n": n,
                "dtype": dtype,
                "ours_ms": round(1e3 * ours_s, 2),
                "peer": peer,
                "peer_ms": round(1e3 * peer_s, 2),
                "ratio": round(peer_s / ours_s, 2),
                "max_abs_err": None if err is None else float(f"{err:.2g}"),
            }
        )

    peer_exp = _best(lambda: Rotation.from_rotvec(v64).as_matrix())
    peer_log = _best(lambda: Rotation.from_matrix(R64).as_rotvec())
    peer_cmp = _best(lambda: (r1 * r2).as_matrix())
    peer_q = _best(lambda: Rotation.from_matrix(R64).as_quat())
    peer_haar = _best(lambda: Rotation.random(n, random_state=3).as_matrix())
    exp_j, log_j = jax.jit(so3.exp), jax.jit(so3.log)
    cmp_j, q_j = jax.jit(so3.compose), jax.jit(so3.to_quaternion)
    haar_j = jax.jit(lambda k: so3.random_uniform(k, (n,)))
    for dtype, x64 in (("float32", False), ("float64", True)):
        with jax.enable_x64(x64):
            dt = jnp.float64 if x64 else jnp.float32
            v, R, Rb = jnp.asarray(v64, dt), jnp.asarray(R64, dt), jnp.asarray(R64b, dt)
            t = _best(lambda v=v: exp_j(v).block_until_ready())
            add(
                "exp (rotvec -> matrix)",
                dtype,
                t,
                "scipy from_rotvec.as_matrix",
                peer_exp,
                np.abs(np.asarray(exp_j(v)) - R64).max(),
            )
            t = _best(lambda R=R: log_j(R).block_until_ready())
            add(
                "log (matrix -> rotvec)",
                dtype,
                t,
                "scipy from_matrix.as_rotvec",
                peer_log,
                np.abs(np.asarray(log_j(R)) - v64).max(),
            )
            t = _best(lambda R=R, Rb=Rb: cmp_j(R, Rb).block_until_ready())
            add(
                "compose",
                dtype,
                t,
                "scipy (r1 * r2).as_matrix",
                peer_cmp,
                np.abs(np.asarray(cmp_j(R, Rb)) - R64 @ R64b).max(),
            )
            t = _best(lambda R=R: q_j(R).block_until_ready())
            add("matrix -> quaternion", dtype, t, "scipy from_matrix.as_quat", peer_q)
            t = _best(lambda: haar_j(jax.random.PRNGKey(0)).block_until_ready())
            add("Haar sampling", dtype, t, "scipy Rotation.random.as_matrix", peer_haar)
            if not x64:
                # Floors on this machine (what no implementation of the same output can beat): writing a fresh
                # (n, 3, 3) array (page faults of a new buffer dominate on CPU) and drawing 3n random words with
                # JAX's default PRNG; ratio = the best ratio reachable against the peer.
                fill = jax.jit(lambda x: jnp.broadcast_to(x[:, None, None], (n, 3, 3)) * 2.0)
                x1 = jnp.ones((n,), dt)
                t = t_fill = _best(lambda f=fill, x=x1: f(x).block_until_ready())
                add("floor: write a fresh (n,3,3) array", dtype, t, "scipy from_rotvec.as_matrix", peer_exp)
                words = jax.jit(lambda k, dt=dt: jax.random.uniform(k, (3, n), dt))
                t = t_words = _best(lambda w=words: w(jax.random.PRNGKey(0)).block_until_ready())
                add("floor: 3n uniforms (threefry)", dtype, t, "scipy Rotation.random.as_matrix", peer_haar)
                rbg = jax.random.key(0, impl="rbg")
                t = _best(lambda k=rbg: haar_j(k).block_until_ready())
                add("Haar sampling, rbg key", dtype, t, "scipy Rotation.random.as_matrix", peer_haar)
    # IGSO(3) sampling
    ks = {}
    for eps in (0.1, 1.0):
        samp = jax.jit(lambda k, eps=eps: igso3.sample(k, eps, (n,)))
        t = _best(lambda samp=samp: samp(jax.random.PRNGKey(1)).block_until_ready())
        tp = _best(lambda eps=eps: numpy_igso3_sampler(np.random.default_rng(2), eps, n))
        add(f"IGSO(3) sample, eps={eps}", "float32", t, "NumPy inverse-CDF + scipy from_rotvec", tp)
        add(
            f"floor: 3n uniforms + fresh write, eps={eps}",
            "float32",
            t_words + t_fill,
            "NumPy inverse-CDF + scipy from_rotvec",
            tp,
        )
        t = _best(lambda samp=samp: samp(jax.random.key(1, impl="rbg")).block_until_ready())
        add(f"IGSO(3) sample, eps={eps}, rbg key", "float32", t, "NumPy inverse-CDF + scipy from_rotvec", tp)
        w = np.asarray(so3.angle(samp(jax.random.PRNGKey(5))[:20000]), np.float64)
        ks[eps] = stats.kstest(w, lambda x, eps=eps: igso3.cdf_reference(x, eps)).pvalue
    ctx.extra["note"] = (
        "ratio = peer time / our time (> 1: ours faster); float32 is jaxkit's default, SciPy works in float64. "
        f"KS p-values of our IGSO(3) samples (20k) vs the closed-form CDF: eps=0.1 {ks[0.1]:.2f}, eps=1 {ks[1.0]:.2f}. "
        "The two 'floor' rows bound what any implementation producing the same output can reach on this machine: "
        "writing a fresh (n, 3, 3) float32 array (new-buffer page faults dominate on CPU) bounds exp, and drawing "
        "the 3n random words with JAX's default threefry PRNG bounds Haar and IGSO(3) sampling (three uniforms "
        "per rotation: Shoemake's quaternion for Haar; inverse-CDF angle + Archimedes axis for IGSO(3)). "
        "'rbg key' rows pass a jax.random.key(..., impl='rbg') key (XLA's RngBitGenerator), a documented JAX "
        "option. XLA spreads each fused loop over the CPU cores; SciPy and NumPy run on one. Against the issue's "
        "goal (>= 10x on 1e6 rotations): see the table; where ours sits near a floor whose own ratio is < 10, the "
        "goal is out of reach on this CPU. No accelerator was available to measure the GPU case "
        "(kernels/gpu_check.sh runs this bench too when one is)."
    )
    return rows


register_bench(
    Bench(
        name="se3",
        description="SO(3) exp/log/compose/quaternion/Haar and IGSO(3) sampling on 1e6 "
        "rotations: jaxkit (jit) vs scipy Rotation and a NumPy inverse-CDF sampler",
        run=run,
    )
)
