"""Noise stability of transformers (Haris, Zhang & Yoshida, ICLR 2026, arXiv:2602.08287).

Estimators (:mod:`.noise`), covariance propagation and stability intervals (:mod:`.propagation`), the
noise-stability regularizer (:mod:`.regularizer`), Grokfast-EMA (:mod:`.grokfast`), a small decoder-only
transformer (:mod:`.models`) and the tasks (:mod:`.tasks`: modular addition, character-level next-token).
"""

from .noise import StabilityEstimate, average_sensitivity, correlated_copy, noise_stability
from .propagation import (
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

__all__ = [
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
