"""Command line: ``python -m jaxkit.docking dock ...`` and ``python -m jaxkit.docking train ...``.

dock:  ``--protein P.pdb --ligand L.sdf|SMILES (--ref-ligand R.sdf | --center x y z [--size s]) [--model M]
       --out poses.sdf [--n-samples 40] [--steps 30] [--seed 0] [--no-rank] [--assemble none|conformer_matching]
       [--ranking vinardo|vinardo_minimized|vinardo_converged|consensus] [--hydrogens]``. Writes one SDF record
       per pose, best first, with the data fields listed in :data:`SDF_FIELDS` (also printed by
       ``dock --help``). ``--hydrogens`` writes the poses with explicit hydrogens (placed by RDKit on the heavy
       atoms' coordinates); by default only heavy atoms are written, as they were docked. Without ``--model``
       the model shipped with the package is used. Each stage (preparation, sampling, minimization, validity
       checks) is shown on standard error with its elapsed time and ETA; when no pose passes the validity checks
       a warning is printed and written in every record's ``warning`` field. ``--ligand`` may be a file of
       several ligands (a SMILES file ``.smi``/``.smiles``/``.txt`` or a multi-record SDF): ``--out`` is then a
       folder with one SDF per ligand and ``summary.csv`` (:func:`jaxkit.docking.dock_many`; a rerun resumes).
       ``--confidence FILE`` adds each pose's confidence (a model from ``save_confidence_model``).
train: ``--data DIR`` (folders ``<id>/<id>_protein.pdb`` + ``<id>/<id>_ligand.sdf``) and/or ``--ccd N`` (CCD
       pseudo-pockets), ``--out M``; ``--steps``, ``--batch``, ``--devices`` (data-parallel mesh), ``--resume``,
       ``--distributed [--coordinator HOST:PORT --num-processes N --process-id I]`` (one of several processes).
Bad input exits with status 2 and a message naming the file or the option.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ._api import ASSEMBLIES
from ._evaluate import SDF_FIELDS
from ._rank import RANKINGS
from ._train import SHIPPED_MODEL


def _fields_epilog() -> str:
    return "SDF data fields of each written pose:\n" + "\n".join(f"  {k}: {v}" for k, v in SDF_FIELDS.items())


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m jaxkit.docking", description="Fragment-diffusion docking (SigmaDock-style).")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    d = sub.add_parser(
        "dock",
        help="dock a ligand into a protein pocket",
        formatter_class=_Formatter,
        epilog=_fields_epilog(),
    )
    d.add_argument("--protein", required=True, help="protein PDB file")
    d.add_argument(
        "--ligand",
        required=True,
        help="ligand SDF/MOL file (chemistry only is used) or a SMILES string; or several ligands (a "
        "multi-record SDF or a SMILES file .smi/.smiles/.txt, one 'SMILES name' per line): then --out is a "
        "folder that gets one SDF per ligand and summary.csv, and a rerun resumes where it stopped",
    )
    g = d.add_mutually_exclusive_group(required=True)
    g.add_argument("--ref-ligand", help="reference ligand SDF defining the pocket (redocking)")
    g.add_argument("--center", nargs=3, type=_finite, metavar=("X", "Y", "Z"), help="pocket center (Å)")
    d.add_argument("--size", type=_positive_float, default=22.0, help="pocket box size (Å) with --center")
    d.add_argument("--model", default=None, help=f"model file (default: the shipped {SHIPPED_MODEL.name})")
    d.add_argument(
        "--out",
        required=True,
        help="output SDF (one record per pose, best first); a folder for several ligands",
    )
    d.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    d.add_argument(
        "--confidence",
        default=None,
        help="confidence model file (save_confidence_model): every pose gets its confidence field; the "
        "order is unchanged (none is shipped yet)",
    )
    d.add_argument("--n-samples", type=_positive_int, default=40, help="diffusion samples (poses) to draw")
    d.add_argument("--steps", type=_positive_int, default=30, help="sampler steps")
    d.add_argument("--seed", type=_seed, default=0, help="random seed (sampling and the RDKit conformer)")
    d.add_argument(
        "--hydrogens",
        action="store_true",
        help="write the poses with explicit hydrogens (RDKit places them on the docked heavy atoms)",
    )
    d.add_argument("--no-rank", action="store_true", help="skip Vinardo + PoseBusters ranking")
    d.add_argument(
        "--pb-budget", type=_nonnegative_int, default=8, help="PoseBusters checks per complex (ranking)"
    )
    d.add_argument(
        "--assemble",
        choices=ASSEMBLIES,
        default="conformer_matching",
        help="turn each sample into the RDKit conformer fitted to it (conformer_matching, "
        "chosen on CCD validation complexes) or keep the sampled fragments (none)",
    )
    d.add_argument(
        "--ranking",
        choices=[n for n in RANKINGS if n != "none"],
        default="vinardo_converged",
        help="order of PoseBusters-valid poses: Vinardo energy after Vina's local minimization of each "
        "pose run to convergence (vinardo_converged, chosen on CCD validation complexes) or "
        "for Vina's default step budget (vinardo_minimized), as sampled (vinardo, SigmaDock's), or "
        "sample consensus",
    )
    t = sub.add_parser("train", help="train a docking model", formatter_class=_Formatter)
    t.add_argument(
        "--data", default=None, help="folder of complexes <id>/<id>_protein.pdb + <id>/<id>_ligand.sdf"
    )
    t.add_argument(
        "--ccd", type=_nonnegative_int, default=0, help="number of CCD pseudo-pocket training ligands"
    )
    t.add_argument("--out", required=True, help="model file to write")
    t.add_argument("--overwrite", action="store_true", help="replace --out if it is an existing model file")
    t.add_argument("--steps", type=_positive_int, default=2000, help="optimizer steps")
    t.add_argument("--batch", type=_positive_int, default=16, help="complexes per step")
    t.add_argument("--lr", type=_positive_float, default=2e-3, help="peak learning rate")
    t.add_argument("--width", type=_positive_int, default=48, help="model width")
    t.add_argument("--depth", type=_positive_int, default=3, help="message-passing layers")
    t.add_argument(
        "--augment", type=_positive_int, default=1, help="featurizations per complex (conformer / cut set)"
    )
    t.add_argument(
        "--devices", type=_positive_int, default=None, help="devices of the data-parallel mesh (default: all)"
    )
    t.add_argument("--seed", type=_seed, default=0, help="random seed")
    t.add_argument("--resume", action="store_true", help="continue from the checkpoints next to --out")
    _distributed_flags(t)
    return p


def _int_at_least(minimum: int, below: int | None = None):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, received {text!r}") from None
        if value < minimum or (below is not None and value >= below):
            bound = f" and < {below}" if below is not None else ""
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}{bound}, received {value}")
        return value

    return parse


_positive_int = _int_at_least(1)
_nonnegative_int = _int_at_least(0)
_seed = _int_at_least(0, 2**32)


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, received {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number, received {text!r}")
    return value


def _positive_float(text: str) -> float:
    value = _finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, received {text!r}")
    return value


def _check_out(out: str, overwrite: bool, what: str) -> str | None:
    """``--out``: the file to write. A message naming the flag for a folder, an existing file without
    ``--overwrite``, or a place that cannot be written; None when fine."""
    import os

    path = Path(out)
    if path.is_dir():
        return f"--out: {out} is a folder; give the {what} to write"
    if path.exists() and not overwrite:
        return f"--out: {out} exists; pass --overwrite to replace it, or choose a new file"
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"--out: {parent} is a file, not a folder; cannot write {out}"
    if not os.access(parent, os.W_OK):
        return f"--out: cannot write into {parent} (permission denied)"
    return None


class _Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """``--help`` shows every option's default and keeps the epilog's line breaks."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints the usage first)
        self.exit(2, f"error: {message} (see --help)\n")


