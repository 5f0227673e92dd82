"""SE(3)^N diffusion docking: noising fragment poses, the denoising score-matching loss, training and sampling.

Coordinates are centred on the pocket centre and divided by ``length_scale`` = 2.7 Å (SigmaDock). Fragment
``f`` has a fixed local geometry ``x_local`` (centred on its centroid) and a pose ``(R_f, T_f)``:
``x = R_f x_local + T_f``. The forward process acts on every fragment independently:

- translations: VP SDE, ``T_t = α(t) T_0 + σ(t) ε`` (``β`` linear from 0.1 to 20);
- rotations: VE on SO(3), ``R_t = exp(v) R_0`` with ``v ~ IGSO(3)(ε(t))``, ``ε(t)`` logarithmic from 0.1 to 1.5
  (world-frame perturbation about the fragment centroid).

The model (an :class:`~jaxkit.docking._score_model.EGNNScoreModel` over ligand + pocket atoms) predicts per
fragment ``ε̂_T ≈ ε`` (translation score ``−ε̂_T/σ``) and ``ŝ_R ≈ s_R/‖s‖`` (rotation score normalised by
``igso3.score_norm``), trained with ``‖ε̂_T − ε‖² + ‖ŝ_R − s_R/‖s‖‖²`` (DiffDock/SigmaDock normalisation).
Sampling integrates the reverse process on an EDM time grid (ρ = 3): ancestral DDIM steps (η = 1, the exponential
integrator of the VP SDE) for translations, and the geodesic random walk ``R ← exp(g² s Δt + g √Δt z) R``
(Euler–Maruyama on SO(3)) for rotations; many samples per complex run in one vmapped call.

A ligand without torsional bonds is a single fragment and is docked as one rigid body by the same code (the
CCD training set skips such ligands since they teach no reassembly). Complexes that do not fit the padding raise
``ValueError`` naming the complex.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, PRNGKeyArray

from jaxkit import diffusion as dm
from jaxkit.diffusion import igso3
from jaxkit.geometry import so3

from ._datasets import DockingExample
from ._featurize import build_complex_graph
from ._fragments import fragment_frames, local_coordinates
from ._score_model import EGNNScoreModel, fragment_scores

LENGTH_SCALE = 2.7


@dataclass(frozen=True)
class DockingProcess:
    """Schedules of the SE(3)^N forward process (SigmaDock defaults)."""

    translation: dm.VPSchedule = dm.VPSchedule(beta_min=0.1, beta_max=20.0)
    rotation: dm.VESchedule = dm.VESchedule(sigma_min=0.1, sigma_max=1.5)
    t_min: float = 1e-3


def complex_arrays(
    ex: DockingExample, *, lig_max: int, poc_max: int, f_max: int, d_max: int | None = None
) -> dict[str, np.ndarray]:
    """Padded, pocket-centred, scaled arrays of one complex (stackable across complexes)."""
    frag = ex.frag
    x = ex.reference_positions
    if frag.n_atoms > lig_max or ex.pocket.n_atoms > poc_max or frag.n_fragments > f_max:
        raise ValueError(
            f"complex {ex.id}: {frag.n_atoms} ligand atoms / {ex.pocket.n_atoms} pocket atoms / "
            f"{frag.n_fragments} fragments exceed the padding ({lig_max}, {poc_max}, {f_max})"
        )
    g = build_complex_graph(frag, x, ex.pocket, n_max=lig_max + poc_max, f_max=f_max, ligand_slots=lig_max)
    centre = ex.pocket.centre
    rots, trans = fragment_frames(frag, x)
    local, local_dummies = local_coordinates(frag, x)
    d_max = 2 * (f_max - 1) if d_max is None else d_max
    n_d = len(frag.dummies)
    if n_d > d_max:
        raise ValueError(f"complex {ex.id}: {n_d} dummy atoms exceed d_max={d_max}")
    dummy_local = np.zeros((d_max, 3))
    dummy_fragment = np.zeros(d_max, np.int32)
    dummy_partner = np.zeros(d_max, np.int32)
    dummy_mask = np.zeros(d_max, np.float32)
    if n_d:
        dummy_local[:n_d] = local_dummies / LENGTH_SCALE
        dummy_fragment[:n_d] = frag.dummies[:, 0]
        dummy_partner[:n_d] = frag.dummies[:, 2]
        dummy_mask[:n_d] = 1.0
    R0 = np.tile(np.eye(3), (f_max, 1, 1))
    T0 = np.zeros((f_max, 3))
    R0[: frag.n_fragments] = rots
    T0[: frag.n_fragments] = (trans - centre) / LENGTH_SCALE
    loc = np.zeros((lig_max, 3))
    loc[: frag.n_atoms] = local / LENGTH_SCALE
    pocket = np.zeros((poc_max, 3))
    pocket[: ex.pocket.n_atoms] = (ex.pocket.positions - centre) / LENGTH_SCALE
    return {
        "local": loc.astype(np.float32),
        "fragment": g.fragment[:lig_max].astype(np.int32),
        "R0": R0.astype(np.float32),
        "T0": T0.astype(np.float32),
        "pocket": pocket.astype(np.float32),
        "node_features": g.node_features,
        "pair_features": g.pair_features,
        "node_mask": g.node_mask,
        "fragment_mask": g.fragment_mask,
        "centre": centre.astype(np.float32),
        "dummy_local": dummy_local.astype(np.float32),
        "dummy_fragment": dummy_fragment,
        "dummy_partner": dummy_partner,
        "dummy_mask": dummy_mask,
    }


def stack_complexes(examples: list[DockingExample], *, lig_max: int, poc_max: int, f_max: int) -> dict:
    """Stack :func:`complex_arrays` of several complexes along a new leading axis.

    Raises ``ValueError`` naming the complex that does not fit the padding.
    """
    arrs = [complex_arrays(e, lig_max=lig_max, poc_max=poc_max, f_max=f_max) for e in examples]
    return {k: np.stack([a[k] for a in arrs]) for k in arrs[0]}


def ligand_positions(arrs: dict, R: Float[Array, "f 3 3"], T: Float[Array, "f 3"]) -> Float[Array, "l 3"]:
    """Scaled ligand atom positions of the pose ``(R, T)`` (padding atoms sit at the origin of fragment 0)."""
    fr = jnp.maximum(arrs["fragment"], 0)
    return jnp.einsum("nij,nj->ni", R[fr], arrs["local"]) + T[fr]


def to_angstrom(arrs: dict, x_scaled: Float[Array, "n 3"]) -> Float[Array, "n 3"]:
    return x_scaled * LENGTH_SCALE + arrs["centre"]


class DockingScoreModel(eqx.Module):
    """Per-fragment (translation ε̂, normalised rotation score) from an EGNN over the posed complex.

    The translation output is preconditioned (EDM-style skip): ``ε̂ = σ T/(α² s_d² + σ²) + EGNN``, the
    posterior-mean ε for zero-mean Gaussian fragment centres of spread ``s_d`` (1 scaled unit = 2.7 Å), so the
    network only learns the residual; without it, the high-noise steps amplify ε̂ errors by ``α_{t'}/α_t``.
    """

    egnn: EGNNScoreModel
    process: DockingProcess = eqx.field(static=True)
    data_spread: float = eqx.field(static=True)

    def __init__(self, width: int = 32, depth: int = 3, *, key: PRNGKeyArray, data_spread: float = 1.0):
        self.egnn = EGNNScoreModel(width=width, depth=depth, radius=6.0 / LENGTH_SCALE, key=key)
        self.process = DockingProcess()
        self.data_spread = data_spread

    def __call__(self, arrs: dict, R: Float[Array, "f 3 3"], T: Float[Array, "f 3"], t: Float[Array, ""]):
        lig = ligand_positions(arrs, R, T)
        pos = jnp.concatenate([lig, arrs["pocket"]], 0)
        forces = self.egnn.forces(pos, arrs["node_features"], arrs["pair_features"], arrs["node_mask"], t)
        f_max = arrs["R0"].shape[0]
        n_lig = arrs["local"].shape[0]
        fr = jnp.where(arrs["node_mask"][:n_lig] > 0, arrs["fragment"], -1)
        tr, rot = fragment_scores(forces[:n_lig], lig, fr, f_max)
        a, sg = self.process.translation.alpha(t), self.process.translation.sigma(t)
        skip = sg * T / (a**2 * self.data_spread**2 + sg**2)
        return skip + tr, rot


def noise_poses(key: PRNGKeyArray, arrs: dict, t: Float[Array, ""], process: DockingProcess = DockingProcess()):
    """Sample ``(R_t, T_t)`` from the forward marginal and the regression targets (ε, normalised rot. score)."""
    k1, k2 = jax.random.split(key)
    f_max = arrs["R0"].shape[0]
    eps_tr = jax.random.normal(k1, (f_max, 3))
    Tt = process.translation.alpha(t) * arrs["T0"] + process.translation.sigma(t) * eps_tr
    e = process.rotation.sigma(t)
    v = igso3.sample_vector(k2, e, (f_max,))
    Rt = jnp.einsum("fij,fjk->fik", so3.exp(v), arrs["R0"])
    rot_target = igso3.score_vector(v, e) / igso3.score_norm(e)
    return Rt, Tt, eps_tr, rot_target


def dsm_loss(model: Callable, arrs: dict, key: PRNGKeyArray, process: DockingProcess = DockingProcess()):
    """Denoising score-matching loss of one complex at a uniform random time (``model``: a score function with
    the :class:`DockingScoreModel` signature)."""
    kt, kn = jax.random.split(key)
    t = jax.random.uniform(kt, (), minval=process.t_min, maxval=1.0)
    Rt, Tt, eps_tr, rot_target = noise_poses(kn, arrs, t, process)
    tr, rot = model(arrs, Rt, Tt, t)
    m = arrs["fragment_mask"][:, None]
    n = jnp.maximum(arrs["fragment_mask"].sum(), 1.0)
    return (jnp.sum(m * (tr - eps_tr) ** 2) + jnp.sum(m * (rot - rot_target) ** 2)) / (3.0 * n)


def exact_score_fn(process: DockingProcess = DockingProcess()):
    """Score of the forward marginal when the data distribution is a point mass at the reference pose.

    Same signature and output convention as :class:`DockingScoreModel` (``ε̂`` and normalised rotation score),
    so ``sample_poses(exact_score_fn(), arrs, key)`` must return the reference pose (a sampler check).
    """

    def score(arrs: dict, R, T, t):
        tr = (T - process.translation.alpha(t) * arrs["T0"]) / process.translation.sigma(t)
        e = process.rotation.sigma(t)
        v = so3.log(jnp.einsum("fij,fkj->fik", R, arrs["R0"]))
        return tr, igso3.score_vector(v, e) / igso3.score_norm(e)

    return score


def sample_poses(
    score_fn,
    arrs: dict,
    key: PRNGKeyArray,
    *,
    n_steps: int = 30,
    rho: float = 3.0,
    process: DockingProcess = DockingProcess(),
    box: float = 12.0,
):
    """One reverse-SDE sample of all fragment poses ``(R, T)`` (scaled coordinates); vmap over keys for many.

    ``score_fn(arrs, R, T, t) -> (ε̂_T, normalised rotation score)``: a :class:`DockingScoreModel` or
    :func:`exact_score_fn`. Starts from the priors ``T ~ N(0, I)``, ``R ~ Haar``. The denoised fragment centres
    ``T̂_0`` are clipped to a ball of ``box`` Å around the pocket centre (the x0-clipping of Ho et al. 2020: the
    data lie in the pocket).
    """
    f_max = arrs["R0"].shape[0]
    ts = dm.time_grid(n_steps, process.t_min, 1.0, kind="edm", rho=rho)  # descending 1 -> t_min
    noisy = (jnp.arange(n_steps) < n_steps - 1).astype(ts.dtype)      # no noise on the final step
    k0, k1, kloop = jax.random.split(key, 3)
    T = jax.random.normal(k0, (f_max, 3))
    R = so3.random_uniform(k1, (f_max,))

    def step(carry, inp):
        R, T = carry
        t, t_next, k, gate = inp
        dt = t - t_next
        ka, kb = jax.random.split(k)
        tr, rot = score_fn(arrs, R, T, t)
        # translations: ancestral DDIM (eta = 1) step of the VP process, an exponential integrator that is
        # stable for the large early steps of the EDM grid (plain Euler-Maruyama on the VP SDE is not)
        a, sg = process.translation.alpha(t), process.translation.sigma(t)
        a_n, sg_n = process.translation.alpha(t_next), process.translation.sigma(t_next)
        T0_hat = (T - sg * tr) / a
        r = jnp.linalg.norm(T0_hat, axis=-1, keepdims=True)
        T0_hat = T0_hat * jnp.minimum(1.0, (box / LENGTH_SCALE) / jnp.maximum(r, 1e-9))
        c = gate * (sg_n / sg) * jnp.sqrt(jnp.clip(1.0 - (a / a_n) ** 2, 0.0, 1.0))
        T = a_n * T0_hat + jnp.sqrt(jnp.clip(sg_n**2 - c**2, 0.0)) * tr + c * jax.random.normal(ka, T.shape)
        e = process.rotation.sigma(t)
        s_rot = rot * igso3.score_norm(e)
        g_rot = process.rotation.diffusion(t)
        z = jax.random.normal(kb, (f_max, 3))
        step_vec = g_rot**2 * s_rot * dt + g_rot * jnp.sqrt(dt) * z * gate
        R = jnp.einsum("fij,fjk->fik", so3.exp(step_vec), R)
        return (R, T), None

    keys = jax.random.split(kloop, n_steps)
    (R, T), _ = jax.lax.scan(step, (R, T), (ts[:-1], ts[1:], keys, noisy))
    return R, T



def bond_gap(arrs: dict, R: Float[Array, "f 3 3"], T: Float[Array, "f 3"]) -> Float[Array, ""]:
    """RMS distance (Å) between each dummy atom and the partner anchor it stands for: 0 for a connected pose."""
    lig = ligand_positions(arrs, R, T)
    dpos = jnp.einsum("dij,dj->di", R[arrs["dummy_fragment"]], arrs["dummy_local"]) + T[arrs["dummy_fragment"]]
    gap2 = jnp.sum((dpos - lig[arrs["dummy_partner"]]) ** 2, -1) * arrs["dummy_mask"]
    return jnp.sqrt(jnp.sum(gap2) / jnp.maximum(arrs["dummy_mask"].sum(), 1.0)) * LENGTH_SCALE


def rank_score(arrs: dict, R: Float[Array, "f 3 3"], T: Float[Array, "f 3"], gap_weight: float = 10.0):
    """Ranking score of a sampled pose (lower is better): pocket contact score + ``gap_weight`` × bond gap (Å)."""
    from ._baselines import contact_score

    n_lig = arrs["local"].shape[0]
    lig = to_angstrom(arrs, ligand_positions(arrs, R, T))
    poc = to_angstrom(arrs, arrs["pocket"])
    lm = arrs["node_mask"][:n_lig]
    pm = arrs["node_mask"][n_lig:]
    # padding atoms are pushed far away so they do not contribute
    lig = jnp.where(lm[:, None] > 0, lig, 1e4)
    poc = jnp.where(pm[:, None] > 0, poc, -1e4)
    return contact_score(lig, poc) + gap_weight * bond_gap(arrs, R, T)


def pose_rmsd(arrs: dict, R: Float[Array, "f 3 3"], T: Float[Array, "f 3"]) -> Float[Array, ""]:
    """Plain (atom-order) heavy-atom RMSD in Å to the reference pose; use ``evaluate.symmetric_rmsd`` on the
    written molecule for the symmetry-aware number."""
    n_lig = arrs["local"].shape[0]
    m = arrs["node_mask"][:n_lig]
    x = ligand_positions(arrs, R, T)
    ref = ligand_positions(arrs, jnp.asarray(arrs["R0"]), jnp.asarray(arrs["T0"]))
    return jnp.sqrt(jnp.sum(jnp.sum((x - ref) ** 2, -1) * m) / m.sum()) * LENGTH_SCALE


def batch_loss(model: Callable, batch: dict, key: PRNGKeyArray, process: DockingProcess = DockingProcess()):
    """Mean :func:`dsm_loss` over a stacked batch of complexes (one key per complex)."""
    b = batch["R0"].shape[0]
    keys = jax.random.split(key, b)
    return jnp.mean(jax.vmap(lambda a, k: dsm_loss(model, a, k, process))(batch, keys))


def dock_complex(score_fn, arrs: dict, key: PRNGKeyArray, *, n_samples: int, n_steps: int = 30):
    """``n_samples`` poses of one complex in one vmapped call, with rank scores; returns (R, T, scores)."""
    keys = jax.random.split(key, n_samples)
    R, T = jax.vmap(lambda k: sample_poses(score_fn, arrs, k, n_steps=n_steps))(keys)
    scores = jax.vmap(lambda r, t: rank_score(arrs, r, t))(R, T)
    return R, T, scores
