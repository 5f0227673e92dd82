"""Checkpoints of training state, written with orbax-checkpoint and verified end to end.

A checkpoint is a folder::

    <path>/state/          orbax ``StandardCheckpointer`` output (TensorStore/OCDBT): the array leaves
    <path>/MANIFEST.jkx    jaxkit manifest: leaf paths, shapes, dtypes, PRNG-key impls, the metadata dict
                           (step, history, ...), and the size and SHA-256 of every file under ``state/``

The array leaves go through orbax-checkpoint, the JAX ecosystem's format (sharded and multi-host arrays, readable
with ``orbax.checkpoint.StandardCheckpointer().restore(path / "state")``). Orbax has no end-to-end checksum
(only an optional crc32c on zarr3 shard indices), so jaxkit adds one: the manifest lists every file's SHA-256
and is itself stored by :func:`write_checked_bytes`, whose trailing SHA-256 covers every byte before it (magic,
header and payload). Any change to any byte of any file, a missing or an extra file is detected on load and
reported as :class:`CheckpointError` naming the file.

Writes are atomic: the checkpoint is assembled in a hidden sibling folder, every file is fsync'ed, then the folder
is renamed into place (and the parent folder fsync'ed); a process killed at any moment leaves either the old or
the new checkpoint, never a partial one. :class:`CheckpointManager` keeps the newest ``keep`` checkpoints, prunes
only after a new one is durable and, on restore, falls back from a damaged newest checkpoint to the newest valid
one with a :class:`CheckpointWarning` naming the damaged folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxkit._typing import PyTree, TreeT

__all__ = [
    "CheckpointError",
    "CheckpointManager",
    "CheckpointWarning",
    "atomic_write_bytes",
    "load_checkpoint",
    "read_checked_bytes",
    "read_metadata",
    "save_checkpoint",
    "write_checked_bytes",
]

FORMAT = "jaxkit-checkpoint/2"
MANIFEST = "MANIFEST.jkx"
STATE = "state"
_BLOB_MAGIC = b"JAXKIT-CHECKED/1\n"
_DIGEST = 32
_NAME = re.compile(r"^ckpt_(\d{9})$")
_LEGACY = re.compile(r"^ckpt_(\d{9})\.jkc$")
_PARTIAL = re.compile(r"^\.ckpt_\d{9}\.(partial|old)$")  # an interrupted write's hidden siblings


def _is_checkpoint_folder(p: Path) -> bool:
    """A folder written by :func:`save_checkpoint` (possibly damaged since), not merely named like one: its
    manifest starts with the magic bytes of jaxkit's checked files (a user's own file that happens to be named
    ``MANIFEST.jkx`` does not)."""
    if not (p.is_dir() and (p / MANIFEST).is_file()):
        return False
    try:
        with open(p / MANIFEST, "rb") as f:
            return f.read(len(_BLOB_MAGIC)) == _BLOB_MAGIC
    except OSError:
        return False


class CheckpointError(RuntimeError):
    """A checkpoint (or checked file) is missing, truncated, corrupted or does not match the expected structure."""


class _KindMismatch(CheckpointError, ValueError):
    """A checked file of another kind than the ``kind`` asked for: a :class:`CheckpointError` (the file is not
    the one expected) and a ``ValueError`` naming the argument ``kind``."""


class CheckpointWarning(UserWarning):
    """A damaged checkpoint was skipped in favor of an older valid one (or a damaged stage is recomputed)."""


# ------------------------------------------------------------------------------------------------ atomic + checked
def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync, rename, fsync the folder (a
    reader sees the old file or the new one, never neither). An existing ``path`` is refused (``ValueError``)
    unless ``overwrite=True``: it may be a user's file."""
    path = Path(path)
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite: expected a bool, received {type(overwrite).__name__}")
    if path.is_dir():
        raise ValueError(f"path: expected a file path, received the folder {path}")
    if path.exists() and not overwrite:
        raise ValueError(f"path: {path} exists; pass overwrite=True to replace it (atomically)")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def write_checked_bytes(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    kind: str,
    info: dict[str, object] | None = None,
    overwrite: bool = False,
) -> None:
    """Atomically write ``data`` with a header and a SHA-256 over every byte (see :func:`read_checked_bytes`). An
    existing ``path`` is refused unless ``overwrite=True``, and even then unless it is a file this function wrote
    with the same ``kind`` (a user's file, or a checked file of another kind, is never replaced).

    Layout: ``magic | 8-byte header length | header JSON {kind, info, payload_bytes} | payload | SHA-256 of all
    preceding bytes``. ``kind`` names what the file holds (``"stage"``, ``"checkpoint-manifest"``, ...);
    ``info`` is a small JSON-able dict checked by the reader (e.g. the stage key)."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"data: expected bytes, received {type(data).__name__}")
    data = bytes(data)
    header = json.dumps(
        {"kind": kind, "info": info or {}, "payload_bytes": len(data)}, sort_keys=True
    ).encode()
    body = _BLOB_MAGIC + len(header).to_bytes(8, "little") + header + data
    path = Path(path)
    if overwrite and path.is_file():
        try:
            with path.open("rb") as f:
                head = f.read(len(_BLOB_MAGIC) + 8)
                n = int.from_bytes(head[len(_BLOB_MAGIC) :], "little") if head.startswith(_BLOB_MAGIC) else -1
                old_kind = json.loads(f.read(n)).get("kind") if 0 < n < 1 << 20 else None
        except (OSError, ValueError, AttributeError):
            old_kind = None
        if old_kind != kind:
            raise ValueError(
                f"kind: the existing file {path} is not a {kind!r} file written by write_checked_bytes (it holds "
                f"{'a ' + repr(old_kind) + ' file' if old_kind else 'something else'}); it is not replaced, even "
                "with overwrite=True"
            )
    atomic_write_bytes(path, body + hashlib.sha256(body).digest(), overwrite=overwrite)


def read_checked_bytes(path: str | os.PathLike[str], *, kind: str) -> tuple[bytes, dict[str, object]]:
    """Read a file written by :func:`write_checked_bytes`; returns ``(payload, info)``.

    Raises :class:`CheckpointError` naming the file when it is missing, truncated, of another kind, or when any
    byte differs from what was written (SHA-256 over the whole file)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(f"{kind} file {path} does not exist") from None
    except OSError as e:
        raise CheckpointError(f"{kind} file {path} cannot be read: {e}") from e
    if len(raw) < len(_BLOB_MAGIC) + 8 + _DIGEST:
        raise CheckpointError(f"{kind} file {path} is truncated ({len(raw)} bytes)")
    body, digest = raw[:-_DIGEST], raw[-_DIGEST:]
    if hashlib.sha256(body).digest() != digest:
        if not raw.startswith(_BLOB_MAGIC):
            raise CheckpointError(
                f"{kind} file {path} is not a jaxkit checked file (bad magic bytes) or is corrupted"
            )
        raise CheckpointError(
            f"{kind} file {path} is corrupted: its SHA-256 does not match (a byte was changed, "
            "or the file was truncated or padded)"
        )
    off = len(_BLOB_MAGIC)
    hlen = int.from_bytes(body[off : off + 8], "little")
    try:
        header = json.loads(body[off + 8 : off + 8 + hlen])
        payload = body[off + 8 + hlen :]
        if header["kind"] != kind:
            raise _KindMismatch(
                f"kind: expected a {kind!r} file, received {path}, which holds a {header['kind']!r} file, "
                f"not a {kind!r} file"
            )
        if header["payload_bytes"] != len(payload):
            raise ValueError("payload length mismatch")
    except CheckpointError:
        raise
    except (
        ValueError,
        KeyError,
        TypeError,
    ) as e:  # checksum matched but the layout is wrong: written by something else
        raise CheckpointError(f"{kind} file {path} has a malformed header ({type(e).__name__}: {e})") from e
    return payload, header.get("info", {})


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _list_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink())


