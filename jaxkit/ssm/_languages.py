"""Formal-language tasks: membership oracles and balanced samplers.

Every task produces batches of equal-length token sequences with integer targets and two masks
(:class:`Batch`): ``mask`` marks the positions that are trained on, ``final`` the positions that are scored.

* ``kind="recognition"``: target ``t`` is the membership of the prefix ``w[:t+1]`` (trained on every prefix);
  samples are balanced 50/50 on the membership of the whole string, which is what is scored (``final`` = last
  position). Positives are drawn uniformly among members of the requested length (exact counting over a DFA,
  truncated to the length for counter languages); negatives are half uniform non-members, half one-symbol
  mutations of members ("near misses").
* ``kind="transduction"``: a label per position (flip-flop, group word problems, Deletang's regular tasks).
* ``kind="seq2seq"``: an input, a separator and query tokens whose targets are the output string
  (Deletang et al. 2023 reverse string, stack manipulation).

Recognition tasks with a ``draw`` use their own string law instead of the balanced one (``aa_star``, ``since``,
``anbncn``; see their samplers for why: uniform strings would not test what the language needs).

Task list (``TASKS``, build with :func:`get_task`): parity, count_mod{m}, aa_star, position_mod{m}, flip_flop,
first_symbol, last_symbol, tomita1..7, star-free ``ab_star``/``no_bb``/``a_before_b``/``since``/``until``, ``dyck{k}_depth{d}``,
dyck1, anbn, anbncn, s5_word, a5_word and Deletang's regular (even_pairs, modular_arithmetic_simple,
parity_check, cycle_navigation) and context-free (stack_manipulation, reverse_string, modular_arithmetic,
solve_equation) tasks.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from jaxkit._validate import check_finite, check_int

KINDS = ("recognition", "transduction", "seq2seq")


class _BatchFields(NamedTuple):
    tokens: np.ndarray  # (B, T) int32
    targets: np.ndarray  # (B, T) int32
    mask: np.ndarray  # (B, T) bool, trained positions
    final: np.ndarray  # (B, T) bool, scored positions


class Batch(_BatchFields):
    """Examples of a task: ``tokens`` and ``targets`` ``(B, T)`` int32, ``mask`` (trained positions) and ``final``
    (scored positions) ``(B, T)`` bool. Every field must hold finite values (``ValueError`` naming it)."""

    __slots__ = ()

    def __new__(cls, tokens: np.ndarray, targets: np.ndarray, mask: np.ndarray, final: np.ndarray) -> Batch:
        for name, v in (("tokens", tokens), ("targets", targets), ("mask", mask), ("final", final)):
            check_finite(name, v)
        return super().__new__(cls, tokens, targets, mask, final)


# ----------------------------------------------------------------------------------------------------- DFAs
@dataclass
class DFA:
    """Deterministic automaton ``trans[state, symbol]``; ``accept`` per state; ``start`` state."""

    trans: Any
    accept: Any
    start: int = 0
    _tables: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for name in ("trans", "accept"):
            try:
                setattr(self, name, np.asarray(getattr(self, name), np.int64 if name == "trans" else bool))
            except (ValueError, TypeError) as e:
                raise ValueError(
                    f"{name}: expected a rectangular table, received {getattr(self, name)!r} ({e})"
                ) from None
        if self.trans.ndim != 2 or 0 in self.trans.shape:
            raise ValueError(f"trans: expected shape (states>=1, symbols>=1), received {self.trans.shape}")
        n = self.trans.shape[0]
        if self.trans.size and (self.trans.min() < 0 or self.trans.max() >= n):
            raise ValueError(
                f"trans: expected next states in [0, {n - 1}], received range "
                f"[{self.trans.min()}, {self.trans.max()}]"
            )
        if self.accept.shape != (n,):
            raise ValueError(
                f"accept: expected one flag per state, shape ({n},), received {self.accept.shape}"
            )
        if (
            isinstance(self.start, bool)
            or not isinstance(self.start, int | np.integer)
            or not 0 <= self.start < n
        ):
            raise ValueError(f"start: expected a state in [0, {n - 1}], received {self.start!r}")

    @property
    def n_symbols(self) -> int:
        return self.trans.shape[1]

    def run(self, tokens: np.ndarray) -> np.ndarray:
        """States after each symbol, ``(B, T)``."""
        tokens = np.asarray(tokens)
        if tokens.size and (tokens.min() < 0 or tokens.max() >= self.n_symbols):
            raise ValueError(
                f"tokens: expected symbols in [0, {self.n_symbols - 1}], received range "
                f"[{tokens.min()}, {tokens.max()}]"
            )
        s = np.full(tokens.shape[0], self.start)
        out = np.empty(tokens.shape, np.int64)
        for t in range(tokens.shape[1]):
            s = self.trans[s, tokens[:, t]]
            out[:, t] = s
        return out

    def _weights(self, length: int, target: bool) -> list[np.ndarray]:
        key = (length, target)
        if key not in self._tables:
            w = [None] * (length + 1)
            w[length] = (self.accept == target).astype(float)
            for t in range(length - 1, -1, -1):
                nxt = w[t + 1][self.trans].sum(1)
                w[t] = nxt / max(nxt.max(), 1e-300)
            self._tables[key] = w
        return self._tables[key]

    def sample(self, rng: np.random.Generator, n: int, length: int, accepting: bool) -> np.ndarray | None:
        """``n`` strings drawn uniformly among those of ``length`` that are (not) accepted; None if none exist."""
        w = self._weights(length, accepting)
        if w[0][self.start] <= 0:
            return None
        s = np.full(n, self.start)
        out = np.empty((n, length), np.int64)
        for t in range(length):
            p = w[t + 1][self.trans[s]]  # (n, symbols)
            p = p / p.sum(1, keepdims=True)
            c = (rng.random((n, 1)) < np.cumsum(p, 1)).argmax(1)
            out[:, t] = c
            s = self.trans[s, c]
        return out


def _dfa_from_fn(n_symbols: int, step: Callable, start: Any, accept: Callable, limit: int = 5000) -> DFA:
    """Build a DFA by exploring the reachable states of a Python transition function."""
    index = {start: 0}
    order = [start]
    trans = []
    i = 0
    while i < len(order):
        row = []
        for a in range(n_symbols):
            nxt = step(order[i], a)
            if nxt not in index:
                if len(order) >= limit:
                    raise ValueError(f"DFA exploration exceeded {limit} states")
                index[nxt] = len(order)
                order.append(nxt)
            row.append(index[nxt])
        trans.append(row)
        i += 1
    return DFA(np.array(trans), np.array([bool(accept(q)) for q in order]), 0)


# ----------------------------------------------------------------------------------------------------- tasks
@dataclass
class Task:
    """A language or transduction task over ``alphabet`` with ``n_classes`` target classes."""

    name: str
    alphabet: tuple[str, ...]
    n_classes: int
    kind: str
    labels: Callable[[np.ndarray], np.ndarray] | None = None  # per-prefix membership (or per-prefix class)
    dfa_for_length: Callable[[int], DFA] | None = None  # recognition: DFA exact up to that length
    positives: Callable | None = None  # recognition without a DFA: (rng, n, length) -> members or None
    empty_member: bool | None = None
    sampler: Callable[[np.random.Generator, int, int], Batch] | None = None  # transduction / seq2seq
    seq_len: Callable[[int], int] = lambda n: n
    description: str = ""
    draw: Callable[[np.random.Generator, int, int], np.ndarray] | None = (
        None  # recognition: custom string law
    )

    def __post_init__(self) -> None:
        check_int("n_classes", self.n_classes, minimum=1)
        if self.kind not in KINDS:
            raise ValueError(f"kind: expected one of {list(KINDS)}, received {self.kind!r}")

    @property
    def vocab(self) -> int:
        return len(self.alphabet)

    def encode(self, string: str | Sequence[str]) -> np.ndarray:
        toks = list(string) if isinstance(string, str) and all(len(a) == 1 for a in self.alphabet) else string
        index = {a: i for i, a in enumerate(self.alphabet)}
        bad = [s for s in toks if s not in index]
        if bad:
            raise ValueError(
                f"string: symbol {bad[0]!r} is not in the alphabet {list(self.alphabet)} of {self.name}"
            )
        return np.array([index[s] for s in toks], np.int64)

    def member(self, string: str | Sequence[str] | np.ndarray) -> bool:
        """Membership oracle (recognition tasks)."""
        if self.kind != "recognition":
            raise ValueError(f"member: task {self.name!r} is a {self.kind} task, not a language")
        toks = np.asarray(string) if isinstance(string, np.ndarray) else self.encode(string)
        if toks.size == 0:
            if self.empty_member is not None:
                return self.empty_member
            d = self.dfa_for_length(0)
            return bool(d.accept[d.start])
        return bool(self.labels(toks[None, :].astype(np.int64))[0, -1])

    def _sample_members(self, rng, n, length, accepting):
        if self.dfa_for_length is not None:
            return self.dfa_for_length(length).sample(rng, n, length, accepting)
        if accepting:
            return self.positives(rng, n, length)
        out, have = [], 0
        for _ in range(100):  # uniform random strings, rejecting members
            c = rng.integers(0, self.vocab, (2 * n, length))
            c = c[~self.labels(c)[:, -1].astype(bool)]
            out.append(c)
            have += len(c)
            if have >= n:
                return np.concatenate(out)[:n]
        return None

    def sample(self, rng: np.random.Generator, n: int, length: int) -> Batch:
        """``n`` examples of input length ``length`` (balanced on final membership for recognition tasks)."""
        check_int("n", n, minimum=1)
        check_int("length", length, minimum=1)
        if self.kind != "recognition":
            return self.sampler(rng, n, length)
        if self.draw is not None:
            return self._labeled(self.draw(rng, n, length))
        n_pos = n // 2
        pos = self._sample_members(rng, n_pos, length, True)
        neg = self._sample_members(rng, n - n_pos, length, False)
        if pos is None or neg is None:  # one class is empty at this length: return the other one only
            toks = self._sample_members(rng, n, length, neg is None)
            if toks is None:
                raise ValueError(f"length: no strings of length {length} for task {self.name}")
        else:
            neg = neg.copy()
            # half of the negatives: one-symbol mutations of members that leave the language ("near misses")
            n_mut = (n - n_pos) // 2
            if n_mut:
                src = self._sample_members(rng, n_mut, length, True).copy()
                j = rng.integers(0, length, n_mut)
                r = np.arange(n_mut)
                src[r, j] = (src[r, j] + rng.integers(1, max(self.vocab, 2), n_mut)) % self.vocab
                ok = ~self.labels(src)[:, -1].astype(bool)
                neg[:n_mut][ok] = src[ok]
            toks = np.concatenate([pos, neg])[rng.permutation(n)]
        return self._labeled(toks)

    def _labeled(self, toks: np.ndarray) -> Batch:
        tgt = self.labels(toks.astype(np.int64)).astype(np.int32)
        final = np.zeros(toks.shape, bool)
        final[:, -1] = True
        return Batch(toks.astype(np.int32), tgt, np.ones(toks.shape, bool), final)


def _dfa_task(name: str, alphabet: str | Sequence[str], dfa: DFA, description: str = "") -> Task:
    def labels(toks):
        return dfa.accept[dfa.run(toks)]

    return Task(
        name,
        tuple(alphabet),
        2,
        "recognition",
        labels=labels,
        dfa_for_length=lambda n: dfa,
        description=description,
    )


def _regex_dfa(pattern: str, alphabet: str, max_states: int = 200) -> DFA:
    """DFA of a Python regex (full match) over a small alphabet, by exploring residual languages on test words.

    Only used for tiny star-free examples whose minimal DFA has few states; states are identified by their
    acceptance signature on all suffixes up to length 6 (exact for these examples).
    """
    rx = re.compile(pattern)
    suffixes = [""] + ["".join(p) for k in range(1, 7) for p in itertools.product(alphabet, repeat=k)]

    def sig(prefix):
        return tuple(bool(rx.fullmatch(prefix + s)) for s in suffixes)

    reps, index, trans = [""], {sig(""): 0}, []
    i = 0
    while i < len(reps):
        row = []
        for a in alphabet:
            s = sig(reps[i] + a)
            if s not in index:
                index[s] = len(reps)
                reps.append(reps[i] + a)
                if len(reps) > max_states:
                    raise ValueError("regex DFA too large")
            row.append(index[s])
        trans.append(row)
        i += 1
    return DFA(np.array(trans), np.array([bool(rx.fullmatch(r)) for r in reps]), 0)


def _counter_task(
    name: str, alphabet: str, step: Callable, accept: Callable, labels: Callable, description: str
) -> Task:
    cache: dict[int, DFA] = {}

    def dfa_for_length(n):
        bound = max(n, 1)
        if bound not in cache:
            cache[bound] = _dfa_from_fn(
                len(alphabet), lambda q, a: step(q, a, bound), (0, 0, 0), accept, limit=10 * (bound + 2) ** 2
            )
        return cache[bound]

    return Task(
        name,
        tuple(alphabet),
        2,
        "recognition",
        labels=labels,
        dfa_for_length=dfa_for_length,
        description=description,
    )


# ---- counter languages (exact per-prefix labels with numpy counters; DFAs truncated to the length for sampling)
def _dyck1_labels(toks):
    h = np.cumsum(np.where(toks == 0, 1, -1), 1)
    ok = np.minimum.accumulate(h, 1) >= 0
    return (h == 0) & ok


def _dyck1_step(q, a, bound):
    h, dead, _ = q
    if dead:
        return q
    h = h + (1 if a == 0 else -1)
    return (0, 1, 0) if h < 0 or h > bound else (h, 0, 0)


def _anbn_labels(toks, k):
    # a^n b^n (k=2) or a^n b^n c^n (k=3), n >= 1
    T = toks.shape[1]
    nondecr = np.concatenate([np.ones((toks.shape[0], 1), bool), np.diff(toks, axis=1) >= 0], 1)
    sorted_ok = np.logical_and.accumulate(nondecr, 1) & (toks[:, :1] == 0)
    counts = [np.cumsum(toks == s, 1) for s in range(k)]
    eq = np.ones_like(sorted_ok)
    for s in range(1, k):
        eq &= counts[s] == counts[0]
    del T
    return sorted_ok & eq & (counts[0] > 0)


def _near_counts(rng: np.random.Generator, k: int, length: int) -> list[int]:
    """Block sizes ``(c_1..c_k)`` summing to ``length``, each within 2 of ``length / k``, not all equal."""
    m = length // k
    for _ in range(100):
        c = [m + int(d) for d in rng.integers(-2, 3, k - 1)]
        c.append(length - sum(c))
        if min(c) >= 0 and len(set(c)) > 1:
            return c
    return [length] + [0] * (k - 1)


def _anbn_draw(k: int) -> Callable:
    """Strings that test the counting, not just the order: when ``length = k n``, half are ``a^n b^n (c^n)``, a
    quarter sorted near misses ``a^i b^j (c^l)`` with block sizes within 2 of ``n`` (only the counts are wrong) and a
    quarter one-symbol mutations of members (mostly out of order); other lengths: sorted near misses and their
    mutations."""

    def draw(rng, n, length):
        exact = length % k == 0
        rows = []
        for u in rng.random(n):
            if exact and u < 0.5:
                counts = [length // k] * k
            else:
                counts = _near_counts(rng, k, length) if (u < 0.75 or not exact) else [length // k] * k
            row = np.repeat(np.arange(k), counts)
            if u >= 0.75 or (not exact and u >= 0.5):
                j = rng.integers(length)
                row[j] = (row[j] + rng.integers(1, k)) % k
            rows.append(row)
        return np.array(rows, np.int64)

    return draw


def _anbn_task(k: int) -> Task:
    name = "anbn" if k == 2 else "anbncn"
    alphabet = "abc"[:k]

    def labels(toks):
        return _anbn_labels(toks, k)

    def positives(rng, n, length):
        if length % k:
            return None
        return np.repeat(np.arange(k), length // k)[None, :].repeat(n, 0)

    return Task(
        name,
        tuple(alphabet),
        2,
        "recognition",
        labels=labels,
        positives=positives,
        empty_member=False,
        description=f"a^n b^n{' c^n' if k == 3 else ''}, n >= 1 (counting, not regular)",
        draw=_anbn_draw(k) if k == 3 else None,
    )


def _aa_star_draw(rng: np.random.Generator, n: int, length: int) -> np.ndarray:
    """Half ``a^length``, half ``a^length`` with 1-3 ``b`` at random positions: at even lengths the members are
    balanced against near misses, at odd lengths ``a^length`` is the hard non-member (parity of the length)."""
    toks = np.zeros((n, length), np.int64)
    for i in np.flatnonzero(rng.random(n) < 0.5):
        kk = min(int(rng.integers(1, 4)), length)
        toks[i, rng.choice(length, kk, replace=False)] = 1
    return toks


def _since_draw(rng: np.random.Generator, n: int, length: int) -> np.ndarray:
    """Filler ``a`` with 1-4 events (``b`` or ``c``, equally likely) at uniform random positions: the last event is
    typically ``length / 5`` or more symbols back, so the gap to remember grows with the length (with uniform
    strings it would be ~1.5 symbols at every length)."""
    toks = np.zeros((n, length), np.int64)
    for i in range(n):
        kk = min(int(rng.integers(1, 5)), length)
        toks[i, rng.choice(length, kk, replace=False)] = rng.integers(1, 3, kk)
    return toks


def _dyck_bounded(k: int, depth: int) -> DFA:
    def step(q, a):
        if q == "dead":
            return q
        if a < k:
            return q + (a,) if len(q) < depth else "dead"
        return q[:-1] if q and q[-1] == a - k else "dead"

    return _dfa_from_fn(2 * k, step, (), lambda q: q == ())


# ---- groups
def _perm_group(even_only: bool) -> tuple[list[tuple[int, ...]], np.ndarray]:
    perms = list(itertools.permutations(range(5)))
    if even_only:
        perms = [p for p in perms if sum(p[i] > p[j] for i in range(5) for j in range(i + 1, 5)) % 2 == 0]
    idx = {p: i for i, p in enumerate(perms)}
    table = np.array([[idx[tuple(p[q[i]] for i in range(5))] for q in perms] for p in perms])  # p∘q
    return perms, table


def _word_problem(name: str, even_only: bool) -> Task:
    perms, table = _perm_group(even_only)
    e = perms.index(tuple(range(5)))

    def labels(toks):  # the running product after each prefix (acc_t = acc_{t-1} ∘ x_t)
        toks = np.asarray(toks)
        acc = np.full(toks.shape[0], e)
        tgt = np.empty(toks.shape, np.int64)
        for t in range(toks.shape[1]):
            acc = table[acc, toks[:, t]]
            tgt[:, t] = acc
        return tgt

    def sampler(rng, n, length):
        toks = rng.integers(0, len(perms), (n, length))
        m = np.ones(toks.shape, bool)
        return Batch(toks.astype(np.int32), labels(toks).astype(np.int32), m, m)

    alphabet = tuple("".join(map(str, p)) for p in perms)
    return Task(
        name,
        alphabet,
        len(perms),
        "transduction",
        labels=labels,
        sampler=sampler,
        description=f"running product in {'A5' if even_only else 'S5'} (Merrill et al. 2024)",
    )


# ---- transductions
def _position_mod(m: int) -> Task:
    # membership of a prefix depends on its length only, so this is scored per position: [t + 1 = 0 mod m]
    def sampler(rng, n, length):
        toks = rng.integers(0, 2, (n, length))
        tgt = np.broadcast_to((np.arange(1, length + 1) % m == 0), toks.shape).astype(np.int32)
        msk = np.ones(toks.shape, bool)
        return Batch(toks.astype(np.int32), tgt.copy(), msk, msk)

    return Task(
        f"position_mod{m}",
        ("a", "b"),
        2,
        "transduction",
        sampler=sampler,
        description=f"per position: prefix length = 0 mod {m}",
    )


def _flip_flop() -> Task:
    # symbols: 0 = write 0, 1 = write 1, 2 = ignore, 3 = read; the target at a read is the last written bit
    def sampler(rng, n, length):
        toks = rng.choice(4, size=(n, length), p=[0.1, 0.1, 0.6, 0.2])
        toks[:, 0] = rng.integers(0, 2, n)
        last = np.zeros(n, np.int64)
        tgt = np.zeros_like(toks)
        for t in range(length):
            w = toks[:, t] < 2
            last = np.where(w, toks[:, t], last)
            tgt[:, t] = last
        m = toks == 3
        return Batch(toks.astype(np.int32), tgt.astype(np.int32), m, m)

    return Task(
        "flip_flop",
        ("w0", "w1", "i", "r"),
        2,
        "transduction",
        sampler=sampler,
        description="flip-flop language (Liu et al. 2023): a read returns the last written bit",
    )


def _final_only(name, alphabet, n_classes, gen, description, seq_len=lambda n: n):
    """A transduction scored (and trained) at the final position only: ``gen(rng, length) -> (tokens, label)``."""

    def sampler(rng, n, length):
        rows = [gen(rng, length) for _ in range(n)]
        toks = np.array([r[0] for r in rows], np.int32)
        tgt = np.zeros(toks.shape, np.int32)
        tgt[:, -1] = [r[1] for r in rows]
        m = np.zeros(toks.shape, bool)
        m[:, -1] = True
        return Batch(toks, tgt, m, m)

    return Task(
        name,
        tuple(alphabet),
        n_classes,
        "transduction",
        sampler=sampler,
        seq_len=seq_len,
        description=description,
    )


def _even_pairs(rng, n):
    s = rng.integers(0, 2, n)
    return s, int(s[0] == s[-1])  # #ab + #ba even  <=>  first symbol == last symbol


def _parity_check(rng, n):
    s = rng.integers(0, 2, n)
    return s, int(s.sum() % 2)


def _cycle_navigation(rng, n):
    s = rng.integers(0, 3, n)  # 0 stay, 1 +1, 2 -1 on a 5-cycle
    return s, int(np.where(s == 2, -1, s).sum() % 5)


_ARITH = "01234+-*()=x"


def _mod_eval(expr: str, x: int | None = None) -> int:
    e = expr.replace("x", f"({x})") if x is not None else expr
    return int(eval(e)) % 5  # noqa: S307 - generated, digits/operators only


def _expr(rng, n, brackets: bool, var: bool = False) -> str:
    """Random arithmetic expression of exactly ``n`` characters."""
    leaf = "01234x" if var else "01234"
    if n == 1:
        return leaf[rng.integers(len(leaf))]
    if not brackets:  # d op d op ... (odd n), or a leading unary minus for even n
        if n % 2 == 0:
            return "-" + _expr(rng, n - 1, False, var)
        parts = [leaf[rng.integers(len(leaf))] for _ in range((n + 1) // 2)]
        ops = ["+-*"[rng.integers(3)] for _ in range(len(parts) - 1)]
        return "".join(p + o for p, o in zip(parts, ops + [""]))
    if n < 5 or rng.random() < 0.15:
        return "-" + _expr(rng, n - 1, True, var)
    rest = n - 3
    a = int(rng.integers(max(1, rest // 4), max(2, (3 * rest) // 4 + 1))) if rest > 1 else 1
    a = min(a, rest - 1)
    return "(" + _expr(rng, a, True, var) + "+-*"[rng.integers(3)] + _expr(rng, n - 3 - a, True, var) + ")"


def _modular(brackets: bool):
    def gen(rng, n):
        e = _expr(rng, n - 1, brackets) if n > 1 else ""
        toks = [_ARITH.index(c) for c in e] + [_ARITH.index("=")]
        return np.array(toks), _mod_eval(e) if e else 0

    return gen


def _solve_equation(rng, n):
    # "<expr in x> = r" ... the input is expr (n-2 chars), "=", then the value r; target: the unique x in Z5
    for _ in range(200):
        e = _expr(rng, max(n - 2, 1), True, var=True)
        if "x" not in e:
            continue
        vals = [_mod_eval(e, x) for x in range(5)]
        r = vals[rng.integers(5)]
        sols = [x for x in range(5) if vals[x] == r]
        if len(sols) == 1:
            toks = [_ARITH.index(c) for c in e] + [_ARITH.index("="), _ARITH.index(str(r))]
            return np.array(toks[:n] if n >= 3 else toks), sols[0]
    e = "x"
    return np.array([_ARITH.index("x"), _ARITH.index("="), _ARITH.index("0")]), 0


def _reverse_string() -> Task:
    # tokens: 0/1 input, 2 separator, 3 query; output classes 0/1
    def sampler(rng, n, length):
        w = rng.integers(0, 2, (n, length))
        toks = np.concatenate([w, np.full((n, 1), 2), np.full((n, length), 3)], 1)
        tgt = np.zeros_like(toks)
        tgt[:, length + 1 :] = w[:, ::-1]
        m = np.zeros(toks.shape, bool)
        m[:, length + 1 :] = True
        return Batch(toks.astype(np.int32), tgt.astype(np.int32), m, m)

    return Task(
        "reverse_string",
        ("0", "1", "|", "?"),
        2,
        "seq2seq",
        sampler=sampler,
        seq_len=lambda n: 2 * n + 1,
        description="Deletang et al. 2023 (CF): output the reversed input",
    )


def _stack_manipulation() -> Task:
    # input: initial stack (bottom..top) over {0,1}, then actions POP / PUSH0 / PUSH1, separator, queries.
    # output at the queries: the final stack from the top, padded with EMPTY (class 2).
    alphabet = ("0", "1", "pop", "push0", "push1", "|", "?")

    def sampler(rng, n, length):
        toks = np.zeros((n, 2 * length + 1), np.int64)
        tgt = np.zeros_like(toks)
        for i in range(n):
            k = int(rng.integers(1, length + 1))
            stack = list(rng.integers(0, 2, k))
            acts = rng.integers(2, 5, length - k)
            st = list(stack)
            for a in acts:
                if a == 2:
                    if st:
                        st.pop()
                else:
                    st.append(a - 3)
            toks[i, :length] = np.concatenate([stack, acts])
            toks[i, length] = 5
            toks[i, length + 1 :] = 6
            out = st[::-1] + [2] * (length - len(st))
            tgt[i, length + 1 :] = out[:length]
        m = np.zeros(toks.shape, bool)
        m[:, length + 1 :] = True
        return Batch(toks.astype(np.int32), tgt.astype(np.int32), m, m)

    return Task(
        "stack_manipulation",
        alphabet,
        3,
        "seq2seq",
        sampler=sampler,
        seq_len=lambda n: 2 * n + 1,
        description="Deletang et al. 2023 (CF): apply stack actions, output the final stack",
    )


# ---- registry
def _tomita() -> dict[str, DFA]:
    d = {}
    d["tomita1"] = _dfa_from_fn(2, lambda q, a: q if a == 1 else 1, 0, lambda q: q == 0)  # 1*
    d["tomita2"] = _dfa_from_fn(
        2, lambda q, a: {(0, 1): 1, (1, 0): 0}.get((q, a), 2), 0, lambda q: q == 0
    )  # (10)*

    def t3(q, a):  # no odd run of 1s followed (later) by an odd run of 0s
        run1, odd1_seen, run0, dead = q
        if dead:
            return q
        if a == 1:
            if run0 % 2 == 1 and odd1_seen:
                return (0, 0, 0, 1)
            seen = odd1_seen if run0 == 0 else 0
            return ((run1 + 1) % 2, seen, 0, 0)
        seen = odd1_seen or (run1 % 2 == 1)
        return (0, int(seen), (run0 % 2) + 1, 0)

    d["tomita3"] = _dfa_from_fn(2, t3, (0, 0, 0, 0), lambda q: not q[3] and not (q[1] and q[2] % 2 == 1))
    d["tomita4"] = _dfa_from_fn(2, lambda q, a: 3 if q == 3 else (q + 1 if a == 0 else 0), 0, lambda q: q < 3)
    d["tomita5"] = _dfa_from_fn(
        2, lambda q, a: (q[0] ^ (a == 0), q[1] ^ (a == 1)), (0, 0), lambda q: q == (0, 0)
    )
    d["tomita6"] = _dfa_from_fn(2, lambda q, a: (q + (1 if a == 0 else -1)) % 3, 0, lambda q: q == 0)
    d["tomita7"] = _dfa_from_fn(
        2, lambda q, a: q if (q % 2) == (a == 1) else min(q + 1, 4), 0, lambda q: q < 4
    )
    return d


def _with_draw(task: Task, draw: Callable) -> Task:
    task.draw = draw
    return task


def _build() -> dict[str, Callable[[], Task]]:
    t: dict[str, Callable[[], Task]] = {}
    t["parity"] = lambda: _dfa_task("parity", "01", DFA([[0, 1], [1, 0]], [1, 0]), "even number of 1s")
    for m in (2, 3, 5):
        trans = [[q, (q + 1) % m] for q in range(m)]
        t[f"count_mod{m}"] = lambda m=m, trans=trans: _dfa_task(
            f"count_mod{m}", "01", DFA(trans, [1] + [0] * (m - 1)), f"number of 1s = 0 mod {m}"
        )
        t[f"position_mod{m}"] = lambda m=m: _position_mod(m)
    t["aa_star"] = lambda: _with_draw(
        _dfa_task(
            "aa_star",
            "ab",
            DFA([[1, 2], [0, 2], [2, 2]], [1, 0, 0]),
            "(aa)*: even number of a and no b (not star-free)",
        ),
        _aa_star_draw,
    )
    t["since"] = lambda: _with_draw(
        _dfa_task(
            "since",
            "abc",
            DFA([[0, 1, 2], [1, 1, 2], [2, 1, 2]], [0, 1, 0]),
            "(¬c) S b = c* ... the last b comes after the last c (star-free; "
            "LTLf past 'since'); sparse events",
        ),
        _since_draw,
    )
    t["until"] = lambda: _with_draw(
        _dfa_task(
            "until",
            "abc",
            DFA([[0, 1, 2], [1, 1, 1], [2, 2, 2]], [0, 1, 0]),
            "a U b at the first position = a* b ... the first event is b, not c (star-free; LTLf future "
            "'until' read at the start); sparse events",
        ),
        _since_draw,
    )
    t["first_symbol"] = lambda: _dfa_task(
        "first_symbol", "ab", DFA([[1, 2], [1, 1], [2, 2]], [0, 1, 0]), "first symbol is a"
    )
    t["last_symbol"] = lambda: _dfa_task(
        "last_symbol", "ab", DFA([[1, 0], [1, 0]], [0, 1]), "last symbol is a"
    )
    t["ab_star"] = lambda: _dfa_task("ab_star", "ab", _regex_dfa("(ab)*", "ab"), "(ab)* (star-free)")
    t["no_bb"] = lambda: _dfa_task("no_bb", "ab", _regex_dfa("(?!.*bb).*", "ab"), "no factor bb (star-free)")
    t["a_before_b"] = lambda: _dfa_task(
        "a_before_b",
        "abc",
        _regex_dfa("[ac]*a[ac]*b.*|[ac]*", "abc"),
        "c* ... an a occurs before the first b, or no b (star-free)",
    )
    for name, dfa_ in _tomita().items():
        t[name] = lambda name=name, dfa_=dfa_: _dfa_task(name, "01", dfa_, "Tomita grammar")
    for k, depth in ((1, 2), (2, 2), (2, 3), (3, 3)):
        brackets = "([{"[:k] + ")]}"[:k]
        t[f"dyck{k}_depth{depth}"] = lambda k=k, depth=depth, b=brackets: _dfa_task(
            f"dyck{k}_depth{depth}", b, _dyck_bounded(k, depth), f"Dyck-{k} with depth <= {depth}"
        )
    t["dyck1"] = lambda: _counter_task(
        "dyck1",
        "()",
        _dyck1_step,
        lambda q: q == (0, 0, 0),
        _dyck1_labels,
        "Dyck-1 (balanced parentheses, counting)",
    )
    t["anbn"] = lambda: _anbn_task(2)
    t["anbncn"] = lambda: _anbn_task(3)
    t["s5_word"] = lambda: _word_problem("s5_word", False)
    t["a5_word"] = lambda: _word_problem("a5_word", True)
    t["flip_flop"] = _flip_flop
    t["even_pairs"] = lambda: _final_only("even_pairs", "ab", 2, _even_pairs, "Deletang (R): #ab + #ba even")
    t["parity_check"] = lambda: _final_only(
        "parity_check", "ab", 2, _parity_check, "Deletang (R): parity of #b"
    )
    t["cycle_navigation"] = lambda: _final_only(
        "cycle_navigation", ("stay", "+1", "-1"), 5, _cycle_navigation, "Deletang (R): position on a 5-cycle"
    )
    t["modular_arithmetic_simple"] = lambda: _final_only(
        "modular_arithmetic_simple", _ARITH, 5, _modular(False), "Deletang (R): expression mod 5, no brackets"
    )
    t["modular_arithmetic"] = lambda: _final_only(
        "modular_arithmetic", _ARITH, 5, _modular(True), "Deletang (CF): bracketed expression mod 5"
    )
    t["solve_equation"] = lambda: _final_only(
        "solve_equation", _ARITH, 5, _solve_equation, "Deletang (CF): the unique x in Z5 solving expr(x) = r"
    )
    t["reverse_string"] = _reverse_string
    t["stack_manipulation"] = _stack_manipulation
    return t


class TaskRegistry(Mapping):
    """The named tasks: a read-only mapping ``name -> factory`` (a zero-argument callable returning a :class:`Task`).

    ``get_task(name)`` builds (once, cached) and returns the task; :func:`register_task` adds a user task under a
    name, after which every name-taking API (``get_task``, ``ProbeConfig(tasks=(name,))``) accepts it. Builtins:
    parity, count_mod{2,3,5}, position_mod{2,3,5}, aa_star, since, until, first_symbol, last_symbol, ab_star,
    no_bb, a_before_b, tomita1..7, dyck{k}_depth{d}, dyck1, anbn, anbncn, s5_word, a5_word, flip_flop and
    Deletang et al.'s tasks (even_pairs, parity_check, cycle_navigation, modular_arithmetic[_simple],
    solve_equation, reverse_string, stack_manipulation).
    """

    def __init__(self, factories: dict[str, Callable[[], Task]]):
        self._factories = dict(factories)

    def __getitem__(self, name: str) -> Callable[[], Task]:
        return self._factories[name]

    def __iter__(self):
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)

    def __repr__(self) -> str:
        return f"TaskRegistry({sorted(self._factories)})"


TASKS = TaskRegistry(_build())
"""The named tasks: a read-only mapping from task name to a zero-argument factory returning a :class:`Task`
(build one with ``get_task(name)``). It holds the builtin languages (parity, counting and position mod m,
star-free and LTLf-derived languages, the Tomita grammars, bounded and unbounded Dyck, anbn / anbncn, S5 / A5
word problems, flip-flop and Deletang et al.'s tasks; ``list(TASKS)`` names them) and every task added with
:func:`register_task`."""
_CACHE: dict[str, Task] = {}


def register_task(name: str, task: Task | Callable[[], Task], *, overwrite: bool = False) -> None:
    """Make ``task`` (a :class:`Task` or a zero-argument factory returning one) available as ``name``.

    Refuses a name that is already taken unless ``overwrite=True`` (which also drops the cached build).
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name: expected a non-empty string, received {name!r}")
    if not (isinstance(task, Task) or callable(task)):
        raise TypeError(f"task: expected a Task or a zero-argument factory, received {type(task).__name__}")
    if name in TASKS and not overwrite:
        raise ValueError(f"name: task {name!r} is already registered; pass overwrite=True to replace it")
    TASKS._factories[name] = (lambda t=task: t) if isinstance(task, Task) else task
    _CACHE.pop(name, None)


def get_task(name: str | Task) -> Task:
    """The task called ``name`` (see ``TASKS``); a :class:`Task` is returned as is."""
    if isinstance(name, Task):
        return name
    if not isinstance(name, str) or name not in TASKS:
        raise ValueError(f"name: unknown task {name!r}; expected one of {sorted(TASKS)} or a Task")
    if name not in _CACHE:
        t = TASKS[name]()
        if not isinstance(t, Task):
            raise TypeError(
                f"name: the factory of task {name!r} returned {type(t).__name__}, expected a Task"
            )
        _CACHE[name] = t
    return _CACHE[name]


def dfa_task(name: str, alphabet: Sequence[str], dfa: DFA, description: str = "") -> Task:
    """A recognition task from a user DFA over ``alphabet``."""
    if len(alphabet) == 0:
        raise ValueError("alphabet: expected a non-empty alphabet, received an empty one")
    if dfa.n_symbols != len(alphabet):
        raise ValueError(
            f"dfa: expected {len(alphabet)} symbol columns for the alphabet, received {dfa.n_symbols}"
        )
    return _dfa_task(name, alphabet, dfa, description)


__all__ = ["DFA", "KINDS", "TASKS", "Batch", "Task", "TaskRegistry", "dfa_task", "get_task", "register_task"]