def _distributed_flags(t: argparse.ArgumentParser) -> None:
    g = t.add_argument_group("multi-process (JAX multi-controller)")
    g.add_argument(
        "--distributed",
        action="store_true",
        help="run as one of several processes (jax.distributed.initialize; auto-detected under SLURM, Open MPI "
        "and on TPU pods) and split batches over every device of every process; process 0 writes --out",
    )
    g.add_argument("--coordinator", default=None, metavar="HOST:PORT", help="address of process 0")
    g.add_argument("--num-processes", dest="n_processes", type=_positive_int, default=None, metavar="N")
    g.add_argument("--process-id", type=_nonnegative_int, default=None, metavar="I")


_FLAGS = {"coordinator": "--coordinator", "n_processes": "--num-processes", "process_id": "--process-id"}


def _start_distributed(a: argparse.Namespace) -> str | None:
    """``--distributed``: ``jax.distributed.initialize`` before any JAX computation; an error message or None."""
    given = [f for f in ("coordinator", "n_processes", "process_id") if getattr(a, f) is not None]
    if not a.distributed:
        return f"{_FLAGS[given[0]]} needs --distributed" if given else None
    if given and a.n_processes != 1 and len(given) < 3:
        return "--distributed: give all of --coordinator, --num-processes and --process-id, or none (auto-detect)"
    from jaxkit.train import initialize_distributed

    initialize_distributed(a.coordinator, a.n_processes, a.process_id)
    return None


def _fail(msg: str) -> int:
    print(f"error: {' '.join(str(msg).split())}", file=sys.stderr)
    return 2


