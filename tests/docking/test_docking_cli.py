"""``python -m jaxkit.docking`` end to end: train writes a model file, dock loads it and writes ranked poses to an
SDF (one record per pose, with scores); bad inputs exit 2 naming the file or option."""

import shutil
import sys
from pathlib import Path

import numpy as np
import posebusters
import rdkit
from rdkit import Chem

from jaxkit.docking import load_ligand, load_model
from jaxkit.docking._cli import SHIPPED_MODEL, main

PB = Path(posebusters.__file__).parent / "datasets" / "pdb"


def test_train_then_dock_a_shipped_complex(tmp_path, capsys):
    data = tmp_path / "data" / "1s3v"
    data.mkdir(parents=True)
    shutil.copy(PB / "1s3v" / "1s3v_protein_one_lig_removed.pdb", data / "1s3v_protein.pdb")
    shutil.copy(PB / "1s3v" / "1s3v_ligand.sdf", data / "1s3v_ligand.sdf")
    model = tmp_path / "tiny.jkc"
    assert (
        main(
            [
                "train",
                "--data",
                str(tmp_path / "data"),
                "--out",
                str(model),
                "--steps",
                "2",
                "--batch",
                "1",
                "--width",
                "8",
                "--depth",
                "1",
                "--devices",
                "1",
            ]
        )
        == 0
    )
    _, config, info = load_model(model)
    assert config.width == 8 and info["n_train"] == 1 and info["steps"] == 2
    out = tmp_path / "poses.sdf"
    lig = PB / "1s3v" / "1s3v_ligand.sdf"
    rc = main(
        [
            "dock",
            "--protein",
            str(PB / "1s3v" / "1s3v_protein_one_lig_removed.pdb"),
            "--ligand",
            str(lig),
            "--ref-ligand",
            str(lig),
            "--model",
            str(model),
            "--out",
            str(out),
            "--n-samples",
            "3",
            "--steps",
            "4",
            "--pb-budget",
            "1",
        ]
    )
    assert rc == 0
    assert "wrote 3 poses" in capsys.readouterr().err
    poses = [m for m in Chem.SDMolSupplier(str(out))]
    ref = Chem.RemoveAllHs(load_ligand(lig))
    assert len(poses) == 3
    assert [int(p.GetProp("rank")) for p in poses] == [1, 2, 3]
    assert sorted(int(p.GetProp("sample")) for p in poses) == [0, 1, 2]
    for p in poses:
        assert p.GetNumAtoms() == ref.GetNumAtoms()
        assert Chem.MolToSmiles(p) == Chem.MolToSmiles(ref)  # the same molecule, re-posed
        assert p.GetProp("pb_valid") in ("yes", "no", "unchecked")
        float(p.GetProp("bond_gap_A")), float(p.GetProp("vinardo_kcal_mol"))
        center = ref.GetConformer().GetPositions().mean(0)
        assert np.linalg.norm(p.GetConformer().GetPositions().mean(0) - center) < 12.0
    # conformer matching + consensus ranking (same sampler, cached): every pose is the same RDKit conformer
    out2 = tmp_path / "matched.sdf"
    try:
        assert (
            main(
                [
                    "dock",
                    "--protein",
                    str(PB / "1s3v" / "1s3v_protein_one_lig_removed.pdb"),
                    "--ligand",
                    str(lig),
                    "--ref-ligand",
                    str(lig),
                    "--model",
                    str(model),
                    "--out",
                    str(out2),
                    "--n-samples",
                    "3",
                    "--steps",
                    "4",
                    "--pb-budget",
                    "1",
                    "--assemble",
                    "conformer_matching",
                    "--ranking",
                    "consensus",
                ]
            )
            == 0
        )
    finally:  # posebusters' CaptureLogger points RDKit's log handler at sys.stderr, here capsys's (closed later)
        rdkit.log_handler.setStream(sys.__stderr__)
    matched = [m for m in Chem.SDMolSupplier(str(out2))]
    lengths = [
        [
            np.linalg.norm(
                np.subtract(*m.GetConformer().GetPositions()[[b.GetBeginAtomIdx(), b.GetEndAtomIdx()]])
            )
            for b in m.GetBonds()
        ]
        for m in matched
    ]
    assert len(matched) == 3 and np.allclose(lengths, lengths[0], atol=1e-3)  # SDF keeps 4 decimals
    assert all(float(m.GetProp("bond_gap_A")) == 0.0 for m in matched)
    assert all(Chem.MolToSmiles(m) == Chem.MolToSmiles(ref) for m in matched)


def test_bad_inputs_name_the_file_or_option(tmp_path, capsys):
    lig = str(PB / "1s3v" / "1s3v_ligand.sdf")
    prot = str(PB / "1s3v" / "1s3v_protein_one_lig_removed.pdb")
    out = str(tmp_path / "o.sdf")
    assert main(["dock", "--protein", "missing.pdb", "--ligand", lig, "--ref-ligand", lig, "--out", out]) == 2
    assert "--protein: file missing.pdb does not exist" in capsys.readouterr().err
    assert (
        main(["dock", "--protein", prot, "--ligand", "C1CC(", "--center", "0", "0", "0", "--out", out]) == 2
    )
    assert "ligand SMILES 'C1CC(' could not be parsed" in capsys.readouterr().err
    assert main(["dock", "--protein", prot, "--ligand", lig, "--center", "500", "0", "0", "--out", out]) == 2
    assert "far from the protein" in capsys.readouterr().err
    multi = str(PB / "1ia1" / "1ia1_ligands.sdf")
    assert main(["dock", "--protein", prot, "--ligand", lig, "--ref-ligand", multi, "--out", out]) == 2
    assert "1ia1_ligands.sdf holds" in capsys.readouterr().err
    assert main(["train", "--out", out]) == 2
    assert "give --data DIR and/or --ccd N" in capsys.readouterr().err
    assert SHIPPED_MODEL.name.endswith(".jkc")


def test_the_shipped_model_loads_and_is_the_standard_preset_model():
    import equinox as eqx
    import jax

    from jaxkit.docking import load_model

    model, config, info = load_model(SHIPPED_MODEL)  # checksummed: a damaged or partial copy raises here
    assert (config.width, config.depth) == (64, 4) and info["preset"] == "standard" and info["steps"] == 18000
    n_params = sum(x.size for x in jax.tree.leaves(eqx.filter(model, eqx.is_inexact_array)))
    assert n_params > 10_000 and all(
        bool(jax.numpy.isfinite(x).all()) for x in jax.tree.leaves(eqx.filter(model, eqx.is_inexact_array))
    )
