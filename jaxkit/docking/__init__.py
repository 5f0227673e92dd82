"""SigmaDock-style docking (in progress): rigid-fragment decomposition of ligands.

Done: :mod:`jaxkit.docking.fragments` (torsional bonds, minimal valid cut sets, dummy atoms, local frames,
reassembly), :mod:`jaxkit.docking.structures` (ligand/protein reading, pocket extraction),
:mod:`jaxkit.docking.featurize` (padded complex graphs) and :mod:`jaxkit.docking.score_model` (EGNN pseudo-forces
pooled into per-fragment translation/rotation scores). Not yet built: SE(3)^N diffusion
training/sampling and evaluation (see the docking issue).
"""

from .featurize import ELEMENT_CLASSES, N_NODE_FEATURES, ComplexGraph, build_complex_graph
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
from .score_model import EGNNLayer, EGNNScoreModel, fragment_scores
from .structures import ORGANIC_ELEMENTS, Pocket, StructureError, extract_pocket, load_ligand, load_protein

__all__ = [
    "ELEMENT_CLASSES",
    "N_NODE_FEATURES",
    "ComplexGraph",
    "EGNNLayer",
    "EGNNScoreModel",
    "build_complex_graph",
    "fragment_scores",
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
