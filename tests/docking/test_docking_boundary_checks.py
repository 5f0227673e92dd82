"""Fuzz-found regressions (issue 49, docking factories): public docking functions that returned NaN, a silently
truncated result or an error naming another argument (or none) for a bad input now raise, naming the argument."""

from pathlib import Path

import jax
import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import AllChem

import jaxkit.docking
from jaxkit import docking as dk
from jaxkit.docking._realeval import docking_inputs, model_method

REAL = Path(jaxkit.docking.__file__).parent / "data" / "real" / "1ac8"  # 8 heavy atoms, a 380-atom pocket
PROTEIN = REAL / "1ac8_pocket.pdb"


@pytest.fixture(scope="module")
def small():
    mol = Chem.AddHs(Chem.MolFromSmiles("OCCc1ccc(CC(=O)N)cc1"))
    AllChem.EmbedMolecule(mol, randomSeed=0)
    lig = dk.ligand_fragments(mol, conformer="rdkit", seed=0)
    x = dk.conformer_positions(lig.frag.mol)
    rots, trans = dk.fragment_frames(lig.frag, x)
    _, local_dummies = dk.local_coordinates(lig.frag, x)
    return lig, x, rots, trans, local_dummies


@pytest.fixture(scope="module")
def real():
    return dk.load_complex(REAL, split="val", source="real")


def test_fragment_dummy_positions_checks_its_transforms(small):
    lig, _, rots, trans, local = small
    frag = lig.frag
    assert np.all(np.isfinite(dk.fragment_dummy_positions(frag, local, rots, trans)))
    bad = trans.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="translations: expected finite"):
        dk.fragment_dummy_positions(frag, local, rots, bad)  # was NaN dummy positions
    with pytest.raises(ValueError, match="rotations"):
        dk.fragment_dummy_positions(frag, local, rots * np.nan, trans)
    with pytest.raises(ValueError, match="rotations/translations: expected shapes"):
        dk.fragment_dummy_positions(frag, local, np.concatenate([rots, rots[:1]]), trans)  # extra one ignored
    with pytest.raises(ValueError, match="local_dummies: expected shape"):
        dk.fragment_dummy_positions(frag, local[:0], rots, trans)  # was NumPy's broadcasting error
    bad = np.array(local)
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="local_dummies: expected finite"):
        dk.fragment_dummy_positions(frag, bad, rots, trans)


def test_assemble_poses_checks_samples_gaps_and_seed(small):
    lig, x, *_ = small
    mols, gaps = dk.assemble_poses(lig, x[None], np.zeros(1), relax=False)
    assert len(mols) == 1 and gaps.shape == (1,)
    bad = x[None].copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="x: expected finite"):
        dk.assemble_poses(lig, bad, np.zeros(1), relax=False)  # was "positions: ..." (not an argument)
    with pytest.raises(ValueError, match="x: expected at least one sample"):
        dk.assemble_poses(lig, x[None][:0], np.zeros(0), relax=False)
    with pytest.raises(ValueError, match="gaps: expected finite"):
        dk.assemble_poses(lig, x[None], np.array([np.nan]), relax=False)  # was a NaN gap returned
    with pytest.raises(ValueError, match="seed: expected an integer >= 0"):
        dk.assemble_poses(lig, x[None], np.zeros(1), relax=False, seed=-1)


def test_random_placement_checks_the_pocket_center_spread_and_size(real):
    mol, pocket = real.mol, real.pocket
    kw = dict(k=2, seed=0)
    with pytest.raises(ValueError, match="center: expected finite"):
        dk.random_placement(mol, pocket.positions, np.array([np.nan, 0.0, 0.0]), **kw)  # was a NaN pose
    with pytest.raises(ValueError, match=r"center: expected shape \(3,\)"):
        dk.random_placement(mol, pocket.positions, np.zeros(0), **kw)
    bad = pocket.positions.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="pocket_positions: expected finite"):
        dk.random_placement(mol, bad, pocket.center, **kw)  # was "pocket: ..."
    with pytest.raises(ValueError, match="pocket_positions: expected shape"):
        dk.random_placement(mol, pocket.positions[:0], pocket.center, **kw)
    with pytest.raises(ValueError, match="spread: expected a finite value"):
        dk.random_placement(mol, pocket.positions, pocket.center, spread=np.nan, **kw)  # was a NaN pose
    with pytest.raises(ValueError, match="seed: expected an integer >= 0"):
        dk.random_placement(mol, pocket.positions, pocket.center, k=2, seed=-1)
    with pytest.raises(ValueError, match="k: the request needs about"):
        dk.random_placement(mol, pocket.positions, pocket.center, k=2**40, seed=0)  # was an XLA crash


