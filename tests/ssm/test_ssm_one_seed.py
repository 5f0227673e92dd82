"""Statistics that cannot be computed say so (issue 49): a confidence interval over one seed is not available
(before: seed_interval returned [x, x], a zero-width interval that reads as certainty)."""

import pytest

from jaxkit import ssm
from jaxkit.ssm._probe import ProbeConfig, _summarize


def test_one_seed_has_no_interval():
    with pytest.raises(ValueError, match="not available from one seed"):
        ssm.seed_interval([0.7])
    assert ssm.seed_interval([0.7, 0.7]) == (0.7, 0.7)  # two identical seeds: a real zero-width t-interval
    cfg = ProbeConfig(tasks=("parity",), lrs=(1e-3,), n_seeds=1, val_lengths=(50,), test_lengths=(99,))
    results, per = _summarize(cfg, [(0, 0, 1e-3)], [{99: 0.8}], [{50: 0.9}], [{30: 1.0}], [])
    assert per["parity"]["test_ci"] is None and per["parity"]["test_acc"] == pytest.approx(0.8)
