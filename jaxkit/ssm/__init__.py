"""SSM expressivity probes: gate classes, fixed-width arithmetic, formal languages, LTLf, constructions, probes.

Alsmann, Noori & Lange (ICLR 2026) characterize what state space models recognize through fragments of LTLf,
depending on the gating mechanism and on fixed-width vs unbounded precision. This package is the probe kit:

- Layers: :class:`SSMLayer` / :class:`SSMModel`, one SSM family with the gate classes ``time_invariant``,
  ``selective_nonneg``, ``selective_signed``, ``selective_complex``, ``dense``; :class:`CausalTransformer`: a
  causal baseline.
- Precision: :class:`FixedPoint`, :class:`LowFloat`, :class:`Native` (a :data:`Precision`), fixed-point /
  low-bit-float rounding of states and activations (:func:`quantize`).
- Languages: membership oracles and balanced samplers (:func:`get_task`, :class:`Task`); LTLf (:func:`parse`,
  :func:`evaluate`, :func:`formula_task`).
- :func:`construct`: hand-set weights, verified exactly (:func:`verify`); :func:`train_runs`: training probes.

Checks. Token ids outside the vocabulary, and NaN/inf in the inputs of the public scans (:func:`diagonal_scan`,
:func:`dense_scan`, :func:`reflection_scan`) and of :class:`SSMLayer`, raise ``ValueError`` on concrete values and a
run-time error (``equinox.error_if``) under ``jax.jit``; ``check_finite=False`` skips the finite check for speed.

Constants: ``VARIANTS`` holds the five gate-class names (``time_invariant``, ``selective_nonneg``,
``selective_signed``, ``selective_complex``, ``dense``; ``COMPLEX_VARIANTS`` the two with complex states) and
``MODELS`` those plus ``"transformer"``; ``TASKS`` maps every task name (the builtin languages and those added by
:func:`register_task`) to a factory of its :class:`Task`; ``CONSTRUCTIONS`` maps each task with a hand-set
construction to the gate classes that have one.
"""

from ._constructions import CONSTRUCTIONS, Construction, construct, first_failure, predict, verify
from ._languages import DFA, TASKS, Batch, Task, TaskRegistry, dfa_task, get_task, register_task
from ._layers import (
    COMPLEX_VARIANTS,
    VARIANTS,
    SSMLayer,
    SSMModel,
    dense_scan,
    diagonal_scan,
    householder_product,
    reflection_scan,
)
from ._ltlf import (
    MAX_FORMULA_PROPS,
    Formula,
    LTLfSyntaxError,
    accepts,
    evaluate,
    formula_task,
    in_fragment,
    is_pure_future,
    is_pure_past,
    parse,
    prefix_labels,
    random_formula,
    to_string,
)
from ._precision import FixedPoint, LowFloat, Native, Precision, parse_precision, quantize
from ._probe import MODELS, ProbeConfig, TrainedProbe, make_model, seed_interval, select_runs, train_runs
from ._transformer import POSITIONAL, CausalTransformer

__all__ = [
    "select_runs",
    "seed_interval",
    "register_task",
    "TrainedProbe",
    "TaskRegistry",
    "MAX_FORMULA_PROPS",
    "COMPLEX_VARIANTS",
    "CONSTRUCTIONS",
    "DFA",
    "MODELS",
    "POSITIONAL",
    "TASKS",
    "VARIANTS",
    "Batch",
    "CausalTransformer",
    "Construction",
    "FixedPoint",
    "Formula",
    "LTLfSyntaxError",
    "LowFloat",
    "Native",
    "Precision",
    "ProbeConfig",
    "SSMLayer",
    "SSMModel",
    "Task",
    "accepts",
    "construct",
    "dense_scan",
    "dfa_task",
    "diagonal_scan",
    "evaluate",
    "first_failure",
    "formula_task",
    "get_task",
    "householder_product",
    "in_fragment",
    "is_pure_future",
    "is_pure_past",
    "make_model",
    "parse",
    "parse_precision",
    "predict",
    "prefix_labels",
    "quantize",
    "random_formula",
    "reflection_scan",
    "to_string",
    "train_runs",
    "verify",
]