def test_pocket_selection_refuses_infinite_radii_and_names_the_ligand(real):
    prot = dk.load_protein(PROTEIN)
    lig = dk.conformer_positions(real.mol)
    with pytest.raises(ValueError, match="cutoff: expected a finite value"):
        dk.extract_pocket(prot, lig, cutoff=np.inf)  # was the whole protein
    with pytest.raises(ValueError, match="size: expected a finite value"):
        dk.pocket_from_center(prot, real.pocket.center, size=np.inf)
    bad = lig.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="ligand_positions: expected finite"):
        dk.extract_pocket(prot, bad)  # was "center: ..." or "nearest is nan Å"
    with pytest.raises(dk.StructureError, match="ligand_positions: no protein atom"):
        dk.extract_pocket(prot, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="box_size: expected a finite positive"):
        docking_inputs(real, seed=0, box_size=float("inf"))  # was DockingInputs(box_size=inf)


def test_vina_wrappers_check_the_box_before_running_vina(real, tmp_path):
    far = real.pocket.center + 50.0
    with pytest.raises(ValueError, match="center/box_size: expected the pose of mol inside the box"):
        dk.vina_pose_energy(PROTEIN, real.mol, far, workdir=tmp_path)  # was Vina's RuntimeError
    with pytest.raises(ValueError, match="box_size: expected a finite value > 0"):
        dk.vina_pose_energy(PROTEIN, real.mol, real.pocket.center, box_size=np.nan, workdir=tmp_path)
    with pytest.raises(ValueError, match=r"center: expected shape \(3,\)"):
        dk.vina_dock(PROTEIN, real.mol, np.zeros(2), workdir=tmp_path)
    with pytest.raises(ValueError, match="box_size: expected a finite value > 0"):
        dk.vina_dock(PROTEIN, real.mol, real.pocket.center, box_size=0.0, workdir=tmp_path)
    with pytest.raises(ValueError, match="exhaustiveness: expected an integer >= 1"):
        dk.vina_dock(PROTEIN, real.mol, real.pocket.center, exhaustiveness=0, workdir=tmp_path)
    rec = dk.pocket_pdbqt(real.pocket, tmp_path / "pocket.pdbqt")
    with pytest.raises(ValueError, match="center: expected 3 finite coordinates"):
        dk.VinardoScorer(rec, np.zeros(0))  # was NumPy's reshape error
    with pytest.raises(ValueError, match="box: expected a finite number"):
        dk.VinardoScorer(rec, real.pocket.center, box=np.nan)


def test_rank_poses_checks_the_gaps_and_the_budget(small):
    lig, x, *_ = small
    mols = [lig.frag.mol, lig.frag.mol]
    kw = dict(order="consensus", pb_budget=0)
    with pytest.raises(ValueError, match="gaps: expected finite"):
        dk.rank_poses(mols, [0.0, np.nan], None, None, **kw)  # was a pose with bond_gap NaN
    with pytest.raises(ValueError, match="gaps: expected one bond gap per pose"):
        dk.rank_poses(mols, [0.0, 0.0, 0.0], None, None, **kw)  # the extra gap was ignored
    with pytest.raises(ValueError, match="pb_budget: expected an integer >= 0"):
        dk.rank_poses(mols, [0.0, 0.0], None, None, order="consensus", pb_budget=-1)


def test_entry_points_name_their_own_arguments(real, small, tmp_path):
    with pytest.raises(ValueError, match="pocket_size: expected a finite value"):
        dk.dock(PROTEIN, "CCO", pocket=[0.0, 0.0, 0.0], pocket_size=np.nan)  # was "size: ..."
    with pytest.raises(ValueError, match="conformer_seed: expected an integer >= 0"):
        dk.dock(PROTEIN, "CCO", pocket=[0.0, 0.0, 0.0], conformer_seed=-1)  # was "seed: ..."
    with pytest.raises(ValueError, match="pb_budget: expected an integer >= 0"):
        dk.dock(PROTEIN, "CCO", pocket=[0.0, 0.0, 0.0], pb_budget=-1)
    with pytest.raises(ValueError, match="n_steps: expected an integer >= 1"):
        model_method(tmp_path / "unused.jkc", n_steps=0)  # was a method that failed on every complex
    with pytest.raises(ValueError, match="pb_budget: expected an integer >= 0"):
        model_method(tmp_path / "unused.jkc", pb_budget=-1)
    with pytest.raises(ValueError, match="augment: expected an integer >= 1"):
        dk.featurize_examples([real], dk.ComplexSizes(), augment=0)  # was "none could be featurized"
    config = dk.ModelConfig(width=4, depth=1, n_rbf=4, k_pocket=4)
    model = dk.build_model(config, jax.random.key(0))
    for bad, name in ((dict(conformer_seed=-1), "conformer_seed"), (dict(pb_budget=-1), "pb_budget")):
        with pytest.raises(ValueError, match=f"{name}: expected an integer >= 0"):
            dk.evaluate_complex(real, model, jax.random.key(0), config=config, n_samples=1, n_steps=1, **bad)
    lig = small[0]
    batch = dk.stack_complexes(
        [dk.build_complex(lig, dk.pseudo_pocket(small[1], np.random.default_rng(0)))] * 2
    )
    process = dk.docking_process()
    with pytest.raises(ValueError, match="t_power: expected a finite value > 0"):
        dk.batch_loss(model, process, batch, jax.random.key(0), t_power=np.nan)  # was an EquinoxRuntimeError
