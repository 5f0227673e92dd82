"""SigmaDock-style docking (in progress): rigid-fragment decomposition of ligands.

Done: :mod:`jaxkit.docking.fragments` (torsional bonds, minimal valid cut sets, dummy atoms, local frames,
reassembly) and :mod:`jaxkit.docking.structures` (ligand/protein reading, pocket extraction). Not yet built:
featurisation, the equivariant score model, SE(3)^N diffusion
training/sampling and evaluation (see the docking issue).
"""

from .fragments import (
    Fragmentation,
    FragmentationError,
    conformer_positions,
    dummy_positions,
    fragment_frames,
    fragment_labels,
    fragment_ligand,
    heavy_atom_mol,
    is_valid_cut_set,
    local_coordinates,
    minimal_cut_sets,
    reassemble,
    torsional_bonds,
)
from .structures import ORGANIC_ELEMENTS, Pocket, StructureError, extract_pocket, load_ligand, load_protein

__all__ = [
    "ORGANIC_ELEMENTS",
    "Pocket",
    "StructureError",
    "extract_pocket",
    "load_ligand",
    "load_protein",
    "Fragmentation",
    "FragmentationError",
    "conformer_positions",
    "dummy_positions",
    "fragment_frames",
    "fragment_labels",
    "fragment_ligand",
    "heavy_atom_mol",
    "is_valid_cut_set",
    "local_coordinates",
    "minimal_cut_sets",
    "reassemble",
    "torsional_bonds",
]
