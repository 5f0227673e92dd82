"""Paired evaluation of docking methods on the real crystal set (:func:`jaxkit.docking.real_complexes`).

Every method sees the same :class:`DockingInputs` of a complex and nothing else: the ligand rebuilt from its
graph (canonical SMILES round trip, so no crystal coordinates, atom order or SDF properties survive) with a fresh
ETKDG conformer, the pocket atoms and the receptor file as the real set ships them, and a docking box. As in
standard redocking the box center is the crystal ligand's heavy-atom centroid (``example.pocket.center``) and the
pocket is the protein within the example's cutoff of the crystal ligand: the *location* of the site is given, the
pose is not. :func:`check_no_reference` refuses inputs that carry the crystal pose; :func:`evaluate_methods` calls
it before any method runs.

A method is a callable ``inputs -> (poses, metadata)``: RDKit molecules in the method's own ranking order (top-1
first) and a dict; ``metadata["sample_index"]`` (one int per pose, its position in sampling order) marks the
pose of the first sample, scored as the method's unranked result. Adapters: :func:`vina_method` (AutoDock Vina,
``vina`` or ``vinardo`` scoring), :func:`random_method` (prior draws through the same assembly, minimization and
ranking as the model) and :func:`model_method` (:func:`jaxkit.docking.dock` with a model file).

:func:`real_set_table` summarizes the per-complex records: success rates (RMSD < 2 Å) and PoseBusters-valid rates
with Wilson 95% intervals, CPU seconds per complex, and an exact McNemar test against a reference method (the
two-sided binomial test of the discordant pairs, ``scipy.stats.binomtest``; statsmodels is not a dependency of
the docking extra).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import jax
import numpy as np
from rdkit import Chem
from rdkit.Chem import rdMolAlign
from scipy import stats

from .._validate import check_int
from ..evaluation import paired_comparison, wilson_interval
from ._api import _sizes_for, assemble_poses, dock
from ._baselines import vina_dock, vina_pose_energy
from ._complex import _bond_gap, _ligand_positions, _to_angstrom, build_complex, ligand_fragments
from ._datasets import DockingExample, embed_conformer
from ._dock import random_poses
from ._evaluate import posebusters_valid, symmetric_rmsd
from ._rank import CONVERGED_STEPS, AbstractRanking, VinardoRanking, make_scorer, prepare_receptor
from ._structures import Pocket
from ._train import ModelConfig

SUCCESS_RMSD = 2.0
"""Success threshold (Å): a top-1 pose whose symmetric RMSD to the crystal pose is below it is a success."""
REFERENCE_RMSD = 0.1
"""In-place symmetric RMSD (Å) below which a conformer is the reference pose."""
COPY_RMSD = 0.01
"""Symmetric RMSD (Å) after optimal superposition below which a conformer is a moved copy of the reference. Not
0.1 Å: the rigid ligands of the real set (1ac8, 1bcu, 1r5y) have fresh ETKDG/MMFF conformers within 0.046-0.072 Å
of the crystal conformer after superposition (all 84 complexes, seed 0), which carry no answer."""

Method = Callable[["DockingInputs"], tuple[list[Chem.Mol], dict[str, object]]]


@dataclass(frozen=True)
class DockingInputs:
    """What a docking method may see of one complex (no crystal pose).

    ``ligand``: heavy-atom molecule rebuilt from the graph with one fresh ETKDG conformer; ``pocket``: the pocket
    atoms; ``center`` / ``box_size``: the docking box (Å; the center is the crystal ligand's centroid, as in
    redocking); ``receptor``: the protein file; ``seed``: the seed every method should draw from."""

    id: str
    ligand: Chem.Mol
    pocket: Pocket
    center: tuple[float, float, float]
    box_size: float
    receptor: Path
    seed: int


def docking_inputs(example: DockingExample, *, seed: int, box_size: float = 22.0) -> DockingInputs:
    """The :class:`DockingInputs` of ``example``: its ligand graph with a fresh conformer (ETKDG seed ``seed``),
    its pocket and receptor file, and a cubic box of edge ``box_size`` Å at the pocket center."""
    if not isinstance(example, DockingExample):
        raise TypeError(f"example: expected a DockingExample, received {type(example).__name__}")
    check_int("seed", seed, minimum=0)
    if not isinstance(box_size, int | float) or not (np.isfinite(box_size) and box_size > 0):
        raise ValueError(f"box_size: expected a finite positive number of Å, received {box_size!r}")
    if example.protein_path is None:
        raise ValueError(
            f"example: expected a complex with a protein file, received {example.id!r} without one"
        )
    graph = Chem.MolFromSmiles(Chem.MolToSmiles(Chem.RemoveAllHs(example.mol)))
    if graph is None:
        raise ValueError(f"example: the ligand of {example.id!r} does not round-trip through SMILES")
    ligand = embed_conformer(graph, seed)
    if ligand is None:
        raise ValueError(f"example: RDKit could not embed a conformer of {Chem.MolToSmiles(graph)!r}")
    center = tuple(float(v) for v in np.asarray(example.pocket.center, np.float64))
    return DockingInputs(
        example.id, ligand, example.pocket, center, float(box_size), Path(example.protein_path), seed
    )


def check_no_reference(inputs: DockingInputs, example: DockingExample) -> None:
    """Raise ``ValueError`` naming the field when any molecule of ``inputs`` carries ``example``'s reference pose:
    a conformer equal to the reference coordinates, within :data:`REFERENCE_RMSD` (0.1 Å) symmetric RMSD of
    them in place, or within :data:`COPY_RMSD` (0.01 Å) after optimal superposition (a moved copy)."""
    ref = Chem.RemoveAllHs(example.mol)
    ref_x = ref.GetConformer().GetPositions()
    for field in dataclasses.fields(inputs):
        value = getattr(inputs, field.name)
        if not isinstance(value, Chem.Mol):
            continue
        mol = Chem.RemoveAllHs(value)
        for conf in mol.GetConformers():
            x = conf.GetPositions()
            if x.shape == ref_x.shape and np.allclose(x, ref_x, atol=1e-4):
                raise ValueError(
                    f"inputs.{field.name}: expected no crystal coordinates of {example.id!r}, received a "
                    f"conformer equal to them"
                )
            try:  # GetBestRMS superposes the probe in place: align a copy
                in_place = rdMolAlign.CalcRMS(Chem.Mol(mol), ref, prbId=conf.GetId())
                moved = rdMolAlign.GetBestRMS(Chem.Mol(mol), ref, prbId=conf.GetId())
            except RuntimeError:  # not the same molecule: it cannot carry the pose
                continue
            for rmsd, limit, how in (
                (in_place, REFERENCE_RMSD, "in place"),
                (moved, COPY_RMSD, "superposed"),
            ):
                if rmsd < limit:
                    raise ValueError(
                        f"inputs.{field.name}: expected a conformer not derived from the crystal pose of "
                        f"{example.id!r}, received one within {rmsd:.4f} Å of it ({how}, < {limit} Å)"
                    )


def _cpu() -> float:
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def _score_poses(example: DockingExample, poses: list[Chem.Mol], meta: dict) -> dict:
    if not poses:
        raise ValueError("method: expected at least one pose, received none")
    rmsds = [symmetric_rmsd(p, example.mol) for p in poses]
    valid, checks = posebusters_valid(poses[0], example.protein_path)
    out = {
        "n_poses": len(poses),
        "top1_rmsd": rmsds[0],
        "top1_pb_valid": bool(valid),
        "top1_failed_checks": sorted(k for k, v in checks.items() if not v),
        "best_rmsd": float(min(rmsds)),
    }
    index = meta.get("sample_index")
    if index is not None:
        if len(index) != len(poses):
            raise ValueError(
                f"method: expected metadata 'sample_index' with one entry per pose ({len(poses)}), "
                f"received {len(index)}"
            )
        first = list(index).index(0)
        out["first_rmsd"] = rmsds[first]
        out["first_pb_valid"] = (
            out["top1_pb_valid"]
            if first == 0
            else bool(posebusters_valid(poses[first], example.protein_path)[0])
        )
    return out


def _jsonable(meta: dict) -> dict:
    keep = {}
    for k, v in meta.items():
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, str | int | float | bool) or v is None:
            keep[str(k)] = v
        elif isinstance(v, list | tuple) and all(isinstance(e, str | int | float | bool) for e in v):
            keep[str(k)] = list(v)
    return keep


def evaluate_methods(
    example: DockingExample,
    methods: Mapping[str, Method],
    *,
    seed: int,
    make_inputs: Callable[..., DockingInputs] = docking_inputs,
) -> dict[str, object]:
    """Run every method on the same inputs of ``example`` and score it against the crystal pose.

    Builds the inputs once (``make_inputs(example, seed=seed)``), refuses them if they carry the reference pose
    (:func:`check_no_reference`), then for each method records its CPU seconds (process plus waited-for
    children), top-1 and best-of-N symmetric RMSD (Å), top-1 PoseBusters validity, the first sample's RMSD and
    validity where the method reports ``sample_index``, and its JSON-able metadata. A method that raises is
    recorded with ``error`` (and counts as a failure in :func:`real_set_table`). Returns a JSON-able dict."""
    if not isinstance(methods, Mapping) or not methods:
        raise ValueError(f"methods: expected a non-empty mapping name -> method, received {methods!r}"[:200])
    inputs = make_inputs(example, seed=seed)
    check_no_reference(inputs, example)
    record = {"id": example.id, "split": example.split, "source": example.source, "seed": seed, "methods": {}}
    for name, method in methods.items():
        own = dataclasses.replace(inputs, ligand=Chem.Mol(inputs.ligand))  # a method cannot alter another's
        c0, t0 = _cpu(), time.perf_counter()
        try:
            poses, meta = method(own)
            cpu, wall = _cpu() - c0, time.perf_counter() - t0
            row = {**_score_poses(example, list(poses), meta), "meta": _jsonable(meta)}
        except (ValueError, RuntimeError, OSError, ArithmeticError, subprocess.SubprocessError) as e:
            # a method that fails on a complex (a solver, RDKit, Vina or a tool's error) is a recorded failure
            cpu, wall = _cpu() - c0, time.perf_counter() - t0
            row = {"error": f"{type(e).__name__}: {str(e).strip()[:300]}"}
        record["methods"][name] = {**row, "cpu_seconds": cpu, "seconds": wall}
    return record


# ------------------------------------------------------------------------------------------------ method adapters
def vina_method(scoring: Literal["vina", "vinardo"] = "vina", *, exhaustiveness: int = 8) -> Method:
    """AutoDock Vina (:func:`vina_dock`) with ``scoring`` in the inputs' box; one pose."""
    if scoring not in ("vina", "vinardo"):
        raise ValueError(f"scoring: expected 'vina' or 'vinardo', received {scoring!r}")
    check_int("exhaustiveness", exhaustiveness, minimum=1)

    def method(inputs: DockingInputs) -> tuple[list[Chem.Mol], dict[str, object]]:
        with tempfile.TemporaryDirectory(prefix="jaxkit_realeval_") as work:
            pose, energy = vina_dock(
                inputs.receptor,
                inputs.ligand,
                np.asarray(inputs.center),
                box_size=inputs.box_size,
                exhaustiveness=exhaustiveness,
                seed=inputs.seed,
                workdir=work,
                scoring=scoring,
            )
        return [pose], {"energy": energy, "scoring": scoring, "exhaustiveness": exhaustiveness}

    return method


