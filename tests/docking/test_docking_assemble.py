"""Conformer matching (DiffDock) and consensus ranking: recovery of known torsions + rigid motions set by RDKit's
own SetDihedralRad, bond geometry kept, Kabsch RMSD against RDKit's AlignMol and scipy, bad inputs."""

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import AllChem, rdMolAlign
from rdkit.Chem import rdMolTransforms as T
from scipy.spatial.transform import Rotation

from jaxkit.docking import (
    assemble_poses,
    conformer_positions,
    consensus_counts,
    ligand_fragments,
    match_conformer,
    rank_poses,
    rotatable_torsions,
    with_positions,
)
from jaxkit.docking._assemble import _kabsch_rmsd

SMILES = "CCOC(=O)c1ccc(NCCOc2ccccc2)cc1"  # 8 rotatable torsions (heavy atoms)


@pytest.fixture(scope="module")
def mol():
    m = Chem.AddHs(Chem.MolFromSmiles(SMILES))
    AllChem.EmbedMolecule(m, randomSeed=1)
    return Chem.RemoveHs(m)


def _bond_lengths(m, x):
    return np.array([np.linalg.norm(x[b.GetBeginAtomIdx()] - x[b.GetEndAtomIdx()]) for b in m.GetBonds()])


def _angles(m, x):
    out = []
    for a in m.GetAtoms():
        nb = [n.GetIdx() for n in a.GetNeighbors()]
        for i in range(len(nb)):
            for j in range(i + 1, len(nb)):
                u, v = x[nb[i]] - x[a.GetIdx()], x[nb[j]] - x[a.GetIdx()]
                out.append(np.arccos(np.clip(u @ v / np.linalg.norm(u) / np.linalg.norm(v), -1, 1)))
    return np.array(out)


def test_known_torsions_and_rigid_motion_are_recovered(mol):
    quads, _ = rotatable_torsions(mol)
    assert len(quads) == 8
    target = Chem.Mol(mol)
    conf = target.GetConformer()
    want = np.random.default_rng(0).uniform(-np.pi, np.pi, len(quads))
    for q, a in zip(quads, want):
        T.SetDihedralRad(conf, *map(int, q), float(a))
    y = conformer_positions(target) @ Rotation.random(random_state=1).as_matrix().T + np.array(
        [3.0, -2.0, 5.0]
    )
    res = match_conformer(mol, y)
    assert res.rmsd < 1e-3
    assert np.allclose(np.cos(res.dihedrals - want), 1.0, atol=1e-5)
    x0 = conformer_positions(mol)
    assert np.allclose(_bond_lengths(mol, res.positions), _bond_lengths(mol, x0), atol=1e-9)
    # the returned molecule carries the matched pose; its torsions agree with RDKit's GetDihedralRad
    got = [T.GetDihedralRad(res.mol.GetConformer(), *map(int, q)) for q in quads]
    assert np.allclose(np.cos(np.array(got) - want), 1.0, atol=1e-5)


def test_noisy_target_keeps_chemistry_and_beats_the_rigid_fit(mol):
    x0 = conformer_positions(mol)
    y = x0 + np.random.default_rng(2).normal(scale=0.7, size=x0.shape)
    res = match_conformer(mol, y, restarts=1)
    assert np.allclose(_bond_lengths(mol, res.positions), _bond_lengths(mol, x0), atol=1e-9)
    assert np.allclose(_angles(mol, res.positions), _angles(mol, x0), atol=1e-8)
    # chirality/handedness: the matched pose is a proper motion of a torsion-changed conformer, so aligning the
    # untouched conformer rigidly (RDKit AlignMol, independent) can only be worse than or equal to the match
    rigid = rdMolAlign.AlignMol(
        Chem.Mol(mol), with_positions(mol, y), atomMap=[(i, i) for i in range(len(x0))]
    )
    assert res.rmsd <= rigid + 1e-9
    assert abs(res.rmsd - np.sqrt(np.mean(np.sum((res.positions - y) ** 2, -1)))) < 1e-12


def test_kabsch_rmsd_matches_rdkit_and_scipy():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(12, 3)), rng.normal(size=(12, 3))
    _, rssd = Rotation.align_vectors(y - y.mean(0), x - x.mean(0))
    assert abs(_kabsch_rmsd(x, y) - rssd / np.sqrt(12)) < 1e-10
    rigid = Chem.MolFromSmiles("c1ccccc1")  # no torsion: the match is the Kabsch fit alone
    AllChem.Compute2DCoords(rigid)
    xb = conformer_positions(rigid)
    yb = xb + rng.normal(scale=0.2, size=xb.shape)
    res = match_conformer(rigid, yb)
    ref = rdMolAlign.AlignMol(Chem.Mol(rigid), with_positions(rigid, yb), atomMap=[(i, i) for i in range(6)])
    assert len(res.torsions) == 0 and abs(res.rmsd - ref) < 1e-6


