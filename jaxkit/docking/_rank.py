"""Ranking sampled poses as SigmaDock does: PoseBusters validity first, then the Vinardo energy.

- :class:`VinardoScorer`: AutoDock Vina's ``vinardo`` scoring function (the ``vina`` package) on grid maps of a
  box around the pocket center; the receptor is prepared by ``meeko`` (:func:`prepare_receptor`, standard amino
  acids only; residues meeko cannot build are deleted) or, for pseudo-pockets, written directly as PDBQT with
  element types (C, NA, OA, SA). Ligand poses get hydrogens placed by RDKit and are written by meeko; the score
  is the pose's energy as is (``Vina.score``, SigmaDock's ``--score_only``) or, with :meth:`VinardoScorer.minimize`,
  after Vina's local BFGS optimization of the pose in the maps (rigid motion and the rotatable torsions of meeko's
  torsion tree; bond lengths, angles and rings fixed; GNINA/smina ``--minimize``).
- :func:`pose_checks`: the PoseBusters ``dock`` checks (molecule + protein; no reference pose, so no leakage) or,
  without a protein file, the ``mol`` checks.
- :func:`rank_poses`: poses whose bond gap exceeds ``max_gap`` (fragments not reassembled) are invalid without
  calling PoseBusters; the rest are scored by Vinardo and checked in energy order until one passes (at most
  ``pb_budget`` checks, or all with ``pb_budget=None``). Order: valid poses by energy, then every other pose by
  energy (at equal energy a checked pose first): only a passed check promotes a pose, so an unchecked pose never
  outranks a checked one of lower energy, and when no pose passes, the top pose is the lowest-energy one with its
  failed checks named (:func:`ranking_warning` says so). ``minimize=True`` first replaces every pose by its Vina-minimized pose
  and ranks by the minimized energy; ``minimize_steps`` caps Vina's BFGS steps (0: Vina's default budget of
  ``(25 + n_movable_atoms)/3`` steps; :data:`CONVERGED_STEPS`: in practice until Vina's BFGS stops by itself, at
  a gradient norm below 1e-5 or where no line-search step descends, so every pose reaches its local minimum). ``order="consensus"`` replaces the energy by the confidence-free consensus
  score of :func:`consensus_counts` (most other samples within 2 Å first; no Vinardo, ``scorer`` may be None).
- :func:`consensus_counts`: for each pose, the number of other poses within ``threshold`` Å RMSD (atom order, no
  alignment) and its mean RMSD to the others: the pose in the densest cluster of samples is the mode estimate.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import subprocess
import sys
import tempfile
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from rdkit import Chem

from .._validate import check_int, check_positive
from ._structures import Pocket

_AD_TYPES = {"C": "C", "N": "NA", "O": "OA", "S": "SA"}
CONVERGED_STEPS = (
    300  # BFGS step cap of the "vinardo_converged" ranking (Vina's BFGS stops earlier by itself)
)


# Prepared receptors by the SHA-256 of the PDB file's bytes (content, not name: an edited file is prepared again),
# most recent last; a few entries of PDBQT text (about 1 MB each for a whole protein).
_RECEPTORS: OrderedDict[str, str] = OrderedDict()
_RECEPTORS_KEPT = 8


@contextlib.contextmanager
def workspace(workdir: str | Path | None, prefix: str) -> Iterator[Path]:
    """``workdir`` as a folder (created, kept) or, where it is ``None``, a temporary folder named ``prefix…`` that
    is removed when the block ends: a call that prepares a receptor or writes a ligand leaves nothing behind."""
    if workdir is not None:
        Path(workdir).mkdir(parents=True, exist_ok=True)
        yield Path(workdir)
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def prepare_receptor(protein_pdb: str | Path, workdir: str | Path) -> Path:
    """Receptor PDBQT by meeko's ``mk_prepare_receptor.py`` (standard amino acids; hydrogens added; residues
    meeko cannot build are deleted, at most 5), written to ``workdir/receptor-<sha12>.pdbqt`` (named by its
    content, so no other file in ``workdir`` is touched; meeko runs in a private temporary folder). A file whose
    bytes were prepared before in this process is not prepared again. Raises ``RuntimeError`` naming the file on
    failure, ``FileExistsError`` if a different file already has the output's name."""
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(Path(protein_pdb).read_bytes()).hexdigest()
    if digest in _RECEPTORS:
        _RECEPTORS.move_to_end(digest)
        text = _RECEPTORS[digest]
    else:
        with tempfile.TemporaryDirectory(prefix="jaxkit_receptor_") as tmp:
            text = _prepare_receptor(protein_pdb, Path(tmp)).read_text()
        _RECEPTORS[digest] = text
        while len(_RECEPTORS) > _RECEPTORS_KEPT:
            _RECEPTORS.popitem(last=False)
    return _write_named_by_content(work, "receptor", text)


