"""Operator-learning datasets regenerated from their published definitions, cached to disk.

``make_dataset(name, *, n_train, n_test, resolution, seed, cache_dir=None, **options)`` returns a
:class:`PDEDataset` of float32 NumPy arrays, **channels first**: ``x_train (n_train, c_in, *grid)``,
``y_train (n_train, c_out, *grid)`` (same for test), the 1-D coordinates of each grid axis, and metadata.

Sampling: sample ``i`` of split ``s`` (train = 0, test = 1) is drawn from the key
``fold_in(fold_in(key(seed), s), i)``, so the same seed gives the same samples whatever ``n_train``,
``n_test``, the chunk size or the resolution. Every dataset is solved on a fixed fine grid and *subsampled* to
``resolution``: the same seed at resolution ``r`` and ``2r`` gives the same underlying samples (zero-shot
super-resolution evaluation). ``DATASETS`` lists the names with the allowed resolutions.

Names: ``burgers``, ``darcy``, ``navier_stokes_1e-3`` / ``_1e-4`` / ``_1e-5`` (FNO: the first 10 vorticity snapshots
``t = 1..10`` are the input channels, the remaining ones up to ``T`` = 50 / 30 / 20 the targets, as in FNO-2D),
``navier_stokes_re40`` / ``_re500`` / ``_re5000`` (Kolmogorov flow, our documented choice), and the LNO problems
``duffing``, ``beam``, ``diffusion``, ``reaction_diffusion``, ``brusselator``. Allowed resolutions: divisors of the
fine grid for periodic grids (Burgers 8192 → 4096, …, 256, …; Navier–Stokes 256 → 128, 64, …); ``(n-1)/k + 1`` for
node grids that include both ends (Darcy 421 → 211, 141, 106, 85, …; LNO spatial grids). ``DATASETS[name]`` says
which for each name, :func:`allowed_resolutions` lists them.

Generation runs in chunks (progress bar) into preallocated arrays; with ``cache_dir`` the arrays are written
chunk by chunk to ``.npy`` memory maps (bounded memory: 10,000 Navier–Stokes trajectories never sit in RAM) and
returned memory-mapped read-only. A cache entry is a folder named by a hash of every generator parameter; a
``meta.json`` with CRC32 checksums of the arrays (and a SHA-256 of itself) is written last, so an interrupted or
damaged entry is detected, reported with a warning and regenerated.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxkit._typing import ArrayInput

from .._validate import check_choice, check_finite, check_int, runtime_message

_CACHE_FORMAT = 2  # 2: meta.json carries a SHA-256 of its own body

MAX_BYTES = 8 * 2**30
"""Default memory cap of :func:`make_dataset` (8 GiB; override per call with ``max_bytes=``): the arrays it would
hold in memory (all four splits without ``cache_dir``; one chunk of fine-grid solves in every case) must fit, or
the call is refused up front with the size it would need."""


def _gib(nbytes: int | float) -> str:
    return f"{nbytes / 2**30:.3g} GiB"


def _check_bytes(what: str, nbytes: int | float, cap: int | float, hint: str) -> None:
    if nbytes > cap:
        raise ValueError(
            f"{what} would need {_gib(nbytes)}, above the cap max_bytes = {_gib(cap)}; {hint}, or pass a "
            "larger max_bytes"
        )


@dataclass(frozen=True)
class PDEDataset:
    """Arrays (float32, channels first), grid coordinates and metadata of one generated dataset.

    Checked when built: ``x_train``/``y_train`` (and ``x_test``/``y_test``) have the same number of samples
    along axis 0, and every array (the grid included) is finite; ``ValueError`` naming the field otherwise."""

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    grid: tuple[np.ndarray, ...]
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for split in ("train", "test"):
            x, y = getattr(self, f"x_{split}"), getattr(self, f"y_{split}")
            nx, ny = (np.shape(x)[0] if np.ndim(x) else None), (np.shape(y)[0] if np.ndim(y) else None)
            if nx is None or nx != ny:
                raise ValueError(
                    f"x_{split}, y_{split}: expected the same number of samples along axis 0, received shapes "
                    f"{np.shape(x)} and {np.shape(y)}"
                )
        for k in ("x_train", "y_train", "x_test", "y_test"):
            check_finite(k, getattr(self, k))
        for i, g in enumerate(self.grid):
            check_finite(f"grid[{i}]", g)

    def __repr__(self) -> str:
        return (
            f"PDEDataset({self.name!r}, x_train={self.x_train.shape}, y_train={self.y_train.shape}, "
            f"x_test={self.x_test.shape}, y_test={self.y_test.shape})"
        )


GeneratorOption: TypeAlias = float | int | str | np.number | None
"""A generator option of a dataset (``fine_resolution``, ``nu``, ``scheme``, ...): a number, a name or None."""
GeneratorParams: TypeAlias = dict[str, GeneratorOption]


@dataclass(frozen=True)
class DatasetSpec:
    """How to generate one named dataset.

    ``sampler(params, fine_resolution)`` returns a jit-compiled function ``keys (b, 2) -> (x (b, c_in, *grid),
    y (b, c_out, *grid))`` on the fine grid; :meth:`subsample` takes every ``stride``-th point along ``sub_axes``
    (one compilation serves every resolution); ``resolutions(params)`` lists the allowed resolutions;
    ``grid(params, resolution)`` the 1-D coordinates.
    """

    name: str
    description: str
    defaults: GeneratorParams
    resolutions: Callable[[GeneratorParams], list[int]]
    default_resolution: Callable[[GeneratorParams], int]
    sampler: Callable[[GeneratorParams, int], Callable[[jax.Array], tuple[jax.Array, jax.Array]]]
    grid: Callable[[GeneratorParams, int], tuple[np.ndarray, ...]]
    chunk_size: int = 32
    validate: Callable[[GeneratorParams], None] | None = None
    sub_axes: tuple[int, ...] = (-1,)
    nodal: bool = False  # node grid including both ends: stride (fine-1)/(r-1); else fine/r

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"name: expected a non-empty string, received {self.name!r}")
        check_int("chunk_size", self.chunk_size, minimum=1)
        for fn in ("resolutions", "default_resolution", "sampler", "grid"):
            if not callable(getattr(self, fn)):
                raise TypeError(f"{fn}: expected a callable, received {type(getattr(self, fn)).__name__}")

    def stride(self, params: GeneratorParams, resolution: int) -> int:
        n = params["fine_resolution"]
        return (n - 1) // (resolution - 1) if self.nodal else n // resolution

    def subsample(self, arr: np.ndarray, params: GeneratorParams, resolution: int) -> np.ndarray:
        idx = [slice(None)] * arr.ndim
        for ax in self.sub_axes:
            idx[ax] = slice(None, None, self.stride(params, resolution))
        return arr[tuple(idx)]


class DatasetTable(dict):
    """The PDE benchmark datasets :func:`make_dataset` can generate: ``{name: description}``.

    Keys are the names accepted by :func:`make_dataset`, :func:`allowed_resolutions` and :func:`dataset_spec`
    (Burgers, Darcy, Navier–Stokes and the Laplace-neural-operator problems); each value is a one-line
    description: the equation, its fine grid and the resolutions it subsamples to. The full recipe of a name is
    ``dataset_spec(name)``; :func:`register_dataset` adds an entry. Read it like a dict
    (``list(DATASETS)``, ``DATASETS["burgers"]``).
    """


DatasetTable.__module__ = "jaxkit.pde"  # help() names the public package


SPECS: dict[str, DatasetSpec] = {}
DATASETS: DatasetTable = DatasetTable()
"""The datasets :func:`make_dataset` can generate, a dict from name to a one-line description (equation, map,
fine grid and resolutions): ``burgers``, ``darcy``, ``navier_stokes_1e-3`` / ``1e-4`` / ``1e-5``,
``navier_stokes_re40`` / ``re500`` / ``re5000`` (Kolmogorov flow) and the Laplace-neural-operator problems
``duffing``, ``beam``, ``diffusion``, ``reaction_diffusion``, ``brusselator``; :func:`register_dataset` adds
entries and ``dataset_spec(name)`` gives a name's full recipe."""


