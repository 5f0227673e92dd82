"""LTLf: evaluator vs brute-force recursive semantics, parser round trips, fragments, errors."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxkit.ssm import _ltlf as ltlf
from jaxkit.ssm._ltlf import Formula, LTLfSyntaxError, parse, to_string


def brute(f: Formula, P: np.ndarray, i: int) -> np.ndarray:
    """Textbook recursive semantics at position i, vectorized over traces P (N, n, props) only."""
    n = P.shape[1]
    N = P.shape[0]
    op = f.op
    if op == "prop":
        return P[:, i, int(f.name[1:])]
    if op == "true":
        return np.ones(N, bool)
    if op == "false":
        return np.zeros(N, bool)
    a = f.args[0]
    if op == "!":
        return ~brute(a, P, i)
    if op == "&":
        return brute(a, P, i) & brute(f.args[1], P, i)
    if op == "|":
        return brute(a, P, i) | brute(f.args[1], P, i)
    if op == "->":
        return ~brute(a, P, i) | brute(f.args[1], P, i)
    if op == "X":
        return brute(a, P, i + 1) if i + 1 < n else np.zeros(N, bool)
    if op == "N":
        return brute(a, P, i + 1) if i + 1 < n else np.ones(N, bool)
    if op == "F":
        return np.any([brute(a, P, j) for j in range(i, n)], 0)
    if op == "G":
        return np.all([brute(a, P, j) for j in range(i, n)], 0)
    if op == "Y":
        return brute(a, P, i - 1) if i > 0 else np.zeros(N, bool)
    if op == "O":
        return np.any([brute(a, P, j) for j in range(0, i + 1)], 0)
    if op == "H":
        return np.all([brute(a, P, j) for j in range(0, i + 1)], 0)
    b = f.args[1]
    if op == "U":  # exists j >= i: b at j and a on [i, j)
        out = np.zeros(N, bool)
        for j in range(i, n):
            ok = brute(b, P, j)
            for k in range(i, j):
                ok = ok & brute(a, P, k)
            out |= ok
        return out
    if op == "R":  # for all j >= i: b at j or a at some k in [i, j)
        out = np.ones(N, bool)
        for j in range(i, n):
            ok = brute(b, P, j)
            for k in range(i, j):
                ok = ok | brute(a, P, k)
            out &= ok
        return out
    if op == "S":  # exists j <= i: b at j and a on (j, i]
        out = np.zeros(N, bool)
        for j in range(0, i + 1):
            ok = brute(b, P, j)
            for k in range(j + 1, i + 1):
                ok = ok & brute(a, P, k)
            out |= ok
        return out
    raise AssertionError(op)


def all_traces(n: int) -> np.ndarray:
    tok = np.array(list(itertools.product(range(4), repeat=n)), np.int64).reshape(-1, n)
    return ((tok[..., None] >> np.arange(2)) & 1).astype(bool)


TRACES = {n: all_traces(n) for n in range(1, 9)}


def _formulas():
    rng = np.random.default_rng(7)
    fs = [
        ltlf.random_formula(rng, frag, 2)
        for frag in ("full", "future", "past", "full", "full", "past", "future")
    ]
    fs += [
        parse(s) for s in ("p0 U (p1 R X p0)", "(p0 S Y p1) & N false", "G (p0 -> F p1)", "H (p1 -> O p0)")
    ]
    return fs


@pytest.mark.parametrize("f", _formulas(), ids=to_string)
def test_evaluator_matches_brute_force_on_all_traces_up_to_length_8(f):
    for n, P in TRACES.items():
        fast = ltlf.evaluate(f, P)
        positions = range(n) if n <= 4 else (0, n // 2, n - 1)
        for i in positions:
            np.testing.assert_array_equal(fast[:, i], brute(f, P, i), err_msg=f"{to_string(f)} n={n} i={i}")


def test_prefix_labels_match_evaluating_each_prefix():
    rng = np.random.default_rng(1)
    toks = rng.integers(0, 4, (20, 9))
    for s in ("p0 U p1", "G (p0 | X p1)", "O (p0 & Y p1)", "F p0 & H !p1"):
        f = parse(s)
        lab = ltlf.prefix_labels(f, toks, n_props=2)
        for t in range(9):
            np.testing.assert_array_equal(lab[:, t], ltlf.accepts(f, toks[:, : t + 1], n_props=2))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(sorted(ltlf.FRAGMENTS)), st.integers(0, 4))
def test_parser_round_trip_and_fragments(seed, fragment, d):
    f = ltlf.random_formula(np.random.default_rng(seed), fragment, d)
    assert parse(to_string(f)) == f
    assert ltlf.in_fragment(f, fragment)
    assert ltlf.depth(f) <= d
    if fragment == "past":
        assert ltlf.is_pure_past(f)
    if fragment == "future":
        assert ltlf.is_pure_future(f)


def test_parser_precedence_and_sugar():
    assert parse("a & b | c") == Formula(
        "|", (Formula("&", (ltlf.prop("a"), ltlf.prop("b"))), ltlf.prop("c"))
    )
    assert parse("a U b U c") == parse("a U (b U c)")
    assert parse("WX ~a") == Formula("N", (Formula("!", (ltlf.prop("a"),)),))
    assert parse("a -> b -> c") == parse("a -> (b -> c)")


@pytest.mark.parametrize(
    "text,pos",
    [("p0 & ", 5), ("(p0 U p1", 8), ("p0 ) ", 3), ("p0 $ p1", 3), ("Q p0", 0), ("", 0), ("G & p1", 2)],
)
def test_malformed_formula_reports_position(text, pos):
    with pytest.raises(LTLfSyntaxError) as e:
        parse(text)
    assert e.value.position == pos
    assert f"position {pos}" in str(e.value)
    assert isinstance(e.value, ValueError)


def test_bad_inputs():
    with pytest.raises(ValueError, match="props"):
        ltlf.random_formula(np.random.default_rng(0), "full", 2, props=())
    with pytest.raises(ValueError, match="fragment"):
        ltlf.random_formula(np.random.default_rng(0), "nope", 2)
    with pytest.raises(ValueError, match="not among"):
        ltlf.evaluate("q", np.zeros((1, 3), np.int64), n_props=2)


def test_formula_task_is_balanced_and_consistent():
    task = ltlf.formula_task("G (p0 -> X p1)", 2)
    b = task.sample(np.random.default_rng(0), 64, 30)
    assert abs(b.targets[:, -1].mean() - 0.5) < 0.05
    np.testing.assert_array_equal(
        b.targets[:, -1], ltlf.accepts("G (p0 -> X p1)", b.tokens.astype(np.int64), n_props=2)
    )