def _write_named_by_content(folder: Path, stem: str, text: str) -> Path:
    """Write ``text`` to ``folder/<stem>-<sha12>.pdbqt``; an existing file of that name with other bytes (a
    user's) is refused, never replaced; one with the same bytes is left as it is."""
    out = folder / f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:12]}.pdbqt"
    if out.exists():
        if out.is_file() and out.read_text() == text:
            return out
        raise FileExistsError(
            f"workdir: {out} exists with other content; it is not replaced: choose another workdir"
        )
    out.write_text(text)
    return out


def _prepare_receptor(protein_pdb: str | Path, work: Path) -> Path:
    import biotite.structure as struc
    import biotite.structure.io.pdb as pdb

    atoms = pdb.PDBFile.read(str(protein_pdb)).get_structure(model=1)
    atoms = atoms[struc.filter_amino_acids(atoms)]
    script = Path(sys.executable).parent / "mk_prepare_receptor.py"
    cmd = [
        str(script) if script.exists() else "mk_prepare_receptor.py",
        "--read_pdb",
        str(work / "receptor.pdb"),
        "-o",
        str(work / "receptor"),
        "-p",
        "-a",
    ]
    deleted: list[tuple[str, int]] = []
    for _ in range(6):
        keep = np.ones(atoms.array_length(), bool)
        for chain, res in deleted:
            keep &= ~((atoms.chain_id == chain) & (atoms.res_id == res))
        f = pdb.PDBFile()
        f.set_structure(atoms[keep])
        f.write(str(work / "receptor.pdb"))
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if proc.returncode == 0 and (work / "receptor.pdbqt").exists():
            return work / "receptor.pdbqt"
        bad = re.search(r"corresponding to key ([A-Za-z0-9]+):(-?\d+)", proc.stderr)
        key = (bad.group(1), int(bad.group(2))) if bad else None
        if key is None or key in deleted:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise RuntimeError(f"receptor preparation for {protein_pdb} failed: {last}")
        deleted.append(key)
    raise RuntimeError(f"receptor preparation for {protein_pdb} failed after deleting residues {deleted}")


def pocket_pdbqt(pocket: Pocket, path: str | Path, *, overwrite: bool = False) -> Path:
    """Write pocket atoms as a rigid PDBQT receptor with AutoDock types C / NA / OA / SA (others as C). An
    existing ``path`` is refused (``FileExistsError``) unless ``overwrite=True`` (a folder always is)."""
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite: expected a bool, received {type(overwrite).__name__}")
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"path: {path} is a folder; expected the PDBQT file to write")
    if path.exists() and not overwrite:
        raise FileExistsError(f"path: {path} exists; pass overwrite=True to replace it, or choose a new file")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_pocket_pdbqt_text(pocket))
    return path


def _pocket_pdbqt_text(pocket: Pocket) -> str:
    lines = []
    for i, (p, el) in enumerate(zip(pocket.positions, pocket.elements)):
        sym = str(el).capitalize()
        ad = _AD_TYPES.get(sym, "C")
        lines.append(
            f"ATOM  {i + 1:5d}  {sym:<3s} PSD P{1 + i // 10:4d}    {p[0]:8.3f}{p[1]:8.3f}{p[2]:8.3f}"
            f"  1.00  0.00    +0.000 {ad:<2s}"
        )
    return "\n".join(lines) + "\n"


def _ligand_pdbqt(mol: Chem.Mol) -> str:
    from meeko import MoleculePreparation, PDBQTWriterLegacy

    setup = MoleculePreparation().prepare(Chem.AddHs(mol, addCoords=True))[0]
    pdbqt, ok, err = PDBQTWriterLegacy.write_string(setup)
    if not ok:
        raise RuntimeError(f"meeko could not write the ligand PDBQT: {err}")
    return pdbqt


