"""Reading complexes and cutting binding pockets.

Ligands are read with RDKit (SDF/MOL), proteins with biotite (PDB). The pocket is every protein residue with at
least one heavy atom within ``cutoff`` Å of a reference-ligand heavy atom (SigmaDock/PoseBusters convention,
default 10 Å); waters are dropped, other hetero groups (cofactors) are kept as part of the pocket.
"""

from __future__ import annotations

import hashlib
import io
import math
from collections import OrderedDict
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from rdkit import Chem

from .._validate import check_finite

if TYPE_CHECKING:  # biotite is imported where a protein is read
    from biotite.structure import AtomArray

ORGANIC_ELEMENTS = frozenset({"H", "C", "N", "O", "S", "P", "F", "Cl", "Br", "I", "B"})


class StructureError(ValueError):
    """A structure file cannot be parsed or holds something the docking pipeline does not support."""


def load_ligand(
    path: str | Path,
    *,
    index: int | None = None,
    allow_elements: frozenset[str] = ORGANIC_ELEMENTS,
    require_3d: bool = True,
) -> Chem.Mol:
    """One molecule of an SDF/MOL file, hydrogens kept, with a 3D conformer.

    An SDF with several records raises unless ``index`` picks one (it used to return the first silently).
    Raises :class:`StructureError` naming the file (and record) if it is empty or cannot be parsed, has no 3D
    coordinates (with ``require_3d``), or contains an element outside ``allow_elements`` (metals and other
    unsupported elements).
    """
    path = Path(path)
    if not path.exists():
        raise StructureError(f"ligand file {path} does not exist")
    where = f"ligand file {path}"
    if not path.is_file():
        raise StructureError(f"{where}: expected an SDF/MOL file, received a directory or other non-file")
    if path.stat().st_size == 0:
        raise StructureError(f"{where} is empty (0 bytes); expected an SDF/MOL molecule record")
    if path.suffix.lower() in (".sdf", ".sd"):
        try:
            supplier = Chem.SDMolSupplier(str(path), removeHs=False)
        except OSError as e:  # RDKit's "File error: Invalid input file" (unreadable file)
            raise StructureError(f"{where} could not be read by RDKit ({e})") from None
        n = len(supplier)
        if n == 0:
            raise StructureError(f"{where} holds no molecule record")
        if index is None and n > 1:
            raise StructureError(
                f"{where} holds {n} molecules; expected one (read_ligand(path, index=0..{n - 1}) picks a record; "
                "dock_many docks every record of a multi-record file)"
            )
        i = 0 if index is None else int(index)
        if not 0 <= i < n:
            raise StructureError(f"{where}: index {i} is outside the {n} records")
        mol = supplier[i]
        if n > 1:
            where += f" (record {i})"
    elif path.suffix.lower() == ".mol":
        try:
            mol = Chem.MolFromMolFile(str(path), removeHs=False)
        except OSError as e:
            raise StructureError(f"{where} could not be read by RDKit ({e})") from None
    else:
        raise StructureError(f"ligand file {path}: expected .sdf or .mol, received {path.suffix!r}")
    if mol is None:
        raise StructureError(f"{where} could not be parsed by RDKit")
    if require_3d and (mol.GetNumConformers() == 0 or not mol.GetConformer().Is3D()):
        raise StructureError(f"{where} has no 3D conformer")
    if mol.GetNumConformers():
        pos = mol.GetConformer().GetPositions()
        bad_atoms = np.flatnonzero(~np.all(np.isfinite(pos), axis=1))
        if bad_atoms.size:
            j = int(bad_atoms[0])
            line = _molfile_atom_line(path, 0 if index is None else int(index), j)
            at = f", line {line}" if line is not None else ""
            raise StructureError(
                f"{where}{at}: atom {j + 1} ({mol.GetAtomWithIdx(j).GetSymbol()}) has non-finite coordinates "
                f"{pos[j].tolist()} ({bad_atoms.size} such atoms); expected finite coordinates (Å)"
            )
    bad = sorted({a.GetSymbol() for a in mol.GetAtoms()} - set(allow_elements))
    if bad:
        raise StructureError(
            f"{where} contains unsupported elements {bad} (allowed: {sorted(allow_elements)})"
        )
    return mol


