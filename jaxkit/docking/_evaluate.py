"""Pose evaluation: symmetry-aware RMSD, success rates, PoseBusters validity.

- ``symmetric_rmsd``: in-place heavy-atom RMSD over the ligand's graph automorphisms (``rdMolAlign.CalcRMS``).
- ``posebusters_valid``: all checks of the ``posebusters`` "dock" configuration (molecule + protein) pass; the
  RMSD to the reference is reported separately (the "redock" configuration would fold it into validity).
- ``success_rate``: fraction with RMSD < threshold (optionally also PB-valid), SigmaDock's headline metric.
"""

from __future__ import annotations

import functools
import hashlib
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

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
    """Heavy-atom RMSD between two poses of the same ligand, minimized over graph symmetries, no alignment.

    Both must be RDKit molecules with a conformer (the pose); ``ValueError`` naming the argument otherwise."""
    for name, mol in (("pred", pred), ("ref", ref)):
        if not isinstance(mol, Chem.Mol):
            raise TypeError(f"{name}: expected an RDKit Mol (a pose), received {type(mol).__name__}")
    p, r = Chem.RemoveAllHs(pred), Chem.RemoveAllHs(ref)
    if (p.GetNumAtoms(), p.GetNumBonds()) != (r.GetNumAtoms(), r.GetNumBonds()):
        # CalcRMS would match the smaller molecule as a substructure of the larger one and return a number
        raise ValueError(
            f"pred, ref: expected two poses of the same ligand, received {p.GetNumAtoms()} vs {r.GetNumAtoms()} "
            f"heavy atoms ({Chem.MolToSmiles(p)!r} and {Chem.MolToSmiles(r)!r})"
        )
    if not r.HasSubstructMatch(p):  # the match CalcRMS needs; checked first, conformers or not
        raise ValueError(
            f"pred, ref: expected two poses of the same ligand, received {Chem.MolToSmiles(pred)!r} "
            f"and {Chem.MolToSmiles(ref)!r} (no atom mapping between them)"
        )
    for name, mol in (("pred", pred), ("ref", ref)):
        if mol.GetNumConformers() == 0:  # RDKit's own error ("Bad Conformer Id") names neither argument
            raise ValueError(
                f"{name}: expected a molecule with a conformer (a pose), received "
                f"{Chem.MolToSmiles(mol)!r} with no coordinates"
            )
    try:
        return float(rdMolAlign.CalcRMS(p, r))
    except RuntimeError as e:  # RDKit: "No sub-structure match found between the reference and probe mol"
        raise ValueError(
            f"pred, ref: expected two poses of the same ligand, received {Chem.MolToSmiles(pred)!r} "
            f"and {Chem.MolToSmiles(ref)!r} ({e})"
        ) from None


def success_rate(rmsds: object, threshold: float = 2.0, valid: object = None) -> float:
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


def posebusters_valid(
    pred: Chem.Mol, protein_pdb: str | os.PathLike[str] | None
) -> tuple[bool, dict[str, bool]]:
    """Run the PoseBusters "dock" checks (``mol`` checks when ``protein_pdb`` is None); returns
    (all passed, {check: passed}). No reference pose is involved."""
    from posebusters import PoseBusters

    # a fresh PoseBusters object per call: one kept across calls holds the stream it captured RDKit's log into,
    # and once that stream is closed (a test's captured stderr) its checks fail (inchi_convertible False)
    pred_h = Chem.AddHs(pred, addCoords=True)
    if protein_pdb is None:
        df = PoseBusters(config="mol").bust(pred_h)
    else:
        # the protein as PoseBusters loads it, parsed once per file content (a copy per call: the checks get
        # their own molecule); a pose loop over one pocket no longer re-reads and re-parses its PDB every time
        protein = _protein_for_busters(str(protein_pdb))
        cond = (
            str(protein_pdb) if protein is None else Chem.Mol(protein)
        )  # unloadable: PoseBusters reports it
        df = PoseBusters(config="dock").bust(pred_h, None, cond)
    row = df.iloc[0]
    checks = {str(k): bool(v) for k, v in row.items() if isinstance(v, bool | np.bool_)}
    return all(checks.values()), checks


def _protein_for_busters(path: str) -> Chem.Mol | None:
    """The protein of ``path`` loaded as PoseBusters' "dock" configuration loads ``mol_cond``, cached by the file's
    content (sha256), so an edited file is read again; None if it cannot be loaded."""
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return _load_protein(digest, path)


@functools.lru_cache(maxsize=8)
def _load_protein(digest: str, path: str) -> Chem.Mol | None:
    from posebusters import PoseBusters
    from posebusters.tools.loading import safe_load_mol

    config = getattr(PoseBusters(config="dock"), "config", {})
    return safe_load_mol(path=path, **config.get("loading", {}).get("mol_cond", {}))


