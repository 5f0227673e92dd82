"""Fuzz factories for the ``jaxkit.docking`` exports that had no base call from their signature (issue 49): each
returns the keyword arguments of one valid call. Merged into ``_fuzz_factories.FACTORIES`` at its end; helpers of
that module are imported inside the factories (it imports this one).

Small real inputs: the 3-fragment ligand and pseudo-pocket of ``_fuzz_factories._dock``; for files, the smallest
shipped real complex ``jaxkit/docking/data/real/1ac8`` (8 heavy atoms, a 380-atom pocket: what
tests/docking/test_real_eval.py uses). Files are written into a fresh temporary folder (``_fuzz_factories._tmp``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

FACTORIES: dict[str, Callable[[], dict[str, Any]]] = {}

SMALL = "1ac8"  # the smallest shipped real complex (validation split)


def _real_dir() -> Path:
    import jaxkit.docking

    return Path(jaxkit.docking.__file__).parent / "data" / "real" / SMALL


@functools.cache
def _real() -> Any:
    """The shipped real complex 1ac8 as a DockingExample (protein path: its pocket PDB)."""
    from jaxkit import docking as dk

    return dk.load_complex(_real_dir(), split="val", source="real")


@functools.cache
def _protein() -> Any:
    from jaxkit import docking as dk

    return dk.load_protein(_real_dir() / f"{SMALL}_pocket.pdb")


def _heavy_positions() -> Any:
    from jaxkit.docking import conformer_positions

    return conformer_positions(_real().mol)


@functools.cache
def _tiny_model() -> tuple[Any, Any]:
    """A freshly initialized score model of the smallest config (width 4, depth 1), with its config."""
    from _fuzz_factories import KEY

    from jaxkit import docking as dk

    config = dk.ModelConfig(width=4, depth=1, n_rbf=4, k_pocket=4)
    return dk.build_model(config, KEY), config


@functools.cache
def _saved_model() -> Path:
    from _fuzz_factories import _tmp

    from jaxkit import docking as dk

    model, config = _tiny_model()
    return dk.save_model(_tmp() / "score_model.jkc", model, config, {"note": "fuzz"}, overwrite=True)


def _frames() -> dict[str, Any]:
    """The ligand's fragment frames and local coordinates in its own conformer (reassembly gives it back)."""
    from _fuzz_factories import _dock

    from jaxkit import docking as dk

    d = _dock()
    rots, trans = dk.fragment_frames(d["frag"], d["positions"])
    local_atoms, local_dummies = dk.local_coordinates(d["frag"], d["positions"])
    return {
        "frag": d["frag"],
        "local_atoms": local_atoms,
        "local_dummies": local_dummies,
        "rotations": rots,
        "translations": trans,
    }


def _records() -> list[dict[str, Any]]:
    """Three evaluate_methods-like records of two methods (tests/docking/test_real_eval.py ``_records``)."""
    recs = []
    for i, (v, o) in enumerate([(1.0, 3.0), (3.0, 1.0), (1.0, 1.0)]):
        recs.append(
            {
                "id": f"c{i}",
                "methods": {
                    "vina": {
                        "n_poses": 1,
                        "top1_rmsd": v,
                        "top1_pb_valid": True,
                        "best_rmsd": v,
                        "cpu_seconds": 1.0 + i,
                        "meta": {"energy": -7.0 - i},
                    },
                    "ours": {
                        "n_poses": 2,
                        "top1_rmsd": o,
                        "top1_pb_valid": i != 1,
                        "best_rmsd": min(o, 1.5),
                        "first_rmsd": o,
                        "first_pb_valid": True,
                        "cpu_seconds": 10.0,
                        "meta": {"sample_index": [0, 1]},
                    },
                },
            }
        )
    return recs


def _inputs() -> Any:
    from jaxkit import docking as dk

    return dk.docking_inputs(_real(), seed=0)