# ------------------------------------------------------------------------------------------------------- leaves
def _is_key(leaf: Any) -> bool:
    return isinstance(leaf, jax.Array) and jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key)


def _describe(tree: Any) -> tuple[list[dict], dict[str, Any], list[Any]]:
    """Leaf records for the manifest, the dict orbax saves, and the leaves."""
    flat, _ = jax.tree_util.tree_flatten_with_path(tree)
    records, to_save = [], {}
    for i, (kp, leaf) in enumerate(flat):
        rec: dict[str, Any] = {"path": jax.tree_util.keystr(kp)}
        if _is_key(leaf):
            rec["prng_impl"] = str(jax.random.key_impl(leaf))
            leaf = jax.random.key_data(leaf)
        elif not isinstance(leaf, jax.Array | np.ndarray):
            leaf = np.asarray(leaf)
        if _host_local(leaf):  # multi-process: orbax saves global arrays; a process's own array goes as NumPy
            leaf = np.asarray(leaf)
        if np.dtype(leaf.dtype).kind not in "biufcV" and not str(leaf.dtype).startswith(("bfloat", "float8")):
            raise TypeError(
                f"tree: leaf {rec['path']} has dtype {leaf.dtype}; checkpoints hold numeric arrays and "
                "PRNG keys (put other values in metadata)"
            )
        rec["shape"], rec["dtype"] = list(np.shape(leaf)), str(np.dtype(leaf.dtype))
        if (
            np.size(leaf) > 0
        ):  # orbax cannot store zero-size arrays; their shape and dtype are the whole content
            to_save[f"leaf_{i:05d}"] = leaf
        records.append(rec)
    return records, to_save, [leaf for _, leaf in flat]


