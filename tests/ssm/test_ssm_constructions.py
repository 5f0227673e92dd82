"""Hand-set constructions: exact on all short strings and random long strings; fixed-width counters break where
the bit width says they must (measured by running the model)."""

import equinox as eqx
import pytest

from jaxkit.ssm import CONSTRUCTIONS, FixedPoint, LowFloat, construct, first_failure, verify

# one representative per mechanism (the experiment verifies all of CONSTRUCTIONS with 10,000 random strings up to
# length 1,000); (task, variant, exhaustive length, random strings, max length, expected exhaustive length). The
# constructions added for the LTLf claims get lighter random checks.
CASES = [
    ("parity", "selective_signed", 12, 200, 1000, 12),
    ("count_mod3", "selective_complex", 12, 200, 1000, 12),
    ("count_mod3", "dense", 12, 200, 1000, 12),
    ("position_mod3", "time_invariant", 12, 200, 1000, 12),
    ("flip_flop", "selective_nonneg", 12, 200, 1000, 9),
    ("no_bb", "selective_nonneg", 12, 200, 1000, 12),
    ("dyck1", "time_invariant", 12, 200, 1000, 12),
    ("aa_star", "time_invariant", 8, 40, 600, 8),
    ("aa_star", "selective_signed", 8, 40, 600, 8),
    ("since", "selective_nonneg", 8, 40, 600, 8),
    ("first_symbol", "time_invariant", 8, 40, 600, 8),
    ("anbncn", "selective_nonneg", 8, 40, 600, 8),
    ("s5_word", "dense", 8, 40, 600, 2),
]


@pytest.mark.parametrize("task,variant,exh,n_random,max_len,exh_used", CASES)
def test_construction_is_exact(task, variant, exh, n_random, max_len, exh_used):
    r = verify(construct(task, variant), exhaustive_len=exh, n_random=n_random, max_len=max_len, seed=3)
    assert r["exhaustive_len"] == exh_used
    assert r["exhaustive_errors"] == 0
    assert r["random_errors"] == 0 and r["random_positions"] > 40 * n_random * max_len // 200


def test_anbncn_construction_needs_its_order_check():
    c = construct("anbncn", "selective_nonneg")
    blind = eqx.tree_at(lambda m: m.layers[0].w2, c.model, c.model.layers[0].w2 * 0.0)  # no descent flag
    r = verify(type(c)(c.task, c.variant, blind, c.counting), exhaustive_len=6, n_random=0)
    assert r["exhaustive_errors"] > 0  # e.g. "bac" has equal counts but is out of order


def test_constructions_refuse_what_theory_forbids():
    for task, variant in [
        ("parity", "selective_nonneg"),
        ("parity", "time_invariant"),
        ("count_mod3", "selective_signed"),
        ("flip_flop", "time_invariant"),
        ("position_mod3", "selective_nonneg"),
        ("aa_star", "selective_nonneg"),
        ("since", "time_invariant"),
        ("s5_word", "selective_complex"),
    ]:
        assert variant not in CONSTRUCTIONS.get(task, ())
        with pytest.raises(ValueError, match="no construction"):
            construct(task, variant)
    with pytest.raises(ValueError, match="variant"):
        construct("parity", "lstm")


def test_broken_construction_is_caught():
    c = construct("parity", "selective_signed")
    bad = eqx.tree_at(lambda m: m.layers[0].in_w, c.model, c.model.layers[0].in_w * 0.0)  # no 1s injected
    r = verify(type(c)(c.task, c.variant, bad), exhaustive_len=6, n_random=0)
    assert r["exhaustive_errors"] > 0


def test_fixed_width_counter_fails_exactly_beyond_its_range():
    c = construct("dyck1", "selective_nonneg")
    # k-bit saturating integers hold heights up to 2^(k-1) - 1, so (^n )^n first fails at n = 2^(k-1)
    assert first_failure(c, FixedPoint(6, 0), max_n=80) == 2**5
    # floats with m mantissa bits stop counting at 2^(m+1): first failure at 2^(m+1) + 1
    assert first_failure(c, LowFloat(5, 3), max_n=80) == 2**4 + 1
    assert first_failure(c, None, max_n=80) is None  # float32 counts far beyond
    # a^n b^n c^n: the #a - #b counter saturates at 31 as well, so the member first fails at n = 32
    abc = construct("anbncn", "time_invariant")
    assert first_failure(abc, FixedPoint(6, 0), max_n=40) == 2**5
    assert first_failure(abc, None, max_n=40) is None