def _dock(a: argparse.Namespace) -> int:
    import jax

    from ._api import dock, read_ligand, resolve_pocket
    from ._evaluate import write_poses_sdf
    from ._structures import load_protein
    from ._train import load_model

    for name, path in (
        ("--protein", a.protein),
        ("--ref-ligand", a.ref_ligand),
        ("--confidence", a.confidence),
    ):
        if path is not None and not Path(path).exists():
            return _fail(f"{name}: file {path} does not exist")
    lig = a.ligand
    if Path(lig).suffix.lower() in (".sdf", ".sd", ".mol") and not Path(lig).exists():
        return _fail(f"--ligand: file {lig} does not exist")
    from ._batch import SMILES_SUFFIXES, is_ligand_library

    if Path(lig).suffix.lower() in SMILES_SUFFIXES and not Path(lig).exists():
        return _fail(f"--ligand: file {lig} does not exist")
    library = is_ligand_library(lig)
    if not library:  # one ligand: --out is an SDF file (several: a folder, checked by _dock_batch)
        problem = _check_out(a.out, a.overwrite, "SDF file")
        if problem is not None:
            return _fail(problem)
    model = Path(a.model) if a.model else SHIPPED_MODEL
    if not model.exists():
        return _fail(
            f"--model: file {model} does not exist" + ("" if a.model else " (the shipped model is missing)")
        )
    try:
        load_model(model)  # fail before the slow steps if it is not a model file
    except (ValueError, OSError) as e:
        return _fail(f"--model: {e}")
    if library:
        return _dock_batch(a, model)
    mol = read_ligand(lig)
    pocket = resolve_pocket(
        load_protein(a.protein), a.ref_ligand if a.ref_ligand is not None else tuple(a.center), size=a.size
    )
    print(
        f"docking {lig} into {a.protein}: pocket of {pocket.n_atoms} atoms, {a.n_samples} samples x {a.steps} "
        f"steps ...",
        file=sys.stderr,
        flush=True,
    )
    t0 = time.perf_counter()
    from ._api import StageProgress

    progress = StageProgress()
    res = dock(
        a.protein,
        mol,
        pocket=pocket,
        n_samples=a.n_samples,
        model=model,
        key=jax.random.key(a.seed),
        n_steps=a.steps,
        rank=not a.no_rank,
        pb_budget=a.pb_budget,
        conformer_seed=a.seed,
        assemble=a.assemble,
        ranking=RANKINGS[a.ranking],
        progress=progress,
        confidence=a.confidence,
    )
    progress.close()
    write_poses_sdf(a.out, res, hydrogens=a.hydrogens, overwrite=a.overwrite)  # --out checked above
    top = res.top
    for w in res.warnings:
        print(f"warning: {w}", file=sys.stderr)
    verdict = {True: "yes", False: "no", None: "unchecked"}[top.pb_valid]
    print(
        f"wrote {len(res.poses)} poses to {a.out} in {time.perf_counter() - t0:.1f} s; top pose: Vinardo "
        f"{top.vinardo:.2f} kcal/mol, PoseBusters {verdict}",
        file=sys.stderr,
    )
    return 0


def _dock_batch(a: argparse.Namespace, model: Path) -> int:
    """``--ligand`` is a SMILES file or a multi-record SDF: one SDF per ligand and summary.csv in the folder --out."""
    from tqdm.auto import tqdm

    from ._batch import dock_many, read_ligands

    out = Path(a.out)
    if out.suffix.lower() in (".sdf", ".sd") or out.is_file():
        return _fail(
            f"--out: with several ligands, expected a folder for one SDF per ligand, received {a.out}"
        )
    n = len(read_ligands(a.ligand))
    print(f"docking {n} ligands of {a.ligand} into {a.protein} -> {out}/ ...", file=sys.stderr, flush=True)
    bar = tqdm(total=n, desc="ligands", file=sys.stderr, unit="ligand", mininterval=1.0)
    failed = []

    def progress(done: int, total: int, row: dict) -> None:
        if bar.n == 0 and total < n:
            bar.update(n - total)  # finished before a resume
            print(f"resumed: {n - total} ligands were already done", file=sys.stderr)
        bar.update(1)
        if row["status"] != "ok":
            failed.append(row["name"])
            bar.write(f"failed: {row['name']}: {row['error']}", file=sys.stderr)
        elif row["warning"]:
            bar.write(f"warning: {row['name']}: {row['warning']}", file=sys.stderr)

    t0 = time.perf_counter()
    try:
        rows = _dock_many_cli(dock_many, a, out, model, progress)
    except ValueError as e:  # the folder checks of dock_many name its argument; the user typed --out
        msg = str(e)
        if not msg.startswith("out_dir:"):
            raise
        return _fail("--out:" + msg.removeprefix("out_dir:"))
    finally:
        bar.close()
    n_failed = sum(r["status"] != "ok" for r in rows)
    print(
        f"docked {len(rows) - n_failed} of {len(rows)} ligands ({n_failed} failed) in "
        f"{time.perf_counter() - t0:.1f} s; summary: {out / 'summary.csv'}",
        file=sys.stderr,
    )
    return 0