def _orbax_checkpointer():
    import orbax.checkpoint as ocp

    return ocp.Checkpointer(ocp.StandardCheckpointHandler())


def save_checkpoint(
    path: str | os.PathLike[str],
    tree: object,
    metadata: dict[str, object] | None = None,
    *,
    overwrite: bool = False,
    like: object | None = None,
    allow_nonfinite: bool = False,
) -> Path:
    """Atomically write ``tree`` (a pytree of arrays, PRNG keys included) and ``metadata`` (JSON-able) to the
    checkpoint folder ``path`` (orbax arrays + a checksummed manifest; see the module docstring).

    Nothing of a user's is replaced without consent: a new path or an empty folder is written; an existing
    checkpoint is replaced only with ``overwrite=True`` and only if it is of the same kind (its metadata's
    ``"format"`` equals ``metadata["format"]``, both absent for plain checkpoints); a checkpoint of another kind,
    a damaged one, or any other file or non-empty folder is refused with ``FileExistsError`` (nothing is
    written or removed), ``overwrite`` or not. The replacement is atomic: an interrupted save leaves the old
    checkpoint or the new one at ``path``, never neither.

    ``like``: if given, the structure a later :func:`load_checkpoint` will use; ``tree`` must match it leaf by
    leaf (key paths, shapes, dtypes, PRNG keys), else ``ValueError`` and nothing is written, so a checkpoint
    that cannot be loaded back is never saved.

    ``allow_nonfinite``: a floating leaf holding NaN/inf is refused (``ValueError`` naming the leaf, nothing
    written) unless this is ``True``; the values are then stored and loaded back exactly as given."""
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite: expected a bool, received {type(overwrite).__name__}")
    if not isinstance(allow_nonfinite, bool):
        raise TypeError(f"allow_nonfinite: expected a bool, received {type(allow_nonfinite).__name__}")
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError(f"metadata: expected a JSON-able dict or None, received {type(metadata).__name__}")
    path = Path(path).resolve()
    _recover_interrupted(path)
    if path.exists():
        if not (path.is_dir() and ((path / MANIFEST).is_file() or not any(path.iterdir()))):
            raise FileExistsError(
                f"path: {path} exists and is not a jaxkit checkpoint folder; save_checkpoint replaces only a "
                "checkpoint (or an empty folder), never other files or folders: choose a new path"
            )
        if (path / MANIFEST).is_file():
            try:
                old = read_metadata(path)
            except CheckpointError as e:
                raise FileExistsError(
                    f"path: {path} holds a checkpoint that cannot be verified ({e}); it is not replaced: "
                    "choose a new path, or remove it yourself"
                ) from None
            old_kind = old.get("format") if isinstance(old, dict) else None
            new_kind = (metadata or {}).get("format")
            if old_kind != new_kind:
                raise FileExistsError(
                    f"path: {path} holds a checkpoint of another kind ({_kind(old_kind)}), not "
                    f"{_kind(new_kind)}; a checkpoint is never replaced by one of another kind, even with "
                    "overwrite=True: choose a new path"
                )
            if not overwrite:
                raise FileExistsError(
                    f"path: {path} already holds a checkpoint ({_kind(old_kind)}); pass overwrite=True to "
                    "replace it"
                )
    if not allow_nonfinite:
        _check_finite_leaves(tree)
    if like is not None:
        _check_matches(tree, like)
    return _write_checkpoint(path, tree, metadata)