FACTORIES.update(
    {
        # record classes
        "jaxkit.docking.PreparedLigand": lambda: {
            "frag": __import__("_fuzz_factories")._dock()["frag"],
            "setting": "rdkit",
        },
        "jaxkit.docking.RankedPose": lambda: {
            "index": 0,
            "mol": __import__("_fuzz_factories")._dock()["mol"],
            "vinardo": -5.0,
            "bond_gap": 0.1,
            "pb_valid": True,
            "failed_checks": [],
            "rank": 0,
            "confidence": 0.5,
        },
        "jaxkit.docking.DockingResult": lambda: {
            "poses": __import__("_fuzz_factories")._ranked(),
            "seconds": 1.0,
            "ligand": __import__("_fuzz_factories")._dock()["lig"],
            "complex": __import__("_fuzz_factories")._dock()["c"],
            "warnings": [],
        },
        "jaxkit.docking.DockingExample": lambda: {
            "id": "XYZ",
            "mol": __import__("_fuzz_factories")._dock()["mol"],
            "pocket": __import__("_fuzz_factories")._dock()["pocket"],
            "split": "train",
            "source": "ccd",
        },
        "jaxkit.docking.DockingInputs": lambda: {
            "id": SMALL,
            "ligand": _inputs().ligand,
            "pocket": _real().pocket,
            "center": tuple(float(v) for v in _real().pocket.center),
            "box_size": 22.0,
            "receptor": _real().protein_path,
            "seed": 0,
        },
        # pure array functions
        "jaxkit.docking.assemble_poses": lambda: {
            "lig": __import__("_fuzz_factories")._dock()["lig"],
            "x": __import__("_fuzz_factories")._dock()["positions"][None] + 0.05,
            "gaps": __import__("numpy").zeros(1),
            "relax": False,
        },
        "jaxkit.docking.fragment_dummy_positions": lambda: {
            k: v for k, v in _frames().items() if k != "local_atoms"
        },
        "jaxkit.docking.reassemble": lambda: {k: v for k, v in _frames().items() if k != "local_dummies"},
        "jaxkit.docking.index_complex": lambda: {
            "batch": __import__("jaxkit.docking", fromlist=["x"]).stack_complexes(
                [__import__("_fuzz_factories")._dock()["c"]] * 2
            ),
            "i": 1,
        },
        "jaxkit.docking.random_placement": lambda: {
            "mol": _real().mol,
            "pocket_positions": _real().pocket.positions,
            "center": _real().pocket.center,
            "k": 4,
            "seed": 0,
        },
        "jaxkit.docking.success_rate": lambda: {
            "rmsds": __import__("numpy").array([0.5, 1.9, 2.5, 3.0]),
            "threshold": 2.0,
            "valid": __import__("numpy").array([True, False, True, True]),
        },
        "jaxkit.docking.real_set_table": lambda: {"records": _records(), "reference": "vina"},
        "jaxkit.docking.vina_failure_kinds": lambda: {
            "records": _records(),
            "crystal": {f"c{i}": {"vina": {"as_placed": -7.0, "optimized": -8.0}} for i in range(3)},
            "scoring": "vina",
        },
        # files the repository ships
        "jaxkit.docking.load_ligand": lambda: {"path": _real_dir() / f"{SMALL}_ligand.sdf"},
        "jaxkit.docking.load_protein": lambda: {"path": _real_dir() / f"{SMALL}_pocket.pdb"},
        "jaxkit.docking.load_complex": lambda: {"folder": _real_dir(), "cutoff": 10.0},
        "jaxkit.docking.extract_pocket": lambda: {
            "protein": _protein(),
            "ligand_positions": _heavy_positions(),
            "cutoff": 8.0,
        },
        "jaxkit.docking.pocket_from_center": lambda: {
            "protein": _protein(),
            "center": _real().pocket.center,
            "size": 16.0,
        },
        "jaxkit.docking.resolve_pocket": lambda: {
            "protein_atoms": _protein(),
            "pocket": [float(v) for v in _real().pocket.center],
            "size": 16.0,
        },
        "jaxkit.docking.example_complex": lambda: {"ex": _real(), "conformer": "rdkit"},
        "jaxkit.docking.docking_inputs": lambda: {"example": _real(), "seed": 0, "box_size": 22.0},
        "jaxkit.docking.check_no_reference": lambda: {"inputs": _inputs(), "example": _real()},
        "jaxkit.docking.write_poses_sdf": lambda: {
            "path": __import__("_fuzz_factories")._tmp() / "poses.sdf",
            "poses": __import__("_fuzz_factories")._ranked(),
            "names": ["a", "b"],
            "overwrite": True,
        },
        "jaxkit.docking.save_model": lambda: {
            "path": __import__("_fuzz_factories")._tmp() / "saved_score_model.jkc",
            "model": _tiny_model()[0],
            "config": _tiny_model()[1],
            "info": {"note": "fuzz"},
            "overwrite": True,
        },
        "jaxkit.docking.load_model": lambda: {"path": _saved_model()},
        "jaxkit.docking.rank_poses": lambda: {
            "mols": [__import__("_fuzz_factories")._dock()["mol"]] * 2,
            "gaps": __import__("numpy").array([0.0, 0.1]),
            "scorer": None,
            "protein_pdb": None,
            "order": "consensus",
            "pb_budget": 0,
        },
        "jaxkit.docking.pose_checks": lambda: {
            "mol": __import__("_fuzz_factories")._dock()["mol"],
            "protein_pdb": None,
        },
    }
)


