"""Atomic, checksummed checkpoints of training state.

A checkpoint holds any pytree of arrays (model parameters, optimizer state, PRNG key, ...) plus a JSON-able
metadata dict (step, data-iterator position, metric history). File layout::

    b"JAXKITCK1\\n" | 8-byte little-endian header length | header JSON | payload (.npz bytes)

The header records the payload length and its SHA-256, so a truncated or corrupted file is detected and reported
with its path (:class:`CheckpointError`). Writes go to a temporary file in the same directory, are fsync'ed, then
renamed over the destination (atomic on POSIX), and the directory is fsync'ed: a process killed at any moment
leaves either the old or the new checkpoint, never a partial one. Older checkpoints are pruned only after the new
one is durable, so no earlier checkpoint is lost to a failed write.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import jax
import numpy as np

MAGIC = b"JAXKITCK1\n"
_NAME = re.compile(r"^ckpt_(\d{9})\.jkc$")


class CheckpointError(RuntimeError):
    """A checkpoint file is missing, truncated, corrupted or does not match the expected structure."""


def _key_to_data(leaf: Any) -> Any:
    if isinstance(leaf, jax.Array) and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        return {"__prng_key__": np.asarray(jax.random.key_data(leaf)), "impl": str(jax.random.key_impl(leaf))}
    return leaf


def _flatten(tree: Any) -> tuple[list[np.ndarray], list[dict | None]]:
    leaves = jax.tree_util.tree_leaves(tree)
    arrays, extras = [], []
    for leaf in leaves:
        leaf = _key_to_data(leaf)
        if isinstance(leaf, dict) and "__prng_key__" in leaf:
            arrays.append(leaf["__prng_key__"])
            extras.append({"prng_impl": leaf["impl"]})
        else:
            arrays.append(np.asarray(jax.device_get(leaf)))
            extras.append(None)
    return arrays, extras


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


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync, rename, fsync the folder."""
    path = Path(path)
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


def save_checkpoint(path: str | os.PathLike, tree: Any, metadata: dict | None = None) -> Path:
    """Atomically write ``tree`` (a pytree of arrays) and ``metadata`` (JSON-able) to ``path``."""
    arrays, extras = _flatten(tree)
    buf = io.BytesIO()
    np.savez(buf, **{f"a{i}": a for i, a in enumerate(arrays)})
    payload = buf.getvalue()
    header = {
        "format": 1,
        "n_leaves": len(arrays),
        "shapes": [list(a.shape) for a in arrays],
        "dtypes": [str(a.dtype) for a in arrays],
        "extras": extras,
        "payload_bytes": len(payload),
        "sha256": hashlib.sha256(payload).hexdigest(),
        "metadata": metadata or {},
    }
    hbytes = json.dumps(header).encode()
    data = MAGIC + len(hbytes).to_bytes(8, "little") + hbytes + payload
    atomic_write_bytes(path, data)
    return Path(path)


def _read(path: Path) -> tuple[dict, bytes]:
    if not path.exists():
        raise CheckpointError(f"checkpoint file {path} does not exist")
    raw = path.read_bytes()
    if not raw.startswith(MAGIC):
        raise CheckpointError(f"checkpoint file {path} is not a jaxkit checkpoint (bad magic bytes) or is corrupted")
    off = len(MAGIC)
    if len(raw) < off + 8:
        raise CheckpointError(f"checkpoint file {path} is truncated ({len(raw)} bytes, header length missing)")
    hlen = int.from_bytes(raw[off : off + 8], "little")
    off += 8
    if len(raw) < off + hlen:
        raise CheckpointError(f"checkpoint file {path} is truncated (header needs {hlen} bytes)")
    try:
        header = json.loads(raw[off : off + hlen])
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"checkpoint file {path} has a corrupted header: {e}") from e
    payload = raw[off + hlen :]
    if len(payload) != header.get("payload_bytes"):
        raise CheckpointError(
            f"checkpoint file {path} is truncated or padded: payload has {len(payload)} bytes, "
            f"header says {header.get('payload_bytes')}"
        )
    if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        raise CheckpointError(f"checkpoint file {path} is corrupted: SHA-256 of the payload does not match")
    return header, payload


