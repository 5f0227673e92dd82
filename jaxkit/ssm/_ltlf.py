"""Linear temporal logic over finite traces (LTLf) with past operators.

Syntax (precedence from loose to tight; binary temporal operators associate to the right)::

    φ ::= φ -> φ | φ '|' φ | φ & φ | φ U φ | φ R φ | φ S φ
        | !φ | X φ | N φ (weak next, also WX) | F φ | G φ | Y φ | O φ | H φ | p | true | false | (φ)

Semantics on a trace ``w = w_0 … w_{n-1}`` of sets of propositions, at position ``i`` (De Giacomo & Vardi 2013;
past operators as in Lichtenstein et al. 1985): ``X φ`` needs ``i+1 < n`` and ``φ`` at ``i+1``; ``N φ`` holds at the
last position; ``φ U ψ``: some ``j ≥ i`` has ``ψ`` and ``φ`` holds on ``[i, j)``; ``φ R ψ = ¬(¬φ U ¬ψ)``;
``Y φ``: ``i > 0`` and ``φ`` at ``i-1``; ``O``/``H``: once / historically; ``φ S ψ``: some ``j ≤ i`` has ``ψ`` and
``φ`` holds on ``(j, i]``.

The language of a formula (Alsmann, Noori & Lange 2026 use both readings): a pure-past formula is read at the
last position (``w ∈ L(φ)`` iff ``w, n-1 ⊨ φ``), every other formula at the first (``w, 0 ⊨ φ``).
:func:`evaluate` is vectorized over a batch of traces (one backward/forward sweep per temporal operator);
:func:`prefix_labels` gives the membership of every prefix at once (used to build per-prefix datasets).
Traces are integer tokens whose bit ``k`` is proposition ``k``, or boolean arrays ``(B, T, P)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxkit._typing import ArrayInput
from jaxkit._validate import check_int

from ._languages import Task

UNARY = ("!", "X", "N", "F", "G", "Y", "O", "H")
BINARY = ("&", "|", "->", "U", "R", "S")
FUTURE = frozenset({"X", "N", "F", "G", "U", "R"})
PAST = frozenset({"Y", "O", "H", "S"})
BOOLEAN = frozenset({"!", "&", "|", "->"})
FRAGMENTS: dict[str, frozenset] = {
    "propositional": frozenset(),
    "future": FUTURE,
    "past": PAST,
    "full": FUTURE | PAST,
    "unary_future": frozenset({"X", "N", "F", "G"}),
    "unary_past": frozenset({"Y", "O", "H"}),
    "eventually": frozenset({"F", "G"}),
    "once": frozenset({"O", "H"}),
}


class LTLfSyntaxError(ValueError):
    """A malformed formula; ``position`` is the 0-based character offset of the error."""

    def __init__(self, message: str, text: str, position: int, name: str = "formula"):
        caret = text + "\n" + " " * position + "^"
        super().__init__(f"{name}: {message} at position {position}\n{caret}")
        self.position = position
        self.message, self.text = message, text


@dataclass(frozen=True)
class Formula:
    """An LTLf formula node: ``op`` in ``prop/true/false`` or an operator, ``args`` its subformulas."""

    op: str
    args: tuple = ()
    name: str = ""

    def __str__(self) -> str:
        return to_string(self)


def prop(name: str) -> Formula:
    return Formula("prop", (), name)


TRUE, FALSE = Formula("true"), Formula("false")


def to_string(f: Formula) -> str:
    """Text form; ``parse(to_string(f)) == f``."""
    if f.op == "prop":
        return f.name
    if f.op in ("true", "false"):
        return f.op
    if f.op in UNARY:
        inner = to_string(f.args[0])
        sep = "" if f.op == "!" else " "
        return f"{f.op}{sep}{inner}"
    return f"({to_string(f.args[0])} {f.op} {to_string(f.args[1])})"


# ----------------------------------------------------------------------------------------------------- parser
_TOKEN = re.compile(r"\s*(?:(->)|(WX)|([!~&|()])|([A-Z])(?![A-Za-z0-9_])|([a-z_][a-z0-9_]*))")


def _tokenize(text: str) -> list[tuple[str, int]]:
    toks, i = [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        m = _TOKEN.match(text, i)
        if not m or m.end() == i:
            raise LTLfSyntaxError(f"unexpected character {text[i]!r}", text, i)
        start = m.start(m.lastindex)
        tok = m.group(m.lastindex)
        if m.lastindex == 2:
            tok = "N"
        if m.lastindex == 3 and tok == "~":
            tok = "!"
        if m.lastindex == 4 and tok not in UNARY + BINARY:
            raise LTLfSyntaxError(f"unknown operator {tok!r}", text, start)
        toks.append((tok, start))
        i = m.end()
    toks.append(("<end>", len(text)))
    return toks


def parse(text: str) -> Formula:
    """Parse an LTLf formula; raises :class:`LTLfSyntaxError` (a ``ValueError``) with the error position."""
    return _parse_as(text, "text")


def _parse_as(text: str, name: str) -> Formula:
    """:func:`parse`, its errors naming the argument ``name`` the formula was passed as."""
    if not isinstance(text, str):
        raise TypeError(f"{name}: expected a formula string, received {type(text).__name__}")
    try:
        return _parse(text)
    except LTLfSyntaxError as e:
        raise LTLfSyntaxError(e.message, e.text, e.position, name) from None


def _parse(text: str) -> Formula:
    toks = _tokenize(text)
    pos = 0

    def peek():
        return toks[pos][0]

    def take(expected=None):
        nonlocal pos
        tok, at = toks[pos]
        if expected is not None and tok != expected:
            what = "end of input" if tok == "<end>" else repr(tok)
            raise LTLfSyntaxError(f"expected {expected!r}, found {what}", text, at)
        pos += 1
        return tok

    levels = [("->",), ("|",), ("&",), ("U", "R", "S")]

    def binary(level):
        if level == len(levels):
            return unary()
        left = binary(level + 1)
        if peek() in levels[level]:
            op = take()
            right = binary(level) if op in ("->", "U", "R", "S") else binary(level + 1)
            left = Formula(op, (left, right))
            while op in ("|", "&") and peek() == op:  # left-assoc for & and |
                take()
                left = Formula(op, (left, binary(level + 1)))
        return left

    def unary():
        tok, at = toks[pos]
        if tok in UNARY:
            take()
            return Formula(tok, (unary(),))
        if tok == "(":
            take()
            f = binary(0)
            take(")")
            return f
        if tok in ("true", "false"):
            take()
            return Formula(tok)
        if re.fullmatch(r"[a-z_][a-z0-9_]*", tok):
            take()
            return prop(tok)
        what = "end of input" if tok == "<end>" else repr(tok)
        raise LTLfSyntaxError(
            f"expected a proposition, constant, unary operator or '(', found {what}", text, at
        )

    if toks[0][0] == "<end>":
        raise LTLfSyntaxError("empty formula", text, 0)
    f = binary(0)
    if peek() != "<end>":
        tok, at = toks[pos]
        raise LTLfSyntaxError(f"unexpected {tok!r} after a complete formula", text, at)
    return f


# ----------------------------------------------------------------------------------------------------- fragments
def operators(f: Formula) -> set[str]:
    """Set of operators occurring in ``f``."""
    out = set() if f.op in ("prop", "true", "false") else {f.op}
    for a in f.args:
        out |= operators(a)
    return out


def propositions(f: Formula) -> set[str]:
    if f.op == "prop":
        return {f.name}
    out: set[str] = set()
    for a in f.args:
        out |= propositions(a)
    return out


def is_pure_past(f: Formula) -> bool:
    return not (operators(f) & FUTURE)


def is_pure_future(f: Formula) -> bool:
    return not (operators(f) & PAST)


def in_fragment(f: Formula, fragment: str) -> bool:
    """Whether every temporal operator of ``f`` belongs to ``FRAGMENTS[fragment]``."""
    if fragment not in FRAGMENTS:
        raise ValueError(f"fragment: expected one of {sorted(FRAGMENTS)}, received {fragment!r}")
    return (operators(f) - BOOLEAN) <= FRAGMENTS[fragment]


def depth(f: Formula) -> int:
    return 0 if not f.args else 1 + max(depth(a) for a in f.args)


def random_formula(
    rng: np.random.Generator, fragment: str = "full", max_depth: int = 3, props: Sequence[str] = ("p0", "p1")
) -> Formula:
    """A random formula whose temporal operators lie in ``fragment`` (Boolean connectives always allowed)."""
    if fragment not in FRAGMENTS:
        raise ValueError(f"fragment: expected one of {sorted(FRAGMENTS)}, received {fragment!r}")
    if len(props) == 0:
        raise ValueError("props: expected at least one proposition, received an empty list")
    if isinstance(max_depth, bool) or not isinstance(max_depth, int | np.integer) or max_depth < 0:
        raise ValueError(f"max_depth: expected an integer >= 0, received {max_depth!r}")
    temporal = sorted(FRAGMENTS[fragment])
    ops = temporal * 2 + ["!", "&", "|"]

    def gen(d):
        if d == 0 or rng.random() < 0.2:
            return prop(props[rng.integers(len(props))])
        op = ops[rng.integers(len(ops))]
        if op in UNARY:
            return Formula(op, (gen(d - 1),))
        return Formula(op, (gen(d - 1), gen(d - 1)))

    return gen(max_depth)


# ----------------------------------------------------------------------------------------------------- evaluation
def _as_props(traces: Any, n_props: int | None) -> np.ndarray:
    t = np.asarray(traces)
    if t.ndim in (2, 3) and t.shape[1] == 0:  # LTLf semantics is defined on non-empty finite traces
        raise ValueError(
            f"traces: expected traces of length >= 1 (LTLf formulas are evaluated on non-empty traces), "
            f"received shape {t.shape}"
        )
    if t.dtype == bool:
        if t.ndim != 3:
            raise ValueError(f"traces: expected a bool array (B, T, P), received shape {t.shape}")
        return t
    if t.ndim != 2 or not np.issubdtype(t.dtype, np.integer):
        raise ValueError(
            f"traces: expected integer tokens (B, T) or bools (B, T, P), received {t.dtype} {t.shape}"
        )
    if n_props is None:
        raise ValueError("n_props: required with integer-token traces")
    if isinstance(n_props, bool) or not isinstance(n_props, int | np.integer) or n_props < 0:
        raise ValueError(f"n_props: expected an integer >= 0, received {n_props!r}")
    if t.size and (t.min() < 0 or t.max() >= 2**n_props):
        raise ValueError(
            f"traces: expected letters in [0, {2**n_props - 1}] (bitmasks of {n_props} propositions), "
            f"received range [{t.min()}, {t.max()}]"
        )
    return ((t[..., None] >> np.arange(n_props)) & 1).astype(bool)


def _sat(f: Formula, P: np.ndarray, index: dict[str, int], L: np.ndarray) -> np.ndarray:
    """Truth at every position ``(B, E, T)`` of the traces truncated to lengths ``L`` (shape ``(E,)``)."""
    B, T, _ = P.shape
    E = L.shape[0]
    pos = np.arange(T)
    inside = pos[None, None, :] < L[None, :, None]  # (1, E, T)
    op = f.op
    if op == "prop":
        return np.broadcast_to(P[:, None, :, index[f.name]], (B, E, T))
    if op in ("true", "false"):
        return np.full((B, E, T), op == "true")
    a = _sat(f.args[0], P, index, L)
    if op == "!":
        return ~a
    if op in ("X", "N"):
        nxt = np.concatenate([a[..., 1:], np.zeros((B, E, 1), bool)], -1)
        has_next = (pos[None, None, :] + 1) < L[None, :, None]
        return nxt & has_next if op == "X" else nxt | ~has_next
    if op == "F":
        return np.logical_or.accumulate((a & inside)[..., ::-1], -1)[..., ::-1]
    if op == "G":
        return np.logical_and.accumulate((a | ~inside)[..., ::-1], -1)[..., ::-1]
    if op == "Y":
        return np.concatenate([np.zeros((B, E, 1), bool), a[..., :-1]], -1)
    if op == "O":
        return np.logical_or.accumulate(a, -1)
    if op == "H":
        return np.logical_and.accumulate(a, -1)
    b = _sat(f.args[1], P, index, L)
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "->":
        return ~a | b
    if op in ("U", "R"):
        if op == "R":
            a, b = ~a, ~b
        b = b & inside
        out = np.zeros((B, E, T), bool)
        nxt = np.zeros((B, E), bool)
        for i in range(T - 1, -1, -1):
            nxt = b[..., i] | (a[..., i] & nxt)
            out[..., i] = nxt
        return ~out if op == "R" else out
    if op == "S":
        out = np.zeros((B, E, T), bool)
        prev = np.zeros((B, E), bool)
        for i in range(T):
            prev = b[..., i] | (a[..., i] & prev)
            out[..., i] = prev
        return out
    raise ValueError(f"formula: unknown operator {op!r}")


def _index(f: Formula, props: Sequence[str] | None, n_props: int) -> dict[str, int]:
    names = list(props) if props is not None else [f"p{k}" for k in range(n_props)]
    if len(names) != n_props:
        raise ValueError(
            f"props: expected {n_props} names for the traces' propositions, received {len(names)}"
        )
    missing = propositions(f) - set(names)
    if missing:
        raise ValueError(
            f"formula: propositions {sorted(missing)} are not among the trace propositions {names}"
        )
    return {n: k for k, n in enumerate(names)}


def evaluate(
    f: Formula | str, traces: ArrayInput, *, n_props: int | None = None, props: Sequence[str] | None = None
) -> np.ndarray:
    """Truth of ``f`` at every position of every trace: ``(B, T)`` bool."""
    f = _parse_as(f, "f") if isinstance(f, str) else f
    P = _as_props(traces, n_props)
    index = _index(f, props, P.shape[2])
    return _sat(f, P, index, np.array([P.shape[1]]))[:, 0, :]


def accepts(
    f: Formula | str, traces: ArrayInput, *, n_props: int | None = None, props: Sequence[str] | None = None
) -> np.ndarray:
    """Language membership of each (whole) trace: last position for pure-past formulas, first otherwise."""
    f = _parse_as(f, "f") if isinstance(f, str) else f
    v = evaluate(f, traces, n_props=n_props, props=props)
    return v[:, -1] if is_pure_past(f) and operators(f) & PAST else v[:, 0]


def prefix_labels(
    f: Formula | str, traces: ArrayInput, *, n_props: int | None = None, props: Sequence[str] | None = None
) -> np.ndarray:
    """Membership of every prefix ``w[:t+1]``: ``(B, T)`` bool (one sweep per operator, all prefixes at once)."""
    f = _parse_as(f, "f") if isinstance(f, str) else f
    P = _as_props(traces, n_props)
    index = _index(f, props, P.shape[2])
    T = P.shape[1]
    if is_pure_past(f) and operators(f) & PAST:
        return _sat(f, P, index, np.array([T]))[:, 0, :]
    return _sat(f, P, index, np.arange(1, T + 1))[:, :, 0]


MAX_FORMULA_PROPS = 12


def _pow10(e: float) -> str:
    """``10**e`` as a short string (``e`` a base-10 exponent, possibly too large for a float)."""
    return f"{10.0**e:.3g}" if e < 300 else f"1e{int(e)}"


def formula_task(
    f: Formula | str, n_props: int = 2, *, name: str | None = None, max_props: int = MAX_FORMULA_PROPS
) -> Task:
    """A recognition :class:`~jaxkit.ssm.Task` for ``L(f)`` over ``2^n_props`` letters.

    Targets are per-prefix memberships; positives are found by rejection among random traces whose proposition rates are
    drawn per trace (when none is found, the batch is all negatives). The alphabet (one letter per subset of the
    propositions) is built in full, so ``n_props`` above ``max_props`` (default ``MAX_FORMULA_PROPS = 12``, 4096
    letters) is refused up front; raise ``max_props`` to go further.
    """
    check_int("max_props", max_props, minimum=0)
    check_int("n_props", n_props, minimum=0)
    if n_props > max_props:
        # the sizes in floating point (log10), so that a huge n_props is refused at once, not after 2**n_props
        # has been computed as an exact integer
        letters = n_props * np.log10(2.0)
        gib = letters + np.log10(8 + 5 * n_props) - 30 * np.log10(2.0)
        raise ValueError(
            f"n_props: {n_props} propositions give an alphabet of 2^{n_props} = {_pow10(letters)} letters "
            f"(about {_pow10(gib)} GiB of letter names); the cap is "
            f"max_props={max_props}, pass a larger max_props to build it anyway"
        )
    f = _parse_as(f, "f") if isinstance(f, str) else f
    names = [f"p{k}" for k in range(n_props)]
    missing = propositions(f) - set(names)
    if missing:
        raise ValueError(
            f"f: propositions {sorted(missing)} are not among the trace propositions {names} of "
            f"n_props={n_props} (formula_task names them p0, ..., p<n_props - 1>)"
        )
    _index(f, names, n_props)
    alphabet = tuple(
        "{" + ",".join(n for k, n in enumerate(names) if (s >> k) & 1) + "}" for s in range(2**n_props)
    )

    def labels(toks):
        return prefix_labels(f, np.asarray(toks), n_props=n_props)

    def positives(rng, n, length):
        got, have = [], 0
        for _ in range(50):  # random traces with per-trace proposition rates, so rare languages are hit too
            q = rng.random((4 * n, 1, n_props))
            bits = rng.random((4 * n, length, n_props)) < q
            c = (bits * (1 << np.arange(n_props))).sum(-1)
            c = c[labels(c)[:, -1]]
            got.append(c)
            have += len(c)
            if have >= n:
                return np.concatenate(got)[:n]
        return None

    return Task(
        name or to_string(f),
        alphabet,
        2,
        "recognition",
        labels=labels,
        positives=positives,
        empty_member=False,
        description=f"LTLf language of {to_string(f)}",
    )


__all__ = [
    "BINARY",
    "MAX_FORMULA_PROPS",
    "FRAGMENTS",
    "FUTURE",
    "PAST",
    "UNARY",
    "FALSE",
    "TRUE",
    "Formula",
    "LTLfSyntaxError",
    "accepts",
    "depth",
    "evaluate",
    "formula_task",
    "in_fragment",
    "is_pure_future",
    "is_pure_past",
    "operators",
    "parse",
    "prefix_labels",
    "prop",
    "propositions",
    "random_formula",
    "to_string",
]
