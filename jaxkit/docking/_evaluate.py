"""Pose evaluation: symmetry-aware RMSD, success rates, PoseBusters validity.

- ``symmetric_rmsd``: in-place heavy-atom RMSD over the ligand's graph automorphisms (``rdMolAlign.CalcRMS``).
- ``posebusters_valid``: all checks of the ``posebusters`` "dock" configuration (molecule + protein) pass; the
  RMSD to the reference is reported separately (the "redock" configuration would fold it into validity).
- ``success_rate``: fraction with RMSD < threshold (optionally also PB-valid), SigmaDock's headline metric.
"""

from __future__ import annotations

import numpy as np
from rdkit import Chem
from rdkit.Chem import rdMolAlign
from rdkit.Geometry import Point3D

from .._validate import as_float64_numpy, check_finite, check_nonempty, check_positive


def with_positions(mol: Chem.Mol, positions: np.ndarray) -> Chem.Mol:
    """Copy of ``mol`` with a single conformer at ``positions`` ``(n_atoms, 3)``."""
    positions = np.asarray(positions, dtype=np.float64)
    if positions.shape != (mol.GetNumAtoms(), 3):
        raise ValueError(f"positions: expected shape ({mol.GetNumAtoms()}, 3), received {positions.shape}")
    check_finite("positions", positions)
    out = Chem.Mol(mol)
    out.RemoveAllConformers()
    conf = Chem.Conformer(mol.GetNumAtoms())
    for i, p in enumerate(positions):
        conf.SetAtomPosition(i, Point3D(*map(float, p)))
    conf.Set3D(True)
    out.AddConformer(conf, assignId=True)
    return out


def symmetric_rmsd(pred: Chem.Mol, ref: Chem.Mol) -> float:
    """Heavy-atom RMSD between two poses of the same ligand, minimized over graph symmetries, no alignment."""
    p, r = Chem.RemoveAllHs(pred), Chem.RemoveAllHs(ref)
    if (p.GetNumAtoms(), p.GetNumBonds()) != (r.GetNumAtoms(), r.GetNumBonds()):
        # CalcRMS would match the smaller molecule as a substructure of the larger one and return a number
        raise ValueError(
            f"pred, ref: expected two poses of the same ligand, received {p.GetNumAtoms()} vs {r.GetNumAtoms()} "
            f"heavy atoms ({Chem.MolToSmiles(p)!r} and {Chem.MolToSmiles(r)!r})"
        )
    try:
        return float(rdMolAlign.CalcRMS(p, r))
    except RuntimeError as e:  # RDKit: "No sub-structure match found between the reference and probe mol"
        raise ValueError(
            f"pred, ref: expected two poses of the same ligand, received {Chem.MolToSmiles(pred)!r} "
            f"and {Chem.MolToSmiles(ref)!r} ({e})"
        ) from None


def success_rate(rmsds, threshold: float = 2.0, valid=None) -> float:
    """Fraction of poses with RMSD < ``threshold`` Å (and PB-valid where ``valid`` is given). A NaN RMSD stands
    for a complex that produced no pose and counts as a failure; ``rmsds`` must hold at least one entry."""
    r = as_float64_numpy("rmsds", rmsds, ndim=1)
    check_nonempty("rmsds", r)
    check_positive("threshold", threshold)
    if np.any(r < 0):
        raise ValueError(
            f"rmsds: expected RMSDs >= 0 (NaN for a failed complex), received min {np.nanmin(r)}"
        )
    ok = r < threshold
    if valid is not None:
        v = np.asarray(valid)
        if v.shape != r.shape or v.dtype.kind not in "bi":
            raise ValueError(
                f"valid: expected {r.shape[0]} booleans (one per RMSD), received shape {v.shape} "
                f"dtype {v.dtype}"
            )
        ok &= v.astype(bool)
    return float(ok.mean())


def posebusters_valid(pred: Chem.Mol, protein_pdb) -> tuple[bool, dict]:
    """Run the PoseBusters "dock" checks (``mol`` checks when ``protein_pdb`` is None); returns
    (all passed, {check: passed}). No reference pose is involved."""
    from posebusters import PoseBusters

    pred_h = Chem.AddHs(pred, addCoords=True)
    if protein_pdb is None:
        df = PoseBusters(config="mol").bust(pred_h)
    else:
        df = PoseBusters(config="dock").bust(pred_h, None, str(protein_pdb))
    row = df.iloc[0]
    checks = {str(k): bool(v) for k, v in row.items() if isinstance(v, bool | np.bool_)}
    return all(checks.values()), checks


def write_poses_sdf(
    path, mols: list[Chem.Mol], names: list[str] | None = None, props: list[dict] | None = None
):
    """Write poses to an SDF file (one record per molecule; ``props`` become SDF data fields)."""
    from pathlib import Path

    mols = list(mols)
    for name, seq in (("names", names), ("props", props)):
        if seq is not None and len(seq) != len(mols):
            raise ValueError(f"{name}: expected one entry per molecule ({len(mols)}), received {len(seq)}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = Chem.SDWriter(str(path))
    try:
        for i, mol in enumerate(mols):
            m = Chem.Mol(mol)
            if names is not None:
                m.SetProp("_Name", str(names[i]))
            for k, v in (props[i] if props is not None else {}).items():
                m.SetProp(str(k), str(v))
            writer.write(m)
    finally:
        writer.close()
    return path