def register_dataset(spec: DatasetSpec, *, replace: bool = False) -> DatasetSpec:
    """Add ``spec`` under ``spec.name`` to :data:`DATASETS`. A name already registered (a built-in one included)
    is replaced only with ``replace=True`` (``ValueError`` otherwise); datasets made from the new spec never reuse
    the old one's compiled sampler or disk cache (both are keyed by the spec and its sampler's code)."""
    if not isinstance(spec, DatasetSpec):
        raise TypeError(f"spec: expected a DatasetSpec, received {type(spec).__name__}")
    old = SPECS.get(spec.name)
    if old is not None and old is not spec and not replace:
        raise ValueError(
            f"spec: a dataset named {spec.name!r} is already registered; pass replace=True to replace it, or "
            "choose another name"
        )
    SPECS[spec.name] = spec
    DATASETS[spec.name] = spec.description
    return spec


def allowed_resolutions(name: str, **options: GeneratorOption) -> list[int]:
    """Resolutions allowed for ``name`` (with generator ``options`` such as ``fine_resolution``)."""
    spec = _spec(name)
    return spec.resolutions(_params(spec, options))


def dataset_spec(name: str) -> DatasetSpec:
    """The registered :class:`DatasetSpec` of ``name`` (one of :data:`DATASETS`)."""
    return _spec(name)


def refined_resolution(name: str, resolution: int, factor: int) -> int:
    """The resolution ``factor`` times finer than ``resolution`` on ``name``'s grid, nesting the coarse points:
    ``(r - 1)·factor + 1`` on node grids that include both ends, ``r·factor`` on periodic grids."""
    spec = _spec(name)
    check_int("resolution", resolution, minimum=2 if spec.nodal else 1)
    check_int("factor", factor, minimum=1)
    return (resolution - 1) * factor + 1 if spec.nodal else resolution * factor


def subsample(
    x: ArrayInput, name: str, resolution: int | None = None, *, stride: int | None = None
) -> np.ndarray:
    """Every ``stride``-th point of ``x`` along ``name``'s subsampled axes (``DatasetSpec.sub_axes``), e.g. a
    test set generated once at a fine resolution, evaluated at coarser ones (zero-shot super-resolution).

    Give either the target ``resolution`` (it must nest in the current one: ``(n-1)/(r-1)`` integral on node
    grids, ``n/r`` on periodic grids) or the ``stride`` (kept points: ``0, s, 2s, …``; on a node grid the last
    point is kept only when ``s`` divides ``n - 1``). Returns a contiguous NumPy copy. ``x`` must be finite (a
    NaN/inf entry is refused, naming ``x``).
    """
    spec = _spec(name)
    arr = np.asarray(x)
    check_finite("x", arr)
    axes = [ax % arr.ndim if -arr.ndim <= ax < arr.ndim else None for ax in spec.sub_axes]
    if None in axes or arr.ndim < 2:
        raise ValueError(
            f"x: expected an array with the spatial axes {spec.sub_axes} of {name!r}, received shape "
            f"{arr.shape}"
        )
    sizes = {arr.shape[ax] for ax in axes}
    if len(sizes) != 1:
        raise ValueError(
            f"x: expected equal sizes on the subsampled axes {spec.sub_axes}, received shape {arr.shape}"
        )
    n = sizes.pop()
    if (resolution is None) == (stride is None):
        raise ValueError(
            f"resolution/stride: give exactly one, received resolution={resolution!r}, stride={stride!r}"
        )
    if stride is None:
        check_int("resolution", resolution, minimum=2 if spec.nodal else 1)
        r = int(resolution)  # type: ignore[arg-type]
        num, den = (n - 1, r - 1) if spec.nodal else (n, r)
        if r > n or num % den:
            kind = "(n-1)/(r-1)" if spec.nodal else "n/r"
            raise ValueError(
                f"resolution: expected a resolution whose {kind} is an integer for the current "
                f"resolution n={n} of {name!r}, received {resolution}"
            )
        stride = num // den
    check_int("stride", stride, minimum=1)
    idx = [slice(None)] * arr.ndim
    for ax in axes:
        idx[ax] = slice(None, None, stride)
    return np.ascontiguousarray(arr[tuple(idx)])


def _spec(name: str) -> DatasetSpec:
    if not isinstance(name, str) or name not in SPECS:
        raise ValueError(f"name: expected one of {sorted(SPECS)}, received {name!r}")
    return SPECS[name]