DEFAULT_RANKING = VinardoRanking(minimize=True, minimize_steps=CONVERGED_STEPS)


def random_method(
    *,
    n_samples: int = 40,
    ranking: AbstractRanking = DEFAULT_RANKING,
    pb_budget: int | None = 8,
    config: ModelConfig = ModelConfig(),
) -> Method:
    """Prior draws (:func:`random_poses`) placed at the box center, through the model's path: conformer matching
    (:func:`assemble_poses`), then ``ranking`` (default: :func:`dock`'s converged Vinardo minimization)."""
    check_int("n_samples", n_samples, minimum=1)
    if pb_budget is not None:
        check_int("pb_budget", pb_budget, minimum=0)

    def method(inputs: DockingInputs) -> tuple[list[Chem.Mol], dict[str, object]]:
        lig = ligand_fragments(inputs.ligand, conformer="rdkit", seed=inputs.seed)
        c = build_complex(lig, inputs.pocket, sizes=_sizes_for(config, lig, inputs.pocket), name=inputs.id)
        cj = jax.tree_util.tree_map(jax.numpy.asarray, c)
        R, T = random_poses(cj, jax.random.key(inputs.seed), n_samples)
        x = np.asarray(jax.vmap(lambda r, t: _to_angstrom(cj, _ligand_positions(cj, r, t)))(R, T), np.float64)
        gaps = np.asarray(jax.vmap(lambda r, t: _bond_gap(cj, r, t))(R, T), np.float64)
        mols, gaps = assemble_poses(lig, x, gaps, assemble="conformer_matching", seed=inputs.seed)
        with tempfile.TemporaryDirectory(prefix="jaxkit_realeval_") as work:
            scorer = (
                make_scorer(inputs.pocket, inputs.receptor, workdir=work) if ranking.needs_scorer else None
            )
            ranked = ranking.rank(mols, gaps, scorer, inputs.receptor, pb_budget=pb_budget)
        return [p.mol for p in ranked], {"sample_index": [p.index for p in ranked], "n_samples": n_samples}

    return method