# ----------------------------------------------------------------------------- Vina, PoseBusters, receptor files
def _pocket_receptor() -> Path:
    """The real pocket's atoms as a rigid PDBQT receptor (no meeko run)."""
    from _fuzz_factories import _tmp

    from jaxkit import docking as dk

    return dk.pocket_pdbqt(_real().pocket, _tmp() / "pocket.pdbqt")


@functools.cache
def _scorer() -> Any:
    from _fuzz_factories import _tmp

    from jaxkit import docking as dk

    return dk.make_scorer(_real().pocket, None, workdir=_tmp() / "scorer")


def _crystal_poses() -> list[Any]:
    """The crystal pose of 1ac8 and a copy moved by 0.5 Å (two poses inside the receptor's box)."""
    from jaxkit.docking import conformer_positions
    from jaxkit.docking._evaluate import with_positions

    mol = _real().mol
    return [mol, with_positions(mol, conformer_positions(mol) + 0.5)]


def _copied_root() -> Path:
    """A fresh folder holding a copy of the complex folder 1ac8 (a PDBBind/PoseBusters layout of one complex)."""
    import atexit
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="jaxkit-fuzz-root-"))
    atexit.register(shutil.rmtree, root, True)  # removed when the test process ends
    shutil.copytree(_real_dir(), root / SMALL)
    return root


FACTORIES.update(
    {
        "jaxkit.docking.pocket_pdbqt": lambda: {
            "pocket": _real().pocket,
            "path": __import__("_fuzz_factories")._tmp() / "pocket_out.pdbqt",
        },
        "jaxkit.docking.VinardoScorer": lambda: {
            "receptor_pdbqt": _pocket_receptor(),
            "center": _real().pocket.center,
            "box": 16.0,
        },
        "jaxkit.docking.make_scorer": lambda: {
            "pocket": _real().pocket,
            "protein_pdb": None,
            "workdir": __import__("_fuzz_factories")._tmp() / "make_scorer",
        },
        "jaxkit.docking.prepare_receptor": lambda: {
            "protein_pdb": _real().protein_path,
            "workdir": __import__("_fuzz_factories")._tmp() / "receptor",
        },
        "jaxkit.docking.rank_poses": lambda: {
            "mols": _crystal_poses(),
            "gaps": __import__("numpy").array([0.0, 0.1]),
            "scorer": _scorer(),
            "protein_pdb": None,
            "pb_budget": 0,
        },
        "jaxkit.docking.posebusters_valid": lambda: {
            "pred": _real().mol,
            "protein_pdb": _real().protein_path,
        },
        "jaxkit.docking.vina_pose_energy": lambda: {
            "protein_pdb": _real().protein_path,
            "mol": _real().mol,
            "center": _real().pocket.center,
            "box_size": 16.0,
            "workdir": __import__("_fuzz_factories")._tmp() / "vina_energy",
        },
        "jaxkit.docking.vina_crystal_energies": lambda: {
            "example": _real(),
            "scorings": ("vinardo",),
            "box_size": 16.0,
        },
        "jaxkit.docking.vina_dock": lambda: {
            "protein_pdb": _real().protein_path,
            "mol": _real().mol,
            "center": _real().pocket.center,
            "box_size": 16.0,
            "exhaustiveness": 1,
            "workdir": __import__("_fuzz_factories")._tmp() / "vina_dock",
        },
        "jaxkit.docking.load_complex_folder": lambda: {"root": _copied_root(), "cutoff": 10.0},
        "jaxkit.docking.example_complex": lambda: {
            "ex": __import__("_fuzz_factories")._example(),
            "conformer": "rdkit",
        },
    }
)


