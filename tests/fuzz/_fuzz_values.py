"""Argument values built from signatures, and the edge table applied one argument at a time.

A *candidate* is a small valid-looking value for one parameter, chosen from its annotation (jaxtyping shapes and
dtypes, ``Literal``, ``int``/``float``/``bool``, keys, config classes) and, for the untyped array slots
(``ArrayInput``), from a short list of shapes ordered by what the parameter's name suggests (``R`` a rotation,
``cov`` a covariance, ``prices`` positive prices, ``t`` a diffusion time, ...). The harness searches these lists for
a valid base call (see ``_fuzz_harness.find_base``).

An *edge* perturbs one argument of a valid base call: 0, negative, NaN/±inf, empty, a length mismatch between
arguments that pair up, degenerate inputs (zeros, a singular matrix, collinear or duplicate rows), domain boundaries
named by the parameter (t = 0 and 1, ρ = ±1, σ → 0, probabilities 0 and 1) and sizes beyond memory.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import AbstractArray

N = 4  # the size every named dimension gets
T = 40  # the length of a time series
HUGE = 2**40  # a size no machine holds: it must be refused up front, naming the memory


@dataclass(frozen=True)
class Candidate:
    label: str
    make: Callable[[], Any]


@dataclass(frozen=True)
class Edge:
    param: str
    kind: str
    make: Callable[[], Any]  # the perturbed value
    pair: str | None = None  # for a length mismatch: the parameter it pairs with


# ----------------------------------------------------------------------------------------- building blocks


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _normal(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return _rng(seed).standard_normal(shape).astype(np.float32)


def _spd(n: int = N, seed: int = 1) -> np.ndarray:
    a = _rng(seed).standard_normal((n, n))
    return (a @ a.T / n + np.eye(n)).astype(np.float32) * 0.01


def _rotations(shape: tuple[int, ...] = (), seed: int = 2) -> np.ndarray:
    q = _rng(seed).standard_normal((*shape, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = np.moveaxis(q, -1, 0)
    R = np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )
    return R.astype(np.float32)


def _prices(shape: tuple[int, ...] = (T, N), seed: int = 3) -> np.ndarray:
    return (100 * np.exp(np.cumsum(0.01 * _rng(seed).standard_normal(shape), axis=0))).astype(np.float32)


def _returns(shape: tuple[int, ...] = (T, N), seed: int = 4) -> np.ndarray:
    return (0.01 * _rng(seed).standard_normal(shape) + 0.001).astype(np.float32)


def _simplex(n: int = N) -> np.ndarray:
    w = np.arange(1, n + 1, dtype=np.float32)
    return w / w.sum()


def _c(label: str, value_fn: Callable[[], Any]) -> Candidate:
    return Candidate(label, value_fn)


def _const(label: str, value: Any) -> Candidate:
    return Candidate(label, lambda: value)


# ----------------------------------------------------------------------------------------- annotations


def _members(hint: Any) -> list[Any]:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return [m for m in typing.get_args(hint) if m is not type(None)]
    return [hint]


def _is_array_type(h: Any) -> bool:
    return isinstance(h, type) and issubclass(h, AbstractArray)


def _is_key(h: Any) -> bool:
    return _is_array_type(h) and "key" in h.__name__.lower()


def _array_input(members: list[Any]) -> bool:
    """An untyped array slot (``ArrayInput``, ``ArrayLike``, ``np.ndarray``, ``jax.Array``)."""
    for m in members:
        if m in (np.ndarray, jax.Array) or (_is_array_type(m) and not _is_key(m)):
            return True
        name = getattr(m, "__name__", "") or str(m)
        if "ArrayLike" in str(m) or name in ("ndarray", "Array"):
            return True
    return False


def _shape_from_dims(dim_str: str, sizes: dict[str, int]) -> tuple[int, ...] | None:
    shape: list[int] = []
    for d in dim_str.split():
        d = d.strip()
        if d in ("...", "") or d.startswith("*"):
            continue
        d = d.lstrip("#_?")
        if d.isdigit():
            shape.append(int(d))
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", d):
            shape.append(sizes.setdefault(d, N if d not in ("T", "seq", "time", "t") else 8))
        else:
            return None
    return tuple(shape)


def _jaxtyped_candidates(name: str, hints: list[Any], sizes: dict[str, int]) -> list[Candidate]:
    out = []
    for h in hints:
        shape = _shape_from_dims(h.dim_str, sizes)
        if shape is None:
            continue
        dtypes = h.dtypes
        if any("float" in d for d in dtypes):
            if shape[-2:] == (3, 3) and name[:1] in "R":
                out.append(_c(f"rotations{shape}", lambda s=shape: _rotations(s[:-2])))
            out.append(_c(f"normal{shape}", lambda s=shape: jnp.asarray(_normal(s))))
        elif any(d.startswith("int") or d.startswith("uint") for d in dtypes):
            out.append(_c(f"ints{shape}", lambda s=shape: jnp.asarray(_rng(5).integers(0, 2, s), jnp.int32)))
        elif "bool" in dtypes:
            out.append(_c(f"bools{shape}", lambda s=shape: jnp.ones(s, bool)))
        elif any("complex" in d for d in dtypes):
            out.append(_c(f"complex{shape}", lambda s=shape: jnp.asarray(_normal(s) + 1j * _normal(s, 9))))
    return out


# name hint -> candidate builders for untyped array slots
def _untyped_array_candidates(name: str) -> list[Candidate]:
    low = name.lower()
    c: list[Candidate] = []
    if re.fullmatch(r"r(\d|_t|_T|0|t|s)?|rotations?|r_t|r0", low) or low in ("r1", "r2"):
        c += [_c("rotation", lambda: _rotations()), _c("rotations(5)", lambda: _rotations((5,)))]
    if "cov" in low or low in ("sigma_yx", "h", "matrix", "omega_matrix"):
        c += [_c("spd(4)", lambda: _spd())]
    if "price" in low:
        c += [_c("prices(T,4)", lambda: _prices()), _c("prices(T)", lambda: _prices((T,)))]
    if "return" in low or low in ("y",):
        c += [_c("returns(T,4)", lambda: _returns()), _c("returns(T)", lambda: _returns((T,)))]
    if "weight" in low:
        c += [_c("simplex(4)", lambda: _simplex())]
    if low in ("t", "ts", "times", "t1") or low.startswith("t_"):
        c += [
            _const("t=0.5", np.float32(0.5)),
            _c("ts(8)", lambda: np.linspace(0.1, 0.9, 8, dtype=np.float32)),
        ]
    if low in ("omega", "angle", "angle_"):
        c += [
            _c("omega(4)", lambda: np.linspace(0.3, 2.5, N, dtype=np.float32)),
            _const("omega", np.float32(1.0)),
        ]
    if low in ("sigma", "std", "scale", "scales"):
        c += [_const("sigma=0.5", np.float32(0.5)), _c("sigma(4)", lambda: np.full(N, 0.5, np.float32))]
    if low in ("p", "q", "x", "y", "pred", "ref", "points", "positions", "target") or "position" in low:
        c += [_c("points(5,3)", lambda: _normal((5, 3)))]
    if low in ("successes", "trials", "counts"):
        c += [_const("int(3)", np.array([3, 5, 7])), _const("int", 3)]
    c += [
        _c("vec(4)", lambda: _normal((N,))),
        _c("mat(4,4)", lambda: _spd()),
        _c("mat(T,4)", lambda: _returns()),
        _c("points(5,3)", lambda: _normal((5, 3))),
        _c("vec(3)", lambda: _normal((3,))),
        _const("scalar", np.float32(0.5)),
        _c("vec(16)", lambda: _normal((16,))),
        _c("grid(1,16)", lambda: _normal((1, 16))),
        _c("grid(1,8,8)", lambda: _normal((1, 8, 8))),
        _c("rotation", lambda: _rotations()),
        _c("mat(4,3)", lambda: _normal((N, 3))),
        _c("batch(2,4)", lambda: _normal((2, N))),
    ]
    seen, out = set(), []
    for x in c:
        if x.label not in seen:
            seen.add(x.label)
            out.append(x)
    return out


_INT_HINTS = {
    "seed": [0],
    "depth": [2, 3],
    "d": [3, 2],
    "n": [4, 8, 3],
    "dim": [4, 8],
}


def _int_candidates(name: str) -> list[Candidate]:
    vals = _INT_HINTS.get(name.lower(), [4, 2, 8, 3, 1, 16])
    return [_const(f"int={v}", v) for v in vals]


def _float_candidates(name: str) -> list[Candidate]:
    low = name.lower()
    if low in ("rho",) or "rho" in low:
        vals = [0.5]
    elif low in ("t", "t_final", "level"):
        vals = [0.5, 1.0]
    elif "prob" in low or "fraction" in low or "confidence" in low:
        vals = [0.5]
    else:
        vals = [0.5, 1.0, 2.0, 0.1]
    return [_const(f"float={v}", v) for v in vals]


def _str_candidates(name: str) -> list[Candidate]:
    return []


def _sum_squares(tree: Any) -> Any:
    return sum(jnp.sum(jnp.square(x)) for x in jax.tree.leaves(tree))


def _callable_candidates(name: str, args: tuple[Any, ...]) -> list[Candidate]:
    """A user's function: by arity, smooth and finite everywhere (the library must not make it non-finite)."""
    arity = len(args[0]) if args and isinstance(args[0], list) else None
    low = name.lower()
    out = []
    if "loss" in low:
        out.append(_const("loss=sum(p^2)", lambda p, *a: 0.5 * _sum_squares(p)))
    if arity == 1 or arity is None:
        out.append(_const("x->tanh(x)", lambda x: jnp.tanh(x)))
    if arity == 2 or arity is None:
        out.append(_const("(x,t)->-x", lambda x, t: -x))
    if arity == 3:
        out.append(_const("(x,t,c)->-x", lambda x, t, c: -x))
    return out