def model_method(
    model: str | Path,
    *,
    n_samples: int = 40,
    n_steps: int = 30,
    ranking: AbstractRanking = DEFAULT_RANKING,
    pb_budget: int | None = 8,
) -> Method:
    """The diffusion model through :func:`dock` (conformer matching, ``ranking``) with the model file ``model``;
    key ``jax.random.key(inputs.seed)``."""
    check_int("n_samples", n_samples, minimum=1)
    check_int("n_steps", n_steps, minimum=1)
    if pb_budget is not None:
        check_int("pb_budget", pb_budget, minimum=0)

    def method(inputs: DockingInputs) -> tuple[list[Chem.Mol], dict[str, object]]:
        with tempfile.TemporaryDirectory(prefix="jaxkit_realeval_") as work:
            res = dock(
                inputs.receptor,
                inputs.ligand,
                pocket=inputs.pocket,
                n_samples=n_samples,
                n_steps=n_steps,
                model=model,
                key=jax.random.key(inputs.seed),
                pb_budget=pb_budget,
                conformer_seed=inputs.seed,
                workdir=work,
                ranking=ranking,
            )
        return [p.mol for p in res.poses], {
            "sample_index": [p.index for p in res.poses],
            "n_samples": n_samples,
            "n_steps": n_steps,
            "top1_vinardo": float(res.top.vinardo),
        }

    return method