def _dock_many_cli(dock_many, a: argparse.Namespace, out: Path, model: Path, progress) -> list[dict]:
    import jax

    return dock_many(
        a.protein,
        a.ligand,
        out,
        pocket=a.ref_ligand if a.ref_ligand is not None else tuple(a.center),
        model=model,
        key=jax.random.key(a.seed),
        n_samples=a.n_samples,
        n_steps=a.steps,
        pocket_size=a.size,
        rank=not a.no_rank,
        pb_budget=a.pb_budget,
        conformer_seed=a.seed,
        assemble=a.assemble,
        ranking=RANKINGS[a.ranking],
        hydrogens=a.hydrogens,
        progress=progress,
        confidence=a.confidence,
    )


def _train(a: argparse.Namespace) -> int:
    import jax
    from tqdm.auto import tqdm

    from jaxkit.train import data_mesh, is_primary

    from ._datasets import ccd_examples, load_complex_folder
    from ._train import ModelConfig, TrainConfig, featurize_examples, save_model, train_model

    if a.data is None and a.ccd <= 0:
        return _fail("train: give --data DIR and/or --ccd N (training complexes)")
    if a.data is not None and not Path(a.data).is_dir():
        return _fail(f"--data: folder {a.data} does not exist")
    problem = _check_out(a.out, a.overwrite, "model file")
    if problem is None and Path(a.out).exists():  # --overwrite replaces only a docking model file
        from ._train import load_model

        try:
            load_model(a.out)
        except (ValueError, OSError) as e:
            problem = f"--out: {a.out} is not a docking model file, so it is not replaced ({e})"
    if problem is not None:
        return _fail(problem)
    if a.devices is not None and a.batch % a.devices:
        return _fail(f"--batch: {a.batch} is not divisible by --devices {a.devices}")
    problem = _start_distributed(a)
    if problem is not None:
        return _fail(problem)
    if a.data is not None and not Path(a.data).is_dir():
        return _fail(f"--data: folder {a.data} does not exist")
    out = Path(a.out)
    examples = []
    if a.data is not None:
        ex, skipped = load_complex_folder(a.data, on_error="skip")
        for s in skipped:
            print(f"skipped: {s}", file=sys.stderr)
        if not ex:
            return _fail(
                f"--data: no readable complex in {a.data} (expected <id>/<id>_protein.pdb and <id>/<id>_ligand.sdf)"
            )
        examples += ex
    if a.ccd > 0:
        print(f"building {a.ccd} CCD pseudo-pocket complexes ...", file=sys.stderr, flush=True)
        examples += ccd_examples(a.ccd, split="train", seed=a.seed)
    config = ModelConfig(width=a.width, depth=a.depth)
    data, skipped = featurize_examples(
        examples,
        config.sizes(),
        augment=a.augment,
        seed=a.seed,
        progress=lambda it: tqdm(it, desc="featurize", file=sys.stderr),
    )
    print(f"{data.T0.shape[0]} training complexes ({len(skipped)} skipped)", file=sys.stderr, flush=True)
    n_dev = a.devices or jax.device_count()
    mesh = data_mesh(n_dev) if n_dev > 1 else None
    if a.batch % n_dev:
        return _fail(f"--batch: {a.batch} is not divisible by the {n_dev} devices of the mesh")
    train = TrainConfig(n_steps=a.steps, batch_size=a.batch, lr=a.lr)
    model, history = train_model(
        data,
        config,
        train,
        key=jax.random.key(a.seed),
        checkpoint_dir=out.with_name(out.name + ".ckpt"),
        resume=a.resume,
        mesh=mesh,
        progress="train",
    )
    info = {
        "steps": a.steps,
        "batch": a.batch,
        "n_train": int(data.T0.shape[0]),
        "final_loss": history[-1]["loss"],
        "data": a.data,
        "ccd": a.ccd,
    }
    save_model(out, model, config, info, overwrite=a.overwrite)
    if is_primary():
        print(f"wrote {out} ({json.dumps(info)})", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    from jaxkit.train import CheckpointError

    from ._structures import StructureError

    a = _parser().parse_args(argv)
    try:
        return _dock(a) if a.command == "dock" else _train(a)
    except (StructureError, ValueError, TypeError, OSError, CheckpointError) as e:
        return _fail(str(e))
