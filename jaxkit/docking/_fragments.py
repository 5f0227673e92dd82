"""Rigid-fragment decomposition of ligands (SigmaDock, ICLR 2026).

A ligand is cut at a *minimal* set of torsional bonds so that every piece is rigid:

- torsional bonds are RDKit's non-ring torsions (``TorsionFingerprints.CalculateTorsionLists``) whose central bond
  is a single, non-ring bond;
- a cut set is *valid* when every fragment has at least 2 heavy atoms (a rigid body with a defined rotation) and
  every fragment with more than 3 atoms contains no torsional bond *of the fragment itself* (torsions recomputed
  on the fragment with the cut partners removed, as SigmaDock does);
- among valid cut sets we keep those with the fewest cuts; ``choice="canonical"`` prefers sets that cut no bond
  of a chiral center, then the one with the largest mean fragment size (ties: lexicographic bond order);
  ``choice="random"`` draws uniformly among the minimal sets (training-time augmentation).

Each cut adds one dummy atom to each side, standing for the partner's anchor atom (it moves rigidly with its own
fragment; in a correct pose it coincides with the partner anchor). Every fragment gets a local frame (centroid +
principal axes); a pose is the list of per-fragment rigid transforms ``x = R_f @ x_local + t_f``.

Molecules are handled on their heavy atoms (hydrogens removed), atom indices are those of ``Chem.RemoveAllHs(mol)``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from rdkit import Chem
from rdkit.Chem import TorsionFingerprints
from rdkit.rdBase import BlockLogs

from .._validate import check_finite, check_int, check_rotation


class FragmentationError(ValueError):
    """The molecule cannot be fragmented as requested (no valid cut set, bad input)."""


def heavy_atom_mol(mol: Chem.Mol) -> Chem.Mol:
    """Hydrogen-free copy of ``mol`` (keeps conformers); raises ``TypeError``/``ValueError`` on bad input."""
    if not isinstance(mol, Chem.Mol):
        raise TypeError(f"mol: expected an rdkit.Chem.Mol, received {type(mol).__name__}")
    if mol.GetNumAtoms() == 0:
        raise ValueError("mol: expected a molecule with atoms, received an empty molecule")
    out = Chem.RemoveAllHs(mol, sanitize=True)
    return out


def torsional_bonds(mol: Chem.Mol) -> list[int]:
    """Indices of non-ring single bonds that RDKit lists as (non-ring) torsions of ``mol``."""
    if mol.GetNumAtoms() < 4:
        return []
    non_ring, _ = TorsionFingerprints.CalculateTorsionLists(mol)
    found = set()
    for quads, _ in non_ring:
        for quad in quads:
            bond = mol.GetBondBetweenAtoms(int(quad[1]), int(quad[2]))
            if bond is not None and not bond.IsInRing() and bond.GetBondType() == Chem.BondType.SINGLE:
                found.add(bond.GetIdx())
    return sorted(found)


def _components(n_atoms: int, edges: list[tuple[int, int]]) -> np.ndarray:
    parent = list(range(n_atoms))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    roots = [find(i) for i in range(n_atoms)]
    # label components in order of their smallest atom index
    labels: dict[int, int] = {}
    out = np.empty(n_atoms, dtype=np.int32)
    for i, r in enumerate(roots):
        if r not in labels:
            labels[r] = len(labels)
        out[i] = labels[r]
    return out


def fragment_labels(mol: Chem.Mol, cut_bonds: tuple[int, ...] | list[int]) -> np.ndarray:
    """Fragment index of every atom after removing ``cut_bonds`` (fragments numbered by smallest atom)."""
    cut = set(int(b) for b in cut_bonds)
    bad = sorted(b for b in cut if not 0 <= b < mol.GetNumBonds())
    if bad:
        raise ValueError(f"cut_bonds: expected bond indices in [0, {mol.GetNumBonds()}), received {bad}")
    edges = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds() if b.GetIdx() not in cut]
    return _components(mol.GetNumAtoms(), edges)


_TORSION_CACHE: dict[str, bool] = {}


def _submol(mol: Chem.Mol, atoms: list[int]) -> Chem.Mol:
    _quiet = BlockLogs()  # noqa: F841  (RDKit warns about fragments it cannot kekulize; we fall back below)
    keep = set(atoms)
    rw = Chem.RWMol(mol)
    for idx in sorted((i for i in range(mol.GetNumAtoms()) if i not in keep), reverse=True):
        rw.RemoveAtom(idx)
    sub = rw.GetMol()
    try:
        Chem.SanitizeMol(sub)
    except Chem.rdchem.MolSanitizeException:
        Chem.SanitizeMol(sub, Chem.SanitizeFlags.SANITIZE_ALL ^ Chem.SanitizeFlags.SANITIZE_KEKULIZE)
    return sub


def _fragment_has_torsion(mol: Chem.Mol, atoms: list[int]) -> bool:
    sub = _submol(mol, atoms)
    key = Chem.MolToSmiles(sub)
    if key not in _TORSION_CACHE:
        _TORSION_CACHE[key] = bool(torsional_bonds(sub))
    return _TORSION_CACHE[key]


def is_valid_cut_set(mol: Chem.Mol, cut_bonds: tuple[int, ...] | list[int]) -> bool:
    """Every fragment has >= 2 atoms, and fragments with > 3 atoms hold no torsional bond of their own."""
    labels = fragment_labels(mol, cut_bonds)
    for f in range(int(labels.max()) + 1):
        atoms = np.flatnonzero(labels == f).tolist()
        if len(atoms) < 2:
            return False
        if len(atoms) > 3 and _fragment_has_torsion(mol, atoms):
            return False
    return True


def _fragment_valid(mol: Chem.Mol, atoms: list[int]) -> bool:
    return len(atoms) >= 2 and (len(atoms) <= 3 or not _fragment_has_torsion(mol, atoms))


def _exhaustive_cut_sets(mol: Chem.Mol, tors: list[int]) -> list[tuple[int, ...]]:
    for k in range(0, len(tors) + 1):
        found = [c for c in itertools.combinations(tors, k) if is_valid_cut_set(mol, c)]
        if found:
            return found
    raise FragmentationError(f"no valid cut set for {Chem.MolToSmiles(mol)}")


def _tree_cut_sets(mol: Chem.Mol, tors: list[int], max_sets: int) -> list[tuple[int, ...]]:
    """All minimum valid cut sets by dynamic programming on the block tree (see :func:`minimal_cut_sets`)."""
    labels = fragment_labels(mol, tors)  # blocks: components without the torsional bonds
    n_blocks = int(labels.max()) + 1
    block_atoms = [np.flatnonzero(labels == b).tolist() for b in range(n_blocks)]
    adj: list[list[tuple[int, int]]] = [[] for _ in range(n_blocks)]
    for b in tors:
        bond = mol.GetBondWithIdx(int(b))
        u, v = int(labels[bond.GetBeginAtomIdx()]), int(labels[bond.GetEndAtomIdx()])
        adj[u].append((v, int(b)))
        adj[v].append((u, int(b)))
    parent = [-1] * n_blocks
    children: list[list[tuple[int, int]]] = [[] for _ in range(n_blocks)]
    order, stack, seen = [], [0], {0}
    while stack:  # iterative DFS from block 0; torsional bonds are bridges, so this is a tree
        u = stack.pop()
        order.append(u)
        for v, b in adj[u]:
            if v not in seen:
                seen.add(v)
                parent[v] = u
                children[u].append((v, b))
                stack.append(v)
    best: dict[int, int] = {}
    sols: dict[int, list[frozenset[int]]] = {}
    for v in reversed(order):  # children before parents
        cand: list[tuple[int, list[frozenset[int]]]] = []

        def extend(
            members: list[int],
            atoms: list[int],
            frontier: list[tuple[int, int]],
            cut: list[tuple[int, int]],
            out: list,
        ) -> None:
            # members: blocks of the fragment; frontier: (child block, bond) pairs not yet decided
            if not frontier:
                if _fragment_valid(mol, atoms):
                    cost = 1 + sum(best[w] for w, _ in cut)
                    combos = [frozenset(b for _, b in cut)]
                    for w, _ in cut:
                        combos = [c | s for c in combos for s in sols[w]][:max_sets]
                    out.append((cost, combos))
                return
            (w, b), rest = frontier[0], frontier[1:]
            extend(members, atoms, rest, cut + [(w, b)], out)  # cut the bond to w
            grown = atoms + block_atoms[w]
            if len(grown) > 3 and _fragment_has_torsion(mol, grown):
                return  # torsions persist in every larger fragment: prune
            extend(members + [w], grown, rest + children[w], cut, out)

        extend([v], list(block_atoms[v]), list(children[v]), [], cand)
        if not cand:
            best[v], sols[v] = 10**9, []
            continue
        m = min(c for c, _ in cand)
        best[v] = m
        merged: list[frozenset[int]] = []
        for c, combos in cand:
            if c == m:
                merged.extend(combos)
        sols[v] = list(dict.fromkeys(merged))[:max_sets]
    if best[0] >= 10**9 or not sols[0]:
        raise FragmentationError(f"no valid cut set for {Chem.MolToSmiles(mol)}")
    return sorted(tuple(sorted(s)) for s in sols[0])


def minimal_cut_sets(mol: Chem.Mol, *, max_sets: int = 256) -> list[tuple[int, ...]]:
    """All valid cut sets of the smallest size (subsets of the torsional bonds), in lexicographic order.

    Torsional bonds are non-ring bonds, hence bridges: contracting every other bond leaves a tree of rigid blocks
    whose edges are the torsional bonds, and a cut set splits it into connected sub-trees (the fragments). A
    dynamic program on the block tree finds every minimum set (each fragment is a connected sub-tree with a top
    block; fragments holding a torsion of their own are pruned, since a larger fragment keeps that torsion), at
    most ``max_sets`` of them. It agrees with the exhaustive search over all ``2^T`` subsets (kept as
    ``_exhaustive_cut_sets`` for the tests) and has no torsion limit (the exhaustive search used to stop at 14).
    """
    check_int("max_sets", max_sets, minimum=1)
    tors = torsional_bonds(mol)
    if not tors:
        return [()]
    return _tree_cut_sets(mol, tors, max_sets)


def _chiral_bonds(mol: Chem.Mol) -> set[int]:
    centers = Chem.FindMolChiralCenters(mol, includeUnassigned=True, useLegacyImplementation=False)
    return {b.GetIdx() for idx, _ in centers for b in mol.GetAtomWithIdx(idx).GetBonds()}


@dataclass(frozen=True)
class Fragmentation:
    """A ligand split into rigid fragments.

    Attributes:
        mol: the heavy-atom molecule (with its conformers).
        cut_bonds: indices of the cut bonds.
        atom_fragment: ``(n_atoms,)`` fragment index of each atom.
        dummies: ``(n_dummies, 3)`` int rows ``(fragment, anchor_atom, partner_atom)``: a dummy atom attached to
            ``anchor_atom`` in ``fragment`` standing for ``partner_atom`` of the neighboring fragment.
    """

    mol: Chem.Mol
    cut_bonds: tuple[int, ...]
    atom_fragment: np.ndarray
    dummies: np.ndarray = field(repr=False)

    def __post_init__(self):
        check_finite("atom_fragment", self.atom_fragment)
        check_finite("dummies", self.dummies)

    @property
    def n_fragments(self) -> int:
        return int(self.atom_fragment.max()) + 1

    @property
    def n_atoms(self) -> int:
        return int(self.atom_fragment.shape[0])

    def fragment_atoms(self, f: int) -> np.ndarray:
        return np.flatnonzero(self.atom_fragment == f)

    def fragment_sizes(self) -> list[int]:
        return np.bincount(self.atom_fragment, minlength=self.n_fragments).tolist()


def fragment_ligand(
    mol: Chem.Mol, *, choice: str = "canonical", rng: np.random.Generator | None = None
) -> Fragmentation:
    """Split ``mol`` (hydrogens are removed) at a minimal valid set of torsional bonds.

    Args:
        choice: ``"canonical"`` (deterministic; avoids cutting bonds of chiral centers when a minimal set allows)
            or ``"random"`` (uniform over the minimal sets; needs ``rng``).
    """
    if choice not in ("canonical", "random"):
        raise ValueError(f"choice: expected 'canonical' or 'random', received {choice!r}")
    if choice == "random" and rng is None:
        raise ValueError("rng: choice='random' needs a numpy Generator, received None")
    heavy = heavy_atom_mol(mol)
    if heavy.GetNumAtoms() < 2:
        raise FragmentationError(
            f"mol: expected a ligand of at least 2 heavy atoms (every fragment has >= 2), received "
            f"{heavy.GetNumAtoms()} ({Chem.MolToSmiles(heavy)})"
        )
    sets = minimal_cut_sets(heavy)
    if choice == "random":
        cut = sets[int(rng.integers(len(sets)))]
    else:
        chiral = _chiral_bonds(heavy)

        def score(c: tuple[int, ...]):
            sizes = np.bincount(fragment_labels(heavy, c))
            return (bool(chiral & set(c)), -float(np.mean(sizes)), c)

        cut = min(sets, key=score)
    labels = fragment_labels(heavy, cut)
    dummies = []
    for b in cut:
        bond = heavy.GetBondWithIdx(int(b))
        i, j = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        dummies.append((int(labels[i]), i, j))
        dummies.append((int(labels[j]), j, i))
    return Fragmentation(
        mol=heavy,
        cut_bonds=tuple(int(b) for b in cut),
        atom_fragment=labels,
        dummies=np.asarray(dummies, dtype=np.int32).reshape(-1, 3),
    )


def conformer_positions(mol: Chem.Mol, conf_id: int = -1) -> np.ndarray:
    """``(n_atoms, 3)`` float64 coordinates of a conformer; raises ``ValueError`` if there is none."""
    if mol.GetNumConformers() == 0:
        raise ValueError("mol: expected a molecule with a 3D conformer, received one with no conformers")
    return np.asarray(mol.GetConformer(conf_id).GetPositions(), dtype=np.float64)


def fragment_frames(frag: Fragmentation, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-fragment frames ``(R (F,3,3), t (F,3))`` of a pose: centroid and right-handed principal axes.

    The axes are the eigenvectors of the fragment's coordinate covariance (largest first), signs fixed by the
    first atom's projection, completed to a rotation; a 2-atom (linear) fragment gets an arbitrary but
    deterministic completion. Any orthonormal choice reassembles exactly.
    """
    positions = np.asarray(positions, dtype=np.float64)
    if positions.shape != (frag.n_atoms, 3):
        raise ValueError(f"positions: expected shape ({frag.n_atoms}, 3), received {positions.shape}")
    check_finite("positions", positions)
    rots, trans = [], []
    for f in range(frag.n_fragments):
        x = positions[frag.fragment_atoms(f)]
        c = x.mean(0)
        d = x - c
        _, vecs = np.linalg.eigh(d.T @ d + 1e-12 * np.eye(3))
        axes = vecs[:, ::-1].copy()
        for k in range(2):
            proj = d @ axes[:, k]
            s = proj[np.argmax(np.abs(proj))] if np.any(np.abs(proj) > 1e-9) else 1.0
            axes[:, k] *= np.sign(s) if s != 0 else 1.0
        axes[:, 2] = np.cross(axes[:, 0], axes[:, 1])
        rots.append(axes)
        trans.append(c)
    return np.stack(rots), np.stack(trans)


