"""Speed metrics of the stability experiments against hand-computed values."""

import pytest

from jaxkit.stability._seeds import compare_methods, median_curves


def _hist(rows):
    return [{"step": s, "acc": list(v)} for s, v in rows]


def test_compare_methods_by_hand():
    runs = {
        # 3 seeds; baseline reaches 0.9 at steps 20, 30, 30 -> median 30
        "baseline": {"history": _hist([(10, [0.1, 0.2, 0.3]), (20, [0.95, 0.5, 0.5]), (30, [0.95, 0.9, 0.91])])},
        # reaches at 10, 20 and never (censored at 40) -> median 20, speedup 1 - 20/30
        "fast": {"history": _hist([(10, [0.9, 0.1, 0.1]), (20, [0.9, 0.95, 0.1]), (30, [0.9, 0.95, 0.2])])},
        # never for two seeds -> censored
        "slow": {"history": _hist([(10, [0.1, 0.1, 0.1]), (20, [0.1, 0.1, 0.1]), (30, [0.92, 0.1, 0.1])])},
    }
    steps, speed, censored = compare_methods(runs, "acc", 0.9, 40)
    assert steps["baseline"]["median"] == 30 and steps["baseline"]["per_seed"] == [20, 30, 30]
    assert steps["fast"]["per_seed"] == [10, 20, None] and steps["fast"]["median"] == 20
    assert speed["fast"] == pytest.approx(100 * (1 - 20 / 30))
    assert speed["slow"] == pytest.approx(100 * (1 - 40 / 30))
    assert censored == {"baseline": False, "fast": False, "slow": True}
    curves = median_curves(runs, ("acc",))
    assert curves["fast"] == {"step": [10, 20, 30], "acc": [0.1, 0.9, 0.9]}
    with pytest.raises(ValueError, match="baseline"):
        compare_methods({"fast": runs["fast"]}, "acc", 0.9, 40)