def _check_finite_leaves(tree: object) -> None:
    """``ValueError`` naming the first floating (or complex) leaf of ``tree`` that holds NaN/inf."""
    for kp, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        if isinstance(leaf, jax.Array) and jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            continue
        if not hasattr(leaf, "dtype") or not np.issubdtype(np.dtype(leaf.dtype), np.inexact):
            continue
        bad = int(np.size(leaf) - np.count_nonzero(np.isfinite(np.asarray(leaf))))
        if bad:
            raise ValueError(
                f"tree: leaf {jax.tree_util.keystr(kp) or '(root)'} holds {bad} NaN/inf entries of {np.size(leaf)}; "
                "a checkpoint of non-finite values is refused (pass allow_nonfinite=True to store them as given)"
            )


def save_model_checkpoint(
    path: str | os.PathLike[str],
    tree: object,
    metadata: dict[str, object] | None,
    *,
    overwrite: bool,
    like: object,
    name: str = "model",
) -> Path:
    """:func:`save_checkpoint` of a model that its loader rebuilds from a config and fills with the saved arrays:
    ``like`` is the model the saved config builds, and a ``tree`` that does not match it leaf by leaf is refused
    (nothing written) with ``ValueError`` naming the argument ``name``: "its config does not describe its
    arrays", since such a checkpoint would not load back. Shared by the models' ``save`` functions
    (``jaxkit.forecast.save_forecaster``, ``jaxkit.operators.TrainedOperator.save``)."""
    try:
        return save_checkpoint(path, tree, metadata, overwrite=overwrite, like=like)
    except ValueError as e:
        if str(e).startswith("tree:") and "NaN/inf" in str(e):
            raise ValueError(f"{name}: {str(e).removeprefix('tree:').strip()}") from None
        if str(e).startswith("tree:"):
            raise ValueError(
                f"{name}: its config does not describe its arrays ({str(e).removeprefix('tree:').strip()})"
            ) from None
        raise


def _kind(fmt: Any) -> str:
    return f"a saved {fmt}" if fmt else "a plain checkpoint with no format"


def _check_matches(tree: Any, like: Any) -> None:
    """``tree`` has the leaves (paths, shapes, dtypes, PRNG keys) of ``like``: ValueError naming the first
    difference otherwise."""
    got = jax.tree_util.tree_flatten_with_path(tree)[0]
    want = jax.tree_util.tree_flatten_with_path(like)[0]
    if len(got) != len(want):
        raise ValueError(
            f"tree: holds {len(got)} arrays, the structure it is saved as (like) has {len(want)}"
        )
    for i, ((kp, a), (kq, b)) in enumerate(zip(got, want)):
        pa, pb = jax.tree_util.keystr(kp), jax.tree_util.keystr(kq)
        if pa != pb:
            raise ValueError(f"tree: leaf {i} is {pa!r}, the structure it is saved as (like) has {pb!r}")
        if _is_key(a) != _is_key(b):
            raise ValueError(f"tree: leaf {i} {pa}: a PRNG key where (like) has an array, or the reverse")
        sa, sb = tuple(np.shape(a)), tuple(np.shape(b))
        if sa != sb:
            raise ValueError(f"tree: leaf {i} {pa} has shape {sa}, the structure it is saved as has {sb}")
        if not _is_key(a):
            da, db = np.asarray(a).dtype if not hasattr(a, "dtype") else a.dtype, getattr(b, "dtype", None)
            if db is None:
                db = np.asarray(b).dtype
            if np.dtype(da) != np.dtype(db):
                raise ValueError(f"tree: leaf {i} {pa} has dtype {da}, the structure it is saved as has {db}")


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> None:
    """Swap two existing paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); OSError if the system
    or file system cannot."""
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is None:
        raise OSError("renameat2 is not available")
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _trash(path: Path) -> Path:
    return path.parent / f".{path.name}.old"


