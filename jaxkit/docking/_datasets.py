"""Docking data available offline.

(a) ``posebusters_complexes()``: the four real protein–ligand complexes shipped in the ``posebusters`` wheel
    (1ia1, 1of6, 1s3v, 1uou) for redocking; pocket = residues within ``cutoff`` Å of the crystal ligand.
(b) ``ccd_examples(n, split=...)``: drug-like ligands from the Chemical Component Dictionary shipped by
    ``biotite`` (filters: 2–8 torsional bonds, 10–40 heavy atoms, organic elements only), an RDKit ETKDGv3
    conformer as the reference pose, each in a *pseudo-pocket* built from the conformer's surroundings.

Pseudo-pocket construction (documented choice; SigmaDock trains on PDBBind, which is not available offline):
points are drawn on spheres of radius 3.6–4.6 Å around every ligand heavy atom; points closer than 3.3 Å to
any ligand atom are dropped (no clashes); points whose direction from the ligand centroid lies within 50° of a
random "mouth" axis are dropped (an open pocket, as real pockets are); the rest are thinned greedily to a minimum
spacing of 1.6 Å (about protein atom density) and typed C/N/O with probabilities 0.64/0.17/0.19. The pocket
therefore carries the shape of the bound pose, which is what a docking model has to read from a real pocket.

Splits are by component id: ``sha256(id) mod 10`` = 0 → test, 1 → validation, else train (stable under additions
to the dictionary).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem

from ._fragments import Fragmentation, conformer_positions, fragment_ligand, torsional_bonds
from ._structures import ORGANIC_ELEMENTS, Pocket, extract_pocket, load_ligand, load_protein

POSEBUSTERS_IDS = ("1ia1", "1of6", "1s3v", "1uou")


@dataclass(frozen=True)
class DockingExample:
    """A ligand (heavy atoms, reference pose as conformer 0), its fragmentation and its pocket."""

    id: str
    mol: Chem.Mol
    frag: Fragmentation
    pocket: Pocket
    split: str
    source: str

    @property
    def reference_positions(self) -> np.ndarray:
        return conformer_positions(self.frag.mol)


def split_of(component_id: str) -> str:
    """'test' / 'val' / 'train' from a stable hash of the id."""
    h = int(hashlib.sha256(component_id.encode()).hexdigest(), 16) % 10
    return "test" if h == 0 else ("val" if h == 1 else "train")


def posebusters_data_dir() -> Path:
    import posebusters

    return Path(posebusters.__file__).parent / "datasets" / "pdb"


def posebusters_complexes(ids: tuple[str, ...] = POSEBUSTERS_IDS, *, cutoff: float = 10.0) -> list[DockingExample]:
    """The complexes shipped by ``posebusters`` (crystal ligand pose as the reference)."""
    unknown = sorted(set(ids) - set(POSEBUSTERS_IDS))
    if unknown:
        raise ValueError(f"ids: expected a subset of {POSEBUSTERS_IDS}, received unknown {unknown}")
    out = []
    root = posebusters_data_dir()
    for pid in ids:
        lig = load_ligand(root / pid / f"{pid}_ligand.sdf")
        frag = fragment_ligand(lig)
        prot = load_protein(root / pid / f"{pid}_protein_one_lig_removed.pdb")
        pocket = extract_pocket(prot, conformer_positions(frag.mol), cutoff=cutoff)
        out.append(DockingExample(pid, frag.mol, frag, pocket, "test", "posebusters"))
    return out


def pseudo_pocket(positions: np.ndarray, rng: np.random.Generator, *, points_per_atom: int = 24) -> Pocket:
    """Pseudo-pocket around a ligand pose (see the module docstring for the construction)."""
    x = np.asarray(positions, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 3 or len(x) < 2:
        raise ValueError(f"positions: expected shape (n>=2, 3), received {x.shape}")
    centre = x.mean(0)
    dirs = rng.normal(size=(len(x), points_per_atom, 3))
    dirs /= np.linalg.norm(dirs, axis=-1, keepdims=True)
    radii = rng.uniform(3.6, 4.6, size=(len(x), points_per_atom, 1))
    pts = (x[:, None, :] + radii * dirs).reshape(-1, 3)
    dmin = np.sqrt(((pts[:, None, :] - x[None, :, :]) ** 2).sum(-1)).min(1)
    pts = pts[dmin >= 3.3]
    mouth = rng.normal(size=3)
    mouth /= np.linalg.norm(mouth)
    v = pts - centre
    cosang = (v @ mouth) / np.maximum(np.linalg.norm(v, axis=1), 1e-9)
    pts = pts[cosang < np.cos(np.deg2rad(50.0))]
    kept: list[np.ndarray] = []
    for p in pts[rng.permutation(len(pts))]:
        if not kept or np.min(np.linalg.norm(np.asarray(kept) - p, axis=1)) >= 1.6:
            kept.append(p)
    pos = np.asarray(kept)
    elements = rng.choice(np.array(["C", "N", "O"]), size=len(pos), p=[0.64, 0.17, 0.19])
    n = len(pos)
    return Pocket(
        positions=pos,
        elements=elements,
        residue_ids=np.arange(n),
        chain_ids=np.full(n, "P"),
        residue_names=np.full(n, "PSD"),
        atom_names=elements.copy(),
        centre=centre,
    )


def _ccd_mol(component_id: str) -> Chem.Mol | None:
    import biotite.interface.rdkit as bio_rdkit
    import biotite.structure.info as info

    try:
        atoms = info.residue(component_id)
    except Exception:
        return None
    heavy = int(np.sum(atoms.element != "H"))
    if not 10 <= heavy <= 40 or not set(np.unique(atoms.element)) <= ORGANIC_ELEMENTS:
        return None
    try:
        mol = bio_rdkit.to_mol(atoms, explicit_hydrogen=True)
        Chem.SanitizeMol(mol)
    except Exception:
        return None
    if len(Chem.GetMolFrags(mol)) != 1:
        return None
    return mol


def ccd_examples(
    n: int,
    *,
    split: str = "train",
    seed: int = 0,
    min_torsions: int = 2,
    max_torsions: int = 8,
    max_scan: int = 20000,
    fragmentation: str = "canonical",
) -> list[DockingExample]:
    """``n`` drug-like CCD ligands of one split with ETKDGv3 reference poses in pseudo-pockets (deterministic).

    ``fragmentation="random"`` draws the cut set uniformly among the minimal ones (SigmaDock's training-time
    augmentation; seeded); ``"canonical"`` is the deterministic choice used for evaluation.
    """
    if fragmentation not in ("canonical", "random"):
        raise ValueError(f"fragmentation: expected 'canonical' or 'random', received {fragmentation!r}")
    import biotite.structure.info as info

    if split not in ("train", "val", "test"):
        raise ValueError(f"split: expected 'train', 'val' or 'test', received {split!r}")
    if n < 1:
        raise ValueError(f"n: expected an integer >= 1, received {n}")
    RDLogger.DisableLog("rdApp.*")
    rng = np.random.default_rng(seed)
    names = sorted(info.all_residues())
    order = np.random.default_rng(12345).permutation(len(names))  # fixed scan order, independent of seed
    out: list[DockingExample] = []
    for scanned, idx in enumerate(order):
        if len(out) >= n or scanned >= max_scan:
            break
        cid = names[idx]
        if split_of(cid) != split:
            continue
        mol = _ccd_mol(cid)
        if mol is None:
            continue
        heavy = Chem.RemoveHs(mol)
        n_tors = len(torsional_bonds(heavy))
        if not min_torsions <= n_tors <= max_torsions:
            continue
        molh = Chem.AddHs(heavy)
        params = AllChem.ETKDGv3()
        params.randomSeed = int(rng.integers(2**31 - 1))
        if AllChem.EmbedMolecule(molh, params) != 0:
            continue
        try:
            frag = fragment_ligand(molh, choice=fragmentation, rng=rng if fragmentation == "random" else None)
        except ValueError:
            continue
        if frag.n_fragments < 2:
            continue
        pocket = pseudo_pocket(conformer_positions(frag.mol), rng)
        out.append(DockingExample(cid, frag.mol, frag, pocket, split, "ccd"))
    RDLogger.EnableLog("rdApp.*")
    return out
