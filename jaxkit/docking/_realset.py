"""A held-out set of real protein-ligand crystal complexes shipped with the package (``data/real``).

Each complex is ``data/real/<pdb id>/<pdb id>_ligand.sdf`` (crystal ligand pose, heavy atoms) and
``<pdb id>_pocket.pdb`` (protein residues within 12 Å of the ligand, whole residues, original numbering);
``data/real/manifest.json`` records for every complex its PDB id, ligand CCD code and SMILES, heavy-atom count,
Astex Diverse Set membership, split, source repository (path, commit, licence) and the coordinate licence.

The validation/test split was fixed before any scoring (rule in the manifest's ``split_rule``): Astex Diverse Set
members are always test; every other complex is validation when the first byte of sha256 of its lower-case PDB id
is below 102 (about 40 %), test otherwise.

A second folder, ``data/real_train``, holds real complexes for *training* only (:func:`real_training_complexes`):
PDBbind 2013 core-set complexes outside the held-out set whose ligand (CCD code) is not in it and whose protein
chains near the ligand are < 30 % identical to every chain of every held-out complex's protein (rule and every
exclusion in its manifest).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from ._datasets import DockingExample, load_complex

REAL_SET_DIR = Path(__file__).parent / "data" / "real"
REAL_TRAIN_DIR = Path(__file__).parent / "data" / "real_train"
REAL_SPLITS = ("val", "test", "all")


def real_split_of(pdb_id: str, *, astex: bool) -> str:
    """'val' / 'test' by the set's rule: Astex members are test; else sha256(lower-case id)[0] < 102 is val."""
    if not isinstance(pdb_id, str) or len(pdb_id.strip()) != 4:
        raise ValueError(f"pdb_id: expected a 4-character PDB id, received {pdb_id!r}")
    if astex:
        return "test"
    return "val" if hashlib.sha256(pdb_id.strip().lower().encode()).digest()[0] < 102 else "test"


@lru_cache(maxsize=2)
def _manifest(folder: Path = REAL_SET_DIR) -> str:
    path = folder / "manifest.json"
    if not path.exists():
        raise FileNotFoundError(f"real-set manifest {path} is missing (is the package data installed?)")
    return path.read_text()


def real_training_manifest() -> dict[str, object]:
    """The manifest of the real training complexes (a fresh copy): selection, leakage rule, exclusions, records."""
    return json.loads(_manifest(REAL_TRAIN_DIR))


def real_training_complexes(*, cutoff: float = 10.0) -> list[DockingExample]:
    """The real training complexes (``data/real_train``), ordered by PDB id, split ``"train"``; pockets are the
    residues within ``cutoff`` Å (at most 12) of the crystal ligand, as in :func:`real_complexes`."""
    if not isinstance(cutoff, (int, float)) or not 0 < cutoff <= 12.0:
        raise ValueError(
            f"cutoff: expected a number in (0, 12] Å (pockets are shipped cut at 12 Å), received {cutoff!r}"
        )
    recs = sorted(real_training_manifest()["complexes"], key=lambda r: r["pdb_id"])
    return [
        load_complex(
            REAL_TRAIN_DIR / r["pdb_id"],
            cutoff=cutoff,
            split="train",
            source=f"real-train:{r['source']['repository'].removeprefix('https://github.com/')}",
        )
        for r in recs
    ]


def real_set_manifest() -> dict[str, object]:
    """The manifest of the real set (a fresh copy): header fields and ``complexes``, one record per complex."""
    return json.loads(_manifest())


def real_complexes(split: str = "test", *, cutoff: float = 10.0) -> list[DockingExample]:
    """The real crystal complexes of one split (``"val"``, ``"test"`` or ``"all"``), ordered by PDB id.

    Each example's reference pose is the crystal ligand pose and its pocket the residues within ``cutoff`` Å of
    it (``cutoff`` at most 12 Å, the radius the shipped pocket files were cut at)."""
    if split not in REAL_SPLITS:
        raise ValueError(f"split: expected one of {REAL_SPLITS}, received {split!r}")
    if not isinstance(cutoff, (int, float)) or not 0 < cutoff <= 12.0:
        raise ValueError(
            f"cutoff: expected a number in (0, 12] Å (pockets are shipped cut at 12 Å), received {cutoff!r}"
        )
    out = []
    for rec in sorted(real_set_manifest()["complexes"], key=lambda r: r["pdb_id"]):
        if split != "all" and rec["split"] != split:
            continue
        source = f"real:{rec['source']['repository'].removeprefix('https://github.com/')}"
        out.append(
            load_complex(REAL_SET_DIR / rec["pdb_id"], cutoff=cutoff, split=rec["split"], source=source)
        )
    return out