def _recover_interrupted(path: Path) -> None:
    """A save interrupted between its two renames (systems without an atomic exchange) left the old checkpoint
    in the hidden sibling ``.<name>.old`` and nothing at ``path``: put it back."""
    trash = _trash(path)
    if not path.exists() and (trash / MANIFEST).is_file() and jax.process_index() == 0:
        os.replace(trash, path)
        _fsync_dir(path.parent)


def _write_checkpoint(path: Path, tree: PyTree, metadata: dict | None) -> Path:
    import orbax.checkpoint as ocp

    path.parent.mkdir(parents=True, exist_ok=True)
    records, to_save, _ = _describe(tree)
    paths = _leaf_paths(tree)
    try:
        meta_json = json.loads(json.dumps(metadata or {}))
    except (TypeError, ValueError) as e:
        raise TypeError(
            f"metadata: expected a JSON-able dict, received {type(metadata).__name__} ({e})"
        ) from e
    primary = jax.process_index() == 0
    tmp = (
        path.parent / f".{path.name}.partial"
    )  # same name on every process (multi-host orbax writes one folder)
    if primary and tmp.exists():
        shutil.rmtree(tmp)  # left over by a process killed mid-write
    _barrier(f"jaxkit_checkpoint_start_{path.name}")
    try:
        if to_save:
            _orbax_checkpointer().save(tmp / STATE, args=ocp.args.StandardSave(to_save))
        if primary:
            tmp.mkdir(parents=True, exist_ok=True)
            files = {}
            for rel in _list_files(tmp):
                f = tmp / rel
                files[rel] = {"bytes": f.stat().st_size, "sha256": _sha256_file(f)}
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
            manifest = {
                "format": FORMAT,
                "leaves": records,
                "paths": paths,
                "metadata": meta_json,
                "files": files,
            }
            write_checked_bytes(tmp / MANIFEST, json.dumps(manifest).encode(), kind="checkpoint-manifest")
            for d in sorted({(tmp / rel).parent for rel in files}, key=lambda p: -len(p.parts)):
                _fsync_dir(d)
            if path.exists():
                try:
                    _exchange(tmp, path)  # one atomic step: the old checkpoint or the new one, never neither
                except OSError:
                    trash = _trash(path)  # two renames; an interruption between them is undone on next access
                    shutil.rmtree(trash, ignore_errors=True)
                    os.replace(path, trash)
                    os.replace(tmp, path)
                    shutil.rmtree(trash, ignore_errors=True)
                    _fsync_dir(path.parent)
                else:
                    _fsync_dir(path.parent)
                    shutil.rmtree(tmp, ignore_errors=True)  # now the old checkpoint
            else:
                os.replace(tmp, path)
                _fsync_dir(path.parent)
    except BaseException:  # the old checkpoint (if any) is in place: drop the partial new one
        if primary:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    _barrier(f"jaxkit_checkpoint_{path.name}")
    return path


def _barrier(name: str) -> None:
    """Every process waits here (multi-process runs): process 0's file operations are then visible to all."""
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)


def _leaf_paths(tree: Any) -> list[str]:
    """The key path of every leaf (``['w']``, ``.layers[0].weight``), in ``tree_flatten`` order."""
    return [jax.tree_util.keystr(k) for k, _ in jax.tree_util.tree_flatten_with_path(tree)[0]]