def vina_crystal_energies(
    example: DockingExample, *, scorings: Sequence[str] = ("vina", "vinardo"), box_size: float = 22.0
) -> dict[str, dict[str, float]]:
    """A diagnostic, not a method (it reads the crystal pose): Vina's energy of the crystal pose in the box of
    :func:`docking_inputs`, as placed and after local optimization, per scoring function (kcal/mol). A Vina
    failure whose docked energy is below the optimized crystal energy is the scoring function's (the search found
    a pose it prefers to the crystal one); above it, the search's."""
    if example.protein_path is None:
        raise ValueError(
            f"example: expected a complex with a protein file, received {example.id!r} without one"
        )
    center = np.asarray(example.pocket.center, np.float64)
    out = {}
    with tempfile.TemporaryDirectory(prefix="jaxkit_realeval_") as work:
        receptor = prepare_receptor(example.protein_path, work)
        for scoring in scorings:
            placed, optimized = vina_pose_energy(
                example.protein_path,
                example.mol,
                center,
                box_size=box_size,
                scoring=scoring,
                receptor=receptor,
            )
            out[scoring] = {"as_placed": placed, "optimized": optimized}
    return out


def vina_failure_kinds(
    records: Sequence[Mapping[str, object]], crystal: Mapping[str, Mapping[str, object]], scoring: str
) -> dict[str, int]:
    """Among the complexes where Vina (``scoring``) misses (top-1 RMSD >= 2 Å or an error): how many docked poses
    score below the optimized crystal pose (``scoring``: the function prefers a wrong pose) or not (``search``).
    ``crystal`` maps complex ids to :func:`vina_crystal_energies`; it needs every missed complex."""
    records = list(records)
    if any(scoring not in r["methods"] for r in records):
        raise ValueError(
            f"scoring: expected a method of every record ('vina' or 'vinardo'), received {scoring!r}"
        )
    kinds = {"scoring": 0, "search": 0, "error": 0}
    for r in records:
        m = r["methods"][scoring]
        if "error" in m:
            kinds["error"] += 1
            continue
        if m["top1_rmsd"] < SUCCESS_RMSD:
            continue
        docked = m["meta"]["energy"]
        kinds["scoring" if docked < crystal[r["id"]][scoring]["optimized"] else "search"] += 1
    return kinds


