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
    """Heavy-atom RMSD between two poses of the same ligand, minimized over graph symmetries, no alignment."""
    return float(rdMolAlign.CalcRMS(Chem.RemoveAllHs(pred), Chem.RemoveAllHs(ref)))


def success_rate(rmsds, threshold: float = 2.0, valid=None) -> float:
    """Fraction of poses with RMSD < ``threshold`` (and PB-valid where ``valid`` is given)."""
    r = np.asarray(rmsds, dtype=np.float64)
    ok = r < threshold
    if valid is not None:
        ok &= np.asarray(valid, dtype=bool)
    return float(ok.mean()) if len(ok) else float("nan")


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


def write_poses_sdf(path, mols: list[Chem.Mol], names: list[str] | None = None, props: list[dict] | None = None):
    """Write poses to an SDF file (one record per molecule; ``props`` become SDF data fields)."""
    from pathlib import Path

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
