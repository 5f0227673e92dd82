"""Reading complexes and cutting binding pockets.

Ligands are read with RDKit (SDF/MOL), proteins with biotite (PDB). The pocket is every protein residue with at
least one heavy atom within ``cutoff`` Å of a reference-ligand heavy atom (SigmaDock/PoseBusters convention,
default 10 Å); waters are dropped, other hetero groups (cofactors) are kept as part of the pocket.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rdkit import Chem

ORGANIC_ELEMENTS = frozenset({"H", "C", "N", "O", "S", "P", "F", "Cl", "Br", "I", "B"})


class StructureError(ValueError):
    """A structure file cannot be parsed or holds something the docking pipeline does not support."""


def load_ligand(path: str | Path, *, allow_elements: frozenset[str] = ORGANIC_ELEMENTS) -> Chem.Mol:
    """First molecule of an SDF/MOL file, hydrogens kept, with a 3D conformer.

    Raises :class:`StructureError` naming the file if it cannot be parsed, has no 3D coordinates, or contains an
    element outside ``allow_elements`` (metals and other unsupported elements).
    """
    path = Path(path)
    if not path.exists():
        raise StructureError(f"ligand file {path} does not exist")
    if path.suffix.lower() in (".sdf", ".sd"):
        supplier = Chem.SDMolSupplier(str(path), removeHs=False)
        mol = next(iter(supplier), None)
    elif path.suffix.lower() == ".mol":
        mol = Chem.MolFromMolFile(str(path), removeHs=False)
    else:
        raise StructureError(f"ligand file {path}: expected .sdf or .mol, received {path.suffix!r}")
    if mol is None:
        raise StructureError(f"ligand file {path} could not be parsed by RDKit")
    if mol.GetNumConformers() == 0 or not mol.GetConformer().Is3D():
        raise StructureError(f"ligand file {path} has no 3D conformer")
    bad = sorted({a.GetSymbol() for a in mol.GetAtoms()} - set(allow_elements))
    if bad:
        raise StructureError(f"ligand file {path} contains unsupported elements {bad} (allowed: {sorted(allow_elements)})")
    return mol


def load_protein(path: str | Path):
    """Protein (and cofactors) of a PDB file as a biotite ``AtomArray`` (first model, waters and H removed)."""
    import biotite.structure as struc
    import biotite.structure.io.pdb as pdb

    path = Path(path)
    if not path.exists():
        raise StructureError(f"protein file {path} does not exist")
    try:
        atoms = pdb.PDBFile.read(str(path)).get_structure(model=1)
    except Exception as e:  # biotite raises several exception types on malformed files
        raise StructureError(f"protein file {path} could not be parsed: {e}") from e
    if atoms.array_length() == 0:
        raise StructureError(f"protein file {path} holds no atoms")
    atoms = atoms[~struc.filter_solvent(atoms)]
    atoms = atoms[atoms.element != "H"]
    return atoms


@dataclass(frozen=True)
class Pocket:
    """Pocket atoms around a reference ligand.

    Attributes:
        positions: ``(n, 3)`` float64 coordinates (Å).
        elements: ``(n,)`` element symbols.
        residue_ids: ``(n,)`` residue numbers; ``chain_ids``/``residue_names``/``atom_names`` likewise.
        centre: ``(3,)`` centroid of the reference ligand's heavy atoms (the diffusion origin).
    """

    positions: np.ndarray
    elements: np.ndarray
    residue_ids: np.ndarray
    chain_ids: np.ndarray
    residue_names: np.ndarray
    atom_names: np.ndarray
    centre: np.ndarray

    @property
    def n_atoms(self) -> int:
        return int(self.positions.shape[0])


def extract_pocket(protein, ligand_positions: np.ndarray, *, cutoff: float = 10.0) -> Pocket:
    """Residues with any heavy atom within ``cutoff`` Å of any ligand heavy atom (whole residues are kept)."""
    lig = np.asarray(ligand_positions, dtype=np.float64)
    if lig.ndim != 2 or lig.shape[1] != 3 or lig.shape[0] == 0:
        raise ValueError(f"ligand_positions: expected shape (n>0, 3), received {lig.shape}")
    if not cutoff > 0:
        raise ValueError(f"cutoff: expected a value > 0 Å, received {cutoff}")
    coords = np.asarray(protein.coord, dtype=np.float64)
    d2 = ((coords[:, None, :] - lig[None, :, :]) ** 2).sum(-1).min(1)
    near = d2 <= cutoff**2
    keys = np.char.add(np.asarray(protein.chain_id).astype(str), np.asarray(protein.res_id).astype(str))
    chosen = np.isin(keys, np.unique(keys[near]))
    if not chosen.any():
        raise StructureError(
            f"no protein atom within {cutoff} Å of the ligand (nearest is {np.sqrt(d2.min()):.1f} Å): the ligand "
            "is far from the pocket"
        )
    sub = protein[chosen]
    return Pocket(
        positions=np.asarray(sub.coord, dtype=np.float64),
        elements=np.asarray(sub.element).astype(str),
        residue_ids=np.asarray(sub.res_id),
        chain_ids=np.asarray(sub.chain_id).astype(str),
        residue_names=np.asarray(sub.res_name).astype(str),
        atom_names=np.asarray(sub.atom_name).astype(str),
        centre=lig.mean(0),
    )