# A probe molecule carrying every X-Score atom type of organic ligands (C_H, C_P, N_P, N_D, N_A, N_DA, O_A, O_DA,
# S_P, P_P, F_H, Cl_H, Br_H, I_H). Vina computes grid maps only for the types of the ligand set when the maps are
# built, and it perceives types from *distances*: a sampled pose whose fragments sit apart can turn a C_P into a
# C_H, and a missing map makes Vina exit the process. Maps for the probe's types cover every pose.
_PROBE = "OCC(N)C(=O)Nc1ccncc1-c1ccc(cc1)S(=O)(=O)N(C)CCOP(=O)(O)OCC([N+](=O)[O-])C(F)(Cl)C(Br)CI"


class VinardoScorer:
    """Vinardo energies (kcal/mol) of ligand poses in a receptor, on maps of a ``box`` Å cube around ``center``."""

    def __init__(self, receptor_pdbqt: str | Path, center: np.ndarray, *, box: float = 26.0):
        from rdkit.Chem import AllChem
        from vina import Vina

        c = np.asarray(center, dtype=np.float64)
        if c.shape != (3,) or not np.all(np.isfinite(c)):
            raise ValueError(
                f"center: expected 3 finite coordinates (Å), received shape {c.shape}: {c.tolist()}"
            )
        if (
            isinstance(box, bool)
            or not isinstance(box, int | float | np.number)
            or not (np.isfinite(box) and box > 0)
        ):
            raise ValueError(f"box: expected a finite number of Å > 0, received {box!r}")

        self.vina = Vina(sf_name="vinardo", verbosity=0, cpu=1, seed=0)
        self.vina.set_receptor(str(receptor_pdbqt))
        self.center = [float(c) for c in np.asarray(center).reshape(3)]
        self.box = float(box)
        probe = Chem.AddHs(Chem.MolFromSmiles(_PROBE))
        AllChem.EmbedMolecule(probe, randomSeed=0)
        self.vina.set_ligand_from_string(_ligand_pdbqt(Chem.RemoveHs(probe)))
        self.vina.compute_vina_maps(center=self.center, box_size=[self.box] * 3)

    def minimize(self, mol: Chem.Mol, *, max_steps: int = 0) -> tuple[Chem.Mol, float]:
        """Vina's local optimization of the pose (``Vina.optimize``; ``max_steps=0``: Vina's default
        ``(25 + n_movable_atoms)/3`` BFGS steps): returns the minimized pose (a copy of ``mol``'s heavy atoms in
        their order, hydrogens re-added where ``mol`` has them) and its total Vinardo energy; ``(mol, inf)`` where
        Vina cannot type or place the pose (e.g. an atom outside the maps' box)."""
        from meeko import PDBQTMolecule, RDKitMolCreate

        check_int("max_steps", max_steps, minimum=0)
        try:
            self.vina.set_ligand_from_string(_ligand_pdbqt(mol))
            energy = float(self.vina.optimize(max_steps=int(max_steps))[0])
            with tempfile.TemporaryDirectory(prefix="jaxkit_min_") as work:
                path = Path(work) / "pose.pdbqt"
                self.vina.write_pose(str(path), overwrite=True)
                out = RDKitMolCreate.from_pdbqt_mol(PDBQTMolecule.from_file(str(path), skip_typing=True))[0]
        except (
            RuntimeError,
            ValueError,
            KeyError,
            TypeError,
            IndexError,
        ):  # untypable / outside the box: ranked last
            return mol, float("inf")
        heavy = Chem.RemoveHs(mol)
        out = Chem.RemoveHs(out) if out is not None else None
        match = out.GetSubstructMatch(heavy) if out is not None else ()
        if len(match) != heavy.GetNumAtoms() or not np.isfinite(energy):
            return mol, float("inf")
        x = out.GetConformer().GetPositions()[list(match)]
        res = Chem.Mol(heavy)
        conf = res.GetConformer()
        for i, p in enumerate(x):
            conf.SetAtomPosition(i, p.tolist())
        return (Chem.AddHs(res, addCoords=True) if mol.GetNumAtoms() != heavy.GetNumAtoms() else res), energy

    def score(self, mol: Chem.Mol) -> float:
        """Total Vinardo energy of the pose (inter + intra); ``inf`` where Vina cannot score it."""
        try:
            self.vina.set_ligand_from_string(_ligand_pdbqt(mol))
            return float(self.vina.score()[0])
        except (
            RuntimeError,
            ValueError,
            KeyError,
            TypeError,
        ):  # a molecule meeko/Vina cannot type: ranked last
            return float("inf")