# ----------------------------------------------------------------------------- score models: sampling, training
def _two() -> Any:
    """Two copies of the small complex of ``_fuzz_factories._dock``, stacked (a batch)."""
    from _fuzz_factories import _dock

    from jaxkit import docking as dk

    return dk.stack_complexes([_dock()["c"]] * 2)


def _model_kw(**extra: Any) -> Callable[[], dict[str, Any]]:
    """``example`` (the small complex as a DockingExample), the tiny model, its config and a key, one sample of one
    step, no ranking checks."""

    def make() -> dict[str, Any]:
        from _fuzz_factories import KEY, _example

        model, config = _tiny_model()
        return {
            "example": _example(),
            "model": model,
            "key": KEY,
            "config": config,
            "n_samples": 1,
            "n_steps": 1,
            "pb_budget": 0,
            **{k: v() if callable(v) else v for k, v in extra.items()},
        }

    return make


def _sampling_order() -> Any:
    from jaxkit.docking import SamplingOrder

    return SamplingOrder()


FACTORIES.update(
    {
        "jaxkit.docking.featurize_examples": lambda: {
            "examples": [__import__("_fuzz_factories")._example()],
            "sizes": __import__("jaxkit.docking", fromlist=["x"]).ComplexSizes(),
            "conformer": "oracle",
            "augment": 1,
        },
        "jaxkit.docking.batch_loss": lambda: {
            "model": _tiny_model()[0],
            "process": __import__("_fuzz_factories")._dock()["process"],
            "batch": _two(),
            "key": __import__("_fuzz_factories").KEY,
        },
        "jaxkit.docking.sample_complex": lambda: {
            "model": _tiny_model()[0],
            "c": __import__("_fuzz_factories")._dock()["c"],
            "lig": __import__("_fuzz_factories")._dock()["lig"],
            "key": __import__("_fuzz_factories").KEY,
            "n_samples": 1,
            "n_steps": 2,
            "relax": False,
        },
        "jaxkit.docking.model_method": lambda: {
            "model": _saved_model(),
            "n_samples": 1,
            "n_steps": 1,
            "ranking": _sampling_order(),
            "pb_budget": 0,
        },
        "jaxkit.docking.evaluate_methods": lambda: {
            "example": _real(),
            "methods": {
                "random": __import__("jaxkit.docking._realeval", fromlist=["x"]).random_method(
                    n_samples=1, ranking=_sampling_order(), pb_budget=0
                )
            },
            "seed": 0,
        },
        # Vinardo ranking of the pose as sampled (the pocket atoms as the receptor): a finite top-1 energy
        "jaxkit.docking.evaluate_complex": _model_kw(),
        "jaxkit.docking.evaluate_variants": _model_kw(
            variants=lambda: [("none", __import__("jaxkit.docking", fromlist=["x"]).VinardoRanking())]
        ),
        "jaxkit.docking.train_model": lambda: {
            "data": _two(),
            "config": _tiny_model()[1],
            "train": __import__("jaxkit.docking", fromlist=["x"]).TrainConfig(
                n_steps=1, batch_size=2, log_every=1, checkpoint_every=1
            ),
            "key": __import__("_fuzz_factories").KEY,
            "progress": False,
        },
        "jaxkit.docking.dock": lambda: {
            "protein": _real().protein_path,
            # a ligand of 3 fragments (1ac8's own has 1: its complex has empty dummy arrays)
            "ligand": "OCCc1ccc(CC(=O)N)cc1",
            "pocket": [float(v) for v in _real().pocket.center],
            "n_samples": 1,
            "model": _saved_model(),
            "key": __import__("_fuzz_factories").KEY,
            "pocket_size": 10.0,
            "n_steps": 1,
            "pb_budget": 0,
            "assemble": "none",
            # Vinardo of the pose as sampled (a finite energy), no minimization
            "ranking": __import__("jaxkit.docking", fromlist=["x"]).VinardoRanking(),
        },
    }
)