def _class_candidates(cls: type, type_factories: dict[type, Callable[[], Any]]) -> list[Candidate]:
    out = []
    for t, make in type_factories.items():
        if isinstance(t, type) and issubclass(t, cls):
            out.append(_c(f"{t.__name__}()", make))
    if not out and not inspect.isabstract(cls):
        try:
            sig = inspect.signature(cls)
            if all(
                p.default is not p.empty or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
                for p in sig.parameters.values()
            ):
                out.append(_c(f"{cls.__name__}()", cls))
        except (TypeError, ValueError):
            pass
    return out


def candidates(name: str, hint: Any, type_factories: dict[type, Callable[[], Any]]) -> list[Candidate]:
    """Small valid-looking values for a required parameter ``name: hint``; ``[]`` when none can be built."""
    members = _members(hint)
    out: list[Candidate] = []
    if any(_is_key(m) for m in members) or name == "key":
        return [_c("key(0)", lambda: jax.random.key(0))]
    if name in ("keys",):
        out.append(_c("keys(2)", lambda: jax.random.split(jax.random.key(0), 2)))
    for m in members:
        origin = typing.get_origin(m)
        if origin is typing.Literal:
            out += [_const(f"literal={v!r}", v) for v in typing.get_args(m)]
    typed = [m for m in members if _is_array_type(m) and not _is_key(m)]
    if typed:
        out += _jaxtyped_candidates(name, typed, {})
    array_slot = _array_input(members)
    if array_slot:
        untyped = _untyped_array_candidates(name)
        jax_only = jax.Array in members and not any(
            m is np.ndarray or "ArrayLike" in str(m) or "_SupportsArray" in str(m) for m in members
        )
        if jax_only:
            untyped = [Candidate(c.label, lambda c=c: jnp.asarray(c.make())) for c in untyped]
        out += untyped
    for m in members:
        if array_slot and m in (bool, int, float, complex, str, bytes):
            continue
        if m is bool:
            out += [_const("False", False), _const("True", True)]
        elif m is int:
            out += _int_candidates(name)
        elif m is float:
            out += _float_candidates(name)
        elif m is str:
            out += _str_candidates(name)
        elif m is np.random.Generator:
            out.append(_c("rng(0)", lambda: np.random.default_rng(0)))
        elif typing.get_origin(m) in (tuple, Sequence, list, typing.get_origin(Sequence[int])):
            args = typing.get_args(m)
            if args and args[0] is int:
                out += [_const("(8,)", (8,)), _const("(8,8)", (8, 8)), _const("(4,4)", (4, 4))]
            elif args and args[0] in (float, float | int):
                out += [_const("(0.5,1,2)", (0.5, 1.0, 2.0))]
        elif typing.get_origin(m) in (Callable, typing.get_origin(Callable[[int], int])) or m is Callable:
            out += _callable_candidates(name, typing.get_args(m))
        elif isinstance(m, type) and not m.__module__.startswith("jaxkit") and m in type_factories:
            out.append(_c(f"{m.__name__}()", type_factories[m]))
        elif isinstance(m, type) and m.__module__.startswith("jaxkit"):
            if issubclass(m, enum.Enum):
                out += [_const(f"{m.__name__}.{e.name}", e) for e in m]
            else:
                out += _class_candidates(m, type_factories)
    return out