def _molfile_atom_line(path: Path, record: int, atom: int) -> int | None:
    """The 1-based line of atom ``atom`` (0-based) of record ``record`` in an SDF/MOL file (V2000 layout: three
    header lines and the counts line, then one line per atom), or None if the file cannot be read so."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    start, seen = 0, 0
    for i, text in enumerate(lines):
        if seen == record:
            break
        if text.startswith("$$$$"):
            seen, start = seen + 1, i + 1
    line = start + 4 + atom
    return line + 1 if line < len(lines) else None


def ligand_from_smiles(smiles: str, *, allow_elements: frozenset[str] = ORGANIC_ELEMENTS) -> Chem.Mol:
    """A ligand from SMILES (chemistry only, no conformer; hydrogens added). Raises naming the SMILES."""
    if not isinstance(smiles, str):
        raise TypeError(f"smiles: expected a SMILES string, received {type(smiles).__name__} {smiles!r}")
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise StructureError(
            f"smiles: expected a SMILES string RDKit can parse, received {smiles!r} "
            f"(ligand SMILES {smiles!r} could not be parsed by RDKit)"
        )
    bad = sorted({a.GetSymbol() for a in mol.GetAtoms()} - set(allow_elements))
    if bad:
        raise StructureError(f"ligand SMILES {smiles!r} contains unsupported elements {bad}")
    if len(Chem.GetMolFrags(mol)) != 1:
        raise StructureError(
            f"ligand SMILES {smiles!r} holds {len(Chem.GetMolFrags(mol))} disconnected molecules"
        )
    return Chem.AddHs(mol)


def _check_pdb_complete(path: Path, text: str) -> None:
    """Every ATOM/HETATM record holds three finite coordinates (columns 31-54, the PDB format's fixed columns),
    and a PDB truncated at a line boundary, which parses cleanly but loses atoms, is caught: an END/ENDMDL record
    must follow the last coordinate record (the PDB format's terminator; biotite, RDKit, PyMOL and the PDB
    itself write it). ``text``: the file's content. Raises :class:`StructureError` naming the file and the line."""
    last_coord, last_end = -1, -1
    coords: list[tuple[int, str]] = []
    for i, line in enumerate(text.splitlines()):
        rec = line[:6].strip()
        if rec in ("ATOM", "HETATM"):
            last_coord = i
            coords.append((i + 1, line))
        elif rec in ("END", "ENDMDL"):
            last_end = i
    _check_pdb_coordinates(
        path, coords
    )  # one call per file (a call per line is slow under runtime type checks)
    if last_coord < 0:
        raise StructureError(f"protein file {path} holds no ATOM/HETATM records")
    if last_end < last_coord:
        raise StructureError(
            f"protein file {path} looks truncated: no END record after its last ATOM/HETATM line (line "
            f"{last_coord + 1}); a complete PDB file ends with END"
        )


def _check_pdb_coordinates(path: Path, lines: list[tuple[int, str]]) -> None:
    """Each ``(line number, ATOM/HETATM line)`` holds three finite numbers in columns 31-54."""
    for lineno, line in lines:
        fields = (line[30:38], line[38:46], line[46:54])
        try:
            xyz = [float(f) for f in fields]
        except ValueError:
            raise StructureError(
                f"{_pdb_where(path, lineno, line)}: expected x, y, z numbers in columns 31-54, received "
                f"{line[30:54].strip()!r}"
            ) from None
        if not all(math.isfinite(v) for v in xyz):
            raise StructureError(
                f"{_pdb_where(path, lineno, line)}: expected finite coordinates, received "
                f"{', '.join(f.strip() for f in fields)}"
            )


def _pdb_where(path: Path, lineno: int, line: str) -> str:
    atom = f"{line[12:16].strip() or '?'} {line[17:20].strip()} {line[21:22].strip()}{line[22:26].strip()}"
    return f"protein file {path}, line {lineno} (atom {atom})"


def load_protein(path: str | Path):
    """Protein (and cofactors) of a PDB file as a biotite ``AtomArray`` (first model, waters and H removed).

    Raises :class:`StructureError` naming the file when it is missing, unparsable, empty or truncated (no END
    record after the last atom line)."""
    import biotite
    import biotite.structure as struc
    import biotite.structure.io.pdb as pdb

    path = Path(path)
    if not path.exists():
        raise StructureError(f"protein file {path} does not exist")
    data = path.read_bytes()
    key = (str(path.resolve()), hashlib.sha256(data).hexdigest())
    if key in _PROTEINS:  # the same file with the same content: parsed and checked before
        _PROTEINS.move_to_end(key)
        return _PROTEINS[key].copy()
    text = data.decode(errors="replace")
    _check_pdb_complete(path, text)
    try:
        atoms = pdb.PDBFile.read(io.StringIO(text)).get_structure(model=1)
    except (
        biotite.InvalidFileError,
        ValueError,
        IndexError,
        KeyError,
    ) as e:  # biotite's errors on malformed files
        raise StructureError(f"protein file {path} could not be parsed: {e}") from e
    if atoms.array_length() == 0:
        raise StructureError(f"protein file {path} holds no atoms")
    atoms = atoms[~struc.filter_solvent(atoms)]
    atoms = atoms[atoms.element != "H"]
    _PROTEINS[key] = atoms
    while len(_PROTEINS) > _PROTEIN_CACHE_SIZE:
        _PROTEINS.popitem(last=False)
    return atoms.copy()


# Parsed proteins by (resolved path, SHA-256 of the file's bytes): a docking run reads the same receptor file for
# every ligand, method and check; a changed file has another digest and is parsed (and checked) again. Callers get
# a copy, so nothing they do to the array reaches the cache.
_PROTEIN_CACHE_SIZE = 16
_PROTEINS: OrderedDict[tuple[str, str], AtomArray] = OrderedDict()


@dataclass(frozen=True)
class Pocket:
    """Pocket atoms around a reference ligand.

    Attributes:
        positions: ``(n, 3)`` float64 coordinates (Å).
        elements: ``(n,)`` element symbols.
        residue_ids: ``(n,)`` residue numbers; ``chain_ids``/``residue_names``/``atom_names`` likewise.
        center: ``(3,)`` centroid of the reference ligand's heavy atoms (the diffusion origin).
    """

    positions: np.ndarray
    elements: np.ndarray
    residue_ids: np.ndarray
    chain_ids: np.ndarray
    residue_names: np.ndarray
    atom_names: np.ndarray
    center: np.ndarray

    def __post_init__(self):
        for f in fields(self):
            check_finite(f.name, getattr(self, f.name))

    @property
    def n_atoms(self) -> int:
        return int(self.positions.shape[0])


def extract_pocket(protein: object, ligand_positions: np.ndarray, *, cutoff: float = 10.0) -> Pocket:
    """Residues with any heavy atom within ``cutoff`` Å of any ligand heavy atom (whole residues are kept)."""
    lig = np.asarray(ligand_positions, dtype=np.float64)
    if lig.ndim != 2 or lig.shape[1] != 3 or lig.shape[0] == 0:
        raise ValueError(f"ligand_positions: expected shape (n>0, 3), received {lig.shape}")
    check_finite("ligand_positions", lig)
    if not (np.isfinite(cutoff) and cutoff > 0):
        raise ValueError(f"cutoff: expected a finite value > 0 Å, received {cutoff}")
    coords = np.asarray(protein.coord, dtype=np.float64)
    d2 = ((coords[:, None, :] - lig[None, :, :]) ** 2).sum(-1).min(1)
    near = d2 <= cutoff**2
    keys = np.char.add(np.asarray(protein.chain_id).astype(str), np.asarray(protein.res_id).astype(str))
    chosen = np.isin(keys, np.unique(keys[near]))
    if not chosen.any():
        raise StructureError(
            f"ligand_positions: no protein atom within {cutoff} Å of the ligand (nearest is "
            f"{np.sqrt(d2.min()):.1f} Å): the ligand is far from the pocket"
        )
    sub = protein[chosen]
    return Pocket(
        positions=np.asarray(sub.coord, dtype=np.float64),
        elements=np.asarray(sub.element).astype(str),
        residue_ids=np.asarray(sub.res_id),
        chain_ids=np.asarray(sub.chain_id).astype(str),
        residue_names=np.asarray(sub.res_name).astype(str),
        atom_names=np.asarray(sub.atom_name).astype(str),
        center=lig.mean(0),
    )


def pocket_from_center(protein: object, center: np.ndarray, *, size: float = 22.0) -> Pocket:
    """Residues with any heavy atom within ``size / 2`` Å of ``center`` (a box size as for Vina; the pocket center
    is the diffusion origin). For docking without a reference ligand."""
    c = np.asarray(center, dtype=np.float64).reshape(-1)
    if c.shape != (3,) or not np.all(np.isfinite(c)):
        raise ValueError(f"center: expected 3 finite coordinates (Å), received {center!r}")
    if not (np.isfinite(size) and size > 0):
        raise ValueError(f"size: expected a finite value > 0 Å, received {size}")
    coords = np.asarray(protein.coord, dtype=np.float64)
    d = np.sqrt(((coords - c) ** 2).sum(-1))
    near = d <= size / 2
    if not near.any():
        raise StructureError(
            f"no protein atom within {size / 2:.1f} Å of the center {c.tolist()} (nearest is {d.min():.1f} Å): "
            "the center is far from the protein"
        )
    keys = np.char.add(np.asarray(protein.chain_id).astype(str), np.asarray(protein.res_id).astype(str))
    sub = protein[np.isin(keys, np.unique(keys[near]))]
    return Pocket(
        positions=np.asarray(sub.coord, dtype=np.float64),
        elements=np.asarray(sub.element).astype(str),
        residue_ids=np.asarray(sub.res_id),
        chain_ids=np.asarray(sub.chain_id).astype(str),
        residue_names=np.asarray(sub.res_name).astype(str),
        atom_names=np.asarray(sub.atom_name).astype(str),
        center=c,
    )
