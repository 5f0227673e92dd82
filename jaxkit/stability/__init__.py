"""Noise stability of transformers (Haris, Zhang & Yoshida, ICLR 2026, arXiv:2602.08287).

Estimators (:mod:`.noise`), covariance propagation and stability intervals (:mod:`.propagation`), the
noise-stability regularizer (:mod:`.regularizer`), Grokfast-EMA (:mod:`.grokfast`), a small decoder-only
transformer (:mod:`.models`) and the tasks (:mod:`.tasks`: modular addition, character-level next-token).
"""

from ._grokfast import grokfast_ema
from ._models import Transformer, init_stack
from ._noise import StabilityEstimate, average_sensitivity, correlated_copy, noise_stability
from ._propagation import (
    AttentionLayer,
    ReLULayer,
    StabilityInterval,
    attention_stability_interval,
    relu_correlation_map,
    relu_layer_moments,
    relu_mlp_stability,
    relu_second_moment,
    stability_interval,
)
from ._regularizer import (
    cross_entropy,
    embedding_stability,
    make_loss_fn,
    noise_stability_penalty,
    regularized_loss,
)
from ._seeds import compare_methods, median_curves, median_spread, seed_stacked_loss, steps_to_target
from ._tasks import char_dataset, fixed_windows, modular_addition, python_reference_text

__all__ = [
    "Transformer",
    "char_dataset",
    "cross_entropy",
    "fixed_windows",
    "embedding_stability",
    "grokfast_ema",
    "init_stack",
    "make_loss_fn",
    "compare_methods",
    "median_curves",
    "median_spread",
    "modular_addition",
    "noise_stability_penalty",
    "python_reference_text",
    "regularized_loss",
    "seed_stacked_loss",
    "steps_to_target",
    "AttentionLayer",
    "ReLULayer",
    "StabilityEstimate",
    "StabilityInterval",
    "attention_stability_interval",
    "average_sensitivity",
    "correlated_copy",
    "noise_stability",
    "relu_correlation_map",
    "relu_layer_moments",
    "relu_mlp_stability",
    "relu_second_moment",
    "stability_interval",
]