SDF_FIELDS = {
    "rank": "1 for the top pose, then 2, 3, ... (records are written best first)",
    "sample": "index (0-based) of the diffusion sample the pose came from",
    "vinardo_kcal_mol": "Vinardo energy (kcal/mol) of the written pose (after Vina's local minimization with "
    "--ranking vinardo_minimized/vinardo_converged; as sampled with vinardo; nan with --no-rank or consensus)",
    "pb_valid": "PoseBusters verdict: yes (all checks pass), no (a check fails, see failed_checks), or unchecked "
    "(not tested: PoseBusters runs in ranking order until the first valid pose, at most --pb-budget poses; "
    "none with --no-rank). Only a passed check moves a pose above lower-energy ones",
    "failed_checks": "comma-separated names of the failed checks (PoseBusters', or bond_gap); empty when none",
    "bond_gap_A": "RMS distance (Å) between each fragment-junction dummy atom and the atom it stands for, as "
    "sampled (0 for conformer-matched poses); above 0.6 Å the pose is marked pb_valid no, failed check bond_gap",
    "confidence": "the confidence model's probability that the pose is within 2 Å of the crystal pose; empty "
    "without a confidence model (--confidence)",
    "warning": "empty, or the run's warning (the same on every record), e.g. that no pose passed the validity "
    "checks within the budget, so the top pose is not a checked-valid one",
    "conformer_match_rmsd": "with --assemble conformer_matching: RMSD (Å) between the sampled fragment atoms and "
    "the RDKit conformer fitted to them (before any Vina minimization); absent with --assemble none",
}
"""The data fields of every SDF record :func:`write_poses_sdf` writes for ranked poses (and the command line's
``dock``), with their meaning."""


def pose_fields(pose: object, warnings: list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """The :data:`SDF_FIELDS` of one ranked pose (a ``RankedPose``) as strings, ``warnings`` joined by ``"; "``."""
    return {
        "rank": str(pose.rank + 1),
        "sample": str(pose.index),
        "vinardo_kcal_mol": f"{pose.vinardo:.3f}",
        "pb_valid": {True: "yes", False: "no", None: "unchecked"}[pose.pb_valid],
        "bond_gap_A": f"{pose.bond_gap:.3f}",
        "failed_checks": ",".join(pose.failed_checks),
        "confidence": "" if pose.confidence is None else f"{pose.confidence:.4f}",
        "warning": "; ".join(warnings),
    }


def write_poses_sdf(
    path: object,
    poses: object,
    names: list[str] | None = None,
    props: list[Mapping[str, object]] | None = None,
    *,
    hydrogens: bool = False,
    warnings: list[str] | None = None,
    overwrite: bool = False,
) -> Path:
    """Write poses to an SDF file, one record per pose, in the given order; returns the path.

    An existing ``path`` is replaced only with ``overwrite=True`` (``FileExistsError`` otherwise, nothing
    written; the command line's ``--overwrite``); a folder is never replaced. The write is atomic: a temporary
    file in the same folder is renamed onto ``path``, so an interrupted write leaves the old file or the new one.

    ``poses`` is a docking result (:func:`jaxkit.docking.dock`'s ``DockingResult``: its poses, best first, and
    its warnings), a list of ranked poses, or a list of RDKit molecules. Ranked poses get the data fields of
    :data:`SDF_FIELDS` (``rank``, ``sample``, ``vinardo_kcal_mol``, ``pb_valid``, ``bond_gap_A``,
    ``failed_checks``, ``confidence``, ``warning``; the command line writes the same) and by default the names
    ``"<SMILES> pose <rank>"``; ``props`` (one dict per pose) add or override fields. ``hydrogens=True`` writes
    explicit hydrogens placed by RDKit on the heavy atoms' coordinates."""
    from ._rank import RankedPose

    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite: expected a bool, received {type(overwrite).__name__}")
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path: expected a file path (str or os.PathLike), received {type(path).__name__}")
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"path: {path} is a folder; expected the SDF file to write")
    if path.exists() and not overwrite:
        raise FileExistsError(f"path: {path} exists; pass overwrite=True to replace it, or choose a new file")
    if hasattr(poses, "poses") and hasattr(poses, "warnings"):  # a DockingResult
        warnings = list(poses.warnings) if warnings is None else warnings
        poses = poses.poses
    items = list(poses)
    if not items:
        raise ValueError("poses: expected at least one pose to write, received none (an empty SDF file)")
    ranked = all(isinstance(p, RankedPose) for p in items)
    if not ranked and not all(isinstance(p, Chem.Mol) for p in items):
        raise TypeError(
            "poses: expected a DockingResult, a list of RankedPose or a list of RDKit molecules, received "
            f"{sorted({type(p).__name__ for p in items})}"
        )
    for name, seq in (("names", names), ("props", props)):
        if seq is not None and len(seq) != len(items):
            raise ValueError(f"{name}: expected one entry per molecule ({len(items)}), received {len(seq)}")
    mols = [p.mol for p in items] if ranked else items
    if ranked and names is None:
        smiles = Chem.MolToSmiles(Chem.RemoveHs(mols[0]))
        names = [f"{smiles} pose {p.rank + 1}" for p in items]
    fields = [pose_fields(p, warnings or ()) if ranked else {} for p in items]
    records = []
    for i, mol in enumerate(mols):  # built before anything is written: a failure leaves no file behind
        m = Chem.AddHs(mol, addCoords=True) if hydrogens else Chem.Mol(mol)
        if names is not None:
            m.SetProp("_Name", str(names[i]))
        for k, v in {**fields[i], **(props[i] if props is not None else {})}.items():
            m.SetProp(str(k), str(v))
        records.append(m)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        writer = Chem.SDWriter(str(tmp))
        try:
            for m in records:
                writer.write(m)
        finally:
            writer.close()
        if path.is_dir():  # appeared while writing: checked again, never replaced
            raise IsADirectoryError(f"path: {path} is a folder; expected the SDF file to write")
        if path.exists() and not overwrite:
            raise FileExistsError(
                f"path: {path} exists; pass overwrite=True to replace it, or choose a new file"
            )
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
