"""Structure readers validated at load (issue 49): a non-finite or unreadable coordinate is refused naming the
file and the line, and `dock` fails on it before any sampling (before: a PDB with one pocket atom at `nan` docked,
exit 0, poses up to 0.77 Å from the clean run's)."""

from pathlib import Path

import numpy as np
import posebusters
import pytest

from jaxkit.docking import StructureError, _api, load_ligand, load_protein
from jaxkit.docking._cli import main

PB = Path(posebusters.__file__).parent / "datasets" / "pdb" / "1s3v"
PROT = PB / "1s3v_protein_one_lig_removed.pdb"
LIG = PB / "1s3v_ligand.sdf"


def _pocket_atom_line():
    """The line (0-based) of the protein atom nearest the ligand: a pocket atom."""
    lig = load_ligand(LIG).GetConformer().GetPositions()
    lines = PROT.read_text().splitlines()
    best, best_d = None, np.inf
    for i, line in enumerate(lines):
        if line[:6].strip() in ("ATOM", "HETATM"):
            xyz = np.array([float(line[30:38]), float(line[38:46]), float(line[46:54])])
            d = np.min(np.linalg.norm(lig - xyz, axis=1))
            if d < best_d:
                best, best_d = i, d
    assert best_d < 5.0
    return lines, best


@pytest.mark.parametrize("value", ["     nan", "     inf", "    -inf", "   1.2.3"])
def test_a_pocket_atom_with_a_bad_coordinate_is_refused_naming_file_and_line(tmp_path, value):
    lines, i = _pocket_atom_line()
    lines[i] = lines[i][:38] + value + lines[i][46:]  # the y coordinate
    bad = tmp_path / "protein.pdb"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(StructureError, match=rf"protein file {bad}, line {i + 1} \(atom "):
        load_protein(bad)
    load_protein(PROT)  # the clean file still loads


def test_dock_fails_on_a_nan_pocket_atom_before_sampling(tmp_path, capsys, monkeypatch):
    lines, i = _pocket_atom_line()
    lines[i] = lines[i][:30] + "     nan" + lines[i][38:]
    bad = tmp_path / "protein.pdb"
    bad.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(_api, "dock", lambda *a, **k: pytest.fail("sampling started"))
    out = tmp_path / "poses.sdf"
    rc = main(
        ["dock", "--protein", str(bad), "--ligand", str(LIG), "--ref-ligand", str(LIG), "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1, err
    assert f"protein file {bad}, line {i + 1}" in err and "finite coordinates" in err and "nan" in err
    assert not out.exists()


def test_a_ligand_with_a_non_finite_coordinate_is_refused(tmp_path):
    lines = LIG.read_text().splitlines()
    lines[5] = "       nan" + lines[5][10:]  # atom 2's x (RDKit refuses it itself)
    bad = tmp_path / "lig.sdf"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(StructureError, match=f"ligand file {bad}"):
        load_ligand(bad)


def test_a_protein_read_again_is_the_same_array_and_a_changed_file_is_read_and_checked_again(tmp_path):
    """`load_protein` keeps parsed files by path and content digest: a second read gives an equal, independent
    array (biotite's own parse as the reference), and a file rewritten in place (same path, new bytes) is parsed
    and validated again, never served from the earlier read."""
    import biotite.structure.io.pdb as pdb

    f = tmp_path / "protein.pdb"
    f.write_bytes(PROT.read_bytes())
    a = load_protein(f)
    ref = pdb.PDBFile.read(str(PROT)).get_structure(model=1)
    ref = ref[(ref.res_name != "HOH") & (ref.element != "H")]
    np.testing.assert_array_equal(a.coord, ref.coord)
    a.coord[:] = 0.0  # the caller's copy: changing it must not reach the next read
    b = load_protein(f)
    np.testing.assert_array_equal(b.coord, ref.coord)
    lines, i = _pocket_atom_line()
    lines[i] = lines[i][:30] + "     nan" + lines[i][38:]
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(StructureError, match="finite coordinates"):
        load_protein(f)
    lines[i] = lines[i][:30] + "  99.000" + lines[i][38:]
    f.write_text("\n".join(lines) + "\n")
    c = load_protein(f)
    assert np.sum(np.any(c.coord != ref.coord, axis=1)) == 1