def _verify(path: Path) -> dict:
    """Check every byte of the checkpoint folder against its manifest; return the manifest."""
    _recover_interrupted(path)
    if not path.exists():
        if path.with_suffix(".jkc").exists() or path.suffix == ".jkc":
            raise CheckpointError(_legacy_message(path))
        raise CheckpointError(f"checkpoint {path} does not exist")
    if not path.is_dir():
        raise CheckpointError(
            f"checkpoint {path} is not a checkpoint folder (written by an older jaxkit, or by something else)"
        )
    payload, _ = read_checked_bytes(path / MANIFEST, kind="checkpoint-manifest")
    try:
        manifest = json.loads(payload)
        if manifest.get("format") != FORMAT:
            raise ValueError(f"format {manifest.get('format')!r}, expected {FORMAT!r}")
        files = manifest["files"]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise CheckpointError(f"checkpoint {path}: malformed manifest ({e})") from e
    on_disk = set(_list_files(path)) - {MANIFEST}
    missing, extra = sorted(set(files) - on_disk), sorted(on_disk - set(files))
    if missing:
        raise CheckpointError(f"checkpoint {path} is incomplete: missing {missing[:5]}")
    if extra:
        raise CheckpointError(f"checkpoint {path} holds files its manifest does not list: {extra[:5]}")
    for rel, rec in files.items():
        f = path / rel
        if f.stat().st_size != rec["bytes"] or _sha256_file(f) != rec["sha256"]:
            raise CheckpointError(
                f"checkpoint {path} is corrupted: {rel} does not match its SHA-256 "
                f"({f.stat().st_size} bytes, manifest says {rec['bytes']})"
            )
    return manifest


def read_metadata(path: str | os.PathLike[str]) -> dict[str, object]:
    """The metadata dict of a checkpoint (every byte of the checkpoint is verified first)."""
    return _verify(Path(path))["metadata"]


def _host_local(x: Any) -> bool:
    """A jax.Array on this process's devices only, in a multi-process run (not a global array)."""
    return isinstance(x, jax.Array) and jax.process_count() > 1 and x.is_fully_addressable


def _target(rec: dict, ref: Any) -> Any:
    if "prng_impl" in rec or not isinstance(ref, jax.Array) or _host_local(ref):
        return np.zeros(rec["shape"], rec["dtype"])
    return jax.ShapeDtypeStruct(tuple(rec["shape"]), np.dtype(rec["dtype"]), sharding=ref.sharding)


def _check_leaf(path: Path, i: int, rec: dict, ref: Any) -> None:
    where = f"checkpoint {path}: leaf {i} {rec.get('path', '')}"
    if _is_key(ref):
        if "prng_impl" not in rec:
            raise CheckpointError(f"{where} holds a {rec['dtype']} array, expected a PRNG key")
        return
    if "prng_impl" in rec:
        raise CheckpointError(f"{where} holds a PRNG key, expected an array of shape {tuple(np.shape(ref))}")
    if tuple(rec["shape"]) != tuple(np.shape(ref)):
        raise CheckpointError(
            f"{where} has shape {tuple(rec['shape'])}, expected {tuple(np.shape(ref))} (the shape of that leaf of "
            "like)"
        )
    ref_dtype = getattr(ref, "dtype", None)
    if ref_dtype is not None and np.dtype(ref_dtype) != np.dtype(rec["dtype"]):
        raise CheckpointError(
            f"{where} has dtype {rec['dtype']}, expected {ref_dtype} (the dtype of that leaf of like)"
        )


