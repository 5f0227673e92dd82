"""The confidence model: it never receives the reference pose (a sentinel), and trained on some complexes it ranks
a known-good pose above perturbed copies of it on a complex it never trained on (a positive control of the
learner; the shipped confidence model is trained on poses sampled by the docking model)."""

import dataclasses

import jax
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from jaxkit.docking import (
    ComplexSizes,
    ConfidenceInputs,
    ConfidenceModel,
    build_complex,
    confidence_inputs,
    confidence_scores,
    ligand_fragments,
    real_training_complexes,
    train_confidence,
)
from jaxkit.docking._confidence import pad_pose


@pytest.fixture(scope="module")
def complexes():
    exs = [e for e in real_training_complexes() if e.mol.GetNumAtoms() <= 40][:9]
    pocket = -(-max(e.pocket.n_atoms for e in exs) // 128) * 128
    sizes = ComplexSizes(48, pocket, 16, 30)
    out = []
    for e in exs:
        lig = ligand_fragments(e.mol, conformer="rdkit", seed=0)
        ref = build_complex(lig, e.pocket, sizes=sizes, reference=e.reference_positions, name=e.id)
        out.append((e, ref, build_complex(lig, e.pocket, sizes=sizes, name=e.id)))
    return out


def _perturb(x, rng, angle, shift):
    c = x.mean(0)
    axis = rng.normal(size=3)
    rot = Rotation.from_rotvec(axis / np.linalg.norm(axis) * np.deg2rad(angle))
    d = rng.normal(size=3)
    return rot.apply(x - c) + c + shift * d / np.linalg.norm(d)


def test_the_reference_pose_never_reaches_the_confidence_model(complexes):
    e, with_ref, without = complexes[0]
    names = {f.name for f in dataclasses.fields(ConfidenceInputs)}
    assert not names & {"R0", "T0", "reference"} and "atom_features" in names
    poisoned = dataclasses.replace(
        with_ref, R0=np.full_like(with_ref.R0, np.nan), T0=np.full_like(with_ref.T0, 1e9)
    )
    model = ConfidenceModel(width=8, depth=1, key=jax.random.key(0))
    pose = [_perturb(e.reference_positions, np.random.default_rng(0), 30.0, 1.0)]
    got = [confidence_scores(model, confidence_inputs(c), pose) for c in (with_ref, without, poisoned)]
    assert np.all(np.isfinite(got[2])) and got[0] == got[1] == got[2]  # R0/T0 change nothing, even NaN
    with pytest.raises(TypeError, match="inputs"):
        confidence_scores(model, with_ref, pose)  # a complex (carrying R0/T0) is refused
    with pytest.raises(ValueError, match="x: expected the pose's"):
        pad_pose(np.zeros((3, 3)), confidence_inputs(without))


def test_a_trained_confidence_model_ranks_the_crystal_pose_above_perturbed_copies_on_an_unseen_complex(
    complexes,
):
    rng = np.random.default_rng(0)
    data = []
    for e, _, c in complexes[:-1]:  # the last complex is never trained on
        x0 = e.reference_positions
        poses = [x0] + [_perturb(x0, rng, rng.uniform(0, 15), rng.uniform(0, 0.7)) for _ in range(5)]
        poses += [_perturb(x0, rng, rng.uniform(60, 180), rng.uniform(2, 5)) for _ in range(10)]
        rmsd = np.array([np.sqrt(((p - x0) ** 2).sum(1).mean()) for p in poses])
        inputs = confidence_inputs(c)
        x = np.stack([pad_pose(p, inputs) for p in poses])
        data.append((inputs, x, np.zeros((len(poses), 0)), (rmsd < 2.0).astype(np.float32)))
    assert 0 < np.mean(np.concatenate([d[3] for d in data])) < 1
    model = train_confidence(data, n_steps=300, lr=2e-3, width=16, depth=1, key=jax.random.key(0))
    e, _, c = complexes[-1]
    x0 = e.reference_positions
    bad = [_perturb(x0, rng, rng.uniform(60, 180), rng.uniform(2, 5)) for _ in range(8)]
    p = confidence_scores(model, confidence_inputs(c), [x0] + bad)
    assert np.all(p[0] > p[1:]), p


def test_training_data_are_poses_sampled_by_the_model_labeled_by_rmsd(complexes, monkeypatch):
    """Poses come from the score model on complexes built WITHOUT their reference (as at inference); the label of
    each pose is its symmetric RMSD to the crystal pose < 2 Å."""
    from jaxkit.docking import (
        SHIPPED_MODEL,
        _complex,
        confidence_training_data,
        load_model,
        symmetric_rmsd,
        with_positions,
    )

    built = []
    real = _complex.build_complex
    monkeypatch.setattr(
        _complex, "build_complex", lambda *a, **k: built.append(k.get("reference")) or real(*a, **k)
    )
    model, _, _ = load_model(SHIPPED_MODEL)
    exs = [e for e, _, _ in complexes[:2]]
    data = confidence_training_data(model, exs, jax.random.key(0), n_samples=3, n_steps=2)
    assert built == [None, None]
    for ex, (_inputs, x, extra, y) in zip(exs, data):
        n = ex.mol.GetNumAtoms()
        assert x.shape[0] == 3 == len(y) and extra.shape == (3, 0)
        rmsd = np.array([symmetric_rmsd(with_positions(ex.mol, xi[:n]), ex.mol) for xi in x])
        assert np.array_equal(y, (rmsd < 2.0).astype(np.float32))
        assert not np.allclose(x[0, :n], ex.reference_positions, atol=0.1)  # a sample, not the crystal pose


def test_confidence_model_saves_loads_and_dock_reports_each_poses_confidence(tmp_path):
    from pathlib import Path

    import posebusters
    from rdkit import Chem

    from jaxkit.docking import dock, load_confidence_model, save_confidence_model, write_poses_sdf

    model = ConfidenceModel(width=8, depth=1, n_extra=0, key=jax.random.key(3))
    path = save_confidence_model(tmp_path / "conf.jkc", model, {"note": "untrained"})
    back, info = load_confidence_model(path)
    assert info == {"note": "untrained"}
    with pytest.raises(ValueError, match="confidence model file"):
        load_confidence_model(tmp_path / "missing.jkc")
    pb = Path(posebusters.__file__).parent / "datasets" / "pdb" / "1s3v"
    prot, lig = pb / "1s3v_protein_one_lig_removed.pdb", pb / "1s3v_ligand.sdf"
    res = dock(prot, lig, pocket=str(lig), n_samples=2, n_steps=2, rank=False, confidence=path)
    inputs = confidence_inputs(res.complex)
    want = confidence_scores(model, inputs, [p.mol.GetConformer().GetPositions() for p in res.poses])
    got = np.array([p.confidence for p in res.poses])
    assert np.allclose(got, want, atol=1e-6) and np.all((got > 0) & (got < 1))
    recs = list(Chem.SDMolSupplier(str(write_poses_sdf(tmp_path / "p.sdf", res))))
    assert [float(r.GetProp("confidence")) for r in recs] == pytest.approx(got, abs=1e-4)


def test_cross_validation_prefers_the_learned_confidence_over_an_uninformative_energy(complexes):
    """Energies that carry no information (random) against a confidence model that can learn the labels: the
    cross-validated choice is a confidence ranking; the energy ranking's top-1 is recomputed here by hand."""
    from jaxkit.docking import cross_validate_rankings

    rng = np.random.default_rng(1)
    data, energies = [], []
    for e, _, c in complexes:
        x0 = e.reference_positions
        poses = [_perturb(x0, rng, rng.uniform(0, 10), rng.uniform(0, 0.5)) for _ in range(3)]
        poses += [_perturb(x0, rng, rng.uniform(60, 180), rng.uniform(2, 5)) for _ in range(9)]
        rmsd = np.array([np.sqrt(((p - x0) ** 2).sum(1).mean()) for p in poses])
        inputs = confidence_inputs(c)
        data.append(
            (
                inputs,
                np.stack([pad_pose(p, inputs) for p in poses]),
                np.zeros((12, 0)),
                (rmsd < 2).astype(np.float32),
            )
        )
        energies.append(rng.normal(size=12))
    res = cross_validate_rankings(
        data, energies, n_folds=2, n_steps=150, width=16, depth=1, key=jax.random.key(0)
    )
    assert res["n_complexes"] == len(complexes)
    assert res["top1"]["vinardo"] == pytest.approx(
        np.mean([d[3][np.argmin(en)] for d, en in zip(data, energies)])
    )
    assert res["top1"]["confidence"] > res["top1"]["vinardo"]
    assert res["chosen"] != "vinardo"
    with pytest.raises(ValueError, match="energies: expected one array per complex"):
        cross_validate_rankings(data, energies[:-1], key=jax.random.key(0))
