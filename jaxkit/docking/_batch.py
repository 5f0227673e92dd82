"""Many ligands, one receptor (virtual screening): :func:`dock_many` and :func:`read_ligands`.

The receptor is read, the pocket cut and (for Vinardo rankings) the receptor prepared for Vina once; every ligand
is padded to the largest ligand of the input (atoms, fragments, junctions), so one compiled sampler serves them
all. Each ligand gets its own key, ``jax.random.fold_in(key, index)`` (``index`` = its 0-based position in the
input), so its poses do not depend on which other ligands were docked in the same call or before a resume.

Output folder: ``<index+1 as 4 digits>_<name>.sdf`` per ligand (its ranked poses, best first, with the fields of
:data:`jaxkit.docking.SDF_FIELDS`), ``summary.csv`` (one row per ligand, see :data:`SUMMARY_COLUMNS`) and
``batch.json`` (the settings). Calling again with the same settings resumes: ligands already in the summary
(docked or failed) are not redone. A ligand that cannot be read or docked is a ``failed`` row with the error;
the others go on.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import jax
from jaxtyping import PRNGKeyArray
from rdkit import Chem

from .. import diffusion as dm
from .._validate import check_choice, check_int, check_key, check_positive, check_size
from ._api import (
    ASSEMBLIES,
    Assemble,
    _check_ranking,
    _dock_prepared,
    _load,
    _load_confidence,
    _sizes_for,
    resolve_pocket,
)
from ._complex import ComplexSizes, build_complex, ligand_fragments
from ._confidence import ConfidenceModel, check_samples_memory
from ._evaluate import write_poses_sdf
from ._model import FragmentScoreModel
from ._rank import CONVERGED_STEPS, AbstractRanking, Progress, SamplingOrder, VinardoRanking, make_scorer
from ._structures import Pocket, StructureError, ligand_from_smiles, load_protein
from ._train import SHIPPED_MODEL

_SIZE_FIELDS = ("ligand", "pocket", "fragments", "dummies")
SMILES_SUFFIXES = (".smi", ".smiles", ".txt")
SDF_SUFFIXES = (".sdf", ".sd")
SUMMARY_COLUMNS = {
    "index": "0-based position of the ligand in the input",
    "name": "the SDF record's name or the SMILES line's second column (else ligand_<index+1>)",
    "smiles": "the ligand's SMILES (heavy atoms) as read",
    "status": "ok (docked) or failed (see error)",
    "error": "why the ligand failed; empty when ok",
    "n_poses": "poses written to the ligand's SDF",
    "top_confidence": "the top pose's confidence (probability within 2 Å); blank without a confidence model",
    "top_vinardo_kcal_mol": "Vinardo energy (kcal/mol) of the top pose (nan without ranking)",
    "top_pb_valid": "PoseBusters verdict of the top pose: yes, no or unchecked",
    "warning": "the docking run's warning (e.g. no pose passed the validity checks); empty when none",
    "sdf": "the ligand's SDF file name in the output folder",
    "seconds": "wall seconds for this ligand (sampling, minimization, checks)",
}
"""The columns of a batch's ``summary.csv``."""


@dataclass(frozen=True)
class LigandRecord:
    """One input ligand: its 0-based ``index``, ``name``, molecule (``None`` if unreadable) and the error."""

    index: int
    name: str
    mol: Chem.Mol | None
    error: str = ""


def is_ligand_library(path: str | Path) -> bool:
    """Whether ``path`` is an existing file of several ligands: a SMILES file (``.smi``/``.smiles``/``.txt``) or an
    SDF with more than one record."""
    p = Path(path)
    if not p.is_file():  # a missing file is no library (it was judged by its name alone)
        return False
    if p.suffix.lower() in SMILES_SUFFIXES:
        return True
    if p.suffix.lower() in SDF_SUFFIXES and p.is_file():
        return p.read_text(errors="replace").count("$$$$") > 1
    return False