def local_coordinates(frag: Fragmentation, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Atom and dummy coordinates in their fragment's frame: ``(atoms (n,3), dummies (n_dummies,3))``."""
    positions = np.asarray(positions, dtype=np.float64)
    rots, trans = fragment_frames(frag, positions)
    f = frag.atom_fragment
    atoms = np.einsum("nji,nj->ni", rots[f], positions - trans[f])
    if len(frag.dummies):
        df, _, partner = frag.dummies.T
        dummies = np.einsum("nji,nj->ni", rots[df], positions[partner] - trans[df])
    else:
        dummies = np.zeros((0, 3))
    return atoms, dummies


def _checked_transforms(
    frag: Fragmentation, rotations: np.ndarray, translations: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``rotations (n_fragments, 3, 3)`` (valid rotations) and ``translations (n_fragments, 3)`` (finite) as arrays,
    or ``ValueError`` naming them."""
    rotations = np.asarray(rotations)
    translations = np.asarray(translations)
    if rotations.shape != (frag.n_fragments, 3, 3) or translations.shape != (frag.n_fragments, 3):
        raise ValueError(
            f"rotations/translations: expected shapes ({frag.n_fragments}, 3, 3) and ({frag.n_fragments}, 3), "
            f"received {rotations.shape} and {translations.shape}"
        )
    check_rotation("rotations", rotations)
    check_finite("translations", translations)
    return rotations, translations


def reassemble(
    frag: Fragmentation, local_atoms: np.ndarray, rotations: np.ndarray, translations: np.ndarray
) -> np.ndarray:
    """Pose from per-fragment rigid transforms: ``x_a = R_{f(a)} x_local_a + t_{f(a)}``."""
    rotations, translations = _checked_transforms(frag, rotations, translations)
    local_atoms = np.asarray(local_atoms, dtype=np.float64)
    if local_atoms.shape != (len(frag.atom_fragment), 3):
        raise ValueError(
            f"local_atoms: expected shape ({len(frag.atom_fragment)}, 3), received {local_atoms.shape}"
        )
    check_finite("local_atoms", local_atoms)
    f = frag.atom_fragment
    return np.einsum("nij,nj->ni", rotations[f], local_atoms) + translations[f]


def fragment_dummy_positions(
    frag: Fragmentation, local_dummies: np.ndarray, rotations: np.ndarray, translations: np.ndarray
) -> np.ndarray:
    """NumPy, on a `Fragmentation`: world positions of the dummy atoms under per-fragment transforms (they should hit
    the partner anchors). The padded, differentiable version on a `DockingComplex` is `dummy_positions`."""
    rotations, translations = _checked_transforms(frag, rotations, translations)
    local_dummies = np.asarray(local_dummies, dtype=np.float64)
    if local_dummies.shape != (len(frag.dummies), 3):
        raise ValueError(
            f"local_dummies: expected shape ({len(frag.dummies)}, 3) (one row per dummy atom), "
            f"received {local_dummies.shape}"
        )
    check_finite("local_dummies", local_dummies)
    if len(frag.dummies) == 0:
        return np.zeros((0, 3))
    df = frag.dummies[:, 0]
    return np.einsum("nij,nj->ni", rotations[df], local_dummies) + translations[df]