def _params(spec: DatasetSpec, options: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(spec.defaults))
    if unknown:
        raise ValueError(f"{spec.name}: unknown option(s) {unknown}; valid options: {sorted(spec.defaults)}")
    params = dict(spec.defaults)
    params.update(options)
    if spec.validate is not None:
        spec.validate(params)
    return params


def _version() -> str:
    from .. import __version__

    return __version__


def _cache_key(meta: dict[str, Any]) -> str:
    keyed = {
        k: meta[k] for k in ("name", "params", "resolution", "seed", "n_train", "n_test", "jaxkit_version")
    }
    if (
        meta.get("sampler") is not None
    ):  # a registered (non-built-in) spec: its sampler's code is part of the key
        keyed["sampler"] = meta["sampler"]
    keyed["format"] = _CACHE_FORMAT
    blob = json.dumps(keyed, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def _crc32(path: Path) -> int:
    crc = 0
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 24)
            if not block:
                return crc
            crc = zlib.crc32(block, crc)


_ARRAYS = ("x_train", "y_train", "x_test", "y_test")


def _write_meta(path: Path, stored: dict[str, Any]) -> None:
    """``meta.json`` = ``{"body": <JSON text>, "sha256": <digest of that text>}``: any change is detected."""
    body = json.dumps(stored, default=str, sort_keys=True)
    digest = hashlib.sha256(body.encode()).hexdigest()
    path.write_text(json.dumps({"body": body, "sha256": digest}))


def _read_meta(path: Path) -> dict[str, Any]:
    """The stored metadata of ``meta.json``, verified against its SHA-256 (``ValueError`` if damaged)."""
    wrapper = json.loads(path.read_text())
    if not isinstance(wrapper, dict) or set(wrapper) != {"body", "sha256"}:
        raise ValueError("meta.json is not a checksummed metadata record")
    body, digest = wrapper["body"], wrapper["sha256"]
    if not isinstance(body, str) or hashlib.sha256(body.encode()).hexdigest() != digest:
        raise ValueError("meta.json does not match its SHA-256")
    stored = json.loads(body)
    if not isinstance(stored, dict):
        raise ValueError("meta.json body is not a dict")
    return stored


def _check_cache_entry(folder: Path) -> None:
    """An existing path where a cache entry goes must be one of this cache's folders (``meta.json`` and the array
    files only): a user's own file or folder there is refused, never read as a damaged entry and replaced."""
    if not folder.exists():
        return
    ours = {"meta.json", *(f"{k}.npy" for k in _ARRAYS)}
    extra = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else None
    if extra is None or set(extra) - ours:
        what = "a file" if extra is None else f"a folder holding {sorted(set(extra) - ours)[:3]}"
        raise ValueError(
            f"cache_dir: {folder} is {what}, not an entry of this dataset cache; it is not replaced: move it "
            "or choose another cache_dir"
        )