def load_checkpoint(path: str | os.PathLike[str], like: TreeT) -> tuple[TreeT, dict[str, object]]:
    """Load a checkpoint into the structure of ``like`` (a pytree with the same leaves); returns (tree, metadata).

    Every byte is verified first. Raises :class:`CheckpointError` naming the checkpoint if it is missing,
    truncated or corrupted, or its leaves do not match ``like`` in number, shape, dtype or kind (PRNG key).
    Leaves of ``like`` that are ``jax.Array`` come back with their sharding (orbax restores onto it).
    """
    import orbax.checkpoint as ocp

    path = Path(path).resolve()
    manifest = _verify(path)
    records = manifest["leaves"]
    leaves, treedef = jax.tree_util.tree_flatten(like)
    if len(records) != len(leaves):
        raise CheckpointError(
            f"checkpoint {path} holds {len(records)} arrays, the expected structure has {len(leaves)}"
        )
    saved_paths = manifest.get("paths")  # absent in checkpoints of earlier versions of this format
    if saved_paths is not None and saved_paths != _leaf_paths(like):
        wanted = _leaf_paths(like)
        i = next(i for i, (a, b) in enumerate(zip(saved_paths, wanted)) if a != b)
        raise CheckpointError(
            f"checkpoint {path}: like: leaf {i} is {saved_paths[i]!r} in the checkpoint but "
            f"{wanted[i]!r} in the expected structure (a pytree with other names or order)"
        )
    for i, (rec, ref) in enumerate(zip(records, leaves)):
        _check_leaf(path, i, rec, ref)
    targets = {
        f"leaf_{i:05d}": _target(rec, ref)
        for i, (rec, ref) in enumerate(zip(records, leaves))
        if int(np.prod(rec["shape"])) > 0
    }
    try:
        restored = (
            _orbax_checkpointer().restore(path / STATE, args=ocp.args.StandardRestore(targets))
            if targets
            else {}
        )
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as e:  # verified bytes orbax cannot read
        raise CheckpointError(
            f"checkpoint {path}: orbax could not restore the arrays ({type(e).__name__}: {e})"
        ) from e
    out = []
    for i, (rec, ref) in enumerate(zip(records, leaves)):
        arr = restored.get(f"leaf_{i:05d}", np.zeros(rec["shape"], rec["dtype"]))
        if "prng_impl" in rec:
            out.append(jax.random.wrap_key_data(np.asarray(arr), impl=rec["prng_impl"]))
        elif isinstance(ref, jax.Array) and not isinstance(arr, jax.Array):
            out.append(jax.device_put(arr, ref.sharding))
        else:
            out.append(arr)
    return jax.tree_util.tree_unflatten(treedef, out), manifest["metadata"]


def _legacy_message(path: Path) -> str:
    return (
        f"checkpoint {path} is in the single-file format of older jaxkit versions (ckpt_*.jkc, header not "
        "covered by its checksum), which is no longer read; start the run again without resuming"
    )