def make_scorer(
    pocket: Pocket, protein_pdb: str | Path | None, *, workdir: str | Path | None = None
) -> VinardoScorer:
    """A :class:`VinardoScorer` for a real protein (meeko receptor) or, without a protein file, the pocket atoms.

    Scorers are kept by the content of the receptor PDBQT and the box center (the last 4): the Vinardo grid maps
    (about a second each) are computed once per receptor and pocket, and a second call for the same complex returns
    the same scorer. Every scoring call sets its own ligand first, so a kept scorer carries no state between calls;
    a receptor file with new content gets new maps."""
    with workspace(workdir, "jaxkit_rank_") as work:  # a temporary folder is removed on return
        rec = (
            prepare_receptor(protein_pdb, work)
            if protein_pdb is not None
            else _write_named_by_content(Path(work), "pocket", _pocket_pdbqt_text(pocket))
        )
        center = np.asarray(pocket.center, dtype=np.float64).reshape(3)
        key = (hashlib.sha256(Path(rec).read_bytes()).hexdigest(), tuple(float(c) for c in center))
        if key in _SCORERS:
            _SCORERS.move_to_end(key)
            return _SCORERS[key]
        scorer = VinardoScorer(rec, center)  # reads the receptor file here
    _SCORERS[key] = scorer
    while len(_SCORERS) > _SCORERS_KEPT:
        _SCORERS.popitem(last=False)
    return scorer


_SCORERS: OrderedDict[tuple[str, tuple[float, ...]], VinardoScorer] = OrderedDict()
_SCORERS_KEPT = 4


def pose_checks(mol: Chem.Mol, protein_pdb: str | Path | None) -> tuple[bool, list[str]]:
    """PoseBusters ``dock`` checks (``mol`` checks without a protein); returns (all passed, failed check names)."""
    from ._evaluate import posebusters_valid

    ok, checks = posebusters_valid(mol, protein_pdb)
    return ok, [k for k, v in checks.items() if not v]


