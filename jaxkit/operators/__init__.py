"""Neural operators: Riesz transforms and spectral tools, FNO, RNO and LNO layers/models, Flax front-ends, training."""

from typing import TYPE_CHECKING

from ._layers import (
    InstanceNorm,
    Pointwise,
    RieszSpectralConv,
    SpectralConv,
    instance_norm,
    kept_riesz_multipliers,
    mode_mix,
    pointwise,
    riesz_spectral_conv,
    spectral_conv,
)
from ._lno import LNO, LaplaceLayer, LNOConfig, grid_spacing, laplace_layer, lno_apply
from ._models import FNO, RNO, NeuralOperator, OperatorConfig, build_operator, count_params, operator_apply
from ._spectral import (
    fractional_laplacian,
    riesz_multipliers,
    riesz_pairs,
    riesz_transform,
    spectral_derivative,
    wavenumber_grid,
    wavenumbers,
)
from ._training import (
    GaussianNormalizer,
    TrainedOperator,
    evaluate,
    fno_optimizer,
    member,
    mse,
    predict,
    relative_l2,
    train_ensemble,
    train_operator,
)

__all__ = [
    "FlaxFNO",
    "FlaxNeuralOperator",
    "FlaxRNO",
    "from_flax",
    "to_flax",
    "GaussianNormalizer",
    "TrainedOperator",
    "evaluate",
    "fno_optimizer",
    "mse",
    "predict",
    "relative_l2",
    "member",
    "train_ensemble",
    "train_operator",
    "FNO",
    "LNO",
    "LNOConfig",
    "LaplaceLayer",
    "RNO",
    "InstanceNorm",
    "NeuralOperator",
    "OperatorConfig",
    "Pointwise",
    "RieszSpectralConv",
    "SpectralConv",
    "build_operator",
    "count_params",
    "fractional_laplacian",
    "grid_spacing",
    "instance_norm",
    "kept_riesz_multipliers",
    "laplace_layer",
    "lno_apply",
    "mode_mix",
    "operator_apply",
    "pointwise",
    "riesz_multipliers",
    "riesz_pairs",
    "riesz_spectral_conv",
    "riesz_transform",
    "spectral_conv",
    "spectral_derivative",
    "wavenumber_grid",
    "wavenumbers",
]

if TYPE_CHECKING:  # static readers (griffe for the API pages, type checkers) see the lazy names below
    from ._flax import FlaxFNO, FlaxNeuralOperator, FlaxRNO, from_flax, to_flax

# The Flax NNX front-ends need the optional ``flax`` (``pip install jaxkit[nnx]``): imported on first use, so
# ``import jaxkit.operators`` works without it.
_FLAX_NAMES = ("FlaxFNO", "FlaxNeuralOperator", "FlaxRNO", "from_flax", "to_flax")


def __getattr__(name: str):
    if name in _FLAX_NAMES:
        try:
            from . import _flax
        except ModuleNotFoundError as e:  # pragma: no cover - depends on the environment
            raise ImportError(
                f"jaxkit.operators.{name} needs the optional dependency flax: pip install 'jaxkit[nnx]' ({e})"
            ) from e
        return getattr(_flax, name)
    raise AttributeError(f"module 'jaxkit.operators' has no attribute {name!r}")
