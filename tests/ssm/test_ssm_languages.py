"""Language oracles vs independent Python definitions; samplers; Deletang tasks; errors."""

import itertools
import re

import numpy as np
import pytest

from jaxkit.ssm import DFA, dfa_task, get_task


def _runs(s):
    return [(m.group(0)[0], len(m.group(0))) for m in re.finditer(r"0+|1+", s)]


def _tomita3(s):
    r = _runs(s)
    return not any(a == ("1", a[1]) and a[1] % 2 and b[0] == "0" and b[1] % 2 for a, b in zip(r, r[1:]))


def _dyck(s, pairs):
    st = []
    for c in s:
        if c in pairs:
            st.append(c)
        elif not st or pairs[st.pop()] != c:
            return False
    return not st


def _max_depth(s):
    d = m = 0
    for c in s:
        d += 1 if c in "([{" else -1
        m = max(m, d)
    return m


PREDICATES = {
    "parity": ("01", lambda s: s.count("1") % 2 == 0),
    "count_mod3": ("01", lambda s: s.count("1") % 3 == 0),
    "aa_star": ("ab", lambda s: re.fullmatch("(aa)*", s) is not None),
    "ab_star": ("ab", lambda s: re.fullmatch("(ab)*", s) is not None),
    "no_bb": ("ab", lambda s: "bb" not in s),
    "first_symbol": ("ab", lambda s: s[:1] == "a"),
    "last_symbol": ("ab", lambda s: s[-1:] == "a"),
    "tomita1": ("01", lambda s: "0" not in s),
    "tomita2": ("01", lambda s: re.fullmatch("(10)*", s) is not None),
    "tomita3": ("01", _tomita3),
    "tomita4": ("01", lambda s: "000" not in s),
    "tomita5": ("01", lambda s: s.count("0") % 2 == 0 and s.count("1") % 2 == 0),
    "tomita6": ("01", lambda s: (s.count("0") - s.count("1")) % 3 == 0),
    "tomita7": ("01", lambda s: re.fullmatch("0*1*0*1*", s) is not None),
    "dyck1": ("()", lambda s: _dyck(s, {"(": ")"})),
    "dyck2_depth2": ("([)]", lambda s: _dyck(s, {"(": ")", "[": "]"}) and _max_depth(s) <= 2),
    "anbn": ("ab", lambda s: len(s) > 0 and s == "a" * (len(s) // 2) + "b" * (len(s) // 2)),
    "anbncn": ("abc", lambda s: len(s) > 0 and s == "".join(c * (len(s) // 3) for c in "abc")),
    "a_before_b": ("abc", lambda s: "b" not in s or "a" in s[: s.index("b")]),
    "since": ("abc", lambda s: s.replace("a", "")[-1:] == "b"),
}


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_oracle_matches_python_definition_on_all_strings_up_to_8(name):
    alphabet, pred = PREDICATES[name]
    task = get_task(name)
    assert "".join(task.alphabet) == alphabet
    toks = np.array(list(itertools.product(range(len(alphabet)), repeat=8)))
    labels = task.labels(toks)  # per-prefix membership covers every string up to length 8
    for row, lab in zip(toks[:: max(1, len(toks) // 700)], labels[:: max(1, len(toks) // 700)]):
        s = "".join(alphabet[i] for i in row)
        assert [bool(x) for x in lab] == [pred(s[: t + 1]) for t in range(8)], s
    assert task.member("") == pred("")


@pytest.mark.parametrize(
    "name", ["parity", "no_bb", "tomita3", "dyck1", "dyck2_depth2", "anbn", "count_mod3"]
)
def test_recognition_samplers_are_balanced_and_labeled_by_the_oracle(name):
    task = get_task(name)
    rng = np.random.default_rng(0)
    for length in (12, 60, 300):
        b = task.sample(rng, 64, length)
        assert b.tokens.shape == (64, length)
        assert b.targets[:, -1].mean() == 0.5
        alphabet, pred = PREDICATES[name]
        for row, y in zip(b.tokens[:16], b.targets[:16, -1]):
            assert pred("".join(alphabet[i] for i in row)) == bool(y)


def test_custom_string_laws_test_what_the_language_needs():
    rng = np.random.default_rng(3)
    for name in ("aa_star", "since", "anbncn"):
        alphabet, pred = PREDICATES[name]
        for length in (45, 48, 249, 252):
            b = get_task(name).sample(rng, 200, length)
            words = ["".join(alphabet[i] for i in row) for row in b.tokens]
            assert [pred(w) for w in words] == [bool(y) for y in b.targets[:, -1]]
            frac = b.targets[:, -1].mean()
            if name == "aa_star":  # half are a^n: members at even lengths, the hard non-members at odd ones
                assert np.mean([set(w) == {"a"} for w in words]) == pytest.approx(0.5, abs=0.1)
                assert frac == 0.0 if length % 2 else 0.35 < frac < 0.65
            elif name == "anbncn":  # half members, a quarter sorted strings whose block sizes are off by 1-2
                assert 0.35 < frac < 0.65
                srt = [w == "".join(sorted(w)) and not pred(w) for w in words]
                assert 0.15 < np.mean(srt) < 0.35
            else:  # balanced, and the last event lies ~length/5 or more back: the gap grows with the length
                assert 0.4 < frac < 0.6
                gap = np.mean([len(w) - 1 - max(w.rfind("b"), w.rfind("c")) for w in words])
                assert gap > length / 8


def test_since_is_the_ltlf_past_formula():
    from jaxkit.ssm import prefix_labels

    toks = np.array(list(itertools.product(range(3), repeat=7)))  # a = {}, b = {p0}, c = {p1}
    np.testing.assert_array_equal(
        get_task("since").labels(toks), prefix_labels("(!p1) S p0", toks, n_props=2)
    )


def test_word_problems_compose_permutations():
    for name, size in (("s5_word", 120), ("a5_word", 60)):
        task = get_task(name)
        assert task.n_classes == size
        b = task.sample(np.random.default_rng(1), 4, 20)
        perms = [tuple(int(c) for c in a) for a in task.alphabet]
        for row, tgt in zip(b.tokens, b.targets):
            acc = tuple(range(5))
            for t, sym in enumerate(row):
                p = perms[sym]
                acc = tuple(acc[p[i]] for i in range(5))  # acc ∘ p
                assert perms[tgt[t]] == acc
        np.testing.assert_array_equal(task.labels(b.tokens), b.targets)


def test_deletang_tasks():
    rng = np.random.default_rng(2)
    arith = get_task("modular_arithmetic")
    b = arith.sample(rng, 16, 31)
    for row, y in zip(b.tokens, b.targets[:, -1]):
        expr = "".join(arith.alphabet[i] for i in row[:-1])
        assert len(expr) == 30 and int(eval(expr)) % 5 == y  # noqa: S307
    eq = get_task("solve_equation").sample(rng, 8, 25)
    for row, y in zip(eq.tokens, eq.targets[:, -1]):
        s = "".join(get_task("solve_equation").alphabet[i] for i in row)
        lhs, r = s.split("=")
        sols = [x for x in range(5) if int(eval(lhs.replace("x", f"({x})"))) % 5 == int(r)]  # noqa: S307
        assert sols == [y]
    rev = get_task("reverse_string").sample(rng, 4, 10)
    assert rev.tokens.shape == (4, 21)
    np.testing.assert_array_equal(rev.targets[:, 11:], rev.tokens[:, :10][:, ::-1])
    ep = get_task("even_pairs").sample(rng, 32, 15)
    for row, y in zip(ep.tokens, ep.targets[:, -1]):
        pairs = sum(a != b for a, b in zip(row[:14], row[1:15]))
        assert (pairs % 2 == 0) == bool(y)
    ff = get_task("flip_flop").sample(rng, 8, 50)
    for row, tgt, m in zip(ff.tokens, ff.targets, ff.mask):
        last = None
        for t, s in enumerate(row):
            last = s if s < 2 else last
            if m[t]:
                assert s == 3 and tgt[t] == last


def test_errors():
    with pytest.raises(ValueError, match="alphabet"):
        dfa_task("empty", [], DFA(np.zeros((1, 1), int), [True]))
    with pytest.raises(ValueError, match="unknown task"):
        get_task("palindromes_of_doom")
    with pytest.raises(ValueError, match="alphabet"):
        get_task("parity").member("012")
    with pytest.raises(ValueError, match="trans"):
        DFA(np.zeros((2, 0), int), [True, False])