# ----------------------------------------------------------------------------------------- edges

_SIZE_NAME = re.compile(r"^(n|n_.*|.*_size|size|dim|d|hidden|.*_steps|steps|length|k|width|channels|modes)$")


def _is_key_array(x: Any) -> bool:
    return isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def _is_float_array(x: Any) -> bool:
    return (
        isinstance(x, (np.ndarray, jax.Array))
        and not _is_key_array(x)
        and np.issubdtype(np.asarray(x).dtype, np.floating)
        and x.size > 0
    )


def _is_int_array(x: Any) -> bool:
    return (
        isinstance(x, (np.ndarray, jax.Array))
        and not _is_key_array(x)
        and np.issubdtype(np.asarray(x).dtype, np.integer)
        and x.size > 0
    )


def _like(x: Any, y: np.ndarray) -> Any:
    return jnp.asarray(y, dtype=x.dtype) if isinstance(x, jax.Array) else y.astype(np.asarray(x).dtype)


def _set_first(x: Any, v: float) -> Any:
    y = np.array(x, copy=True)
    y.reshape(-1)[0] = v
    return _like(x, y)


def _singular(x: Any) -> Any:
    y = np.array(x, copy=True)
    y[..., -1, :] = y[..., 0, :]
    y[..., :, -1] = y[..., :, 0]
    return _like(x, y)


