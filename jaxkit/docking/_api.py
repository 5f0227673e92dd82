"""The user entry point :func:`dock` and the evaluation of one complex (sample → rank → RMSD).

``dock(protein, ligand, pocket=..., model=..., key=...)`` reads only the ligand's chemistry (an RDKit ETKDG
conformer gives the fragment geometry; an input pose is ignored), the protein, and a pocket given by a reference
ligand (redocking: the pocket is the protein around it, its centroid the diffusion origin) or by a center (and box
size). It draws ``n_samples`` poses with the diffusion model and ranks them (:func:`rank_poses`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TextIO

import equinox as eqx
import jax
import numpy as np
from jaxtyping import PRNGKeyArray
from rdkit import Chem

from .. import diffusion as dm
from .._validate import check_choice, check_finite, check_int, check_key
from ._assemble import match_conformer
from ._complex import (
    ComplexSizes,
    DockingComplex,
    PreparedLigand,
    _bond_gap,
    _ligand_positions,
    _to_angstrom,
    build_complex,
    ligand_fragments,
    relax_pose,
)
from ._confidence import ConfidenceModel, confidence_inputs, confidence_scores, load_confidence_model
from ._datasets import DockingExample
from ._dock import dock_samples
from ._evaluate import symmetric_rmsd, with_positions
from ._fragments import conformer_positions
from ._model import FragmentScoreModel
from ._rank import (
    CONVERGED_STEPS,
    AbstractRanking,
    Progress,
    RankedPose,
    SamplingOrder,
    VinardoRanking,
    make_scorer,
    pose_checks,
    ranking_warning,
)
from ._structures import (
    Pocket,
    StructureError,
    extract_pocket,
    ligand_from_smiles,
    load_ligand,
    load_protein,
    pocket_from_center,
)
from ._train import SHIPPED_MODEL, ModelConfig, load_model


class StageProgress:
    """A ``progress(stage, done, total)`` callback that shows each stage of a docking run on ``stream`` (standard
    error) as a tqdm bar with elapsed time and ETA: preparation, sampling, minimization or scoring, validity
    checks. The bar of a stage with ``total = 1`` shows its elapsed time when it ends."""

    def __init__(self, stream: TextIO | None = None, *, prefix: str = ""):
        self.stream = stream if stream is not None else sys.stderr
        self.prefix = prefix
        self.stage: str | None = None
        self.bar = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        from tqdm.auto import tqdm

        if stage != self.stage:
            self.close()
            self.stage = stage
            self.bar = tqdm(
                total=max(int(total), 1),
                desc=f"{self.prefix}{stage}",
                file=self.stream,
                mininterval=1.0,
                unit="pose" if total > 1 else "stage",
                leave=True,
            )
        if self.bar is not None and done > self.bar.n:
            self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.bar, self.stage = None, None


@dataclass
class DockingResult:
    """Ranked poses (best first, heavy atoms, Å) of one docking run, how long it took, and its warnings (e.g. no
    pose passed the validity checks: :func:`ranking_warning`)."""

    poses: list[RankedPose]
    seconds: float
    ligand: PreparedLigand
    complex: DockingComplex
    warnings: list[str] = field(default_factory=list)

    @property
    def top(self) -> RankedPose:
        return self.poses[0]


def read_ligand(ligand: Chem.Mol | str | Path) -> Chem.Mol:
    """An RDKit molecule from a molecule, an SDF/MOL path, or a SMILES string (named in errors)."""
    if isinstance(ligand, Chem.Mol):
        return ligand
    if isinstance(ligand, Path) or (
        isinstance(ligand, str) and Path(ligand).suffix.lower() in (".sdf", ".sd", ".mol")
    ):
        return load_ligand(ligand, require_3d=False)
    if isinstance(ligand, str):
        return ligand_from_smiles(ligand)
    raise TypeError(
        f"ligand: expected an RDKit Mol, an SDF/MOL path or a SMILES string, received {type(ligand).__name__}"
    )


def resolve_pocket(
    protein_atoms: object,
    pocket: Pocket | Chem.Mol | str | Path | Sequence[float],
    *,
    size: float = 22.0,
    cutoff: float = 10.0,
) -> Pocket:
    """A :class:`Pocket` from a Pocket, a reference ligand (Mol or SDF path: residues within ``cutoff`` Å), or a
    center ``(x, y, z)`` (residues within ``size / 2`` Å)."""
    if isinstance(pocket, Pocket):
        return pocket
    if isinstance(pocket, Chem.Mol | str | Path):
        ref = pocket if isinstance(pocket, Chem.Mol) else load_ligand(pocket)
        return extract_pocket(protein_atoms, conformer_positions(Chem.RemoveAllHs(ref)), cutoff=cutoff)
    center = np.asarray(pocket, dtype=np.float64)
    if center.shape != (3,):
        raise ValueError(
            f"pocket: expected a reference ligand, a Pocket or a center (x, y, z), received {pocket!r}"
        )
    return pocket_from_center(protein_atoms, center, size=size)


POCKET_BUCKET = 128
"""Pockets larger than the model's padding are padded up to a multiple of this many atoms, so that complexes of
similar size share one compiled sampler (padding atoms are masked: the samples do not depend on it)."""


def _sizes_for(config: ModelConfig, lig: PreparedLigand, pocket: Pocket) -> ComplexSizes:
    f = lig.frag
    bucketed = -(-pocket.n_atoms // POCKET_BUCKET) * POCKET_BUCKET
    return ComplexSizes(
        max(config.ligand, f.n_atoms),
        config.pocket if pocket.n_atoms <= config.pocket else bucketed,
        max(config.fragments, f.n_fragments),
        max(config.dummies, len(f.dummies), 1),
    )


_SAMPLERS: dict = {}


def _sampler(n_samples: int, n_steps: int, sampler: dm.AbstractSE3Sampler) -> Callable:
    key = (n_samples, n_steps, sampler)
    if key not in _SAMPLERS:
        _SAMPLERS[key] = eqx.filter_jit(
            lambda m, c, k: dock_samples(
                m, m.process, c, k, n_samples=n_samples, n_steps=n_steps, sampler=sampler
            )
        )
    return _SAMPLERS[key]


Assemble = Literal["none", "conformer_matching"]
ASSEMBLIES = ("none", "conformer_matching")


def _check_ranking(name: str, ranking: AbstractRanking) -> None:
    if not isinstance(ranking, AbstractRanking):
        raise TypeError(
            f"{name}: expected a ranking object (VinardoRanking(...), ConsensusRanking(), SamplingOrder(); "
            f"RANKINGS maps the command line's names to them), received {ranking!r}"[:240]
        )


def _sample_raw(
    model, c, key, n_samples: int, n_steps: int, sampler: dm.AbstractSE3Sampler
) -> tuple[np.ndarray, np.ndarray]:
    check_key("key", key)
    cj = jax.tree_util.tree_map(jax.numpy.asarray, c)
    try:
        R, T = _sampler(n_samples, n_steps, sampler)(model, cj, key)
        x = np.asarray(jax.vmap(lambda r, t: _to_angstrom(cj, _ligand_positions(cj, r, t)))(R, T), np.float64)
        gaps = np.asarray(jax.vmap(lambda r, t: _bond_gap(cj, r, t))(R, T), np.float64)
    except RuntimeError as e:  # the sampler's check of the model's outputs (NaN policy), raised at run time
        if "returned NaN/inf" not in str(e):
            raise
        raise ValueError(
            "model: the score model returned NaN/inf values while sampling (a diverging or damaged model?)"
        ) from None
    return x, gaps


def assemble_poses(
    lig: PreparedLigand,
    x: np.ndarray,
    gaps: np.ndarray,
    *,
    assemble: Assemble = "none",
    relax: bool = True,
    seed: int = 0,
) -> tuple[list[Chem.Mol], np.ndarray]:
    """Sampled fragment poses ``x`` ``(n, >= n_atoms, 3)`` (Å) as molecules. ``"none"``: the sampled atoms as they
    are (restrained MMFF relaxation with ``relax``); ``"conformer_matching"``: :func:`match_conformer` of the
    ligand's conformer (``lig.frag.mol``) to each sample, bond gaps 0 (the matched RMSD to the sample is stored as
    the molecule property ``conformer_match_rmsd``)."""
    check_choice("assemble", assemble, ASSEMBLIES)
    n = lig.frag.n_atoms
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 3 or x.shape[1] < n or x.shape[2] != 3:
        raise ValueError(
            f"x: expected sampled positions (n_samples, >= {n}, 3) (the ligand's {n} atoms first), "
            f"received shape {x.shape}"
        )
    if x.shape[0] == 0:
        raise ValueError(f"x: expected at least one sample, received shape {x.shape}")
    check_finite("x", x[:, :n])  # the ligand's atoms (rows past them are padding)
    if np.shape(gaps) != (x.shape[0],):
        raise ValueError(
            f"gaps: expected one bond gap per sample, shape ({x.shape[0]},), received {np.shape(gaps)}"
        )
    check_finite("gaps", np.asarray(gaps, dtype=np.float64))
    check_int("seed", seed, minimum=0)
    if assemble == "none":
        mols = [with_positions(lig.frag.mol, xi[:n]) for xi in x]
        return ([relax_pose(m) for m in mols] if relax else mols), np.asarray(gaps, np.float64)
    mols = []
    for xi in x:
        match = match_conformer(lig.frag.mol, xi[:n], seed=seed)
        match.mol.SetDoubleProp("conformer_match_rmsd", match.rmsd)
        mols.append(match.mol)
    return mols, np.zeros(len(mols))


def sample_complex(
    model: FragmentScoreModel,
    c: DockingComplex,
    lig: PreparedLigand,
    key: PRNGKeyArray,
    *,
    n_samples: int,
    n_steps: int = 30,
    sampler: dm.AbstractSE3Sampler = dm.DDIM(eta=1.0),
    relax: bool = True,
    assemble: Assemble = "none",
) -> tuple[list[Chem.Mol], np.ndarray]:
    """``n_samples`` poses as RDKit molecules (Å; see :func:`assemble_poses`) and their bond gaps (Å; before
    relaxation; 0 for matched conformers)."""
    check_choice("assemble", assemble, ASSEMBLIES)
    x, gaps = _sample_raw(model, c, key, n_samples, n_steps, sampler)
    return assemble_poses(lig, x, gaps, assemble=assemble, relax=relax)


def dock(
    protein: str | Path,
    ligand: Chem.Mol | str | Path,
    *,
    pocket: Pocket | Chem.Mol | str | Path | Sequence[float],
    n_samples: int = 40,
    model: FragmentScoreModel | str | Path = SHIPPED_MODEL,
    key: PRNGKeyArray | None = None,
    pocket_size: float = 22.0,
    n_steps: int = 30,
    sampler: dm.AbstractSE3Sampler = dm.DDIM(eta=1.0),
    rank: bool = True,
    pb_budget: int | None = 8,
    conformer_seed: int = 0,
    workdir: str | Path | None = None,
    assemble: Assemble = "conformer_matching",
    ranking: AbstractRanking = VinardoRanking(minimize=True, minimize_steps=CONVERGED_STEPS),
    progress: Progress | None = None,
    confidence: ConfidenceModel | str | Path | None = None,
) -> DockingResult:
    """Dock ``ligand`` into ``protein`` at ``pocket``; returns the ranked poses (see the module docstring).

    ``model`` is a :class:`FragmentScoreModel` or a model file (:func:`load_model`); by default the model shipped
    with the package (``SHIPPED_MODEL``), as on the command line. ``key`` defaults to ``jax.random.key(0)``, the
    command line's ``--seed 0``. ``progress(stage, done, total)`` is called through the stages ``"preparation"``,
    ``"sampling"``, ``"minimization"`` (or ``"scoring"``) and ``"validity checks"`` (``done = 0`` opens a stage).
    When no pose passes the validity checks the result's ``warnings`` say so. ``confidence`` (a
    :class:`ConfidenceModel` or its file) gives every pose its ``confidence`` (it does not change the order).
    ``rank=False`` keeps the
    sampling order (no Vinardo, no PoseBusters). ``assemble="conformer_matching"`` (default) turns every sample
    into the ligand's conformer fitted to it (:func:`match_conformer`), so every pose is a valid molecule;
    ``"none"`` keeps the sampled rigid fragments. ``ranking`` is a ranking object: the default
    ``VinardoRanking(minimize=True, minimize_steps=CONVERGED_STEPS)`` replaces every pose by its Vina local
    minimization in the Vinardo maps, run until Vina's BFGS stops by itself, and ranks by the minimized energy
    (:meth:`VinardoScorer.minimize`); ``VinardoRanking(minimize=True)`` stops at Vina's default step budget and
    ``VinardoRanking()`` scores the poses as sampled (SigmaDock's score-only ranking); :class:`ConsensusRanking`
    orders valid poses by :func:`consensus_counts`. The defaults are the variants chosen on CCD validation
    complexes (the ``sigmadock`` reproduction page reports them)."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 1:
        raise ValueError(f"n_samples: expected an integer >= 1, received {n_samples!r}")
    key = jax.random.key(0) if key is None else key
    check_key("key", key)
    check_choice("assemble", assemble, ASSEMBLIES)
    _check_ranking("ranking", ranking)
    if (
        isinstance(pocket_size, bool)
        or not isinstance(pocket_size, int | float)
        or not (np.isfinite(pocket_size) and pocket_size > 0)
    ):
        raise ValueError(f"pocket_size: expected a finite value > 0 Å, received {pocket_size!r}")
    check_int("conformer_seed", conformer_seed, minimum=0)
    if pb_budget is not None:
        check_int("pb_budget", pb_budget, minimum=0)
    model, config = _load(model)
    confidence = _load_confidence(confidence)
    report = progress if progress is not None else (lambda stage, done, total: None)
    t0 = time.perf_counter()
    report("preparation", 0, 1)
    protein = Path(protein)
    atoms = load_protein(protein)
    poc = resolve_pocket(atoms, pocket, size=pocket_size)
    mol = read_ligand(ligand)
    lig = ligand_fragments(mol, conformer="rdkit", seed=conformer_seed)
    c = build_complex(lig, poc, sizes=_sizes_for(config, lig, poc), name=str(protein))
    ranking = ranking if rank else SamplingOrder()
    scorer = make_scorer(poc, protein, workdir=workdir) if ranking.needs_scorer else None
    report("preparation", 1, 1)
    return _dock_prepared(
        model,
        c,
        lig,
        key,
        scorer,
        protein,
        t0,
        report,
        n_samples=n_samples,
        n_steps=n_steps,
        sampler=sampler,
        assemble=assemble,
        ranking=ranking,
        pb_budget=pb_budget,
        confidence=confidence,
    )


def _load_confidence(confidence) -> ConfidenceModel | None:
    if confidence is None or isinstance(confidence, ConfidenceModel):
        return confidence
    if isinstance(confidence, str | Path):
        return load_confidence_model(confidence)[0]
    raise TypeError(
        f"confidence: expected a ConfidenceModel, its file or None, received {type(confidence).__name__}"
    )


def _load(model) -> tuple[FragmentScoreModel, ModelConfig]:
    if isinstance(model, str | Path):
        model, config, _ = load_model(model)
        return model, config
    if not isinstance(model, FragmentScoreModel):
        raise TypeError(
            f"model: expected a FragmentScoreModel or a model file path, received {type(model).__name__}"
        )
    return model, ModelConfig()


def _dock_prepared(
    model,
    c,
    lig,
    key,
    scorer,
    protein,
    t0,
    report,
    *,
    n_samples,
    n_steps,
    sampler,
    assemble,
    ranking,
    pb_budget,
    confidence=None,
) -> DockingResult:
    """Sample, assemble and rank one prepared complex (the part of :func:`dock` after the pocket is ready)."""
    report("sampling", 0, 1)
    mols, gaps = sample_complex(
        model, c, lig, key, n_samples=n_samples, n_steps=n_steps, sampler=sampler, assemble=assemble
    )
    report("sampling", 1, 1)
    ranked = ranking.rank(mols, gaps, scorer, protein, pb_budget=pb_budget, progress=report)
    if confidence is not None:
        report("confidence", 0, 1)
        poses = [conformer_positions(Chem.RemoveHs(p.mol)) for p in ranked]
        for p, s in zip(ranked, confidence_scores(confidence, confidence_inputs(c), poses)):
            p.confidence = float(s)
        report("confidence", 1, 1)
    warning = None if isinstance(ranking, SamplingOrder) else ranking_warning(ranked, pb_budget)
    return DockingResult(ranked, time.perf_counter() - t0, lig, c, [warning] if warning else [])


def evaluate_complex(
    example: DockingExample,
    model: FragmentScoreModel,
    key: PRNGKeyArray,
    *,
    config: ModelConfig = ModelConfig(),
    n_samples: int = 40,
    n_steps: int = 30,
    conformer: Literal["rdkit", "oracle"] = "rdkit",
    rank: bool = True,
    pb_budget: int | None = 8,
    conformer_seed: int = 0,
    assemble: Assemble = "none",
    ranking: AbstractRanking = VinardoRanking(),
) -> dict[str, object]:
    """Dock one example with its reference pose held out, then score against it (library logic of the
    ``sigmadock`` experiment). The reference pose defines the pocket and is the RMSD reference only.

    Returns ``top1_rmsd`` / ``top1_pb_valid`` (ranked), ``first_rmsd`` / ``first_pb_valid`` (no ranking: the first
    sample), ``best_rmsd`` (oracle best of ``n_samples``), ``median_rmsd``, ``top1_bond_gap``, ``seconds`` and
    ``cpu_seconds`` (sampling + assembly + ranking, wall and process CPU time) and the poses."""
    variant = (assemble, ranking if rank else SamplingOrder())
    return evaluate_variants(
        example,
        model,
        key,
        [variant],
        config=config,
        n_samples=n_samples,
        n_steps=n_steps,
        conformer=conformer,
        pb_budget=pb_budget,
        conformer_seed=conformer_seed,
    )[variant]


def evaluate_variants(
    example: DockingExample,
    model: FragmentScoreModel,
    key: PRNGKeyArray,
    variants: Sequence[tuple[Assemble, AbstractRanking]],
    *,
    config: ModelConfig = ModelConfig(),
    n_samples: int = 40,
    n_steps: int = 30,
    conformer: Literal["rdkit", "oracle"] = "rdkit",
    pb_budget: int | None = 8,
    conformer_seed: int = 0,
) -> dict[tuple[Assemble, AbstractRanking], dict[str, object]]:
    """:func:`evaluate_complex` for several ``(assemble, ranking)`` variants on the SAME samples (one sampling
    run); the ranking :class:`SamplingOrder` keeps the sampling order. Each row's ``seconds`` / ``cpu_seconds`` count sampling
    plus that variant's assembly and ranking (what the variant would cost alone)."""
    for a, r in variants:
        check_choice("assemble", a, ASSEMBLIES)
        _check_ranking("ranking", r)
    check_int("conformer_seed", conformer_seed, minimum=0)
    if pb_budget is not None:
        check_int("pb_budget", pb_budget, minimum=0)
    t0, c0 = time.perf_counter(), time.process_time()
    lig = ligand_fragments(example.mol, conformer=conformer, seed=conformer_seed)
    c = build_complex(lig, example.pocket, sizes=_sizes_for(config, lig, example.pocket), name=example.id)
    x, raw_gaps = _sample_raw(model, c, key, n_samples, n_steps, dm.DDIM(eta=1.0))
    t_sample, c_sample = time.perf_counter() - t0, time.process_time() - c0
    assembled, scorer, note, out = {}, None, "", {}
    for a, r in variants:
        t1, c1 = time.perf_counter(), time.process_time()
        if a not in assembled:
            assembled[a] = (
                *assemble_poses(lig, x, raw_gaps, assemble=a),
                time.perf_counter() - t1,
                time.process_time() - c1,
            )
            t1, c1 = time.perf_counter(), time.process_time()
        mols, gaps, ta, ca = assembled[a]
        if r.needs_scorer and scorer is None and not note:
            try:
                scorer = make_scorer(example.pocket, example.protein_path)
            except RuntimeError as e:  # receptor preparation failed: rank by PoseBusters alone, say so
                note = str(e)
        ranked = r.rank(
            mols, gaps, scorer if r.needs_scorer else None, example.protein_path, pb_budget=pb_budget
        )
        seconds = t_sample + ta + time.perf_counter() - t1
        cpu = c_sample + ca + time.process_time() - c1
        out[(a, r)] = _score_ranked(example, ranked, seconds, cpu, t_sample, note if r.needs_scorer else "")
    return out


def _score_ranked(example: DockingExample, ranked: list[RankedPose], seconds, cpu_seconds, t_sample, note):
    protein = example.protein_path
    rmsds = np.empty(len(ranked))
    for p in ranked:  # the ranked poses (minimized ones where the ranking minimizes), in sampling order
        rmsds[p.index] = symmetric_rmsd(p.mol, example.mol)
    top = ranked[0]
    if top.pb_valid is None:
        top.pb_valid, top.failed_checks = pose_checks(top.mol, protein)
    first = next(p for p in ranked if p.index == 0)
    if first.pb_valid is None:
        first.pb_valid, first.failed_checks = pose_checks(first.mol, protein)
    return {
        "id": example.id,
        "top1_rmsd": float(rmsds[top.index]),
        "top1_pb_valid": bool(top.pb_valid),
        "top1_vinardo": top.vinardo,
        "top1_bond_gap": top.bond_gap,
        "top1_failed_checks": top.failed_checks,
        "first_rmsd": float(rmsds[0]),
        "first_pb_valid": bool(first.pb_valid),
        "best_rmsd": float(rmsds.min()),
        "median_rmsd": float(np.median(rmsds)),
        "sample_success_2A": float(np.mean(rmsds < 2.0)),
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "sampling_seconds": t_sample,
        "note": note,
        "top1_pose": top.mol,
    }


def check_inputs_exist(**paths: str | Path | None) -> None:
    """Raise :class:`StructureError` naming the first argument whose file does not exist."""
    for name, p in paths.items():
        if p is not None and not Path(p).exists():
            raise StructureError(f"{name}: file {p} does not exist")
