"""Docking baselines run through the same evaluation as the model.

- ``contact_score``: a simple pocket-complementarity score (lower is better) — clash penalty
  ``10·max(0, 3.2 − d)²`` plus a Gaussian attraction ``−exp(−(d − 4)²/2)`` over ligand–pocket pairs.
- ``random_placement``: one ETKDG conformer rigidly placed at random orientations near the pocket center, best of
  ``k`` by ``contact_score``.
- ``vina_dock``: AutoDock Vina (the ``vina`` package) with the ligand prepared by ``meeko`` and the receptor
  (standard amino acids only; cofactors and other hetero groups are dropped because meeko would fetch their
  templates online; residues meeko cannot build, e.g. distorted side chains, are deleted) by meeko's
  ``mk_prepare_receptor.py``; a cubic box around the pocket center.
- ``vina_pose_energy``: Vina's energy of a given pose (as placed, and after Vina's local optimization) in the same
  receptor and box: with the crystal pose it tells a search failure (Vina's docked pose scores worse than the
  crystal pose) from a scoring failure (it scores better, yet lies elsewhere).
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float
from rdkit import Chem
from rdkit.Chem import AllChem

from .._validate import check_finite, check_int, check_nonempty, check_size
from ._fragments import conformer_positions


def contact_score(ligand: Float[ArrayLike, "n 3"], pocket: Float[ArrayLike, "m 3"]) -> Float[Array, ""]:
    """Clash + attraction score of ligand positions ``(n, 3)`` against pocket atoms ``(m, 3)``; lower is better."""
    for name, x in (("ligand", ligand), ("pocket", pocket)):
        if jnp.ndim(x) != 2 or jnp.shape(x)[-1] != 3:
            raise ValueError(f"{name}: expected positions of shape (n, 3), received shape {jnp.shape(x)}")
        check_finite(name, x)
        check_nonempty(name, x)
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
    mol: Chem.Mol, pocket_positions: np.ndarray, center: np.ndarray, *, k: int, seed: int, spread: float = 1.0
) -> tuple[np.ndarray, float]:
    """Best of ``k`` random rigid placements of one ETKDG conformer (heavy atoms) by :func:`contact_score`.

    Returns (positions ``(n_heavy, 3)``, score).
    """
    check_int("k", k, minimum=1)
    check_int("seed", seed, minimum=0)
    pocket_positions = np.asarray(pocket_positions, dtype=np.float64)
    if pocket_positions.ndim != 2 or pocket_positions.shape[1] != 3 or pocket_positions.shape[0] == 0:
        raise ValueError(
            f"pocket_positions: expected shape (n_pocket > 0, 3) (Å), received {pocket_positions.shape}"
        )
    check_finite("pocket_positions", pocket_positions)
    center = np.asarray(center, dtype=np.float64)
    if center.shape != (3,):
        raise ValueError(f"center: expected shape (3,) (Å), received {center.shape}")
    check_finite("center", center)
    if not (np.isfinite(spread) and spread >= 0):
        raise ValueError(f"spread: expected a finite value >= 0 Å, received {spread!r}")
    heavy = Chem.RemoveHs(mol)
    # the k poses and their pairwise distances to the pocket (float32)
    check_size("k", 4.0 * k * heavy.GetNumAtoms() * (len(pocket_positions) + 3))
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
    shifts = jnp.asarray(center) + spread * jax.random.normal(k2, (k, 3))
    poses = jnp.einsum("kij,nj->kni", rots, jnp.asarray(x)) + shifts[:, None, :]
    scores = jax.vmap(contact_score, in_axes=(0, None))(poses, jnp.asarray(pocket_positions))
    best = int(jnp.argmin(scores))
    return np.asarray(poses[best], dtype=np.float64), float(scores[best])


def _check_box(center: np.ndarray, box_size: float) -> np.ndarray:
    """``center`` as 3 finite coordinates (Å) after checking it and the box edge ``box_size`` (finite, > 0): Vina's
    own messages name neither (a NaN edge reads "box dimensions are required to be positive")."""
    c = np.asarray(center, dtype=np.float64)
    if c.shape != (3,):
        raise ValueError(f"center: expected shape (3,) (Å), received {c.shape}")
    check_finite("center", c)
    if isinstance(box_size, bool) or not isinstance(box_size, int | float | np.number):
        raise TypeError(f"box_size: expected a number of Å, received {type(box_size).__name__}")
    if not (np.isfinite(box_size) and box_size > 0):
        raise ValueError(f"box_size: expected a finite value > 0 Å, received {box_size!r}")
    return c


def vina_dock(
    protein_pdb: str | Path,
    mol: Chem.Mol,
    center: np.ndarray,
    *,
    box_size: float = 22.0,
    exhaustiveness: int = 8,
    seed: int = 0,
    workdir: str | Path | None = None,
    scoring: str = "vina",
) -> tuple[Chem.Mol, float]:
    """Dock ``mol`` (an ETKDG conformer is generated, so the input pose is not used) with AutoDock Vina and its
    ``scoring`` function (``"vina"`` or ``"vinardo"``) in a cubic box of edge ``box_size`` Å at ``center``.

    Returns (top-ranked pose as an RDKit molecule with hydrogens removed, Vina score in kcal/mol).
    """
    from meeko import MoleculePreparation, PDBQTMolecule, PDBQTWriterLegacy, RDKitMolCreate
    from vina import Vina

    from ._rank import prepare_receptor, workspace

    if scoring not in ("vina", "vinardo"):
        raise ValueError(f"scoring: expected 'vina' or 'vinardo', received {scoring!r}")
    center = _check_box(center, box_size)
    check_int("exhaustiveness", exhaustiveness, minimum=1)
    check_int("seed", seed, minimum=0)
    lig = Chem.AddHs(Chem.RemoveHs(mol))
    params = AllChem.ETKDGv3()
    params.randomSeed = int(seed)
    if AllChem.EmbedMolecule(lig, params) != 0:
        raise ValueError(f"ETKDG failed to embed {Chem.MolToSmiles(Chem.RemoveHs(mol))}")
    setup = MoleculePreparation().prepare(lig)[0]
    pdbqt, ok, err = PDBQTWriterLegacy.write_string(setup)
    if not ok:
        raise RuntimeError(f"meeko could not write the ligand PDBQT: {err}")
    v = Vina(sf_name=scoring, verbosity=0, cpu=1, seed=int(seed))
    with workspace(workdir, "jaxkit_vina_") as work:  # a temporary folder is removed once Vina has read it
        v.set_receptor(str(prepare_receptor(protein_pdb, work)))
    v.set_ligand_from_string(pdbqt)
    v.compute_vina_maps(center=[float(c) for c in center], box_size=[box_size] * 3)
    v.dock(exhaustiveness=int(exhaustiveness), n_poses=1)
    energy = float(v.energies(n_poses=1)[0][0])
    pose = RDKitMolCreate.from_pdbqt_mol(PDBQTMolecule(v.poses(n_poses=1), skip_typing=True))[0]
    return Chem.RemoveHs(pose), energy


def vina_pose_energy(
    protein_pdb: str | Path,
    mol: Chem.Mol,
    center: np.ndarray,
    *,
    box_size: float = 22.0,
    workdir: str | Path | None = None,
    scoring: str = "vina",
    receptor: str | Path | None = None,
) -> tuple[float, float]:
    """Vina's energy (kcal/mol) of ``mol``'s pose (hydrogens added at their positions) with the receptor prepared
    as in :func:`vina_dock` (or the receptor PDBQT ``receptor`` already prepared so): ``(as placed, after Vina's
    local optimization)``."""
    from meeko import MoleculePreparation, PDBQTWriterLegacy
    from vina import Vina

    from ._rank import prepare_receptor, workspace

    if scoring not in ("vina", "vinardo"):
        raise ValueError(f"scoring: expected 'vina' or 'vinardo', received {scoring!r}")
    if mol.GetNumConformers() == 0:
        raise ValueError("mol: expected a molecule with a pose (a conformer), received none")
    center = _check_box(center, box_size)
    x = mol.GetConformer().GetPositions()
    outside = np.abs(x - center).max() if len(x) else 0.0
    if not outside < box_size / 2:  # Vina's RuntimeError "The ligand is outside the grid box" names neither
        raise ValueError(
            f"center/box_size: expected the pose of mol inside the box of edge {box_size} Å at center "
            f"{center.tolist()}, received an atom {outside:.1f} Å from the center along an axis"
        )
    lig = Chem.AddHs(Chem.RemoveHs(mol), addCoords=True)
    pdbqt, ok, err = PDBQTWriterLegacy.write_string(MoleculePreparation().prepare(lig)[0])
    if not ok:
        raise RuntimeError(f"meeko could not write the ligand PDBQT: {err}")
    v = Vina(sf_name=scoring, verbosity=0, cpu=1)
    if receptor is not None:
        v.set_receptor(str(receptor))
    else:
        with workspace(
            workdir, "jaxkit_vina_"
        ) as work:  # a temporary folder is removed once Vina has read it
            v.set_receptor(str(prepare_receptor(protein_pdb, work)))
    v.set_ligand_from_string(pdbqt)
    v.compute_vina_maps(center=[float(c) for c in center], box_size=[box_size] * 3)
    return float(v.score()[0]), float(v.optimize()[0])