def _load_cache(folder: Path, meta: dict[str, Any]) -> PDEDataset | None:
    """Return the cached dataset, ``None`` if absent; warn and return ``None`` if damaged."""
    meta_path = folder / "meta.json"
    if not folder.exists():
        return None
    try:
        stored = _read_meta(meta_path)
        arrays = {}
        for k in _ARRAYS:
            path = folder / f"{k}.npy"
            if _crc32(path) != stored["checksums"][k]:
                raise ValueError(f"checksum mismatch in {path.name}")
            arr = np.load(path, mmap_mode="r")
            if list(arr.shape) != stored["shapes"][k] or arr.dtype != np.float32:
                raise ValueError(f"{path.name} has shape {arr.shape}, dtype {arr.dtype}")
            arrays[k] = arr
        grid = tuple(np.asarray(g, dtype=np.float64) for g in stored["grid"])
        for k in ("name", "params", "resolution", "seed"):
            if json.dumps(stored["metadata"][k], sort_keys=True, default=str) != json.dumps(
                meta[k], sort_keys=True, default=str
            ):
                raise ValueError(f"metadata field {k!r} differs")
        if stored["metadata"].get("sampler") != meta.get("sampler"):
            raise ValueError("the dataset's sampler differs from the one that wrote the cache")
    except (OSError, ValueError, KeyError, TypeError, EOFError) as e:  # damaged or partial entry
        warnings.warn(
            f"PDE dataset cache entry {folder} is damaged or incomplete ({type(e).__name__}: {e}); "
            "regenerating it",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    return PDEDataset(
        meta["name"],
        arrays["x_train"],
        arrays["y_train"],
        arrays["x_test"],
        arrays["y_test"],
        grid,
        stored["metadata"],
    )


_SAMPLERS: dict[str, tuple[DatasetSpec, Callable]] = {}


def _cached_sampler(spec: DatasetSpec, params: dict[str, Any]) -> Callable:
    """One jitted fine-grid sampler per (dataset spec, parameters): repeated calls reuse the compiled code; a
    spec registered anew under the same name gets its own."""
    key = json.dumps([spec.name, params], sort_keys=True, default=str)
    hit = _SAMPLERS.get(key)
    if hit is None or hit[0] is not spec:
        if len(_SAMPLERS) > 32:
            _SAMPLERS.clear()
        _SAMPLERS[key] = (spec, spec.sampler(params, params["fine_resolution"]))
    return _SAMPLERS[key][1]


def _code_fingerprint(fn: Any) -> str:
    """SHA-256 of a function's identity, bytecode (nested code objects included, by content) and the values its
    closure holds (arrays by their bytes): a disk cache written by another sampler is never taken for this one's."""

    def code_text(code: Any) -> str:
        consts = [code_text(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts]
        return f"{code.co_name}:{code.co_code.hex()}:{consts}:{code.co_names}"

    def value_text(v: Any, depth: int) -> str:
        if depth > 3:
            return type(v).__qualname__
        if callable(v) and hasattr(getattr(v, "__func__", v), "__code__"):
            return function_text(getattr(v, "__func__", v), depth + 1)
        if hasattr(v, "__array__") and not isinstance(v, str | bytes):
            a = np.asarray(v)
            return f"array{a.shape}{a.dtype}:{hashlib.sha256(a.tobytes()).hexdigest()}"
        return repr(v)

    def function_text(f: Any, depth: int) -> str:
        cells = []
        for c in f.__closure__ or ():
            try:
                cells.append(value_text(c.cell_contents, depth))
            except ValueError:  # an empty cell
                cells.append("<empty>")
        return f"{f.__module__}.{f.__qualname__}:{code_text(f.__code__)}:{cells}:{f.__defaults__!r}"

    target = getattr(fn, "__func__", fn)
    if hasattr(target, "__code__"):
        text = function_text(target, 0)
    else:
        text = f"{type(target).__module__}.{type(target).__qualname__}"
    return hashlib.sha256(text.encode()).hexdigest()


def _generate_split(
    fn: Callable,
    key: jax.Array,
    n: int,
    chunk: int,
    out_x: np.ndarray,
    out_y: np.ndarray,
    desc: str,
    progress: bool,
) -> None:
    from tqdm.auto import tqdm

    starts = range(0, n, chunk)
    bar = tqdm(starts, desc=desc, total=len(starts), leave=False, disable=not progress)
    fold = jax.jit(jax.vmap(jax.random.fold_in, in_axes=(None, 0)))
    for s in bar:
        stop = min(s + chunk, n)
        idx = jnp.arange(s, s + chunk, dtype=jnp.uint32)  # padded to a fixed chunk: one compilation
        keys = fold(key, idx)
        try:
            x, y = fn(keys)
        except (jax.errors.JaxRuntimeError, eqx.EquinoxRuntimeError) as e:  # a solver's own run-time check
            message = runtime_message(e)
            if message is None:
                raise
            raise ValueError(
                f"{desc}: the solver returned non-finite values or refused samples {s}..{stop - 1}: {message}"
            ) from None
        x, y = np.asarray(x[: stop - s], dtype=np.float32), np.asarray(y[: stop - s], dtype=np.float32)
        bad = ~(np.isfinite(x).reshape(len(x), -1).all(1) & np.isfinite(y).reshape(len(y), -1).all(1))
        if (
            bad.any()
        ):  # a solver that blew up (e.g. an explicit step too large for the options) is never stored
            raise ValueError(
                f"{desc}: the solver returned non-finite values for {int(bad.sum())} of {stop - s} samples "
                f"(samples {s}..{stop - 1}); the time step is too large for these options: raise the step count "
                "(n_steps / dt) or check the parameters"
            )
        out_x[s:stop] = x
        out_y[s:stop] = y


def make_dataset(
    name: str,
    *,
    n_train: int,
    n_test: int,
    resolution: int | None = None,
    seed: int = 0,
    cache_dir: str | os.PathLike[str] | None = None,
    chunk_size: int | None = None,
    progress: bool = True,
    max_bytes: int | None = None,
    **options: GeneratorOption,
) -> PDEDataset:
    """Generate (or load from ``cache_dir``) the dataset ``name``.

    Args:
        name: one of :data:`DATASETS`.
        n_train, n_test: number of samples (``n_test`` may be 0).
        resolution: grid size after subsampling; see :func:`allowed_resolutions` (``None``: the fine grid).
        seed: integer seed (same seed → identical arrays).
        cache_dir: folder for cached files, made if missing (``None``: keep in memory only); an existing file
            there raises ``ValueError`` before any solve.
        chunk_size: samples solved per jit call (memory bound); default per dataset.
        progress: show a progress bar.
        max_bytes: memory cap in bytes (default :data:`MAX_BYTES`, 8 GiB). Without ``cache_dir`` the four arrays
            must fit in it; in every case one chunk of fine-grid samples must. With ``cache_dir`` the arrays go to
            disk instead and must fit in the free space there. Checked before any solve (``ValueError`` giving
            the size needed).
        **options: generator parameters overriding the published defaults, e.g. ``fine_resolution`` for a cheaper
            fine solve (documented per dataset in :data:`DATASETS`).

    Returns:
        :class:`PDEDataset` (arrays memory-mapped read-only when ``cache_dir`` is given).
    """
    spec = _spec(name)
    check_int("n_train", n_train, minimum=1)
    check_int("n_test", n_test, minimum=0)
    check_int("seed", seed, minimum=0)
    if cache_dir is not None:
        if not isinstance(cache_dir, str | os.PathLike):
            raise TypeError(
                f"cache_dir: expected a folder path (str or os.PathLike) or None, received {type(cache_dir).__name__}"
            )
        existing = next((p for p in (Path(cache_dir), *Path(cache_dir).parents) if p.exists()), None)
        if existing is not None and not existing.is_dir():
            raise ValueError(
                f"cache_dir: expected a folder (or a path where one can be made), but {existing} is a file"
            )
    params = _params(spec, options)
    allowed = spec.resolutions(params)
    if resolution is None:
        resolution = spec.default_resolution(params)
    check_int("resolution", resolution, minimum=1)
    check_choice("resolution", resolution, allowed)
    if chunk_size is None:  # power of two not above the split size: few distinct compiled shapes
        chunk = min(spec.chunk_size, 1 << (max(n_train, n_test) - 1).bit_length())
    else:
        check_int("chunk_size", chunk_size, minimum=1)
        chunk = chunk_size
    cap = MAX_BYTES if max_bytes is None else max_bytes
    check_int("max_bytes", cap, minimum=1)
    # lower bound before anything is traced: one fine-grid float32 field per sample of the chunk
    fine_points = float(params["fine_resolution"]) ** len(spec.sub_axes)
    _check_bytes(
        f"{name}: a chunk of {chunk} fine-grid samples",
        4.0 * chunk * fine_points,
        cap,
        "lower chunk_size or fine_resolution",
    )
    out_points = float(n_train + n_test) * float(resolution) ** len(spec.sub_axes)
    if cache_dir is None:
        _check_bytes(
            f"{name}: {n_train} + {n_test} samples",
            4.0 * out_points,
            cap,
            "lower n_train/n_test/resolution or pass cache_dir",
        )
    meta: dict[str, Any] = {
        "name": name,
        "params": params,
        "resolution": resolution,
        "seed": seed,
        "n_train": n_train,
        "n_test": n_test,
        "jaxkit_version": _version(),
        "description": spec.description,
        # built-in specs change only with jaxkit's code (their caches stay valid across processes); a registered
        # one is keyed by its sampler's code too, so a changed sampler never reads the old cache
        "sampler": None if _BUILTIN.get(name) is spec else _code_fingerprint(spec.sampler),
    }
    folder = None
    if cache_dir is not None:
        folder = Path(cache_dir) / f"{name}-r{resolution}-s{seed}-{_cache_key(meta)}"
        _check_cache_entry(folder)
        cached = _load_cache(folder, meta)
        if cached is not None:
            return cached
        if folder.exists():
            shutil.rmtree(folder)  # a damaged entry of this cache (checked above: nothing else is in it)
    fine_fn = _cached_sampler(spec, params)

    def fn(keys):
        x, y = fine_fn(keys)
        return (
            spec.subsample(np.asarray(x), params, resolution),
            spec.subsample(np.asarray(y), params, resolution),
        )

    root = jax.random.key(seed)
    # Shapes from one abstract evaluation (no compute).
    xs, ys = jax.eval_shape(fine_fn, jax.ShapeDtypeStruct((chunk, *root.shape), root.dtype))
    xs, ys = (spec.subsample(np.empty(a.shape, np.bool_), params, resolution) for a in (xs, ys))
    shapes = {
        "x_train": (n_train, *xs.shape[1:]),
        "y_train": (n_train, *ys.shape[1:]),
        "x_test": (n_test, *xs.shape[1:]),
        "y_test": (n_test, *ys.shape[1:]),
    }
    total = 4.0 * sum(float(np.prod(s, dtype=np.float64)) for s in shapes.values())
    if cache_dir is None:
        _check_bytes(f"{name}: the dataset", total, cap, "lower n_train/n_test/resolution or pass cache_dir")
    else:
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(cache_dir).free
        if total > free:
            raise ValueError(
                f"{name}: the dataset would need {_gib(total)} on disk, {cache_dir} has {_gib(free)} free; lower "
                "n_train/n_test/resolution or choose another cache_dir"
            )
    tmp = None
    if folder is not None:
        tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        arrays = {
            k: np.lib.format.open_memmap(tmp / f"{k}.npy", mode="w+", dtype=np.float32, shape=s)
            for k, s in shapes.items()
        }
    else:
        arrays = {k: np.empty(s, np.float32) for k, s in shapes.items()}
    for split, (kx, ky, n) in enumerate((("x_train", "y_train", n_train), ("x_test", "y_test", n_test))):
        if n:
            _generate_split(
                fn,
                jax.random.fold_in(root, split),
                n,
                chunk,
                arrays[kx],
                arrays[ky],
                f"{name}:{kx[2:]}",
                progress,
            )
    grid = tuple(np.asarray(g, dtype=np.float64) for g in spec.grid(params, resolution))
    meta["grid_shape"] = [len(g) for g in grid]
    if folder is None:
        return PDEDataset(
            name, arrays["x_train"], arrays["y_train"], arrays["x_test"], arrays["y_test"], grid, meta
        )
    for arr in arrays.values():
        arr.flush()
    del arrays
    stored = {
        "metadata": meta,
        "shapes": {k: list(s) for k, s in shapes.items()},
        "checksums": {k: _crc32(tmp / f"{k}.npy") for k in _ARRAYS},
        "grid": [g.tolist() for g in grid],
    }
    _write_meta(tmp / "meta.json", stored)
    try:
        os.replace(tmp, folder)
    except OSError:  # another process (a multi-process run) stored the same entry first
        if not folder.exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)
    loaded = _load_cache(folder, meta)
    if loaded is None:  # pragma: no cover - just written
        raise RuntimeError(f"could not read back the cache entry just written at {folder}")
    return loaded


# --------------------------------------------------------------------------------------------------------------
# Registered datasets
# --------------------------------------------------------------------------------------------------------------


def _divisors(n: int) -> list[int]:
    """Divisors of ``n`` in increasing order (pairs ``d, n/d`` up to ``√n``)."""
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d * d != n:
                large.append(n // d)
        d += 1
    return small + large[::-1]


MAX_FINE_RESOLUTION = 2**24
"""Largest ``fine_resolution`` (points per axis) a dataset accepts: 2^24 (a 1-D float32 sample of 64 MiB, a 2-D
one of 1 PiB); listing the allowed resolutions of a grid stays instant below it."""


def _check_fine(name: str, minimum: int = 4, even: bool = False):
    def validate(p: dict[str, Any]) -> None:
        check_int("fine_resolution", p["fine_resolution"], minimum=minimum)
        if p["fine_resolution"] > MAX_FINE_RESOLUTION:
            raise ValueError(
                f"fine_resolution: expected at most {MAX_FINE_RESOLUTION} (2**24) points per axis, received "
                f"{p['fine_resolution']}"
            )
        if even and p["fine_resolution"] % 2:
            raise ValueError(f"fine_resolution: {name} needs an even grid, received {p['fine_resolution']}")

    return validate


# ---- Burgers ----


def _burgers_sampler(p: dict[str, Any], r: int):
    from . import _burgers as burgers
    from . import _grf as grf

    n = p["fine_resolution"]
    step = n // r

    def one(key):
        u0 = grf.grf_periodic(key, (n,), alpha=p["alpha"], tau=p["tau"], sigma=p["sigma"])
        u1 = burgers.solve(u0, nu=p["nu"], t_final=p["t_final"], n_steps=p["n_steps"])
        return u0[None, ::step], u1[None, ::step]

    return jax.jit(jax.vmap(one))


def _burgers_validate(p: dict[str, Any]) -> None:
    _check_fine("burgers", even=True)(p)
    for k in ("nu", "t_final", "alpha", "tau", "sigma"):
        if not (isinstance(p[k], int | float) and p[k] > 0):
            raise ValueError(f"{k}: expected a number > 0, received {p[k]!r}")


register_dataset(
    DatasetSpec(
        name="burgers",
        description="1-D viscous Burgers, u0 ~ N(0, 625(-Δ+25I)^-2), ν=0.1, map u0 -> u(t=1) (FNO, Li et al. 2021). "
        "Periodic grid x_j = j/r. Fine grid 8192 (option fine_resolution); resolutions: divisors of the "
        "fine grid (8192 -> 4096, 2048, 1024, 512, 256, ...). 1 input / 1 output channel.",
        defaults={
            "fine_resolution": 8192,
            "nu": 0.1,
            "t_final": 1.0,
            "n_steps": None,
            "alpha": 2.0,
            "tau": 5.0,
            "sigma": 25.0,
        },
        resolutions=lambda p: [d for d in _divisors(p["fine_resolution"]) if d >= 2],
        default_resolution=lambda p: p["fine_resolution"],
        sampler=_burgers_sampler,
        grid=lambda p, r: (np.arange(r) / r,),
        chunk_size=64,
        validate=_burgers_validate,
        sub_axes=(-1,),
    )
)


# ---- Darcy ----


def _darcy_sampler(p: dict[str, Any], r: int):
    from . import _darcy as darcy
    from . import _grf as grf

    n = p["fine_resolution"]
    step = (n - 1) // (r - 1)

    def one(key):
        g = grf.grf_neumann(key, (n, n), alpha=p["alpha"], tau=p["tau"], sigma=p["tau"] ** (p["alpha"] - 1))
        a = darcy.coefficient_from_grf(g, high=p["high"], low=p["low"])
        u = darcy.solve(a, f=p["f"])
        return a[None, ::step, ::step], u[None, ::step, ::step]

    return jax.jit(jax.vmap(one))


def _darcy_resolutions(p: dict[str, Any]) -> list[int]:
    n = p["fine_resolution"]
    return [(n - 1) // k + 1 for k in _divisors(n - 1)]


def _darcy_validate(p: dict[str, Any]) -> None:
    _check_fine("darcy", minimum=3)(p)
    if not (p["low"] > 0 and p["high"] > 0):
        raise ValueError(
            f"low/high: expected positive coefficient values, received {p['low']!r}, {p['high']!r}"
        )


register_dataset(
    DatasetSpec(
        name="darcy",
        description="2-D Darcy flow -∇·(a∇u)=1 on the unit square, u=0 on the boundary, a = 12/3 thresholded "
        "GRF(α=2, τ=3), map a -> u (FNO). Node grid linspace(0, 1, r). Fine grid 421 (option "
        "fine_resolution, e.g. 141 for quick runs); resolutions (fine-1)/k+1: 421 -> 211, 141, 106, 85, "
        "71, 61, 43, 36, 31, 29, 22, 21, ... 1 input / 1 output channel.",
        defaults={"fine_resolution": 421, "alpha": 2.0, "tau": 3.0, "high": 12.0, "low": 3.0, "f": 1.0},
        resolutions=_darcy_resolutions,
        default_resolution=lambda p: p["fine_resolution"],
        sampler=_darcy_sampler,
        grid=lambda p, r: (np.linspace(0.0, 1.0, r), np.linspace(0.0, 1.0, r)),
        chunk_size=16,
        validate=_darcy_validate,
        sub_axes=(-2, -1),
        nodal=True,
    )
)


# ---- Navier–Stokes (FNO) ----


def _ns_sampler(p: dict[str, Any], r: int):
    from . import _grf as grf
    from . import _navier_stokes as navier_stokes

    n = p["fine_resolution"]
    step = n // r
    t_final = p["t_final"]
    sigma = p["sigma"]

    length = p.get("length", 1.0)
    forcing = (
        navier_stokes.kolmogorov_forcing(n)
        if p.get("forcing", "fno") == "kolmogorov"
        else navier_stokes.fno_forcing(n)
    )

    def one(key):
        w0 = grf.grf_periodic(key, (n, n), alpha=p["alpha"], tau=p["tau"], sigma=sigma, length=length)
        w = navier_stokes.solve(
            w0,
            nu=p["nu"],
            t_final=float(t_final),
            dt=p["dt"],
            forcing=forcing,
            record_steps=int(t_final),
            length=length,
            scheme=p.get("scheme", "cn"),
        )
        w = w[:, ::step, ::step]
        return w[: p["n_in"]], w[p["n_in"] :]

    return jax.jit(jax.vmap(one))


def _ns_validate(p: dict[str, Any]) -> None:
    _check_fine("navier_stokes", even=True)(p)
    check_int("t_final", p["t_final"], minimum=2)
    check_int("n_in", p["n_in"], minimum=1)
    check_choice("scheme", p.get("scheme", "cn"), ("cn", "ifrk4"))
    if p["n_in"] >= p["t_final"]:
        raise ValueError(
            f"n_in: expected fewer input steps than t_final={p['t_final']}, received {p['n_in']}"
        )
    for k in ("nu", "dt", "alpha", "tau", "sigma"):
        if not (isinstance(p[k], int | float) and p[k] > 0):
            raise ValueError(f"{k}: expected a number > 0, received {p[k]!r}")


def _register_ns(nu_text: str, nu: float, t_final: int) -> None:
    import math

    register_dataset(
        DatasetSpec(
            name=f"navier_stokes_{nu_text}",
            description=(
                f"2-D Navier–Stokes vorticity on the unit torus, ν={nu_text}, forcing 0.1(sin 2π(x+y)+cos 2π(x+y)), "
                f"w0 ~ GRF(α=2.5, τ=7) (FNO). Snapshots at t = 1..{t_final}: input = first n_in=10 steps as "
                f"channels (t=1..10), target = the next {t_final - 10} (t=11..{t_final}), as in FNO-2D. Periodic "
                "grid x_j = j/r. Fine grid 256 with dt=1e-4 (options fine_resolution, dt; e.g. 64 and 1e-3 for "
                "quick runs); resolutions: divisors of the fine grid (default 64)."
            ),
            defaults={
                "fine_resolution": 256,
                "dt": 1e-4,
                "nu": nu,
                "t_final": t_final,
                "n_in": 10,
                "alpha": 2.5,
                "tau": 7.0,
                "sigma": math.sqrt(2.0) * 7.0**1.5,
                "scheme": "cn",
            },
            resolutions=lambda p: [d for d in _divisors(p["fine_resolution"]) if d >= 4],
            default_resolution=lambda p: min(64, p["fine_resolution"]),
            sampler=_ns_sampler,
            grid=lambda p, r: (np.arange(r) / r, np.arange(r) / r),
            chunk_size=8,
            validate=_ns_validate,
            sub_axes=(-2, -1),
        )
    )


def _register_kolmogorov(re: int) -> None:
    import math

    register_dataset(
        DatasetSpec(
            name=f"navier_stokes_re{re}",
            description=(
                f"2-D Kolmogorov flow at Re={re} (ν = 1/Re) on the [0, 2π)² torus, forcing -4 cos(4y) (as in PINO/MNO; "
                "the RNO paper's exact sets are unpublished, so window and sizes are our documented choice): "
                "w0 ~ GRF(α=2.5, τ=7), snapshots at t = 1..20, input = t=1..10 as channels, target = t=11..20. "
                "Integrating-factor RK4 (the FNO CN/Euler scheme blows up here). Periodic grid x_j = 2πj/r. Fine "
                "grid 256, dt = 1e-3 (options fine_resolution, dt; 64² is under-resolved at Re=5000); resolutions: "
                "divisors of the fine grid (default 64)."
            ),
            defaults={
                "fine_resolution": 256,
                "dt": 1e-3,
                "nu": 1.0 / re,
                "t_final": 20,
                "n_in": 10,
                "alpha": 2.5,
                "tau": 7.0,
                "sigma": math.sqrt(2.0) * 7.0**1.5,
                "length": 2 * math.pi,
                "forcing": "kolmogorov",
                "scheme": "ifrk4",
            },
            resolutions=lambda p: [d for d in _divisors(p["fine_resolution"]) if d >= 4],
            default_resolution=lambda p: min(64, p["fine_resolution"]),
            sampler=_ns_sampler,
            grid=lambda p, r: (2 * np.pi * np.arange(r) / r, 2 * np.pi * np.arange(r) / r),
            chunk_size=8,
            validate=_ns_validate,
            sub_axes=(-2, -1),
        )
    )


_register_ns("1e-3", 1e-3, 50)
_register_ns("1e-4", 1e-4, 30)
_register_ns("1e-5", 1e-5, 20)
for _re in (40, 500, 5000):
    _register_kolmogorov(_re)


# ---- Laplace-neural-operator problems (Cao, Goswami & Karniadakis 2023); definitions in jaxkit.pde._lno ----


def _amplitude(key, p):
    return jax.random.uniform(key, (), jnp.float32, p["amp_min"], p["amp_max"])


def _node_resolutions(p: dict[str, Any], key: str = "fine_resolution") -> list[int]:
    n = p[key]
    return [(n - 1) // k + 1 for k in _divisors(n - 1)]


def _check_amp(p: dict[str, Any]) -> None:
    if not (p["amp_max"] >= p["amp_min"]):
        raise ValueError(
            f"amp_min/amp_max: expected amp_min <= amp_max, received {p['amp_min']}, {p['amp_max']}"
        )


def _duffing_sampler(p: dict[str, Any], r: int):
    from . import _lno as lno

    n = p["fine_resolution"]
    step = n // r
    ts = jnp.arange(n, dtype=jnp.float32) * p["dt"]

    def one(key):
        amp = _amplitude(key, p)
        forcing = lambda t: amp * jnp.sin(p["omega"] * t)
        x = lno.duffing(forcing, ts, c=p["c"], m=p["m"], k=p["k"], k3=p["k3"])
        return forcing(ts)[None, ::step], x[None, ::step]

    return jax.jit(jax.vmap(one))


def _duffing_validate(p: dict[str, Any]) -> None:
    _check_fine("duffing", minimum=2)(p)
    _check_amp(p)
    if not p["c"] >= 0:
        raise ValueError(f"c: expected a damping >= 0, received {p['c']!r}")


register_dataset(
    DatasetSpec(
        name="duffing",
        description="Duffing oscillator x'' + c x' + x + x^3 = A sin(5t), zero initial state, c=0.5 (option c=0), "
        "A ~ U[0.05, 10]; map f(t) -> x(t) on t_j = 0.01 j, 2048 points (LNO, Cao et al. 2023). "
        "Resolutions: divisors of 2048. 1 input / 1 output channel; grid = (t,).",
        defaults={
            "fine_resolution": 2048,
            "dt": 0.01,
            "c": 0.5,
            "m": 1.0,
            "k": 1.0,
            "k3": 1.0,
            "omega": 5.0,
            "amp_min": 0.05,
            "amp_max": 10.0,
        },
        resolutions=lambda p: [d for d in _divisors(p["fine_resolution"]) if d >= 2],
        default_resolution=lambda p: p["fine_resolution"],
        sampler=_duffing_sampler,
        grid=lambda p, r: (np.arange(p["fine_resolution"])[:: p["fine_resolution"] // r] * p["dt"],),
        chunk_size=64,
        validate=_duffing_validate,
        sub_axes=(-1,),
    )
)


def _space_time_sampler(kind: str):
    def sampler(p: dict[str, Any], r: int):
        from . import _lno as lno

        n = p["fine_resolution"]
        step = (n - 1) // (r - 1)
        x = jnp.linspace(0.0, p["length"], n, dtype=jnp.float32)
        ts = jnp.linspace(0.0, p["t_final"], p["n_t"], dtype=jnp.float32)

        def one(key):
            amp = _amplitude(key, p)
            if kind == "reaction_diffusion":
                ref = p["refine"]
                xf = jnp.linspace(0.0, p["length"], (n - 1) * ref + 1, dtype=jnp.float32)
                f, u, f_fn = lno.reaction_diffusion_manufactured(
                    amp, xf, ts, d=p["d"], k=p["k"], decay=p["decay"]
                )
                if p["solver"] == "mol":  # method of lines from u(x, 0); unstable for large A (see lno docs)
                    u = lno.reaction_diffusion(f_fn, xf, ts, d=p["d"], k=p["k"], u0=u[:, 0])
                f, u = f[::ref], u[::ref]
            else:
                forcing = lambda xx, t: amp * jnp.sin(jnp.pi * xx / p["length"]) * jnp.sin(p["omega"] * t)
                f = forcing(x[:, None], ts[None, :])
                if kind == "beam":
                    u = lno.beam(forcing, x, ts, ei=p["ei"], rho_a=p["rho_a"])
                else:
                    u = lno.diffusion(forcing, x, ts, d=p["d"])
            return f[None, ::step], u[None, ::step]

        return jax.jit(jax.vmap(one))

    return sampler


def _space_time_validate(p: dict[str, Any]) -> None:
    _check_fine("lno", minimum=5)(p)
    _check_amp(p)
    check_int("n_t", p["n_t"], minimum=2)
    if "solver" in p:
        check_choice("solver", p["solver"], ("exact", "mol"))


_ST_GRID = lambda p, r: (
    np.linspace(0.0, p["length"], p["fine_resolution"])[:: (p["fine_resolution"] - 1) // (r - 1)],
    np.linspace(0.0, p["t_final"], p["n_t"]),
)

register_dataset(
    DatasetSpec(
        name="beam",
        description="Euler-Bernoulli beam u_tt + u_xxxx = A sin(πx) sin(5t), simply supported on [0, 1], zero "
        "initial state, A ~ U[0.05, 10]; map f(x,t) -> u(x,t), 41 nodes × 41 times on [0, 2] (LNO "
        "problem; details our documented choice, see jaxkit.pde._lno). Resolutions (spatial nodes): "
        "(41-1)/k+1 = 41, 21, 11, 9, 6, 5, 3, 2. Channels 1/1; grid = (x, t).",
        defaults={
            "fine_resolution": 41,
            "n_t": 41,
            "length": 1.0,
            "t_final": 2.0,
            "ei": 1.0,
            "rho_a": 1.0,
            "omega": 5.0,
            "amp_min": 0.05,
            "amp_max": 10.0,
        },
        resolutions=_node_resolutions,
        default_resolution=lambda p: p["fine_resolution"],
        sampler=_space_time_sampler("beam"),
        grid=_ST_GRID,
        chunk_size=64,
        validate=_space_time_validate,
        sub_axes=(-2,),
        nodal=True,
    )
)

register_dataset(
    DatasetSpec(
        name="diffusion",
        description="Diffusion u_t = u_xx + A sin(πx) sin(5t) on [0, 1], u=0 at both ends, zero initial state, "
        "A ~ U[0.05, 10]; map f(x,t) -> u(x,t), 41 nodes × 21 times on [0, 1] (LNO problem; details our "
        "documented choice). Resolutions (spatial nodes): 41, 21, 11, 9, 6, 5, 3, 2. Channels 1/1; "
        "grid = (x, t).",
        defaults={
            "fine_resolution": 41,
            "n_t": 21,
            "length": 1.0,
            "t_final": 1.0,
            "d": 1.0,
            "omega": 5.0,
            "amp_min": 0.05,
            "amp_max": 10.0,
        },
        resolutions=_node_resolutions,
        default_resolution=lambda p: p["fine_resolution"],
        sampler=_space_time_sampler("diffusion"),
        grid=_ST_GRID,
        chunk_size=64,
        validate=_space_time_validate,
        sub_axes=(-2,),
        nodal=True,
    )
)

register_dataset(
    DatasetSpec(
        name="reaction_diffusion",
        description="LNO reaction-diffusion u_t = D u_xx + k u^2 - f(x,t), D = 1-0.95/π², k = 1, x in [0, 2] "
        "(40 nodes), t in [0, 1] (20 times), u = 0 at the ends; the published family "
        "u = A sin(πx) e^{-0.05t} with A ~ U[0.05, 10], stored in closed form as published (option "
        "solver='mol': method of lines from u(x,0) on a 4x refined grid). Map f -> u. Resolutions (spatial nodes): 40, 14, 4, 2. Channels 1/1; "
        "grid = (x, t).",
        defaults={
            "fine_resolution": 40,
            "n_t": 20,
            "length": 2.0,
            "t_final": 1.0,
            "d": 1.0 - 0.95 / np.pi**2,
            "k": 1.0,
            "decay": 0.05,
            "refine": 4,
            "solver": "exact",
            "amp_min": 0.05,
            "amp_max": 10.0,
        },
        resolutions=_node_resolutions,
        default_resolution=lambda p: p["fine_resolution"],
        sampler=_space_time_sampler("reaction_diffusion"),
        grid=_ST_GRID,
        chunk_size=64,
        validate=_space_time_validate,
        sub_axes=(-2,),
        nodal=True,
    )
)


def _brusselator_sampler(p: dict[str, Any], r: int):
    from . import _lno as lno

    n = p["fine_resolution"]
    step = (n - 1) // (r - 1)
    ts = jnp.linspace(0.0, p["t_final"], p["n_t"], dtype=jnp.float32)

    def one(key):
        ka, kw = jax.random.split(key)
        amp = _amplitude(ka, p)
        omega = jax.random.uniform(kw, (), jnp.float32, p["omega_min"], p["omega_max"])
        forcing = lambda t: amp * jnp.sin(omega * t)
        uv = lno.brusselator(
            forcing, n, ts, a=p["a"], b=p["b"], du=p["du"], dv=p["dv"], perturbation=p["perturbation"]
        )
        u = uv[0][:, ::step, ::step]
        f = jnp.broadcast_to(forcing(ts)[:, None, None], u.shape)
        return f[None], u[None]

    return jax.jit(jax.vmap(one))


def _brusselator_validate(p: dict[str, Any]) -> None:
    _check_fine("brusselator", minimum=3)(p)
    _check_amp(p)
    check_int("n_t", p["n_t"], minimum=2)


register_dataset(
    DatasetSpec(
        name="brusselator",
        description="Forced Brusselator (a=1, b=3, D_u=D_v=0.01, zero-flux) on the unit square, forcing "
        "f(t) = A sin(ωt) added to the u equation, A ~ U[0, 1], ω ~ U[0.5, 2]; map f(t) (tiled over "
        "space) -> u(t, x, y), 39 times on [0, 19] × 28×28 nodes (LNO grid; dynamics our documented "
        "choice). Resolutions (spatial nodes): 28, 10, 4, 2. Channels 1/1; grid = (t, x, y).",
        defaults={
            "fine_resolution": 28,
            "n_t": 39,
            "t_final": 19.0,
            "a": 1.0,
            "b": 3.0,
            "du": 0.01,
            "dv": 0.01,
            "perturbation": 0.1,
            "amp_min": 0.0,
            "amp_max": 1.0,
            "omega_min": 0.5,
            "omega_max": 2.0,
        },
        resolutions=_node_resolutions,
        default_resolution=lambda p: p["fine_resolution"],
        sampler=_brusselator_sampler,
        grid=lambda p, r: (
            np.linspace(0.0, p["t_final"], p["n_t"]),
            np.linspace(0.0, 1.0, p["fine_resolution"])[:: (p["fine_resolution"] - 1) // (r - 1)],
            np.linspace(0.0, 1.0, p["fine_resolution"])[:: (p["fine_resolution"] - 1) // (r - 1)],
        ),
        chunk_size=16,
        validate=_brusselator_validate,
        sub_axes=(-2, -1),
        nodal=True,
    )
)


__all__ = [
    "DATASETS",
    "MAX_BYTES",
    "MAX_FINE_RESOLUTION",
    "SPECS",
    "DatasetSpec",
    "PDEDataset",
    "allowed_resolutions",
    "dataset_spec",
    "make_dataset",
    "refined_resolution",
    "register_dataset",
    "subsample",
]

_BUILTIN: dict[str, DatasetSpec] = dict(SPECS)  # the specs jaxkit registers itself (at import)