def read_metadata(path: str | os.PathLike) -> dict:
    """The metadata dict of a checkpoint (validates the whole file first)."""
    header, _ = _read(Path(path))
    return header["metadata"]


def load_checkpoint(path: str | os.PathLike, like: Any) -> tuple[Any, dict]:
    """Load a checkpoint into the structure of ``like`` (a pytree with the same leaves); returns (tree, metadata).

    Raises :class:`CheckpointError` naming the file if it is truncated, corrupted, or its leaves do not match
    ``like`` in number, shape or dtype.
    """
    path = Path(path)
    header, payload = _read(path)
    leaves, treedef = jax.tree_util.tree_flatten(like)
    if header["n_leaves"] != len(leaves):
        raise CheckpointError(
            f"checkpoint file {path} holds {header['n_leaves']} arrays, the expected structure has {len(leaves)}"
        )
    with np.load(io.BytesIO(payload)) as z:
        arrays = [z[f"a{i}"] for i in range(len(leaves))]
    out = []
    for i, (arr, ref, extra) in enumerate(zip(arrays, leaves, header["extras"])):
        if extra is not None and "prng_impl" in extra:
            out.append(jax.random.wrap_key_data(arr, impl=extra["prng_impl"]))
            continue
        ref_shape = tuple(np.shape(ref))
        if tuple(arr.shape) != ref_shape:
            raise CheckpointError(
                f"checkpoint file {path}: leaf {i} has shape {tuple(arr.shape)}, expected {ref_shape}"
            )
        ref_dtype = getattr(ref, "dtype", None)
        if ref_dtype is not None and np.dtype(ref_dtype) != arr.dtype:
            raise CheckpointError(f"checkpoint file {path}: leaf {i} has dtype {arr.dtype}, expected {ref_dtype}")
        sharding = getattr(ref, "sharding", None)
        if isinstance(ref, jax.Array) and sharding is not None:
            out.append(jax.device_put(arr, sharding))
        elif isinstance(ref, jax.Array):
            out.append(jax.numpy.asarray(arr))
        else:
            out.append(arr)
    return jax.tree_util.tree_unflatten(treedef, out), header["metadata"]


class CheckpointManager:
    """Numbered checkpoints ``ckpt_<step>.jkc`` in one folder, keeping the newest ``keep``.

    ``save`` writes the new file atomically before pruning older ones. ``latest`` returns the path of the newest
    file; ``restore`` loads it and raises :class:`CheckpointError` (naming the file) if it is damaged; the
    older checkpoints stay on disk so the user can fall back (``restore(step=...)``).
    """

    def __init__(self, directory: str | os.PathLike, keep: int = 2):
        if keep < 1:
            raise ValueError(f"keep: expected an integer >= 1, received {keep}")
        self.directory = Path(directory)
        self.keep = keep

    def path(self, step: int) -> Path:
        return self.directory / f"ckpt_{step:09d}.jkc"

    def steps(self) -> list[int]:
        if not self.directory.exists():
            return []
        found = []
        for p in self.directory.iterdir():
            m = _NAME.match(p.name)
            if m:
                found.append(int(m.group(1)))
        return sorted(found)

    def latest(self) -> Path | None:
        s = self.steps()
        return self.path(s[-1]) if s else None

    def save(self, step: int, tree: Any, metadata: dict | None = None) -> Path:
        meta = dict(metadata or {})
        meta["step"] = int(step)
        p = save_checkpoint(self.path(step), tree, meta)
        for old in self.steps()[: -self.keep]:
            if old != step:
                self.path(old).unlink(missing_ok=True)
        return p

    def restore(self, like: Any, step: int | None = None) -> tuple[Any, dict] | None:
        """Load checkpoint ``step`` (default: newest). ``None`` if the folder holds no checkpoint."""
        if step is None:
            p = self.latest()
            if p is None:
                return None
        else:
            p = self.path(step)
        return load_checkpoint(p, like)
