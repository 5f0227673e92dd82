"""The run context handed to each experiment (config, seed, output folder, progress bars, verified resumable
stages) and the run-folder guard (a record of which run owns the folder, and a lock against concurrent runs).

A run folder holds ``run.json`` (experiment, preset, seed and config of the run that owns it), ``.lock`` (an
exclusive ``flock`` held while a run is writing; the kernel releases it when the process dies, so a killed run
leaves no stale lock), ``stages/*.stage`` (stage results in :func:`jaxkit.train.write_checked_bytes` files, a
SHA-256 over every byte; the payload is JSON plus arrays, never a pickle, so reading a stage file cannot run code;
the header records the run identity, checked on load), ``checkpoints/`` (:func:`jaxkit.train.fit` checkpoints)
and the outputs (``metrics.json``, ``summary.md``, figures).

A folder is a run folder only if it carries ``run.json`` naming an experiment, preset, seed and config (written
when a run claims the folder). A run without ``--resume`` in a run folder clears it whole; any other existing
folder that is not empty (a ``checkpoints/`` or ``metrics.json`` proves nothing) is refused and left untouched, as
is an ``--out`` that is a file. ``--resume`` continues only the same run (experiment, preset, seed, config),
recorded in ``run.json`` and in every stage file.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import socket
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from jaxkit.train import (
    CheckpointError,
    CheckpointWarning,
    atomic_write_bytes,
    is_primary,
    read_checked_bytes,
    write_checked_bytes,
)

RUN_RECORD = "run.json"
LOCK_FILE = ".lock"
_IDENTITY_KEYS = ("experiment", "preset", "seed", "config")


def to_jsonable(x: Any) -> Any:
    """Convert numpy/jax scalars and arrays (nested in dicts/lists) to JSON-able Python values."""
    import numpy as np

    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [to_jsonable(v) for v in x]
    if isinstance(x, float | int | str | bool) or x is None:
        if isinstance(x, float) and not np.isfinite(x):
            return str(x)
        return x
    if hasattr(x, "shape"):
        arr = np.asarray(x)
        if arr.ndim == 0:
            return to_jsonable(arr.item())
        return to_jsonable(arr.tolist())
    return str(x)


def write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(
        path, (json.dumps(to_jsonable(obj), indent=2, sort_keys=False) + "\n").encode(), overwrite=True
    )


@dataclass
class RunContext:
    """What an experiment's ``run(ctx)`` receives.

    ``config`` is the preset's dict (a copy); ``out_dir`` is ``results/<name>/<preset>`` (or ``--out``);
    ``stage(key, fn)`` runs ``fn()`` once and stores its result under ``out_dir/stages``, checksummed,
    so that a ``--resume`` run skips completed stages (a damaged stage file is recomputed, with a warning);
    ``checkpoint_dir(key)`` gives a folder for ``jaxkit.train.fit`` checkpoints of a stage in progress.
    """

    name: str
    preset: str
    config: dict[str, Any]
    seed: int
    out_dir: Path
    resume: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def stages_dir(self) -> Path:
        return self.out_dir / "stages"

    def checkpoint_dir(self, key: str) -> Path:
        return self.out_dir / "checkpoints" / _safe(key)

    def progress(self, iterable: Iterable, desc: str = "", total: int | None = None) -> Iterable:
        return tqdm(
            iterable,
            desc=f"{self.name}:{desc}" if desc else self.name,
            total=total,
            leave=False,
            disable=not is_primary(),  # multi-process runs (--distributed): bars of process 0 only
        )

    def stage_path(self, key: str) -> Path:
        return self.stages_dir / f"{_safe(key)}.stage"

    @property
    def identity(self) -> dict[str, Any]:
        """What every stage file of this run records: experiment, preset, seed and the config's SHA-256."""
        return stage_identity(self.name, self.preset, self.seed, self.config)

    def stage(self, key: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` unless a completed, intact result for ``key`` exists and ``--resume`` was given.

        The result is stored in a checked file (SHA-256 over every byte; the stage key, the run identity and the
        payload format in its header; the payload JSON plus arrays, never a pickle). On resume a
        file that fails the check, belongs to another key or is not in the current format is recomputed with a
        :class:`jaxkit.train.CheckpointWarning` naming it; a file of another run (experiment, preset, seed or
        config) raises :class:`RunFolderError`. A result the format cannot hold is returned but not stored (a
        warning says so)."""
        from . import _stagefile

        path = self.stage_path(key)
        if self.resume and path.exists():
            try:
                payload, info = read_checked_bytes(path, kind="stage")
                if info.get("key") != key:
                    raise CheckpointError(f"stage file {path} holds stage {info.get('key')!r}, not {key!r}")
                if info.get("format") != _stagefile.FORMAT:
                    raise CheckpointError(f"stage file {path} is not in the {_stagefile.FORMAT} format")
                _check_stage_identity(path, info, self.identity)
                return _stagefile.loads(payload)
            except RunFolderError:
                raise
            except Exception as e:  # damaged stage file: recompute, say so
                warnings.warn(
                    f"[{self.name}] stage file {path} is damaged ({e}); recomputing stage {key!r}",
                    CheckpointWarning,
                    stacklevel=2,
                )
        elif self.resume and path.with_suffix(".pkl").exists():
            warnings.warn(
                f"[{self.name}] {path.with_suffix('.pkl')} is an unchecked stage file of an older jaxkit; "
                f"recomputing stage {key!r}",
                CheckpointWarning,
                stacklevel=2,
            )
        result = fn()
        try:
            payload = _stagefile.dumps(result)
        except _stagefile.StageEncodeError as e:
            warnings.warn(
                f"[{self.name}] stage {key!r} is not stored (a --resume recomputes it): {e}",
                CheckpointWarning,
                stacklevel=2,
            )
            return result
        info = {"key": key, "format": _stagefile.FORMAT, **self.identity}
        if is_primary():  # multi-process runs: every process computes the stage, process 0 stores it
            path.unlink(missing_ok=True)  # the run's own stage file (a damaged one is recomputed): replaced
            write_checked_bytes(path, payload, kind="stage", info=info)
        return result

    def save_figure(self, fig: Any, filename: str) -> Path:
        path = self.out_dir / filename
        if not is_primary():
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp" + path.suffix)
        fig.savefig(tmp, dpi=120, bbox_inches="tight")
        os.replace(tmp, path)
        return path

    def write_summary(self, text: str) -> Path:
        path = self.out_dir / "summary.md"
        if is_primary():
            atomic_write_bytes(path, text.encode(), overwrite=True)
        return path


def _safe(key: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in key)


# ------------------------------------------------------------------------------------------------- run folders
class RunFolderError(RuntimeError):
    """The run folder is in use by another process, or belongs to another run than the one being resumed."""


def run_identity(name: str, preset: str, seed: int, config: dict[str, Any]) -> dict[str, Any]:
    """What makes two runs the same run: experiment, preset, seed and the (JSON form of the) config."""
    return {"experiment": name, "preset": preset, "seed": int(seed), "config": to_jsonable(config)}


def config_hash(config: dict[str, Any]) -> str:
    """SHA-256 of the config's canonical JSON form."""
    text = json.dumps(to_jsonable(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def stage_identity(name: str, preset: str, seed: int, config: dict[str, Any]) -> dict[str, Any]:
    """The run identity recorded in every stage file's header."""
    return {"experiment": name, "preset": preset, "seed": int(seed), "config_sha256": config_hash(config)}


def _stage_differences(info: dict[str, Any], identity: dict[str, Any]) -> list[str]:
    return [
        f"{k} {info.get(k)!r} (this run: {identity[k]!r})"
        for k in ("experiment", "preset", "seed", "config_sha256")
        if info.get(k) != identity[k]
    ]


def _check_stage_identity(path: Path, info: dict[str, Any], identity: dict[str, Any]) -> None:
    diffs = _stage_differences(info, identity)
    if diffs:
        raise RunFolderError(
            f"--resume: stage file {path} belongs to another run ({'; '.join(diffs)}). Resume with the same "
            "experiment, preset, seed and config, choose another --out, or run without --resume to start over"
        )


def _stage_owners(out_dir: Path, identity: dict[str, Any]) -> list[str]:
    """Differences between ``identity`` and the runs recorded in the folder's intact current-format stage files."""
    from . import _stagefile

    found = []
    for f in sorted((out_dir / "stages").glob("*.stage")):
        try:
            _, info = read_checked_bytes(f, kind="stage")
        except Exception:  # noqa: BLE001 (damaged: recomputed on load, with a warning)
            continue
        if info.get("format") == _stagefile.FORMAT:
            diffs = _stage_differences(info, identity)
            if diffs:
                found.append(f"{f.name}: {'; '.join(diffs)}")
    return found


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, dict) and d:
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}/{k}" if prefix else str(k)))
        return out
    return {prefix: d}


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    diffs = [
        f"{k} {old.get(k)!r} (this run: {new[k]!r})"
        for k in ("experiment", "preset", "seed")
        if old.get(k) != new[k]
    ]
    fo, fn = _flat(old.get("config", {})), _flat(new["config"])
    keys = sorted(k for k in set(fo) | set(fn) if fo.get(k, "<absent>") != fn.get(k, "<absent>"))
    if keys:
        shown = ", ".join(f"{k}: {fo.get(k, '<absent>')!r} -> {fn.get(k, '<absent>')!r}" for k in keys[:5])
        diffs.append(f"config ({len(keys)} entries differ: {shown}{', ...' if len(keys) > 5 else ''})")
    return diffs


def _read_run_record(out_dir: Path) -> dict[str, Any] | None:
    """The run identity recorded in ``out_dir/run.json``, or None if the folder carries no such record.

    Raises :class:`RunFolderError` if ``run.json`` exists but is not this project's run record (unreadable, or
    missing the experiment, preset, seed or config): such a folder is not taken for a run folder."""
    f = out_dir / RUN_RECORD
    if not f.is_file():
        return None
    try:
        rec = json.loads(f.read_text())
    except (OSError, ValueError) as e:
        raise RunFolderError(
            f"--out {out_dir}: {f} is unreadable ({e}), so the folder is not known to be a run folder; nothing "
            "was changed. Choose another --out"
        ) from e
    ok = (
        isinstance(rec, dict)
        and all(k in rec for k in _IDENTITY_KEYS)
        and isinstance(rec["experiment"], str)
        and isinstance(rec["preset"], str)
        and isinstance(rec["seed"], int)
        and isinstance(rec["config"], dict)
    )
    if not ok:
        raise RunFolderError(
            f"--out {out_dir}: {f} is not a jaxkit run record (expected a JSON object with "
            f"{', '.join(_IDENTITY_KEYS)}), so the folder is not taken for a run folder; nothing was changed. "
            "Choose another --out"
        )
    return {k: rec[k] for k in _IDENTITY_KEYS}


def _shown(names: list[str], k: int = 5, sep: str = ", ") -> str:
    """The first ``k`` names for a message, ``...`` when there are more."""
    return sep.join(names[:k]) + (f"{sep}..." if len(names) > k else "")


def _user_entries(out_dir: Path) -> list[Path]:
    return [p for p in out_dir.iterdir() if p.name != LOCK_FILE]


def check_out_folder(out_dir: Path) -> None:
    """Refuse, before anything is written, an ``--out`` that is an existing file, or an existing non-empty folder
    that carries no run record (``run.json``): nothing in it is touched. Raises :class:`RunFolderError`."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise RunFolderError(
            f"--out {out_dir} is an existing file, not a folder; choose a new or empty folder"
        )
    for parent in out_dir.parents:
        if parent.exists() and not parent.is_dir():
            raise RunFolderError(f"--out {out_dir}: {parent} is a file, not a folder; choose another --out")
    if not out_dir.is_dir():
        return
    entries = _user_entries(out_dir)
    if entries and _read_run_record(out_dir) is None:
        shown = _shown(sorted(p.name for p in entries))
        raise RunFolderError(
            f"--out {out_dir} is not an empty folder nor a run folder (it holds {shown} and no {RUN_RECORD}); "
            "nothing was changed. Choose a new or empty folder"
        )


def _check_owner(out_dir: Path, identity: dict[str, Any], resume: bool) -> None:
    check_out_folder(out_dir)  # again, under the lock
    owner = _read_run_record(out_dir)
    if resume and owner is not None:
        diffs = _differences(owner, identity)
        if diffs:
            raise RunFolderError(
                f"--resume: run folder {out_dir} belongs to another run ({RUN_RECORD} records "
                + "; ".join(diffs)
                + "). Resume with the same experiment, preset, seed and config, choose another "
                "--out, or run without --resume to start over (that removes what the folder's runs wrote)"
            )
    if resume:  # the stage files record their run too: a replaced run.json cannot mix runs
        ident = identity
        others = _stage_owners(
            out_dir, stage_identity(ident["experiment"], ident["preset"], ident["seed"], ident["config"])
        )
        if others:
            shown = _shown(others, 3, "; ")
            raise RunFolderError(
                f"--resume: run folder {out_dir} holds stage files of another run ({shown}). Resume with the "
                "same experiment, preset, seed and config, choose another --out, or run without --resume to "
                "start over (that removes what the folder's runs wrote)"
            )
    else:
        _clear_run_folder(out_dir, identity["experiment"])
    atomic_write_bytes(out_dir / RUN_RECORD, (json.dumps(identity, indent=2) + "\n").encode(), overwrite=True)


# Names the runner itself writes into every run folder (its record, the stage and checkpoint folders, the metrics
# and the summary): a run killed before it recorded its outputs still owns these.
_ALWAYS_RUN_OUTPUTS = frozenset({RUN_RECORD, "stages", "checkpoints", "metrics.json", "summary.md"})


def _recorded_outputs(out_dir: Path) -> set[str]:
    """Top-level names the folder's runs wrote (``outputs`` in ``run.json``, kept when a run ends)."""
    try:
        rec = json.loads((out_dir / RUN_RECORD).read_text())
        outs = rec.get("outputs", []) if isinstance(rec, dict) else []
        return {str(n) for n in outs if isinstance(n, str)} | set(_ALWAYS_RUN_OUTPUTS)
    except (OSError, ValueError):
        return set(_ALWAYS_RUN_OUTPUTS)


def record_run_outputs(out_dir: Path, before: set[str], earlier: set[str]) -> None:
    """Record in ``run.json`` the top-level names this folder's runs wrote: ``earlier`` (recorded by the runs this
    one resumed) and what appeared while this run held the folder (now, less ``before``, the names present when
    it claimed the folder). A later start-over removes only these; anything else is a user's and is refused."""
    try:
        rec = json.loads((out_dir / RUN_RECORD).read_text())
    except (OSError, ValueError):
        return
    now = {p.name for p in _user_entries(out_dir)}
    rec["outputs"] = sorted(((earlier & now) | (now - before)) - {RUN_RECORD})
    rec["files"] = sorted(_nested_files(out_dir, rec["outputs"]))  # what the run's folders held when it ended
    atomic_write_bytes(out_dir / RUN_RECORD, (json.dumps(rec, indent=2) + "\n").encode(), overwrite=True)


def _nested_files(out_dir: Path, names: list[str]) -> set[str]:
    """Paths (relative to ``out_dir``, POSIX) of the files inside the folders ``names`` of ``out_dir``."""
    out: set[str] = set()
    for name in names:
        top = out_dir / name
        if top.is_dir() and not top.is_symlink():
            out |= {
                f.relative_to(out_dir).as_posix() for f in top.rglob("*") if not f.is_dir() or f.is_symlink()
            }
    return out


def _written_by_runs(rel: str, files: set[str]) -> bool:
    """Whether the file ``rel`` inside one of the run's folders is the runs': in ``files`` (``run.json``'s
    ``files``, recorded when a run ends), or named as only the runner names files (a run killed before it recorded
    them): ``stages/*.stage`` (and their temporary ``*.tmp*``) and files inside ``checkpoints/**/ckpt_*/``."""
    parts = rel.split("/")
    if parts[0] == "stages" and len(parts) == 2 and (parts[1].endswith(".stage") or ".tmp" in parts[1]):
        return True
    if parts[0] == "checkpoints" and any(x.startswith("ckpt_") for x in parts[1:-1]):
        return True
    return rel in files


def _recorded_files(out_dir: Path) -> set[str]:
    try:
        rec = json.loads((out_dir / RUN_RECORD).read_text())
    except (OSError, ValueError):
        return set()
    files = rec.get("files", []) if isinstance(rec, dict) else []
    return {str(f) for f in files} if isinstance(files, list) else set()


def _clear_run_folder(out_dir: Path, experiment: str) -> None:
    """Start over: remove what earlier runs wrote (outputs included; the names ``run.json`` records), keeping the
    held lock file. Only a folder carrying a run record (``run.json``) is cleared (:func:`check_out_folder`
    refused any other), and only when it holds nothing else: a file a user added to a run folder (a notebook
    beside the figures) is not the run's, so the start-over is refused, naming it, and nothing is changed."""
    entries = _user_entries(out_dir)
    if not entries:
        return
    if _read_run_record(out_dir) is None:  # unreachable after check_out_folder; never clear a user's folder
        raise RunFolderError(f"--out {out_dir} is not a run folder (no {RUN_RECORD}); nothing was changed")
    recorded = _recorded_outputs(out_dir)
    foreign = sorted(p.name for p in entries if p.name not in recorded)
    # inside the run's own folders too: a file a user put in stages/ is not the run's
    files = _recorded_files(out_dir)
    foreign += sorted(f for f in _nested_files(out_dir, sorted(recorded)) if not _written_by_runs(f, files))
    if foreign:
        shown = _shown(foreign)
        raise RunFolderError(
            f"--out {out_dir} is a run folder that also holds {shown}, which no run wrote; starting over would "
            "delete them, so nothing was changed. Move them out of the folder, choose another --out, or pass "
            "--resume to continue the run (that keeps them)"
        )
    for p in entries:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
    print(
        f"[{experiment}] starting over in {out_dir}: removed the earlier run's {len(entries)} files and "
        "folders (use --resume to continue a run)",
        file=sys.stderr,
    )


def _lock_holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text())
        return f"pid {info.get('pid')} on {info.get('host')}, started {info.get('started')}"
    except (OSError, ValueError):
        return "holder unknown"


@contextlib.contextmanager
def claim_run_folder(out_dir: Path, identity: dict[str, Any], *, resume: bool) -> Iterator[Path]:
    """Hold the run folder for one run: an exclusive lock (fails fast if another process holds it), then the
    ownership check (``resume``: the folder's recorded run must equal ``identity``) and the new record.

    The lock is ``flock`` on ``out_dir/.lock``: the kernel drops it when the holding process exits or is killed,
    so a lock file left by a dead process never blocks a new run. Raises :class:`RunFolderError`."""
    out_dir = Path(out_dir)
    check_out_folder(out_dir)  # before the folder or its lock file is created
    out_dir.mkdir(parents=True, exist_ok=True)
    lock = out_dir / LOCK_FILE
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunFolderError(
                f"run folder {out_dir} is in use by another run ({_lock_holder(lock)}); wait for it to finish, "
                "or choose another --out"
            ) from None
        except OSError as e:  # file systems without flock (some network mounts): run unguarded, say so
            warnings.warn(
                f"cannot lock run folder {out_dir} ({e}); concurrent runs are not prevented", stacklevel=2
            )
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "argv": sys.argv,
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        earlier = _recorded_outputs(out_dir) if resume else set()
        _check_owner(out_dir, identity, resume)
        before = {p.name for p in _user_entries(out_dir)}
        try:
            yield out_dir
        finally:  # also when the run fails or is interrupted: what it wrote so far is its own
            record_run_outputs(out_dir, before, earlier)
    finally:
        os.close(fd)  # releases the lock


def run_folder_busy(out_dir: Path) -> str | None:
    """A description of the process holding the run folder's lock, or None if no run is writing it."""
    lock = Path(out_dir) / LOCK_FILE
    if not lock.exists():
        return None
    fd = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return None
    except BlockingIOError:
        return _lock_holder(lock)
    except OSError:
        return None
    finally:
        os.close(fd)