def _records_digest(records: list[LigandRecord]) -> str:
    """SHA-256 of the ligands as read: each record's name and molecule (its MOL block, coordinates included) or
    its read error."""
    h = hashlib.sha256()
    for r in records:
        h.update(f"{r.index}\t{r.name}\n".encode())
        h.update((Chem.MolToMolBlock(r.mol) if r.mol is not None else "error: " + r.error).encode())
    return h.hexdigest()


def _path_digest(path: str | Path) -> str:
    """SHA-256 of a file, or of a folder's files (relative names and bytes, in sorted order)."""
    p, h = Path(path), hashlib.sha256()
    files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p] if p.is_file() else []
    for f in files:
        h.update(f.relative_to(p).as_posix().encode() if p.is_dir() else b"")
        h.update(f.read_bytes())
    return h.hexdigest()


def read_ligands(path: str | Path) -> list[LigandRecord]:
    """The ligands of a multi-record SDF (names from each record's title) or a SMILES file (one ``SMILES
    [name]`` per line; blank lines and ``#`` comments skipped). An unreadable record is kept, with its error."""
    p = Path(path)
    if not p.is_file():
        raise StructureError(f"ligands: file {p} does not exist")
    suffix = p.suffix.lower()
    out = []
    if suffix in SDF_SUFFIXES:
        if p.stat().st_size == 0:
            raise StructureError(f"ligands: file {p} is empty (0 bytes); expected SDF molecule records")
        try:
            supplier = Chem.SDMolSupplier(str(p), removeHs=False)
        except OSError as e:  # RDKit's "File error: Invalid input file"
            raise StructureError(f"ligands: file {p} could not be read by RDKit ({e})") from None
        for i, mol in enumerate(supplier):
            title = mol.GetProp("_Name").strip() if mol is not None and mol.HasProp("_Name") else ""
            name = title or f"ligand_{i + 1}"
            err = "" if mol is not None else f"SDF record {i + 1} could not be read by RDKit"
            out.append(LigandRecord(i, name, mol, err))
    elif suffix in SMILES_SUFFIXES:
        lines = [ln.strip() for ln in p.read_text().splitlines()]
        for line in (ln for ln in lines if ln and not ln.startswith("#")):
            i = len(out)
            smiles, _, rest = line.partition(" ") if " " in line else line.partition("\t")
            name = rest.strip() or f"ligand_{i + 1}"
            try:
                out.append(LigandRecord(i, name, ligand_from_smiles(smiles)))
            except (ValueError, StructureError) as e:
                out.append(LigandRecord(i, name, None, str(e)))
    else:
        raise ValueError(
            f"ligands: expected an SDF ({', '.join(SDF_SUFFIXES)}) or SMILES file ({', '.join(SMILES_SUFFIXES)}), "
            f"received {p.name}"
        )
    if not out:
        raise ValueError(f"ligands: no ligand in {p}")
    return out


def _file_name(rec: LigandRecord) -> str:
    return f"{rec.index + 1:04d}_{re.sub(r'[^A-Za-z0-9_.-]+', '_', rec.name)[:60]}.sdf"


def _read_summary(path: Path) -> dict[int, dict]:
    if not path.exists():
        return {}
    with path.open(newline="") as f:
        return {int(r["index"]): r for r in csv.DictReader(f)}


def _write_summary(path: Path, rows: dict[int, dict]) -> None:
    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(SUMMARY_COLUMNS))
        w.writeheader()
        for i in sorted(rows):
            w.writerow(rows[i])
    os.replace(tmp, path)


def _describe_pocket(pocket) -> str:
    if isinstance(pocket, Pocket):
        return f"Pocket of {pocket.n_atoms} atoms at {[round(float(c), 3) for c in pocket.center]}"
    if isinstance(pocket, Chem.Mol):
        return f"reference ligand {Chem.MolToSmiles(pocket)} at {pocket.GetConformer().GetPositions().mean(0).round(3).tolist()}"
    if isinstance(pocket, str | Path):
        return str(Path(pocket).resolve())
    return repr([float(c) for c in pocket])


