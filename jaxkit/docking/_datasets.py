"""Docking data: complexes on disk, the PoseBusters examples, and CCD ligands in pseudo-pockets.

A :class:`DockingExample` is a ligand (heavy atoms; conformer 0 = the reference pose, e.g. the crystal pose), its
pocket and, for real complexes, the protein file. The reference pose defines the pocket (as in redocking) and is
the RMSD reference; it is *not* what the model sees at inference (see :func:`jaxkit.docking.ligand_fragments`).

(a) :func:`load_complex_folder`: any folder in the PDBBind / PoseBusters layout, ``<id>/<id>_protein.pdb`` (or
    ``<id>_protein_one_lig_removed.pdb``, ``<id>_pocket.pdb``) and ``<id>/<id>_ligand.sdf``; pocket = residues
    within ``cutoff`` Å of the ligand.
(b) :func:`posebusters_complexes`: the four complexes shipped in the ``posebusters`` wheel (1ia1, 1of6, 1s3v, 1uou).
(c) :func:`ccd_examples`: drug-like ligands of the Chemical Component Dictionary shipped by ``biotite`` (2–8
    torsional bonds, 10–40 heavy atoms, organic elements only; read in bulk from the CCD tables), an RDKit ETKDGv3
    conformer as the reference pose, each in a *pseudo-pocket* built around it.

Pseudo-pocket construction (documented choice; SigmaDock trains on PDBBind, which is not available offline):
points are drawn on spheres of radius 3.6–4.6 Å around every ligand heavy atom; points closer than 3.3 Å to
any ligand atom are dropped (no clashes); points whose direction from the ligand centroid lies within 50° of a
random "mouth" axis are dropped (an open pocket, as real pockets are); the rest are thinned greedily to a minimum
spacing of 1.6 Å (about protein atom density) and typed C/N/O with probabilities 0.64/0.17/0.19. The pocket
therefore carries the shape of the bound pose, which is what a docking model has to read from a real pocket.

That shell hugs the ligand: every atom sits 3.6-4.6 Å from the pose, so the pocket is a cast of the answer, which
no real pocket is. :func:`loose_pseudo_pocket` (``ccd_examples(..., pocket="loose")``) loosens it: points on
spheres of radius 3.4-8 Å, jittered (0.5 Å), one or two mouths of random width (half-angle 35-70°), thinned to a
random spacing of 1.6-2.2 Å, a random 0-30% of them deleted, typed C/N/O/S (0.62/0.16/0.19/0.03). Some ligand
atoms are then in contact and others face open space or a far wall, as in real pockets (residues within 10 Å of
a crystal ligand, which is what the model sees on real proteins).

Splits are by component id: ``sha256(id) mod 10`` = 0 → test, 1 → validation, else train (stable under additions
to the dictionary). Training ligands (split ``train``) never include a ligand of the real held-out set
(:func:`jaxkit.docking.held_out_ccd_codes`: by CCD code and by InChIKey block).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np
from rdkit import Chem
from rdkit.Chem import AllChem
from rdkit.rdBase import BlockLogs

from jaxkit._validate import seed_rng

from .._validate import check_finite, check_int, check_positive
from ._fragments import conformer_positions, heavy_atom_mol, torsional_bonds
from ._structures import (
    ORGANIC_ELEMENTS,
    Pocket,
    StructureError,
    extract_pocket,
    load_ligand,
    load_protein,
)

POSEBUSTERS_IDS = ("1ia1", "1of6", "1s3v", "1uou")
PROTEIN_SUFFIXES = ("_protein.pdb", "_protein_one_lig_removed.pdb", "_pocket.pdb")


@dataclass(frozen=True)
class DockingExample:
    """A ligand (heavy atoms, reference pose as conformer 0), its pocket and (real complexes) the protein file."""

    id: str
    mol: Chem.Mol
    pocket: Pocket
    split: str
    source: str
    protein_path: Path | None = None

    @property
    def reference_positions(self) -> np.ndarray:
        return conformer_positions(self.mol)


def split_of(component_id: str) -> str:
    """'test' / 'val' / 'train' from a stable hash of the id."""
    if not isinstance(component_id, str) or not component_id.strip():
        raise ValueError(f"component_id: expected a non-empty string, received {component_id!r}")
    return _split_of(component_id)


def _split_of(component_id: str) -> str:
    return _splits_of((component_id,))[0]


def _splits_of(component_ids: Sequence[str]) -> list[str]:
    """The split of each id: sha256 of the id modulo 10, 0 -> 'test', 1 -> 'val', else 'train' (one call for many
    ids: a call per id is slow under runtime type checks)."""
    out = []
    for cid in component_ids:
        h = int(hashlib.sha256(cid.encode()).hexdigest(), 16) % 10
        out.append("test" if h == 0 else ("val" if h == 1 else "train"))
    return out


def posebusters_data_dir() -> Path:
    import posebusters

    return Path(posebusters.__file__).parent / "datasets" / "pdb"


def _protein_file(folder: Path, cid: str) -> Path:
    for suffix in PROTEIN_SUFFIXES:
        p = folder / f"{cid}{suffix}"
        if p.exists():
            return p
    raise StructureError(
        f"complex folder {folder}: expected a protein file {cid}_protein.pdb (or {', '.join(PROTEIN_SUFFIXES[1:])})"
    )


def load_complex(
    folder: str | Path, *, cutoff: float = 10.0, split: str = "train", source: str = "folder"
) -> DockingExample:
    """One complex from ``<folder>/<id>_protein.pdb`` and ``<folder>/<id>_ligand.sdf`` (``<id>`` = folder name)."""
    folder = Path(folder)
    cid = folder.name
    lig_path = folder / f"{cid}_ligand.sdf"
    if not lig_path.exists():
        raise StructureError(f"complex folder {folder}: expected a ligand file {lig_path.name}")
    mol = heavy_atom_mol(load_ligand(lig_path))
    prot_path = _protein_file(folder, cid)
    pocket = extract_pocket(load_protein(prot_path), conformer_positions(mol), cutoff=cutoff)
    return DockingExample(cid, mol, pocket, split, source, prot_path)


def load_complex_folder(
    root: str | Path, *, cutoff: float = 10.0, on_error: Literal["raise", "skip"] = "raise"
) -> tuple[list[DockingExample], list[str]]:
    """Every ``<root>/<id>/`` complex (PDBBind / PoseBusters layout); returns (examples, skipped messages).

    ``on_error="skip"`` keeps going past complexes that cannot be read (each message names the file)."""
    root = Path(root)
    if not root.is_dir():
        raise StructureError(f"data folder {root} does not exist or is not a folder")
    examples, skipped = [], []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        try:
            examples.append(load_complex(folder, cutoff=cutoff, split=split_of(folder.name)))
        except (StructureError, ValueError) as e:
            if on_error == "raise":
                raise
            skipped.append(str(e))
    return examples, skipped


def posebusters_complexes(
    ids: tuple[str, ...] = POSEBUSTERS_IDS, *, cutoff: float = 10.0
) -> list[DockingExample]:
    """The complexes shipped by ``posebusters`` (crystal ligand pose as the reference)."""
    unknown = sorted(set(ids) - set(POSEBUSTERS_IDS))
    if unknown:
        raise ValueError(f"ids: expected a subset of {POSEBUSTERS_IDS}, received unknown {unknown}")
    check_positive("cutoff", cutoff)
    root = posebusters_data_dir()
    return [load_complex(root / pid, cutoff=cutoff, split="test", source="posebusters") for pid in ids]


def _sphere_points(
    positions: np.ndarray, rng: np.random.Generator, points_per_atom: int, r_min: float, r_max: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ligand positions, centroid, points): ``points_per_atom`` random directions per ligand atom at radii
    uniform in [r_min, r_max] Å (validates ``positions`` and ``points_per_atom``)."""
    x = np.asarray(positions, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 3 or len(x) < 2:
        raise ValueError(f"positions: expected shape (n>=2, 3), received {x.shape}")
    check_int("points_per_atom", points_per_atom, minimum=1)
    check_finite("positions", x)
    center = x.mean(0)
    dirs = rng.normal(size=(len(x), points_per_atom, 3))
    dirs /= np.linalg.norm(dirs, axis=-1, keepdims=True)
    radii = rng.uniform(r_min, r_max, size=(len(x), points_per_atom, 1))
    return x, center, (x[:, None, :] + radii * dirs).reshape(-1, 3)


def pseudo_pocket(positions: np.ndarray, rng: np.random.Generator, *, points_per_atom: int = 24) -> Pocket:
    """Pseudo-pocket around a ligand pose (see the module docstring for the construction)."""
    x, center, pts = _sphere_points(positions, rng, points_per_atom, 3.6, 4.6)
    dmin = np.sqrt(((pts[:, None, :] - x[None, :, :]) ** 2).sum(-1)).min(1)
    pts = pts[dmin >= 3.3]
    mouth = rng.normal(size=3)
    mouth /= np.linalg.norm(mouth)
    v = pts - center
    cosang = (v @ mouth) / np.maximum(np.linalg.norm(v, axis=1), 1e-9)
    pts = pts[cosang < np.cos(np.deg2rad(50.0))]
    pos = _thin(pts[rng.permutation(len(pts))], 1.6)
    elements = rng.choice(np.array(["C", "N", "O"]), size=len(pos), p=[0.64, 0.17, 0.19])
    return _pseudo_atoms(pos, center, elements)


def _thin(pts: np.ndarray, spacing: float) -> np.ndarray:
    """Greedy thinning in the given order: drop later points within ``spacing`` Å of a kept one."""
    keep = np.ones(len(pts), bool)
    d2 = ((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1)
    for i in range(len(pts)):
        if keep[i]:
            keep[i + 1 :] &= d2[i, i + 1 :] >= spacing**2
    return pts[keep]


def _pseudo_atoms(pos: np.ndarray, center: np.ndarray, elements: np.ndarray) -> Pocket:
    n = len(pos)
    return Pocket(
        positions=pos,
        elements=elements,
        residue_ids=np.arange(n),
        chain_ids=np.full(n, "P"),
        residue_names=np.full(n, "PSD"),
        atom_names=elements.copy(),
        center=center,
    )


def loose_pseudo_pocket(
    positions: np.ndarray, rng: np.random.Generator, *, points_per_atom: int = 40
) -> Pocket:
    """A pseudo-pocket that does not hug the ligand (see the module docstring): points 3.4-8 Å from the ligand
    atoms, jittered, with one or two random mouths, thinned to a random spacing and randomly holed."""
    x, center, pts = _sphere_points(positions, rng, points_per_atom, 3.4, 8.0)
    pts = pts + rng.normal(scale=0.5, size=pts.shape)
    dmin = np.sqrt(((pts[:, None, :] - x[None, :, :]) ** 2).sum(-1)).min(1)
    pts = pts[dmin >= 3.2]
    v = pts - center
    vn = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
    for _ in range(int(rng.integers(1, 3))):  # one or two openings
        mouth = rng.normal(size=3)
        mouth /= np.linalg.norm(mouth)
        open_ = vn @ mouth >= np.cos(np.deg2rad(rng.uniform(35.0, 70.0)))
        pts, vn = pts[~open_], vn[~open_]
    pts = _thin(pts[rng.permutation(len(pts))], float(rng.uniform(1.6, 2.2)))
    pts = pts[rng.random(len(pts)) >= rng.uniform(0.0, 0.3)]
    if len(pts) == 0:
        raise ValueError("positions: the loose pseudo-pocket came out empty (a ligand too small to surround)")
    elements = rng.choice(np.array(["C", "N", "O", "S"]), size=len(pts), p=[0.62, 0.16, 0.19, 0.03])
    return _pseudo_atoms(pts, center, elements)


# ---- the Chemical Component Dictionary, read in bulk -------------------------------------------------------------

_BOND_ORDER = {"SING": Chem.BondType.SINGLE, "DOUB": Chem.BondType.DOUBLE, "TRIP": Chem.BondType.TRIPLE}


@lru_cache(maxsize=1)
def _ccd_tables() -> dict:
    """Per-component slices of biotite's CCD atom and bond tables (one pass; ~2 s)."""
    from biotite.structure.info.ccd import get_ccd

    block = get_ccd()
    a, b = block["chem_comp_atom"], block["chem_comp_bond"]
    comp = a["comp_id"].as_array()
    starts = np.concatenate([[0], np.flatnonzero(comp[1:] != comp[:-1]) + 1, [len(comp)]])
    elem = np.char.capitalize(a["type_symbol"].as_array().astype(str))
    coord = np.stack([a[f"pdbx_model_Cartn_{c}_ideal"].as_array() for c in "xyz"], -1)
    mask = a["pdbx_model_Cartn_x_ideal"].mask
    missing = np.zeros(len(comp), bool) if mask is None else mask.array != 0
    bcomp = b["comp_id"].as_array()
    bstarts = np.concatenate([[0], np.flatnonzero(bcomp[1:] != bcomp[:-1]) + 1, [len(bcomp)]])
    bond_slices = {bcomp[s]: (s, e) for s, e in zip(bstarts[:-1], bstarts[1:])}
    return {
        "ids": comp[starts[:-1]],
        "starts": starts,
        "atom_id": a["atom_id"].as_array(),
        "element": elem,
        "charge": a["charge"].as_array().astype(int),
        "coord": coord,
        "missing": missing,
        "bond_slices": bond_slices,
        "b1": b["atom_id_1"].as_array(),
        "b2": b["atom_id_2"].as_array(),
        "order": b["value_order"].as_array(),
    }


def _ccd_candidates(min_heavy: int, max_heavy: int) -> np.ndarray:
    """Indices of components with ``min_heavy..max_heavy`` heavy atoms and organic elements only."""
    t = _ccd_tables()
    heavy = t["element"] != "H"
    n_heavy = np.add.reduceat(heavy.astype(int), t["starts"][:-1])
    organic = np.isin(t["element"], sorted(ORGANIC_ELEMENTS))
    all_organic = np.add.reduceat((~organic).astype(int), t["starts"][:-1]) == 0
    return np.flatnonzero((n_heavy >= min_heavy) & (n_heavy <= max_heavy) & all_organic)


def ccd_mol(index: int) -> Chem.Mol | None:
    """RDKit molecule (hydrogens kept, stereo from the ideal coordinates) of the CCD component at ``index``."""
    t = _ccd_tables()
    s, e = t["starts"][index], t["starts"][index + 1]
    cid = t["ids"][index]
    names = {n: i for i, n in enumerate(t["atom_id"][s:e])}
    rw = Chem.RWMol()
    for el, q in zip(t["element"][s:e], t["charge"][s:e]):
        atom = Chem.Atom(str(el))
        atom.SetFormalCharge(int(q))
        atom.SetNoImplicit(True)
        rw.AddAtom(atom)
    bs, be = t["bond_slices"].get(cid, (0, 0))
    for n1, n2, order in zip(t["b1"][bs:be], t["b2"][bs:be], t["order"][bs:be]):
        if order not in _BOND_ORDER or n1 not in names or n2 not in names:
            return None
        rw.AddBond(names[n1], names[n2], _BOND_ORDER[order])
    mol = rw.GetMol()
    with BlockLogs():
        try:
            Chem.SanitizeMol(mol)
        except Chem.rdchem.MolSanitizeException:
            return None
    if len(Chem.GetMolFrags(mol)) != 1:
        return None
    if not t["missing"][s:e].any():
        conf = Chem.Conformer(mol.GetNumAtoms())
        for i, p in enumerate(t["coord"][s:e]):
            conf.SetAtomPosition(i, p.tolist())
        conf.Set3D(True)
        mol.AddConformer(conf, assignId=True)
        Chem.AssignStereochemistryFrom3D(mol)
        mol.RemoveAllConformers()
    return mol


def embed_conformer(mol: Chem.Mol, seed: int, *, optimize: bool = True) -> Chem.Mol | None:
    """Heavy-atom copy of ``mol`` with one ETKDGv3 conformer, MMFF94-relaxed (hydrogens placed for the embedding,
    then removed); ``None`` if RDKit cannot embed it. Uses the chemistry (graph, charges, stereo tags) only.

    The MMFF relaxation (documented choice) makes rigid-fragment geometry closer to a refined structure: on 30 CCD
    ligands it halves the median dummy-partner gap between two independent conformers (0.60 -> 0.30 Å)."""
    check_int("seed", seed, minimum=0)
    molh = Chem.AddHs(Chem.RemoveAllHs(mol, sanitize=True))
    molh.RemoveAllConformers()
    params = AllChem.ETKDGv3()
    params.randomSeed = int(seed) % (2**31 - 1)
    with BlockLogs():
        if AllChem.EmbedMolecule(molh, params) != 0:
            params.useRandomCoords = True
            if AllChem.EmbedMolecule(molh, params) != 0:
                return None
        if optimize and AllChem.MMFFHasAllMoleculeParams(molh):
            AllChem.MMFFOptimizeMolecule(molh, maxIters=500)
    return Chem.RemoveAllHs(molh)


def ccd_ligand_candidates(
    split: Literal["train", "val", "test"],
    *,
    min_heavy: int = 10,
    max_heavy: int = 40,
    max_scan: int = 49000,
) -> list[tuple[int, str]]:
    """``(table index, CCD code)`` of every component :func:`ccd_examples` may take for ``split``, in its scan order.

    The scan order is a fixed permutation of the components with ``min_heavy..max_heavy`` heavy atoms and organic
    elements (independent of any seed); the first ``max_scan`` are scanned and those of ``split`` kept. For
    ``split="train"`` every held-out real-set ligand (by CCD code or InChIKey block,
    :func:`jaxkit.docking.held_out_ccd_codes`) is left out. :func:`ccd_examples` takes its ligands from
    this list, in order, so any training selection is a subset of it."""
    if split not in ("train", "val", "test"):
        raise ValueError(f"split: expected 'train', 'val' or 'test', received {split!r}")
    check_int("min_heavy", min_heavy, minimum=1)
    check_int("max_heavy", max_heavy, minimum=min_heavy)
    check_int("max_scan", max_scan, minimum=1)
    return list(_ccd_ligand_candidates(split, int(min_heavy), int(max_heavy), int(max_scan)))


@lru_cache(maxsize=16)
def _ccd_ligand_candidates(
    split: str, min_heavy: int, max_heavy: int, max_scan: int
) -> tuple[tuple[int, str], ...]:
    cand = _ccd_candidates(min_heavy, max_heavy)
    order = cand[np.random.default_rng(12345).permutation(len(cand))][:max_scan]
    ids = _ccd_tables()["ids"]
    excluded: frozenset[str] = frozenset()
    if split == "train":
        from ._heldout import held_out_ccd_codes

        excluded = held_out_ccd_codes()
    cids = [str(ids[idx]) for idx in order]
    return tuple(
        (int(idx), cid)
        for idx, cid, s in zip(order, cids, _splits_of(cids), strict=True)
        if s == split and cid not in excluded
    )


def ccd_examples(
    n: int,
    *,
    split: Literal["train", "val", "test"] = "train",
    seed: int = 0,
    min_torsions: int = 2,
    max_torsions: int = 8,
    min_heavy: int = 10,
    max_heavy: int = 40,
    max_scan: int = 49000,
    pockets_per_ligand: int = 1,
    pocket: Literal["shell", "loose", "mixed"] = "shell",
) -> list[DockingExample]:
    """``n`` drug-like CCD ligands of one split with ETKDGv3 reference poses in pseudo-pockets (deterministic).

    ``pockets_per_ligand > 1`` gives each ligand several reference conformers, each in its own pseudo-pocket
    (data augmentation for training; ids get a ``#k`` suffix). Ligands without torsional bonds are skipped (they
    teach no reassembly). ``pocket``: ``"shell"`` (:func:`pseudo_pocket`, the ligand-hugging shell), ``"loose"``
    (:func:`loose_pseudo_pocket`) or ``"mixed"`` (each pocket either, with probability 1/2).

    Ligands are taken in the order of :func:`ccd_ligand_candidates`; for ``split="train"`` that excludes every
    ligand of the real held-out set (validation and test) by CCD code and by InChIKey block, so no training
    ligand is one the real-set evaluation docks."""
    if pocket not in ("shell", "loose", "mixed"):
        raise ValueError(f"pocket: expected 'shell', 'loose' or 'mixed', received {pocket!r}")
    if split not in ("train", "val", "test"):
        raise ValueError(f"split: expected 'train', 'val' or 'test', received {split!r}")
    check_int("n", n, minimum=1)
    check_int("min_torsions", min_torsions, minimum=0)
    check_int(
        "max_torsions", max_torsions, minimum=max(1, min_torsions)
    )  # ligands without torsions are skipped
    check_int("pockets_per_ligand", pockets_per_ligand, minimum=1)
    candidates = ccd_ligand_candidates(split, min_heavy=min_heavy, max_heavy=max_heavy, max_scan=max_scan)
    if n > len(candidates):
        raise ValueError(
            f"n: expected at most {len(candidates)} (the {split} split's candidate ligands for these heavy-atom "
            f"bounds and max_scan), received {n}"
        )
    rng = seed_rng(seed)
    held = None
    if split == "train":
        from ._heldout import held_out_ligands

        held = held_out_ligands()
    out: list[DockingExample] = []
    for idx, cid in candidates:
        if len(out) >= n:
            break
        mol = ccd_mol(idx)
        if mol is None:
            continue
        heavy = Chem.RemoveAllHs(mol)
        if not min_torsions <= len(torsional_bonds(heavy)) <= max_torsions:
            continue
        if held is not None and held.reason(None, heavy) is not None:  # a second guard (InChIKey block)
            continue
        for k in range(pockets_per_ligand):
            ref = embed_conformer(heavy, int(rng.integers(2**31 - 1)))
            if ref is None:
                break
            loose = pocket == "loose" or (pocket == "mixed" and rng.random() < 0.5)
            shell = (loose_pseudo_pocket if loose else pseudo_pocket)(conformer_positions(ref), rng)
            name = cid if pockets_per_ligand == 1 else f"{cid}#{k}"
            out.append(DockingExample(name, ref, shell, split, "ccd" if not loose else "ccd-loose"))
            if len(out) >= n:
                break
    return out
