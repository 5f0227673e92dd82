"""Noise stability of transformers (Haris, Zhang & Yoshida, ICLR 2026, arXiv:2602.08287).

Estimators (:mod:`.noise`), covariance propagation and stability intervals (:mod:`.propagation`), the
noise-stability regularizer (:mod:`.regularizer`), Grokfast-EMA (:mod:`.grokfast`), a small decoder-only
transformer (:mod:`.models`) and the tasks (:mod:`.tasks`: modular addition, character-level next-token).
"""

from ._compare import (
    MethodSpec,
    compare_speed,
    method_optimizer,
    speed_table,
    speedup_ci,
    split_members,
    stacked_batches,
    stacked_eval,
    standard_methods,
    train_method,
)
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
    agreement_regularizer,
    cross_entropy,
    embedding_stability,
    gaussian_embedding_mse_penalty,
    keep_probability,
    make_loss_fn,
    make_member_loss_fn,
    model_logits,
    regularized_loss,
    resample_tokens,
    token_agreement,
)
from ._seeds import median_curves, median_spread, seed_stacked_loss, steps_to_target
from ._tasks import (
    char_dataset,
    fixed_windows,
    load_wikitext2,
    modular_addition,
    python_reference_text,
    sparse_parity,
    stream_windows,
)

__all__ = [
    "MethodSpec",
    "compare_speed",
    "load_wikitext2",
    "method_optimizer",
    "sparse_parity",
    "speed_table",
    "speedup_ci",
    "split_members",
    "stacked_batches",
    "stacked_eval",
    "standard_methods",
    "stream_windows",
    "train_method",
    "Transformer",
    "char_dataset",
    "cross_entropy",
    "fixed_windows",
    "embedding_stability",
    "grokfast_ema",
    "init_stack",
    "make_loss_fn",
    "median_curves",
    "median_spread",
    "modular_addition",
    "gaussian_embedding_mse_penalty",
    "agreement_regularizer",
    "keep_probability",
    "make_member_loss_fn",
    "model_logits",
    "resample_tokens",
    "token_agreement",
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