def consensus_counts(positions: object, threshold: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """Per pose of ``positions`` ``(n_poses, n_atoms, 3)`` (Å, one ligand, same atom order): the number of other
    poses with $\\mathrm{RMSD}_{ij} = \\sqrt{\\tfrac{1}{n_a}\\sum_a \\lVert x_{ia} - x_{ja} \\rVert^2} < $ ``threshold``
    (in place, no alignment, no symmetry) and the mean RMSD to the other poses.

    Needs at least 2 poses (``ValueError`` otherwise): a lone pose has no other poses, and the mean of their
    RMSDs is undefined (it was returned as 0.0, which reads as perfect agreement). ``threshold`` (Å) must be
    finite and > 0."""
    check_positive("threshold", threshold)
    x = np.asarray(positions, dtype=np.float64)
    if x.ndim != 3 or x.shape[-1] != 3 or x.shape[1] < 1:
        raise ValueError(f"positions: expected shape (n_poses, n_atoms, 3), received {x.shape}")
    if x.shape[0] < 2:
        raise ValueError(
            f"positions: expected at least 2 poses (the mean RMSD to the other poses is undefined for a lone "
            f"pose), received {x.shape[0]}"
        )
    if not np.all(np.isfinite(x)):
        raise ValueError("positions: expected finite coordinates, received NaN or inf")
    d = np.sqrt(np.mean(np.sum((x[:, None] - x[None]) ** 2, -1), -1))
    n = x.shape[0]
    close = d < threshold
    np.fill_diagonal(close, False)  # the other poses only (a pose's RMSD to itself is 0)
    counts = close.sum(1)
    mean = d.sum(1) / (n - 1)
    return counts.astype(np.int64), mean


Progress = Callable[[str, int, int], None]
"""A progress callback ``progress(stage, done, total)``: ``done = 0`` opens the stage, ``done = total`` ends it."""


@dataclass
class RankedPose:
    """One sampled pose with its ranking information (``rank`` 0 is the top pose)."""

    index: int
    mol: Chem.Mol
    vinardo: float
    bond_gap: float
    pb_valid: bool | None
    failed_checks: list[str]
    rank: int = -1
    confidence: float | None = None


def rank_poses(
    mols: list[Chem.Mol],
    gaps: list[float] | np.ndarray,
    scorer: VinardoScorer | None,
    protein_pdb: str | Path | None,
    *,
    max_gap: float = 0.6,
    pb_budget: int | None = 8,
    order: Literal["vinardo", "consensus"] = "vinardo",
    minimize: bool = False,
    minimize_steps: int = 0,
    progress: Progress | None = None,
) -> list[RankedPose]:
    """Rank poses (see the module docstring); returns them best first with ``rank`` set (``RankedPose.mol`` is
    the minimized pose with ``minimize=True``; ``minimize_steps`` is passed to :meth:`VinardoScorer.minimize`).
    ``progress(stage, done, total)`` is called as each pose is minimized or scored (stage ``"minimization"`` /
    ``"scoring"``) and checked (``"validity checks"``; ``done = 0`` opens a stage). :func:`ranking_warning` says
    when no pose passed the checks."""
    check_int("minimize_steps", minimize_steps, minimum=0)
    if pb_budget is not None:
        check_int("pb_budget", pb_budget, minimum=0)
    gaps_arr = np.asarray(gaps, dtype=np.float64)
    if gaps_arr.shape != (len(mols),):
        raise ValueError(
            f"gaps: expected one bond gap per pose of mols, shape ({len(mols)},), received {gaps_arr.shape}"
        )
    if not np.all(np.isfinite(gaps_arr)):
        raise ValueError(f"gaps: expected finite bond gaps (Å), received {gaps_arr.tolist()}")
    if order not in ("vinardo", "consensus"):
        raise ValueError(f"order: expected 'vinardo' or 'consensus', received {order!r}")
    if minimize and (order != "vinardo" or scorer is None):
        raise ValueError(
            "minimize: Vina minimization needs order='vinardo' and a scorer, received "
            f"order={order!r}, scorer={type(scorer).__name__}"
        )
    report = progress if progress is not None else (lambda stage, done, total: None)
    stage = "minimization" if minimize else ("scoring" if scorer is not None and order == "vinardo" else "")
    poses = []
    for i, (m, g) in enumerate(zip(mols, gaps)):
        if stage and i == 0:
            report(stage, 0, len(mols))
        if minimize and float(g) <= max_gap:
            m, e = scorer.minimize(m, max_steps=minimize_steps)
        else:
            e = scorer.score(m) if (scorer is not None and order == "vinardo") else float("nan")
        if stage:
            report(stage, i + 1, len(mols))
        broken = float(g) > max_gap
        poses.append(RankedPose(i, m, e, float(g), False if broken else None, ["bond_gap"] if broken else []))
    if order == "consensus":
        if len(mols) > 1:
            counts, mean = consensus_counts(np.stack([m.GetConformer().GetPositions() for m in mols]))
        else:  # a lone pose: no consensus to rank by (and nothing to order)
            counts, mean = np.zeros(len(mols), np.int64), np.zeros(len(mols))
        key = {i: (-float(c), float(d)) for i, (c, d) in enumerate(zip(counts, mean))}
        energy = lambda p: key[p.index]
    else:
        energy = lambda p: p.vinardo if np.isfinite(p.vinardo) else np.inf
    checked = 0
    todo = sum(p.pb_valid is None for p in poses)
    todo = todo if pb_budget is None else min(todo, pb_budget)
    report("validity checks", 0, todo)
    for p in sorted(poses, key=energy):
        if p.pb_valid is not None or (pb_budget is not None and checked >= pb_budget):
            continue
        p.pb_valid, p.failed_checks = pose_checks(p.mol, protein_pdb)
        checked += 1
        report("validity checks", checked, todo)
        if p.pb_valid and pb_budget is not None:
            break
    # only a passed check promotes a pose above lower-energy ones: valid poses first, then the energy order (at
    # equal energy a checked pose before an unchecked one), so an unchecked pose never outranks a checked one
    # of lower energy (checks run in energy order: the top pose is a checked one whenever any pose was checked)
    ranked = sorted(poses, key=lambda p: (p.pb_valid is not True, energy(p), p.pb_valid is None, p.bond_gap))
    for r, p in enumerate(ranked):
        p.rank = r
    return ranked


def ranking_warning(ranked: list[RankedPose], pb_budget: int | None) -> str | None:
    """A warning when poses were checked and none passed, or when the budget (``pb_budget=0``) allowed no check
    (``None`` otherwise; callers skip unchecked orders such as :class:`SamplingOrder`): how many were checked,
    the budget, and the top pose's failed checks."""
    if pb_budget is not None:
        check_int("pb_budget", pb_budget, minimum=0)
    if not ranked or any(p.pb_valid is True for p in ranked):
        return None
    checked = [p for p in ranked if p.pb_valid is False]
    if not checked:  # nothing checked: silent only when no check was asked for (an unchecked order)
        return (
            "no pose was checked for validity (budget 0 checks): the top pose is unchecked"
            if pb_budget == 0
            else None
        )
    unchecked = sum(p.pb_valid is None for p in ranked)
    budget = "all poses" if pb_budget is None else f"budget {pb_budget} checks"
    top = ranked[0]
    state = (
        f"fails {','.join(top.failed_checks) or 'the checks'}" if top.pb_valid is False else "is unchecked"
    )
    return (
        f"no pose passed the validity checks ({len(checked)} failed, {unchecked} unchecked; {budget}): "
        f"the top pose {state}; treat it with care, or raise the budget (pb_budget)"
    )


# ------------------------------------------------------------------------------------------------ ranking objects
class AbstractRanking:
    """How sampled poses are ordered: ``ranking.rank(mols, gaps, scorer, protein_pdb, pb_budget=...)`` returns them
    best first (``RankedPose.rank`` set). ``needs_scorer``: the ranking uses Vinardo (a :class:`VinardoScorer`)."""

    needs_scorer: ClassVar[bool] = False

    def rank(
        self,
        mols: list[Chem.Mol],
        gaps: list[float] | np.ndarray,
        scorer: VinardoScorer | None,
        protein_pdb: str | Path | None,
        *,
        pb_budget: int | None = 8,
        progress: Progress | None = None,
    ) -> list[RankedPose]:
        raise NotImplementedError


@dataclass(frozen=True)
class SamplingOrder(AbstractRanking):
    """No ranking: the poses in sampling order, unchecked (no Vinardo, no PoseBusters)."""

    def rank(self, mols, gaps, scorer, protein_pdb, *, pb_budget=8, progress=None) -> list[RankedPose]:
        return [
            RankedPose(i, m, float("nan"), float(g), None, [], rank=i)
            for i, (m, g) in enumerate(zip(mols, gaps))
        ]


@dataclass(frozen=True)
class VinardoRanking(AbstractRanking):
    """PoseBusters-valid poses first, then the Vinardo energy (:func:`rank_poses` with ``order="vinardo"``).

    ``minimize=False``: the energy of the pose as sampled (SigmaDock's score-only ranking). ``minimize=True``: every
    pose is first replaced by its Vina local minimization in the Vinardo maps, with at most ``minimize_steps`` BFGS
    steps (0: Vina's default budget; :data:`CONVERGED_STEPS`: until Vina's BFGS stops by itself). Without a scorer
    (receptor preparation failed) the poses are ordered by PoseBusters validity alone."""

    minimize: bool = False
    minimize_steps: int = 0
    needs_scorer: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_int("minimize_steps", self.minimize_steps, minimum=0)

    def rank(self, mols, gaps, scorer, protein_pdb, *, pb_budget=8, progress=None) -> list[RankedPose]:
        minimize = self.minimize and scorer is not None
        steps = self.minimize_steps if minimize else 0
        return rank_poses(
            mols,
            gaps,
            scorer,
            protein_pdb,
            pb_budget=pb_budget,
            minimize=minimize,
            minimize_steps=steps,
            progress=progress,
        )


@dataclass(frozen=True)
class ConsensusRanking(AbstractRanking):
    """PoseBusters-valid poses first, then the consensus of the samples (:func:`consensus_counts`: most other
    samples within 2 Å first); no Vinardo."""

    def rank(self, mols, gaps, scorer, protein_pdb, *, pb_budget=8, progress=None) -> list[RankedPose]:
        return rank_poses(
            mols, gaps, None, protein_pdb, pb_budget=pb_budget, order="consensus", progress=progress
        )


RANKINGS: dict[str, AbstractRanking] = {
    "vinardo": VinardoRanking(),
    "vinardo_minimized": VinardoRanking(minimize=True),
    "vinardo_converged": VinardoRanking(minimize=True, minimize_steps=CONVERGED_STEPS),
    "consensus": ConsensusRanking(),
    "none": SamplingOrder(),
}
"""The command line's ``--ranking`` names (and the experiments' variant names) for the ranking objects."""
