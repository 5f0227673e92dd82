"""Pose evaluation: symmetry-aware RMSD, success rates, PoseBusters validity, and the random-placement baseline.

- ``symmetric_rmsd``: in-place heavy-atom RMSD over the ligand's graph automorphisms (``rdMolAlign.CalcRMS``).
- ``posebusters_valid``: all checks of the ``posebusters`` "redock" configuration (``mol_cond`` = protein) pass.
- ``success_rate``: fraction with RMSD < threshold (optionally also PB-valid), SigmaDock's headline metric.
- ``contact_score``: a simple pocket-complementarity score (lower is better) — clash penalty
  ``10·max(0, 3.2 − d)²`` plus a Gaussian attraction ``−exp(−(d − 4)²/2)`` over ligand–pocket pairs.
- ``random_placement``: ETKDG conformers rigidly placed at random orientations near the pocket centre, best of
  ``k`` by ``contact_score`` (the baseline the docking issue asks for).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float
from rdkit import Chem
from rdkit.Chem import AllChem, rdMolAlign
from rdkit.Geometry import Point3D

from .fragments import conformer_positions


def with_positions(mol: Chem.Mol, positions: np.ndarray) -> Chem.Mol:
    """Copy of ``mol`` with a single conformer at ``positions`` ``(n_atoms, 3)``."""
    positions = np.asarray(positions, dtype=np.float64)
    if positions.shape != (mol.GetNumAtoms(), 3):
        raise ValueError(f"positions: expected shape ({mol.GetNumAtoms()}, 3), received {positions.shape}")
    out = Chem.Mol(mol)
    out.RemoveAllConformers()
    conf = Chem.Conformer(mol.GetNumAtoms())
    for i, p in enumerate(positions):
        conf.SetAtomPosition(i, Point3D(*map(float, p)))
    conf.Set3D(True)
    out.AddConformer(conf, assignId=True)
    return out


def symmetric_rmsd(pred: Chem.Mol, ref: Chem.Mol) -> float:
    """Heavy-atom RMSD between two poses of the same ligand, minimised over graph symmetries, no alignment."""
    return float(rdMolAlign.CalcRMS(Chem.RemoveHs(pred), Chem.RemoveHs(ref)))


def success_rate(rmsds, threshold: float = 2.0, valid=None) -> float:
    """Fraction of poses with RMSD < ``threshold`` (and PB-valid where ``valid`` is given)."""
    r = np.asarray(rmsds, dtype=np.float64)
    ok = r < threshold
    if valid is not None:
        ok &= np.asarray(valid, dtype=bool)
    return float(ok.mean()) if len(ok) else float("nan")


def posebusters_valid(pred: Chem.Mol, ref: Chem.Mol, protein_pdb) -> tuple[bool, dict]:
    """Run the PoseBusters "redock" checks; returns (all passed, {check: passed})."""
    from posebusters import PoseBusters

    pred_h = Chem.AddHs(pred, addCoords=True)
    df = PoseBusters(config="redock").bust(pred_h, ref, str(protein_pdb))
    row = df.iloc[0]
    checks = {str(k): bool(v) for k, v in row.items() if isinstance(v, bool | np.bool_)}
    return all(checks.values()), checks


def contact_score(ligand: Float[ArrayLike, "n 3"], pocket: Float[ArrayLike, "m 3"]) -> Float[Array, ""]:
    """Clash + attraction score of ligand positions ``(n, 3)`` against pocket atoms ``(m, 3)``; lower is better."""
    ligand, pocket = jnp.asarray(ligand), jnp.asarray(pocket)
    d = jnp.sqrt(jnp.sum((ligand[:, None, :] - pocket[None, :, :]) ** 2, -1) + 1e-12)
    return jnp.sum(10.0 * jnp.maximum(0.0, 3.2 - d) ** 2 - jnp.exp(-0.5 * (d - 4.0) ** 2))


def _random_rotations(key: jax.Array, k: int) -> jax.Array:
    q = jax.random.normal(key, (k, 4))
    q = q / jnp.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = q.T
    return jnp.stack(
        [
            jnp.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            jnp.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            jnp.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def random_placement(
    mol: Chem.Mol, pocket_positions: np.ndarray, centre: np.ndarray, *, k: int, seed: int, spread: float = 1.0
) -> tuple[np.ndarray, float]:
    """Best of ``k`` random rigid placements of one ETKDG conformer (heavy atoms) by :func:`contact_score`.

    Returns (positions ``(n_heavy, 3)``, score).
    """
    heavy = Chem.RemoveHs(mol)
    molh = Chem.AddHs(heavy)
    params = AllChem.ETKDGv3()
    params.randomSeed = int(seed)
    if AllChem.EmbedMolecule(molh, params) != 0:
        raise ValueError(f"ETKDG failed to embed {Chem.MolToSmiles(heavy)}")
    x = conformer_positions(Chem.RemoveHs(molh))
    x = x - x.mean(0)
    key = jax.random.key(seed)
    k1, k2 = jax.random.split(key)
    rots = _random_rotations(k1, k)
    shifts = jnp.asarray(centre) + spread * jax.random.normal(k2, (k, 3))
    poses = jnp.einsum("kij,nj->kni", rots, jnp.asarray(x)) + shifts[:, None, :]
    scores = jax.vmap(contact_score, in_axes=(0, None))(poses, jnp.asarray(pocket_positions))
    best = int(jnp.argmin(scores))
    return np.asarray(poses[best], dtype=np.float64), float(scores[best])