def _collinear(x: Any) -> Any:
    y = np.array(x, copy=True)
    scale = np.arange(1, y.shape[-2] + 1, dtype=y.dtype).reshape((-1, 1))
    y[..., :, :] = y[..., :1, :] * scale
    return _like(x, y)


def _duplicate(x: Any) -> Any:
    y = np.array(x, copy=True)
    y[1] = y[0]
    return _like(x, y)


def _longer(x: Any) -> Any:
    y = np.asarray(x)
    extra = np.full((1, *y.shape[1:]), 0.37 if np.issubdtype(y.dtype, np.floating) else 1, y.dtype)
    return _like(x, np.concatenate([y, extra], axis=0))


def _empty(x: Any) -> Any:
    y = np.asarray(x)
    return _like(x, np.zeros((0, *y.shape[1:]), y.dtype))


def _boundaries(name: str) -> list[tuple[str, float]]:
    low = name.lower()
    out: list[tuple[str, float]] = []
    if low in ("t", "t_final", "time") or low.startswith("t_"):
        out += [("t=0", 0.0), ("t=1", 1.0)]
    if "rho" in low:
        out += [("rho=1", 1.0), ("rho=-1", -1.0)]
    if low in ("sigma", "std", "scale", "eps", "epsilon", "tau", "temperature") or low.startswith("sigma"):
        out += [("sigma->0", 1e-12)]
    if any(s in low for s in ("prob", "fraction", "confidence", "alpha", "level", "quantile")):
        out += [("p=0", 0.0), ("p=1", 1.0)]
    return out


