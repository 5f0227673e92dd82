"""Complex graphs for the score model: ligand + pocket atoms, padded to fixed sizes for batching.

Node features: one-hot element class (separate classes for ligand and pocket atoms), aromatic flag, formal charge.
Pair features (dense ``n × n``, masked): covalent bond in the ligand, same rigid fragment, ligand–pocket pair.
Edges are all pairs within ``radius`` Å (recomputed from the current coordinates inside the model).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rdkit import Chem

from ._fragments import Fragmentation
from ._structures import Pocket

ELEMENT_CLASSES = ("C", "N", "O", "S", "P", "F", "Cl", "Br", "I", "B", "other")
N_NODE_FEATURES = 2 * len(ELEMENT_CLASSES) + 2


def _element_index(symbol: str) -> int:
    return ELEMENT_CLASSES.index(symbol) if symbol in ELEMENT_CLASSES else len(ELEMENT_CLASSES) - 1


@dataclass(frozen=True)
class ComplexGraph:
    """A padded complex. Arrays (numpy) have a leading node axis of size ``n_max``.

    Attributes:
        positions: ``(n_max, 3)`` Å, ligand atoms first, then pocket atoms, then padding (zeros).
        node_features: ``(n_max, N_NODE_FEATURES)``.
        pair_features: ``(n_max, n_max, 3)`` (bond, same fragment, ligand–pocket).
        node_mask: ``(n_max,)`` 1 for real atoms.
        is_ligand: ``(n_max,)`` 1 for ligand atoms.
        fragment: ``(n_max,)`` fragment index of ligand atoms, -1 elsewhere.
        fragment_mask: ``(f_max,)`` 1 for real fragments.
    """

    positions: np.ndarray
    node_features: np.ndarray
    pair_features: np.ndarray
    node_mask: np.ndarray
    is_ligand: np.ndarray
    fragment: np.ndarray
    fragment_mask: np.ndarray

    def as_arrays(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def build_complex_graph(
    frag: Fragmentation,
    ligand_positions: np.ndarray,
    pocket: Pocket,
    *,
    n_max: int | None = None,
    f_max: int | None = None,
    ligand_slots: int | None = None,
) -> ComplexGraph:
    """Assemble a :class:`ComplexGraph` (coordinates are kept in Å, not centred; the model is equivariant).

    ``ligand_slots`` fixes where the pocket starts (ligand atoms in ``[0, n_lig)``, padding up to
    ``ligand_slots``, pocket atoms from ``ligand_slots``), so that complexes of different sizes stack.
    """
    mol: Chem.Mol = frag.mol
    n_lig, n_poc = frag.n_atoms, pocket.n_atoms
    lig = np.asarray(ligand_positions, dtype=np.float64)
    if lig.shape != (n_lig, 3):
        raise ValueError(f"ligand_positions: expected shape ({n_lig}, 3), received {lig.shape}")
    off = n_lig if ligand_slots is None else int(ligand_slots)
    if off < n_lig:
        raise ValueError(f"ligand_slots: expected at least the {n_lig} ligand atoms, received {off}")
    n = off + n_poc
    n_max = n if n_max is None else n_max
    f_max = frag.n_fragments if f_max is None else f_max
    if n_max < n:
        raise ValueError(f"n_max: expected at least the {n} atoms of the complex, received {n_max}")
    if f_max < frag.n_fragments:
        raise ValueError(f"f_max: expected at least the {frag.n_fragments} fragments, received {f_max}")
    k = len(ELEMENT_CLASSES)
    feats = np.zeros((n_max, N_NODE_FEATURES), np.float32)
    for a in mol.GetAtoms():
        i = a.GetIdx()
        feats[i, _element_index(a.GetSymbol())] = 1.0
        feats[i, 2 * k] = float(a.GetIsAromatic())
        feats[i, 2 * k + 1] = float(a.GetFormalCharge())
    for j, el in enumerate(pocket.elements):
        sym = el.capitalize() if len(el) > 1 else el
        feats[off + j, k + _element_index(sym)] = 1.0
    pos = np.zeros((n_max, 3))
    pos[:n_lig] = lig
    pos[off:n] = pocket.positions
    pair = np.zeros((n_max, n_max, 3), np.float32)
    for b in mol.GetBonds():
        i, j = b.GetBeginAtomIdx(), b.GetEndAtomIdx()
        pair[i, j, 0] = pair[j, i, 0] = 1.0
    fr = np.full(n_max, -1, np.int32)
    fr[:n_lig] = frag.atom_fragment
    same = (fr[:, None] == fr[None, :]) & (fr[:, None] >= 0)
    pair[..., 1] = same
    is_lig = np.zeros(n_max, np.float32)
    is_lig[:n_lig] = 1.0
    mask = np.zeros(n_max, np.float32)
    mask[:n_lig] = 1.0
    mask[off:n] = 1.0
    pair[..., 2] = (is_lig[:, None] * (1 - is_lig[None, :]) + (1 - is_lig[:, None]) * is_lig[None, :]) * (
        mask[:, None] * mask[None, :]
    )
    fmask = np.zeros(f_max, np.float32)
    fmask[: frag.n_fragments] = 1.0
    return ComplexGraph(pos.astype(np.float32), feats, pair, mask, is_lig, fr, fmask)
