"""`python -m jaxkit.docking` validates every flag before any work starts, naming the flag (issue 49)."""

import time
from pathlib import Path

import posebusters
import pytest

from jaxkit.docking import _api, _train
from jaxkit.docking._cli import main

PB = Path(posebusters.__file__).parent / "datasets" / "pdb"
LIG = str(PB / "1s3v" / "1s3v_ligand.sdf")
PROT = str(PB / "1s3v" / "1s3v_protein_one_lig_removed.pdb")


@pytest.fixture
def no_work(monkeypatch):
    def fail(*a, **k):
        pytest.fail("work started")

    monkeypatch.setattr(_api, "dock", fail)
    monkeypatch.setattr(_train, "train_model", fail)
    monkeypatch.setattr(_train, "featurize_examples", fail)


def _main(argv):
    try:
        return main(argv)
    except SystemExit as e:
        return e.code


def _dock(out, *extra):
    return ["dock", "--protein", PROT, "--ligand", LIG, "--ref-ligand", LIG, "--out", str(out), *extra]


def test_dock_out_a_folder_fails_at_once(no_work, tmp_path, capsys):
    """Before: sampling ran (~30 s), then RDKit said 'Bad output file'."""
    t0 = time.perf_counter()
    assert _main(_dock(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --out: {tmp_path} is a folder") and err.count("\n") == 1, err
    assert time.perf_counter() - t0 < 10


def test_dock_never_replaces_an_existing_file_without_overwrite(no_work, tmp_path, capsys):
    out = tmp_path / "poses.sdf"
    out.write_text("my earlier poses")
    assert _main(_dock(out)) == 2
    assert "pass --overwrite" in capsys.readouterr().err and out.read_text() == "my earlier poses"


@pytest.mark.parametrize(
    "extra, flag",
    [
        (["--seed", "-5"], "--seed"),
        (["--n-samples", "0"], "--n-samples"),
        (["--steps", "-1"], "--steps"),
        (["--pb-budget", "-1"], "--pb-budget"),
    ],
)
def test_dock_bad_numbers_name_the_flag(no_work, tmp_path, capsys, extra, flag):
    assert _main(_dock(tmp_path / "o.sdf", *extra)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and flag in err and err.count("\n") == 1, err


@pytest.mark.parametrize("size, center", [("0", "0"), ("-3", "0"), ("nan", "0"), ("22", "nan"), ("inf", "0")])
def test_dock_box_must_be_finite_and_positive(no_work, tmp_path, capsys, size, center):
    argv = ["dock", "--protein", PROT, "--ligand", LIG, "--center", center, "0", "0", "--size", size]
    assert _main([*argv, "--out", str(tmp_path / "o.sdf")]) == 2
    err = capsys.readouterr().err
    assert ("--size" in err or "--center" in err) and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "extra, flag",
    [
        (["--seed", "-5"], "--seed"),
        (["--steps", "0"], "--steps"),
        (["--batch", "0"], "--batch"),
        (["--lr", "0"], "--lr"),
        (["--lr", "nan"], "--lr"),
        (["--width", "0"], "--width"),
        (["--depth", "-1"], "--depth"),
        (["--augment", "0"], "--augment"),
        (["--devices", "0"], "--devices"),
        (["--ccd", "-2"], "--ccd"),
    ],
)
def test_train_bad_numbers_name_the_flag(no_work, tmp_path, capsys, extra, flag):
    assert _main(["train", "--ccd", "4", "--out", str(tmp_path / "m.jkc"), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and flag in err and err.count("\n") == 1, err


def test_train_out_is_checked_before_training(no_work, tmp_path, capsys):
    assert _main(["train", "--ccd", "4", "--out", str(tmp_path)]) == 2
    assert f"--out: {tmp_path} is a folder" in capsys.readouterr().err
    mine = tmp_path / "thesis.tex"
    mine.write_text("precious")
    for extra in ([], ["--overwrite"]):
        assert _main(["train", "--ccd", "4", "--out", str(mine), *extra]) == 2
        assert "--out: " in capsys.readouterr().err
    assert mine.read_text() == "precious"


def test_dock_library_into_a_folder_of_the_users_is_refused_naming_out(
    no_work, monkeypatch, tmp_path, capsys
):
    """Several ligands write into the folder --out; a non-empty folder that is not a batch folder is refused
    before any docking, naming --out (not dock_many's argument), and nothing of the user's is touched."""
    from jaxkit.docking import _batch

    monkeypatch.setattr(_batch, "_dock_prepared", lambda *a, **k: pytest.fail("work started"))
    lib = tmp_path / "ligands.smi"
    lib.write_text("CCO ethanol\nc1ccccc1O phenol\n")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    argv = ["dock", "--protein", PROT, "--ligand", str(lib), "--ref-ligand", LIG, "--out", str(mine)]
    assert _main(argv) == 2
    err = capsys.readouterr().err
    assert f"error: --out: {mine} exists, is not empty and is not a batch folder" in err, err
    assert (
        sorted(p.name for p in mine.iterdir()) == ["notes.txt"] and (mine / "notes.txt").read_text() == "keep"
    )
    assert _main([*argv[:-1], str(tmp_path / "poses.sdf")]) == 2  # several ligands need a folder, not an SDF
    assert "--out: with several ligands, expected a folder" in capsys.readouterr().err
