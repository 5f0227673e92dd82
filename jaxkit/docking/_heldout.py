"""What no training data may contain: the real set's validation and test ligands (and their proteins).

A held-out ligand is identified two ways, so that neither a renamed component nor a second CCD entry of the same
compound slips through:

* its **CCD code** (``ccd_code`` in ``data/real/manifest.json``), and
* its **InChIKey connectivity block** (the first 14 characters of the standard InChIKey, computed here with RDKit
  from the shipped crystal structure ``data/real/<id>/<id>_ligand.sdf``). The block hashes the formula and the
  heavy-atom connectivity with mobile hydrogens and charges normalized, so stereoisomers, tautomers and
  protonation states of a held-out ligand are excluded too (a superset of full-key matches).

Proteins are excluded where they can occur, in the real training complexes (``data/real_train``: no PDB id of the
real set, no protein chain near the ligand >= 30 % identical to a held-out chain; see its manifest). CCD
pseudo-pockets carry no protein.

:func:`held_out_ccd_codes` lists every CCD component that is a held-out ligand by either rule; the CCD training
selection (:func:`jaxkit.docking.ccd_examples` with ``split="train"``) skips them, and
:func:`check_no_held_out` checks a finished list of training examples (run by the ``sigmadock`` experiment on the
exact list it trains on).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from rdkit import Chem
from rdkit.rdBase import BlockLogs

from ._datasets import DockingExample, _ccd_tables, ccd_mol
from ._realset import REAL_SET_DIR, real_set_manifest, real_training_manifest
from ._structures import load_ligand


def inchikey_block(mol: Chem.Mol) -> str:
    """The connectivity block (first 14 characters) of ``mol``'s standard InChIKey; ``""`` if RDKit cannot make
    one. Hydrogens, coordinates and stereo tags do not change it."""
    if not isinstance(mol, Chem.Mol):
        raise TypeError(f"mol: expected an RDKit Mol, received {type(mol).__name__}")
    with BlockLogs():
        try:
            heavy = Chem.RemoveHs(mol, sanitize=False)  # a copy: the caller's molecule is not touched
            # Without sanitization RemoveHs leaves each atom's cached implicit-H count as it was while its
            # hydrogens were explicit atoms (0), so InChI saw benzene's carbons with no hydrogen (cyclohexane's
            # block) and benzoic acid failed outright; recompute the counts (lenient: an unsanitizable molecule
            # still gets a key if InChI can make one).
            heavy.UpdatePropertyCache(strict=False)
            key = Chem.MolToInchiKey(heavy)
        except (ValueError, RuntimeError):  # RDKit could not make a key: no key, no match
            return ""
    return key[:14] if key else ""


def _heavy_formula(mol: Chem.Mol) -> tuple:
    return tuple(sorted(Counter(a.GetSymbol() for a in mol.GetAtoms() if a.GetAtomicNum() > 1).items()))


@dataclass(frozen=True)
class HeldOutLigands:
    """The real set's validation and test ligands: ``codes`` (CCD codes), ``blocks`` (InChIKey connectivity
    blocks from the shipped crystal structures), ``pdb_ids`` and ``by_block`` (block -> PDB id, for messages)."""

    codes: frozenset[str]
    blocks: frozenset[str]
    pdb_ids: frozenset[str]
    by_block: dict
    formulas: frozenset

    def reason(self, code: str | None, mol: Chem.Mol | None) -> str | None:
        """Why a ligand (CCD ``code`` and/or molecule) is held out, or None if it is not."""
        if code is not None and code in self.codes:
            return f"CCD code {code} is a held-out real-set ligand"
        if mol is not None:
            block = inchikey_block(mol)
            if block and block in self.blocks:
                return f"InChIKey block {block} is the held-out ligand of {self.by_block[block]}"
        return None


@lru_cache(maxsize=1)
def held_out_ligands() -> HeldOutLigands:
    """The ligands of every real-set complex (validation and test) by CCD code and InChIKey block."""
    codes, blocks, ids, by_block, formulas = set(), set(), set(), {}, set()
    for rec in real_set_manifest()["complexes"]:
        pid = rec["pdb_id"]
        mol = load_ligand(REAL_SET_DIR / pid / f"{pid}_ligand.sdf")
        block = inchikey_block(mol)
        if not block:
            raise ValueError(f"held-out ligand of {pid}: RDKit could not compute an InChIKey")
        codes.add(rec["ccd_code"])
        ids.add(pid)
        blocks.add(block)
        by_block.setdefault(block, pid)
        formulas.add(_heavy_formula(mol))
    return HeldOutLigands(frozenset(codes), frozenset(blocks), frozenset(ids), by_block, frozenset(formulas))


@lru_cache(maxsize=1)
def held_out_ccd_codes() -> frozenset[str]:
    """Every CCD component (biotite's dictionary) that is a held-out ligand by code or by InChIKey block.

    Only components whose heavy-atom formula equals a held-out ligand's can share its InChIKey block (the block
    encodes the formula), so only those are built and keyed."""
    held = held_out_ligands()
    t = _ccd_tables()
    out = set(held.codes)
    starts = t["starts"]
    n_heavy = np.add.reduceat((t["element"] != "H").astype(int), starts[:-1])
    sizes = {sum(c for _, c in f) for f in held.formulas}
    for i in np.flatnonzero(np.isin(n_heavy, sorted(sizes))):
        el = t["element"][starts[i] : starts[i + 1]]
        formula = tuple(sorted(Counter(str(e) for e in el if e != "H").items()))
        if formula not in held.formulas:
            continue
        mol = ccd_mol(int(i))
        if mol is not None and inchikey_block(mol) in held.blocks:
            out.add(str(t["ids"][i]))
    return frozenset(out)


def check_no_held_out(examples: Iterable[DockingExample]) -> dict[str, int]:
    """Raise ``ValueError`` if any training example holds a held-out ligand (CCD code or InChIKey block) or is a
    real-set complex; else return counts ``{"n_examples", "n_ligands"}`` (distinct InChIKey blocks checked).

    CCD examples are named by their component id (``"ABC"`` or ``"ABC#k"``); real training complexes by their PDB
    id, whose CCD code is read from the training manifest."""
    held = held_out_ligands()
    train_codes = {r["pdb_id"]: r["ccd_code"] for r in real_training_manifest()["complexes"]}
    problems, seen, n = [], {}, 0
    for ex in examples:
        if not isinstance(ex, DockingExample):
            raise TypeError(f"examples: expected DockingExample items, received {type(ex).__name__}")
        n += 1
        base = ex.id.split("#")[0]
        if base.lower() in held.pdb_ids:
            problems.append(f"{ex.id}: a held-out real-set complex")
            continue
        code = train_codes.get(base) if ex.source.startswith("real") else base
        smiles = Chem.MolToSmiles(ex.mol)
        if smiles not in seen:
            seen[smiles] = held.reason(code, ex.mol)
        why = held.reason(code, None) or seen[smiles]
        if why:
            problems.append(f"{ex.id}: {why}")
    if problems:
        raise ValueError(
            f"examples: {len(problems)} training examples hold held-out ligands or complexes: "
            + "; ".join(sorted(set(problems))[:20])
        )
    return {"n_examples": n, "n_ligands": len(seen)}


def held_out_protein_ids() -> frozenset[str]:
    """PDB ids of the real set (validation and test): no training complex may be one of them."""
    return frozenset(r["pdb_id"] for r in real_set_manifest()["complexes"])