def dock_many(
    protein: str | Path,
    ligands: str | Path | Sequence[Chem.Mol | str],
    out_dir: str | Path,
    *,
    pocket: Pocket | Chem.Mol | str | Path | Sequence[float],
    model: FragmentScoreModel | str | Path = SHIPPED_MODEL,
    key: PRNGKeyArray | None = None,
    n_samples: int = 40,
    n_steps: int = 30,
    pocket_size: float = 22.0,
    rank: bool = True,
    pb_budget: int | None = 8,
    conformer_seed: int = 0,
    assemble: Assemble = "conformer_matching",
    ranking: AbstractRanking = VinardoRanking(minimize=True, minimize_steps=CONVERGED_STEPS),
    hydrogens: bool = False,
    progress: Callable[[int, int, dict[str, object]], None] | None = None,
    stage_progress: Progress | None = None,
    confidence: ConfidenceModel | str | Path | None = None,
) -> list[dict[str, object]]:
    """Dock every ligand of ``ligands`` (a file for :func:`read_ligands`, or a list of molecules / SMILES) into
    ``protein`` at ``pocket`` (see :func:`jaxkit.docking.dock`, whose defaults these are); writes one SDF per
    ligand and ``summary.csv`` into ``out_dir`` (module docstring) and returns the summary rows in input order.

    ``progress(done, total, row)`` is called after each ligand (``row`` its summary row); ``stage_progress`` is
    passed to each ligand's docking stages. Calling again on the same ``out_dir`` with the same settings skips
    the ligands already in its summary; different settings raise ``ValueError``."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 1:
        raise ValueError(f"n_samples: expected an integer >= 1, received {n_samples!r}")
    check_samples_memory(n_samples, ComplexSizes().ligand)
    check_int("n_steps", n_steps, minimum=1)
    # the sampler's time grid (jaxkit.diffusion's rule), checked here so that it fails the call, not each ligand
    check_size("n_steps", 32 * (n_steps + 1), hint=f"a grid of {n_steps + 1} times")
    check_positive("pocket_size", pocket_size)
    if pb_budget is not None:
        check_int("pb_budget", pb_budget, minimum=0)
    check_int("conformer_seed", conformer_seed, minimum=0)
    key = jax.random.key(0) if key is None else key
    check_key("key", key)
    check_choice("assemble", assemble, ASSEMBLIES)
    _check_ranking("ranking", ranking)
    if not Path(protein).is_file():
        raise ValueError(f"protein: expected a PDB file, received {protein} (no such file)")
    if isinstance(ligands, str | Path):
        records, source = read_ligands(ligands), str(Path(ligands).resolve())
    else:
        records, source = [], "list"
        for i, x in enumerate(ligands):
            try:
                mol = x if isinstance(x, Chem.Mol) else ligand_from_smiles(x)
                records.append(LigandRecord(i, f"ligand_{i + 1}", mol))
            except (ValueError, StructureError, TypeError) as e:
                records.append(LigandRecord(i, f"ligand_{i + 1}", None, str(e)))
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(
            f"out_dir: expected a folder (new, empty or a batch folder), received the file {out}"
        )
    settings = {
        "protein": str(Path(protein).resolve()),
        "ligands": source,
        "n_ligands": len(records),
        # by content, not only by name: a file edited in place (or another list) is another batch, never resumed
        "protein_sha256": hashlib.sha256(Path(protein).read_bytes()).hexdigest(),
        "ligands_sha256": _records_digest(records),
        "model_sha256": _path_digest(model) if isinstance(model, str | Path) else None,
        "pocket": _describe_pocket(pocket),
        "model": str(Path(model).resolve()) if isinstance(model, str | Path) else type(model).__name__,
        "key": jax.random.key_data(key).tolist(),
        "n_samples": n_samples,
        "n_steps": n_steps,
        "rank": rank,
        "pb_budget": pb_budget,
        "conformer_seed": conformer_seed,
        "assemble": assemble,
        "ranking": repr(ranking),
        "confidence": str(Path(confidence).resolve())
        if isinstance(confidence, str | Path)
        else repr(confidence)[:80],
    }
    meta = out / "batch.json"
    if out.exists() and any(out.iterdir()):
        if not meta.exists():
            raise ValueError(f"out_dir: {out} exists, is not empty and is not a batch folder (no batch.json)")
        before = json.loads(meta.read_text())
        changed = sorted(k for k in settings if before.get(k) != json.loads(json.dumps(settings[k])))
        if changed:
            raise ValueError(
                f"out_dir: {out} holds a batch with other settings ({', '.join(changed)}); use another folder"
            )
    out.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps(settings, indent=2) + "\n")
    summary = out / "summary.csv"
    rows = _read_summary(summary)
    report = stage_progress if stage_progress is not None else (lambda stage, done, total: None)

    net, config = _load(model)
    conf = _load_confidence(confidence)
    atoms = load_protein(protein)
    poc = resolve_pocket(atoms, pocket, size=pocket_size)
    ranking = ranking if rank else SamplingOrder()
    pending = [r for r in records if r.index not in rows]
    prepared, sizes = {}, None
    for r in records:  # every readable ligand, done or not: the common padding does not depend on a resume
        if r.mol is None:
            continue
        try:
            lig = ligand_fragments(r.mol, conformer="rdkit", seed=conformer_seed)
        except (ValueError, StructureError, RuntimeError) as e:
            prepared[r.index] = e
            continue
        prepared[r.index] = lig
        s = _sizes_for(config, lig, poc)
        sizes = (
            s
            if sizes is None
            else ComplexSizes(*(max(getattr(sizes, f), getattr(s, f)) for f in _SIZE_FIELDS))
        )
    scorer = None
    if pending and ranking.needs_scorer:
        scorer = make_scorer(poc, protein)
    for k, r in enumerate(pending):
        t0 = time.perf_counter()
        row = {c: "" for c in SUMMARY_COLUMNS}
        row.update(index=str(r.index), name=r.name, status="failed", n_poses="0")
        try:
            if r.mol is None:
                raise ValueError(r.error)
            row["smiles"] = Chem.MolToSmiles(Chem.RemoveHs(r.mol))
            lig = prepared[r.index]
            if isinstance(lig, Exception):
                raise lig
            c = build_complex(lig, poc, sizes=sizes, name=r.name)
            res = _dock_prepared(
                net,
                c,
                lig,
                jax.random.fold_in(key, r.index),
                scorer,
                Path(protein),
                t0,
                report,
                n_samples=n_samples,
                n_steps=n_steps,
                sampler=dm.DDIM(eta=1.0),
                assemble=assemble,
                ranking=ranking,
                pb_budget=pb_budget,
                confidence=conf,
            )
            name = _file_name(r)
            tmp = out / (name + ".tmp")
            # its own scratch file (one an interrupted run left behind is replaced), then renamed
            write_poses_sdf(tmp, res, hydrogens=hydrogens, overwrite=True)
            os.replace(tmp, out / name)
            top = res.top
            row.update(
                status="ok",
                n_poses=str(len(res.poses)),
                top_vinardo_kcal_mol=f"{top.vinardo:.3f}",
                top_pb_valid={True: "yes", False: "no", None: "unchecked"}[top.pb_valid],
                top_confidence="" if top.confidence is None else f"{top.confidence:.4f}",
                warning="; ".join(res.warnings),
                sdf=name,
            )
        except (ValueError, TypeError, RuntimeError, OSError, KeyError, IndexError, ArithmeticError) as e:
            row["error"] = " ".join(f"{type(e).__name__}: {e}".split())[:400]
        row["seconds"] = f"{time.perf_counter() - t0:.2f}"
        rows[r.index] = row
        _write_summary(summary, rows)
        if progress is not None:
            progress(k + 1, len(pending), row)
    if not summary.exists():
        _write_summary(summary, rows)
    return [rows[i] for i in sorted(rows)]
