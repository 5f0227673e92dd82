"""The two lists that keep what the fuzz suite has not closed visible. Both may only shrink: the tests fail on an
entry that no longer applies, telling you to remove it.

- ``PENDING``: exports with neither a base call built from their signature nor a factory, with the reason.
- ``SLOW``: exports fuzzed only in the long run (``pytest -m fuzz``), with the reason.
- ``KNOWN_VIOLATIONS``: ``{export: {(parameter, edge): reason}}`` for contract violations not fixed yet.

A documented exception to the contract (a defined ``inf``, an unchecked ``*_core`` function) is not a violation:
it is listed in ``DOCUMENTED`` below *and* in the table of docs/contracts.md (a test checks that every name here
appears there), with the edges it applies to.
"""

from __future__ import annotations

PENDING: dict[str, str] = {}

# Exports fuzzed only by the long run (``pytest -m fuzz``): one base call takes seconds (measured on 2 cores), and
# the edge table multiplies it by ten or more, past the default run's budget.
SLOW: dict[str, str] = {}

KNOWN_VIOLATIONS: dict[str, dict[tuple[str, str], str]] = {}

# Documented exceptions (docs/contracts.md, "Documented exceptions"): export -> (edges whose non-finite result is
# the documented behaviour, the reason). Only a non-finite result on these edges is excused; an error of the
# wrong type, a wrong shape or a hang is still a violation.
_NONFINITE_IN = frozenset({"nan", "inf", "-inf"})
_CORE = (
    "unchecked by design: the *_core functions are the jit/vmap building blocks behind a checked public "
    "function; they do no value checks, so NaN/inf in gives NaN/inf out"
)
_UNDEFINED_RATIO = (
    "a ratio whose denominator is zero (constant returns have no spread, a series without a drawdown has no "
    "Calmar ratio) is undefined: nan, with a RuntimeWarning saying why"
)
DOCUMENTED: dict[str, tuple[frozenset[str], str]] = {
    **{
        f"jaxkit.portfolio.{f}": (frozenset({"zeros"}), _UNDEFINED_RATIO)
        for f in (
            "sharpe_ratio",
            "sortino_ratio",
            "calmar_ratio",
            "performance_summary",
            "sharpe_confidence_interval",
        )
    },
    "jaxkit.portfolio.black_litterman_core": (_NONFINITE_IN, _CORE),
    "jaxkit.portfolio.precision_black_litterman_core": (_NONFINITE_IN, _CORE),
    "jaxkit.portfolio.stable_weights_core": (_NONFINITE_IN, _CORE),
    "jaxkit.portfolio.ledoit_wolf_core": (_NONFINITE_IN, _CORE),
    "jaxkit.portfolio.simulate": (_NONFINITE_IN, _CORE),
    "jaxkit.operators.relative_l2": (
        frozenset({"zeros"}),
        "a sample whose target is identically zero has no finite relative error: inf (0 for an exact match); a "
        "training loss that meets one stops with FloatingPointError",
    ),
    "jaxkit.diffusion.igso3.angle_log_density": (
        frozenset({"zeros"}),
        "the angle density (1 - cos ω)/π · f vanishes at ω = 0, so its logarithm is -inf there (exact)",
    ),
}