def edges(values: dict[str, Any], defaults: dict[str, Any]) -> list[Edge]:
    """The edge table for a base call whose arguments are ``values`` (required) and ``defaults`` (numeric
    keyword defaults that are perturbed too)."""
    out: list[Edge] = []
    arrays = {k: v for k, v in values.items() if _is_float_array(v) or _is_int_array(v)}
    for name, x in {**values, **defaults}.items():
        if isinstance(x, bool) or x is None:
            continue
        if isinstance(x, float) or (isinstance(x, np.floating) and np.ndim(x) == 0):
            for kind, v in [
                ("zero", 0.0),
                ("negative", -1.0),
                ("nan", np.nan),
                ("inf", np.inf),
                ("-inf", -np.inf),
            ]:
                out.append(Edge(name, kind, lambda v=v, x=x: type(x)(v)))
            for kind, v in _boundaries(name):
                out.append(Edge(name, kind, lambda v=v, x=x: type(x)(v)))
        elif isinstance(x, int):
            out += [Edge(name, "zero", lambda: 0), Edge(name, "negative", lambda: -1)]
            if _SIZE_NAME.match(name.lower()):
                out.append(Edge(name, "huge", lambda: HUGE))
        elif isinstance(x, str) and name in values:
            out.append(Edge(name, "bad-choice", lambda: "not-a-choice"))
        elif isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            out.append(Edge(name, "int-as-key", lambda: 0))
        elif _is_float_array(x):
            out += [
                Edge(name, "nan", lambda x=x: _set_first(x, np.nan)),
                Edge(name, "inf", lambda x=x: _set_first(x, np.inf)),
                Edge(name, "-inf", lambda x=x: _set_first(x, -np.inf)),
                Edge(
                    name,
                    "zeros",
                    lambda x=x: jnp.zeros_like(x) if isinstance(x, jax.Array) else np.zeros_like(x),
                ),
                Edge(name, "negative", lambda x=x: -x),
            ]
            if x.ndim == 0:
                for kind, v in _boundaries(name):
                    out.append(Edge(name, kind, lambda v=v, x=x: _like(x, np.asarray(v))))
            if x.ndim >= 1:
                out.append(Edge(name, "empty", lambda x=x: _empty(x)))
            if x.ndim >= 1 and x.shape[0] >= 2:
                out.append(Edge(name, "duplicate", lambda x=x: _duplicate(x)))
            if x.ndim >= 2 and x.shape[-1] == x.shape[-2] and x.shape[-1] >= 2:
                out.append(Edge(name, "singular", lambda x=x: _singular(x)))
            elif x.ndim == 2 and x.shape[0] >= 2:
                out.append(Edge(name, "collinear", lambda x=x: _collinear(x)))
        elif _is_int_array(x):
            out += [
                Edge(name, "negative", lambda x=x: -x - 1),
                Edge(
                    name,
                    "zeros",
                    lambda x=x: jnp.zeros_like(x) if isinstance(x, jax.Array) else np.zeros_like(x),
                ),
            ]
            if x.ndim >= 1:
                out.append(Edge(name, "empty", lambda x=x: _empty(x)))
        if name in arrays and np.ndim(x) >= 1:
            for other, y in arrays.items():
                if other != name and np.ndim(y) >= 1 and np.shape(y)[0] == np.shape(x)[0]:
                    out.append(Edge(name, "length-mismatch", lambda x=x: _longer(x), pair=other))
                    break
    return out


def dataclass_fields(x: Any) -> list[Any]:
    return [getattr(x, f.name) for f in dataclasses.fields(x)]


def shape_from_message(message: str, name: str) -> tuple[int, ...] | None:
    """The shape an error message asks ``name`` for (``"xi: expected shape (..., 6)"`` -> ``(6,)``; named or
    wildcard sizes become ``N``), or ``None``."""
    m = re.search(rf"{re.escape(name)}\b[^\n]*?expected (?:an array of )?shape \(([^)]*)\)", message)
    if not m:
        return None
    shape = []
    for d in m.group(1).split(","):
        d = d.strip()
        if d in ("...", ""):
            continue
        shape.append(int(d) if d.isdigit() else N)
    return tuple(shape)
