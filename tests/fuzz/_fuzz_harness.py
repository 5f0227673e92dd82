"""Calling an export and classifying what came back.

Every call ends in one of three ways (docs/contracts.md):

- ``clear``: ``ValueError``/``TypeError`` whose message names the argument that was perturbed;
- ``ok``: every numeric value in the result is finite, and (for an edge that keeps shapes) the result has the base
  call's structure and shapes;
- a violation: a non-finite or wrong-shape result without an error, extra data silently ignored (a longer argument
  gives the base call's result bit for bit), an error of another type or one that does not name the argument, a
  size beyond memory that is not refused up front naming the memory, or a call that runs past the time limit.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import signal
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np
from _fuzz_values import Candidate, Edge, _normal, candidates, edges, shape_from_message

TIMEOUT_S = 10  # an edge call
BASE_TIMEOUT_S = 60  # the base call (it compiles first)
# integer parameters where a negative value has a meaning (an axis, an offset, a position counted from the end:
# ``sample_axis=-1``, ``positions=-1``); a negative count or size does not
NEGATIVE_OK = re.compile(r"^(axis|axes|offset|shift|lag|index|i|seed_offset|\w+_axis|positions?)$")


class Hang(BaseException):
    """Raised by the alarm: the call ran past ``TIMEOUT_S``."""


@dataclass
class Outcome:
    kind: str  # "ok" | "clear" | "violation"
    detail: str = ""
    result: Any = None
    warned: bool = False


@dataclass
class Base:
    fn: Callable[..., Any]
    kwargs: dict[str, Any]
    labels: dict[str, str]
    defaults: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    source: str = "generic"  # "generic" | "factory"


WARNED: list[str] = []  # the warnings of the last successful call (a documented nan must come with one)


def _alarm(signum, frame):  # pragma: no cover - only when a call hangs
    raise Hang()


def call(
    fn: Callable[..., Any], kwargs: dict[str, Any], timeout: int = TIMEOUT_S
) -> tuple[Any, BaseException | None]:
    old = signal.signal(signal.SIGALRM, _alarm)
    # fires after ``timeout`` s, then every second: a Hang raised where Python swallows it (a gc callback) is
    # raised again at the next tick
    signal.setitimer(signal.ITIMER_REAL, timeout, 1.0)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fn(**kwargs)
            out = jax.block_until_ready(out) if _has_jax(out) else out
        WARNED[:] = [str(w.message) for w in caught]
        return out, None
    except Hang as e:
        return None, e
    except Exception as e:  # noqa: BLE001 - classifying every error is the point
        return None, e
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, old)


def _has_jax(out: Any) -> bool:
    try:
        return any(isinstance(x, jax.Array) for x in jax.tree.leaves(out))
    except Exception:  # noqa: BLE001
        return False


def numeric_leaves(obj: Any, depth: int = 0) -> list[tuple[str, np.ndarray]]:
    """(path, array) of every numeric value in a result: arrays, Python/NumPy numbers, and those inside tuples,
    lists, dicts, dataclasses, NamedTuples and pytrees (equinox modules)."""
    out: list[tuple[str, np.ndarray]] = []
    if depth > 6 or obj is None or isinstance(obj, (str, bytes, bool)):
        return out
    if isinstance(obj, (int, float, complex, np.number)):
        return [("", np.asarray(obj))]
    if isinstance(obj, (np.ndarray, jax.Array)):
        if isinstance(obj, jax.Array) and jax.dtypes.issubdtype(obj.dtype, jax.dtypes.prng_key):
            return out
        a = np.asarray(obj)
        return [("", a)] if a.dtype.kind in "biufc" else out
    if isinstance(obj, dict):
        items = list(obj.items())
    elif isinstance(obj, (list, tuple)):
        items = list(enumerate(obj))
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        items = [(f.name, getattr(obj, f.name, None)) for f in dataclasses.fields(obj)]
    else:
        try:
            leaves = jax.tree.leaves(obj)
        except Exception:  # noqa: BLE001
            return out
        if len(leaves) == 1 and leaves[0] is obj:
            return out
        items = list(enumerate(leaves))
    for k, v in items[:200]:
        out += [(f"{k}.{p}" if p else str(k), a) for p, a in numeric_leaves(v, depth + 1)]
    return out


def names_argument(message: str, names: list[str]) -> bool:
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", message) for n in names)


def classify(
    err: BaseException | None,
    result: Any,
    *,
    named: list[str],
    base: Base | None = None,
    edge: Edge | None = None,
) -> Outcome:
    if isinstance(err, Hang):
        return Outcome("violation", f"hang: no answer within {TIMEOUT_S} s")
    if err is not None:
        msg = str(err)
        if not isinstance(err, (ValueError, TypeError)):
            return Outcome("violation", f"cryptic error {type(err).__name__}: {msg[:160]}")
        if not names_argument(msg, named):
            return Outcome("violation", f"{type(err).__name__} not naming {'/'.join(named)}: {msg[:160]}")
        return Outcome("clear", msg[:160])
    leaves = numeric_leaves(result)
    bad = [p or "result" for p, a in leaves if a.dtype.kind in "fc" and not np.all(np.isfinite(a))]
    if bad:
        return Outcome("violation", f"non-finite result without an error at {', '.join(bad[:4])}", result)
    if edge is not None and base is not None:
        if edge.kind in ("zero", "negative") and isinstance(edge.make(), int):
            # an integer size: a different shape is what it asks for; a size of 0 that returns nothing and a
            # negative size that is accepted are not
            if edge.kind == "negative" and not NEGATIVE_OK.match(edge.param):
                return Outcome(
                    "violation", f"{edge.param}=-1 accepted where a count or size is expected", result
                )
            if any(a.size == 0 for _, a in leaves) or not leaves:
                return Outcome(
                    "violation", f"{edge.param}=0 returned an empty result instead of an error", result
                )
            return Outcome("ok", "", result)
        if edge.kind == "huge":
            return Outcome(
                "ok", "", result
            )  # a size that allocates nothing (a schedule length, a config field)
        if edge.kind == "length-mismatch" and _same(result, base.result):
            return Outcome(
                "violation",
                f"{edge.param} one longer than {edge.pair}: the extra entry was ignored (same result as the base)",
                result,
            )
        if edge.kind not in ("empty", "length-mismatch"):
            base_shapes = [(p, a.shape) for p, a in numeric_leaves(base.result)]
            shapes = [(p, a.shape) for p, a in leaves]
            if base_shapes != shapes:
                return Outcome(
                    "violation", f"result shapes {shapes[:3]} differ from the base call's {base_shapes[:3]}"
                )
    return Outcome("ok", "", result)


def _same(a: Any, b: Any) -> bool:
    la, lb = numeric_leaves(a), numeric_leaves(b)
    if not la or len(la) != len(lb):
        return False
    return all(x.shape == y.shape and np.array_equal(x, y, equal_nan=True) for (_, x), (_, y) in zip(la, lb))


# ----------------------------------------------------------------------------------------- the base call


def _target(obj: Any) -> Callable[..., Any]:
    return obj


def signature_parts(obj: Any) -> tuple[list[inspect.Parameter], dict[str, Any]]:
    fn = obj.__init__ if inspect.isclass(obj) else obj
    sig = inspect.signature(obj)
    hints: dict[str, Any] = {}
    for target in (fn, obj) if inspect.isclass(obj) else (fn,):
        try:
            hints = {**typing.get_type_hints(target), **hints}
        except Exception:  # noqa: BLE001 - an unresolvable annotation leaves the slot untyped
            pass
    params = [
        p
        for p in sig.parameters.values()
        if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    return params, hints


def numeric_defaults(params: list[inspect.Parameter]) -> dict[str, Any]:
    return {
        p.name: p.default
        for p in params
        if p.default is not p.empty
        and isinstance(p.default, (int, float))
        and not isinstance(p.default, bool)
    }


def find_base(
    obj: Any,
    type_factories: dict[type, Callable[[], Any]],
    cached: dict[str, str] | None = None,
    max_tries: int = 30,
) -> tuple[Base | None, str]:
    """Search the candidate lists for a call that returns finite values; ``(None, why)`` when none is found.

    Start from each parameter's first candidate (or the cached labels). When the call raises an error naming a
    parameter, move that parameter to its next candidate; stop at the first finite result."""
    params, hints = signature_parts(obj)
    required = [p for p in params if p.default is p.empty]
    cands: dict[str, list[Candidate]] = {}
    for p in required:
        cands[p.name] = candidates(p.name, hints.get(p.name, p.annotation), type_factories)
        if not cands[p.name]:
            return None, f"no candidate value for {p.name}: {hints.get(p.name, p.annotation)}"
    idx = {n: 0 for n in cands}
    if cached:
        for n, lab in cached.items():
            labels = [c.label for c in cands.get(n, [])]
            if lab in labels:
                idx[n] = labels.index(lab)
    last = ""
    for _ in range(max_tries):
        try:
            kwargs = {n: cands[n][i].make() for n, i in idx.items()}
        except Exception as e:  # noqa: BLE001 - a candidate that cannot be built
            return None, f"a candidate value could not be built: {type(e).__name__}: {e}"
        out, err = call(obj, kwargs, BASE_TIMEOUT_S)
        if err is None:
            o = classify(None, out, named=list(cands))
            if o.kind == "ok":
                return Base(
                    obj, kwargs, {n: cands[n][i].label for n, i in idx.items()}, numeric_defaults(params), out
                ), ""
            last = o.detail
            movable = [n for n in idx if idx[n] + 1 < len(cands[n])]
        else:
            last = f"{type(err).__name__}: {str(err)[:200]}"
            if isinstance(err, Hang):
                return None, last
            movable = [n for n in idx if names_argument(str(err), [n]) and idx[n] + 1 < len(cands[n])]
        if err is not None:
            for n in cands:
                shape = shape_from_message(str(err), n)
                label = f"asked{shape}"
                if shape is not None and label not in [c.label for c in cands[n]]:
                    cands[n].insert(idx[n] + 1, Candidate(label, lambda s=shape: _normal(s)))
                    movable = [n]
                    break
        if not movable:
            return None, last
        # the named parameter that comes first in the message
        msg = str(err) if err is not None else ""
        movable.sort(key=lambda n: msg.find(n) if n in msg else 10**6)
        idx[movable[0]] += 1
    return None, last


def run_edges(base: Base) -> list[tuple[Edge, Outcome]]:
    out = []
    for e in edges(base.kwargs, base.defaults):
        kwargs = dict(base.kwargs)
        try:
            kwargs[e.param] = e.make()
        except Exception as err:  # noqa: BLE001 - an edge that cannot be built for this value is not applied
            out.append((e, Outcome("ok", f"edge not applicable: {err}")))
            continue
        res, err = call(base.fn, kwargs)
        named = [e.param] + ([e.pair] if e.pair else [])
        o = classify(err, res, named=named, base=base, edge=e)
        o.warned = err is None and bool(WARNED)
        out.append((e, o))
    return out


def violations(name: str, base: Base) -> dict[tuple[str, str], str]:
    """``{(parameter, edge): detail}`` of the violations of one export's edge table, less the documented
    exceptions of ``_fuzz_tables.DOCUMENTED`` (a non-finite result on the edges listed there) and of
    ``_fuzz_tables.SHAPE_BY_VALUE`` (a result of another length on the edges listed there)."""
    from _fuzz_tables import DOCUMENTED, SHAPE_BY_VALUE

    allowed, reason = DOCUMENTED.get(name, (frozenset(), ""))
    reshaped = SHAPE_BY_VALUE.get(name, (frozenset(), ""))[0]
    out = {}
    for e, o in run_edges(base):
        if o.kind != "violation":
            continue
        if e.kind in reshaped and o.detail.startswith("result shapes"):
            continue
        if e.kind in allowed and o.detail.startswith("non-finite result"):
            if "warning" not in reason.lower() or o.warned:
                continue
            o.detail += " (documented as coming with a warning, but none was issued)"
        out[(e.param, e.kind)] = o.detail
    return out