# ------------------------------------------------------------------------------------------------ summary
def _check_records(records: Sequence[Mapping[str, object]]) -> None:
    """Every record has what :func:`evaluate_methods` writes: an ``id`` and ``methods``, each method its CPU
    seconds and, unless it failed (``error``), its pose count and top-1 RMSD; a missing field is refused, never
    read as a failure."""
    for i, r in enumerate(records):
        missing = [k for k in ("id", "methods") if k not in r]
        methods = r.get("methods")
        if missing or not isinstance(methods, Mapping):
            raise ValueError(f"records: record {i} lacks {missing or ['methods (a mapping)']} (expected an "
                             f"evaluate_methods record), received keys {sorted(r)}")  # fmt: skip
        for name, m in methods.items():
            need = ("cpu_seconds",) if "error" in m else ("cpu_seconds", "n_poses", "top1_rmsd")
            lacks = [k for k in need if k not in m]
            if lacks:
                raise ValueError(f"records: method {name!r} of record {r['id']!r} lacks {lacks} (an "
                                 f"evaluate_methods record has them), received keys {sorted(m)}")  # fmt: skip


def _outcomes(records: Sequence[dict], name: str, kind: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-complex (success, PB-valid) of method ``name``'s ``kind`` pose ('top1', 'first', 'best'); an error is a
    failure on both; PB validity is None for 'best' (the oracle pose is not checked)."""
    ok, valid = [], []
    for r in records:
        m = r["methods"][name]
        rmsd = m.get(f"{kind}_rmsd", float("inf")) if "error" not in m else float("inf")
        ok.append(bool(rmsd < SUCCESS_RMSD))
        valid.append(bool(m.get(f"{kind}_pb_valid", False)))
    return np.asarray(ok), (None if kind == "best" else np.asarray(valid))


def _mcnemar(ok: np.ndarray, ref: np.ndarray) -> dict:
    """Exact McNemar test: two-sided binomial test of the discordant pairs (p = 1 without any)."""
    b, c = int(np.sum(ok & ~ref)), int(np.sum(~ok & ref))
    p = float(stats.binomtest(b, b + c, 0.5).pvalue) if b + c else 1.0
    return {"method_only": b, "reference_only": c, "p_exact": p}


def _cpu_ratio(cpu: np.ndarray, ref_cpu: np.ndarray) -> dict | None:
    """Median over complexes of the paired CPU ratio method / reference, with its percentile-bootstrap 95% CI
    (:func:`~jaxkit.evaluation.paired_comparison`, ``effect="speedup"``: ratio = 1 - speedup / 100)."""
    if cpu.size < 2 or (ref_cpu <= 0).any():
        return None
    c = paired_comparison(ref_cpu, cpu, effect="speedup")
    return {
        "median": 1.0 - c["median"] / 100.0,
        "ci": [1.0 - c["ci_high"] / 100.0, 1.0 - c["ci_low"] / 100.0],
    }


def real_set_table(records: Sequence[Mapping[str, object]], reference: str = "vina") -> dict[str, object]:
    """Summary of :func:`evaluate_methods` records (one per complex, all with the same methods).

    Rows: every method's top-1 pose (``name``); with ``sample_index`` metadata also its first sample
    (``name/first``, unranked); with more than one pose its best-of-N oracle (``name/best_of_n``). Per row: n,
    successes (RMSD < 2 Å), rate and Wilson 95% CI; PB-valid count, rate and CI; success-and-PB-valid likewise;
    median and mean CPU s/complex; the median over complexes of the paired CPU ratio to ``reference`` with its
    bootstrap 95% CI (``None`` for the reference itself or fewer than 2 complexes); errors; the exact McNemar test
    of success against ``reference``'s top-1."""
    records = list(records)
    if not records:
        raise ValueError("records: expected at least one evaluate_methods record, received none")
    _check_records(records)
    names = list(records[0]["methods"])
    for r in records:
        if list(r["methods"]) != names:
            raise ValueError(
                f"records: expected the methods {names} in every record, received {list(r['methods'])} "
                f"for {r.get('id')!r}"
            )
    ids = [r["id"] for r in records]
    if len(set(ids)) != len(ids):
        raise ValueError(f"records: expected one record per complex, received duplicate ids in {ids}")
    if reference not in names:
        raise ValueError(f"reference: expected one of the methods {names}, received {reference!r}")
    ref_ok, _ = _outcomes(records, reference, "top1")
    ref_cpu = np.asarray([r["methods"][reference]["cpu_seconds"] for r in records], np.float64)
    n = len(records)
    rows = {}
    for name in names:
        ms = [r["methods"][name] for r in records]
        kinds = [("", "top1")]
        if all("first_rmsd" in m for m in ms if "error" not in m) and any("first_rmsd" in m for m in ms):
            kinds.append(("/first", "first"))
        if max(m.get("n_poses", 0) for m in ms) > 1:
            kinds.append(("/best_of_n", "best"))
        cpu = np.asarray([m["cpu_seconds"] for m in ms], np.float64)
        for suffix, kind in kinds:
            ok, valid = _outcomes(records, name, kind)
            row = {
                "n": n,
                "successes": int(ok.sum()),
                "rate": float(ok.mean()),
                "ci": list(wilson_interval(int(ok.sum()), n)),
                "cpu_seconds_median": float(np.median(cpu)),
                "cpu_seconds_mean": float(np.mean(cpu)),
                "cpu_ratio_vs_reference": None if name == reference else _cpu_ratio(cpu, ref_cpu),
                "errors": sum("error" in m for m in ms),
                "mcnemar_vs_reference": None
                if (name == reference and kind == "top1")
                else _mcnemar(ok, ref_ok),
            }
            if valid is not None:
                both = ok & valid
                row |= {
                    "pb_valid": int(valid.sum()),
                    "pb_rate": float(valid.mean()),
                    "pb_ci": list(wilson_interval(int(valid.sum()), n)),
                    "success_pb_valid": int(both.sum()),
                    "success_pb_rate": float(both.mean()),
                    "success_pb_ci": list(wilson_interval(int(both.sum()), n)),
                }
            rows[name + suffix] = row
    return {"reference": reference, "threshold_A": SUCCESS_RMSD, "n": n, "ids": ids, "rows": rows}