# ------------------------------------------------------------------------------------------------------ manager
class CheckpointManager:
    """Numbered checkpoints ``ckpt_<step>`` (folders) in one directory, keeping the newest ``keep``.

    ``save`` writes the new checkpoint atomically before pruning older ones. ``restore`` (no ``step``) verifies
    the newest checkpoint and, if it is damaged, warns (:class:`CheckpointWarning`, naming it) and falls back to
    the newest valid one; it raises :class:`CheckpointError` only when no valid checkpoint is left. The step
    recorded inside a checkpoint must equal the step in its name (a renamed checkpoint counts as damaged).
    ``directory`` must be a folder or a path where one can be made (an existing file there raises ``ValueError``).
    """

    def __init__(self, directory: str | os.PathLike[str], keep: int = 2):
        if not isinstance(directory, str | os.PathLike):
            raise TypeError(
                f"directory: expected a folder path (str or os.PathLike), received {type(directory).__name__}"
            )
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError(f"keep: expected an integer >= 1, received {keep!r}")
        self.directory = Path(directory).resolve()  # orbax requires absolute paths
        self.keep = keep
        self._check_folder()

    def _check_folder(self) -> None:
        """``directory`` (or its nearest existing parent) is a folder, not a file."""
        existing = next((p for p in (self.directory, *self.directory.parents) if p.exists()), None)
        if existing is not None and not existing.is_dir():
            raise ValueError(
                f"directory: expected a folder (or a path where one can be made), but {existing} is a file"
            )

    def path(self, step: int) -> Path:
        return self.directory / f"ckpt_{int(step):09d}"

    def _matching(self, pattern: re.Pattern) -> list[int]:
        if not self.directory.exists():
            return []
        return sorted(int(m.group(1)) for p in self.directory.iterdir() if (m := pattern.match(p.name)))

    def steps(self) -> list[int]:
        """Steps of the checkpoints on disk, ascending: the ``ckpt_<step>`` folders that carry a manifest (their
        arrays are not verified here; a folder merely named like a checkpoint is not one)."""
        return [s for s in self._matching(_NAME) if (self.path(s) / MANIFEST).is_file()]

    def _own_steps(self) -> list[int]:
        """Steps of the folders this class wrote (a manifest with jaxkit's magic bytes): the only ones it deletes."""
        return [s for s in self._matching(_NAME) if _is_checkpoint_folder(self.path(s))]

    def latest(self) -> Path | None:
        s = self.steps()
        return self.path(s[-1]) if s else None

    def clear(self) -> list[int]:
        """Delete every checkpoint (and leftover partial write) in the directory; returns the removed steps.

        Only folders that carry a checkpoint manifest are removed: anything else named like a checkpoint (a
        user's own ``ckpt_000000099/`` folder) is left in place, never deleted."""
        removed = self._own_steps()
        _barrier("jaxkit_checkpoint_clear_listed")  # every process has listed before process 0 deletes
        if jax.process_index() == 0:
            for s in removed:
                shutil.rmtree(self.path(s), ignore_errors=True)
            for s in self._matching(_LEGACY):
                legacy = self.directory / f"ckpt_{s:09d}.jkc"
                if legacy.is_file():
                    legacy.unlink(missing_ok=True)
            if self.directory.exists():
                for p in self.directory.iterdir():
                    if _PARTIAL.match(p.name):  # this manager's own interrupted writes only
                        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        _barrier("jaxkit_checkpoint_clear_done")
        return removed

    def save(self, step: int, tree: PyTree, metadata: dict | None = None) -> Path:
        if isinstance(step, bool) or not isinstance(step, int | np.integer) or step < 0:
            raise ValueError(f"step: expected an integer >= 0 (the training step), received {step!r}")
        self._check_folder()  # a file may have appeared there since the manager was made
        meta = dict(metadata or {})
        meta["step"] = int(step)
        p = self.path(step)  # the manager's own numbered folders: a re-saved step replaces itself
        _recover_interrupted(p)
        if p.exists() and not (_is_checkpoint_folder(p) or (p.is_dir() and not any(p.iterdir()))):
            raise FileExistsError(
                f"step: {p} exists and is not a jaxkit checkpoint (no {MANIFEST}); the manager replaces only its "
                "own checkpoints, never other files or folders: move it, or use another directory"
            )
        p = _write_checkpoint(p, tree, meta)
        if jax.process_index() == 0:
            for old in self._own_steps()[
                : -self.keep
            ]:  # never a user's look-alike folder, nor counted as kept
                if old != step:
                    shutil.rmtree(self.path(old), ignore_errors=True)
        return p

    def _load(self, step: int, like: Any) -> tuple[Any, dict]:
        p = self.path(step)
        tree, meta = load_checkpoint(p, like)
        if meta.get("step") != step:
            raise CheckpointError(f"checkpoint {p} records step {meta.get('step')!r}, its name says {step}")
        return tree, meta

    def restore(self, like: TreeT, step: int | None = None) -> tuple[TreeT, dict] | None:
        """Load checkpoint ``step``, or the newest valid one (``step=None``); ``None`` if there is none at all."""
        if step is not None:
            return self._load(step, like)
        steps = self.steps()
        if not steps:
            legacy = self._matching(_LEGACY)
            if legacy:
                raise CheckpointError(_legacy_message(self.directory / f"ckpt_{legacy[-1]:09d}.jkc"))
            return None
        errors = []
        for s in reversed(steps):
            try:
                out = self._load(s, like)
            except CheckpointError as e:
                errors.append(str(e))
                continue
            if errors:
                damaged = ", ".join(str(self.path(d)) for d in steps[len(steps) - len(errors) :][::-1])
                warnings.warn(
                    f"skipping damaged checkpoint(s) {damaged} ({'; '.join(errors)}); resuming from the "
                    f"older checkpoint {self.path(s)}",
                    CheckpointWarning,
                    stacklevel=2,
                )
            return out
        raise CheckpointError(f"no valid checkpoint in {self.directory}: " + "; ".join(errors))
