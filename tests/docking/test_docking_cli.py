"""``python -m jaxkit.docking`` end to end: train writes a model file, dock loads it and writes ranked poses to an
SDF (one record per pose, with scores); bad inputs exit 2 naming the file or option."""

import shutil
import sys
from pathlib import Path

import numpy as np
import posebusters
import pytest
import rdkit
from rdkit import Chem

from jaxkit.docking import load_ligand, load_model
from jaxkit.docking._cli import SDF_FIELDS, SHIPPED_MODEL, main

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
                    "--hydrogens",
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
    # --hydrogens: explicit hydrogens with coordinates; every field of SDF_FIELDS that applies is written
    with_h = [m for m in Chem.SDMolSupplier(str(out2), removeHs=False)]
    n_h = [sum(a.GetAtomicNum() == 1 for a in m.GetAtoms()) for m in with_h]
    assert n_h == [Chem.AddHs(ref).GetNumAtoms() - ref.GetNumAtoms()] * 3 and n_h[0] > 0
    for m in with_h:
        pos = m.GetConformer().GetPositions()
        for a in m.GetAtoms():
            if a.GetAtomicNum() == 1:  # a hydrogen 0.9-1.2 Å from its heavy atom
                heavy = a.GetNeighbors()[0].GetIdx()
                assert 0.9 < np.linalg.norm(pos[a.GetIdx()] - pos[heavy]) < 1.2
        assert set(SDF_FIELDS) <= set(m.GetPropNames())
        assert float(m.GetProp("conformer_match_rmsd")) >= 0.0
    assert set(SDF_FIELDS) <= set(poses[0].GetPropNames())  # the default assembly is conformer matching


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


def test_a_non_model_file_and_argument_errors_exit_2_with_one_line(tmp_path, capsys):
    """Before: `--model` naming a file that is not a model printed a traceback and exited 1."""
    lig = str(PB / "1s3v" / "1s3v_ligand.sdf")
    prot = str(PB / "1s3v" / "1s3v_protein_one_lig_removed.pdb")
    bogus = tmp_path / "bogus.jkc"
    bogus.write_text("not a model")
    args = ["dock", "--protein", prot, "--ligand", lig, "--ref-ligand", lig, "--out", str(tmp_path / "o.sdf")]
    assert main([*args, "--model", str(bogus)]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1 and err.startswith("error: --model: model file") and "not a docking model" in err
    )
    for argv in (["dock", "--protein", prot], ["dock", *args[1:], "--n-samples", "x"], ["nope"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        err = capsys.readouterr().err
        assert e.value.code == 2 and err.count("\n") == 1 and err.startswith("error: "), err


def test_help_shows_defaults_and_documents_every_sdf_field(capsys):
    with pytest.raises(SystemExit):
        main(["dock", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for default in ("(default: 40)", "(default: 30)", "(default: 22.0)", "(default: conformer_matching)"):
        assert default in text
    assert "(default: vinardo_converged)" in text and "--hydrogens" in text
    for name, meaning in SDF_FIELDS.items():
        assert f"{name}: {' '.join(meaning.split())}" in text
    assert "unchecked" in SDF_FIELDS["pb_valid"]
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "(default: 2000)" in " ".join(capsys.readouterr().out.split())


def test_the_shipped_model_loads_and_is_the_standard_preset_model():
    import equinox as eqx
    import jax

    from jaxkit.docking import load_model

    model, config, info = load_model(SHIPPED_MODEL)  # checksummed: a damaged or partial copy raises here
    from experiments.sigmadock import PRESETS

    standard = PRESETS["standard"]
    assert (config.width, config.depth) == (standard["width"], standard["depth"]) and info[
        "preset"
    ] == "standard"
    assert info["steps"] == standard["steps"]
    n_params = sum(x.size for x in jax.tree.leaves(eqx.filter(model, eqx.is_inexact_array)))
    assert n_params > 10_000 and all(
        bool(jax.numpy.isfinite(x).all()) for x in jax.tree.leaves(eqx.filter(model, eqx.is_inexact_array))
    )
