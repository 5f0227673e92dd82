"""Noise stability of transformers (Haris, Zhang & Yoshida, ICLR 2026, arXiv:2602.08287).

Estimators of noise stability and average sensitivity (Gaussian, Boolean and token domains; chunked, bounded
memory), covariance propagation and stability intervals, the paper's regularizer (token resampling with the
$(1+\\rho)/2$ keep convention and the agreement term $R = -\\sum_i M(X)_i M(Y)_i$, loss $\\ell + \\gamma R$; a
Gaussian-embedding MSE penalty as a documented alternative), Grokfast-EMA, a small decoder-only transformer, the
tasks (modular addition, noisy sparse parity, WikiText-2 characters) and the method comparison (several seeds in
one compiled call, steps to a target, paired per-seed speedups with censoring) used by the ``grokking``,
``sparse_parity``, ``next_token``, ``stability_sweep`` and ``stability_ablation`` experiments.
"""

from ._compare import (
    MethodSpec,
    compare_speed,
    compare_steps,
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
from ._seeds import median_curves, median_spread, steps_to_target
from ._tasks import (
    WIKITEXT2_DIR,
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
    "compare_steps",
    "load_wikitext2",
    "WIKITEXT2_DIR",
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