def test_conformer_matching_of_sampled_fragments_closes_the_bond_gaps():
    mol = Chem.AddHs(Chem.MolFromSmiles("OCCc1ccc(CC(=O)N)cc1"))
    AllChem.EmbedMolecule(mol, randomSeed=0)
    lig = ligand_fragments(mol, conformer="rdkit", seed=0)
    x0 = conformer_positions(lig.frag.mol)
    rng = np.random.default_rng(4)
    samples = []
    for _ in range(3):  # each fragment moved rigidly by a small random motion: gaps open at the cut bonds
        x = x0.copy()
        for f in range(lig.frag.n_fragments):
            idx = lig.frag.fragment_atoms(f)
            r = Rotation.from_rotvec(rng.normal(scale=0.15, size=3)).as_matrix()
            c = x0[idx].mean(0)
            x[idx] = (x0[idx] - c) @ r.T + c + rng.normal(scale=0.3, size=3)
        samples.append(x)
    mols, gaps = assemble_poses(lig, np.stack(samples), np.ones(3), assemble="conformer_matching")
    assert np.all(gaps == 0.0)
    for m, x in zip(mols, samples):
        xm = conformer_positions(m)
        assert np.allclose(_bond_lengths(lig.frag.mol, xm), _bond_lengths(lig.frag.mol, x0), atol=1e-9)
        assert m.GetDoubleProp("conformer_match_rmsd") < 0.6
        assert (
            abs(m.GetDoubleProp("conformer_match_rmsd") - np.sqrt(np.mean(np.sum((xm - x) ** 2, -1)))) < 1e-9
        )


def test_consensus_counts_and_consensus_ranking(mol):
    x0 = conformer_positions(mol)
    far = x0 + np.array([10.0, 0.0, 0.0])
    poses = np.stack([x0, x0 + 1.0, far, x0 - 0.3])  # RMSDs: 0-1 1.73, 0-3 0.52, 1-3 2.25, far > 9 Å
    counts, mean = consensus_counts(poses)
    d = np.sqrt(np.mean(np.sum((poses[:, None] - poses[None]) ** 2, -1), -1))
    assert counts.tolist() == [2, 1, 0, 1]
    assert np.allclose(mean, d.sum(1) / 3)
    mols = [with_positions(mol, p) for p in poses]
    ranked = rank_poses(
        mols, [1.0] * 4, None, None, order="consensus"
    )  # all gaps > max_gap: no PoseBusters call
    assert ranked[0].index == 0 and ranked[-1].index == 2


def test_bad_inputs_are_named(mol):
    x0 = conformer_positions(mol)
    with pytest.raises(TypeError, match="mol"):
        match_conformer("CCO", x0)
    with pytest.raises(ValueError, match="target"):
        match_conformer(mol, x0[:-1])
    bad = x0.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="target"):
        match_conformer(mol, bad)
    with pytest.raises(ValueError, match="restarts"):
        match_conformer(mol, x0, restarts=-1)
    with pytest.raises(ValueError, match="scan_points"):
        match_conformer(mol, x0, scan_points=True)
    with pytest.raises(ValueError, match="conformer"):
        match_conformer(Chem.MolFromSmiles("CCO"), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="positions"):
        consensus_counts(np.zeros((4, 3)))
    # Literal options: the library's ValueError, or the runtime type check (tests/conftest.py) first
    with pytest.raises((ValueError, TypeError), match="order"):
        rank_poses([mol], [0.0], None, None, order="energy")
    lig = ligand_fragments(mol, conformer="oracle")
    with pytest.raises((ValueError, TypeError), match="assemble"):
        assemble_poses(lig, x0[None], np.zeros(1), assemble="matching")
    with pytest.raises(
        ValueError, match="^x: "
    ):  # fewer atoms than the ligand (was an error naming "target")
        assemble_poses(lig, x0[None, :3], np.zeros(1), assemble="conformer_matching")
    with pytest.raises(ValueError, match="^gaps: "):
        assemble_poses(lig, x0[None], np.zeros(2))
