"""Hand-set constructions: exact on all short strings and random long strings; fixed-width counters break where
the bit width says they must (measured by running the model)."""

import equinox as eqx
import pytest

from jaxkit.ssm import CONSTRUCTIONS, FixedPoint, LowFloat, construct, first_failure, verify

# one representative per mechanism (the experiment verifies all of CONSTRUCTIONS with 10,000 random strings)
CASES = [("parity", "selective_signed"), ("count_mod3", "selective_complex"), ("count_mod3", "dense"),
         ("position_mod3", "time_invariant"), ("flip_flop", "selective_nonneg"), ("no_bb", "selective_nonneg"),
         ("dyck1", "time_invariant")]


@pytest.mark.parametrize("task,variant", CASES)
def test_construction_is_exact(task, variant):
    r = verify(construct(task, variant), exhaustive_len=12, n_random=200, max_len=1000, seed=3)
    assert r["exhaustive_len"] == (9 if task == "flip_flop" else 12)
    assert r["exhaustive_errors"] == 0
    assert r["random_errors"] == 0 and r["random_positions"] > 50_000


def test_constructions_refuse_what_theory_forbids():
    for task, variant in [("parity", "selective_nonneg"), ("parity", "time_invariant"), ("count_mod3", "selective_signed"),
                          ("flip_flop", "time_invariant"), ("position_mod3", "selective_nonneg")]:
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
