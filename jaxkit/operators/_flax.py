"""Flax NNX front-ends of :class:`~jaxkit.operators.FNO` and :class:`~jaxkit.operators.RNO`.

The NNX modules hold the same parameters as ``nnx.Param`` variables (same names and shapes as the Equinox fields)
and run the same pure forward pass :func:`~jaxkit.operators.operator_apply`, so given the same weights the
two front-ends give the same numbers. :func:`to_flax` and :func:`from_flax` convert both ways (copies).
Train an NNX model with ``nnx.Optimizer``/``nnx.value_and_grad`` as usual; it acts on one sample — batch with
``nnx.vmap`` or ``jax.vmap`` over the input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from flax import nnx

from .._typing import Array, ArrayLike, Float
from ._layers import _check_input
from ._models import FNO, RNO, NeuralOperator, OperatorConfig, build_operator, operator_apply

__all__ = ["FlaxFNO", "FlaxNeuralOperator", "FlaxRNO", "from_flax", "to_flax"]


class _Group(nnx.Module):
    """Named ``nnx.Param`` arrays of one layer."""

    def __init__(self, arrays: dict[str, Array]):
        self._names = tuple(arrays)
        for name, value in arrays.items():
            setattr(self, name, nnx.Param(jnp.array(value)))

    def as_dict(self) -> dict[str, Array]:
        return {name: getattr(self, name)[...] for name in self._names}


class FlaxNeuralOperator(nnx.Module):
    """NNX twin of :class:`~jaxkit.operators.NeuralOperator` (build with :class:`FlaxFNO`/:class:`FlaxRNO`
    or :func:`to_flax`)."""

    def __init__(self, config: OperatorConfig, params: dict):
        self.config = config
        self.lift = _Group(params["lift"])
        blocks = []
        for b in params["blocks"]:
            norm = _Group(b["norm"]) if b.get("norm") is not None else None
            blocks.append(nnx.Dict(spectral=_Group(b["spectral"]), skip=_Group(b["skip"]), norm=norm))
        self.blocks = nnx.List(blocks)
        self.proj_hidden = _Group(params["proj_hidden"])
        self.proj_out = _Group(params["proj_out"])

    def params(self) -> dict:
        return {
            "lift": self.lift.as_dict(),
            "blocks": [
                {
                    "spectral": b["spectral"].as_dict(),
                    "skip": b["skip"].as_dict(),
                    "norm": None if b["norm"] is None else b["norm"].as_dict(),
                }
                for b in self.blocks
            ],
            "proj_hidden": self.proj_hidden.as_dict(),
            "proj_out": self.proj_out.as_dict(),
        }

    def __call__(self, x: ArrayLike) -> Float[Array, "cout *grid"]:
        cfg = self.config
        x = _check_input("x", x, cfg.in_channels, cfg.n_dims, cfg.modes)
        return operator_apply(self.params(), x, cfg)


def _init_params(model: NeuralOperator) -> dict:
    return jax.tree_util.tree_map(jnp.array, model.params())


class FlaxFNO(FlaxNeuralOperator):
    """NNX FNO; same arguments as :class:`~jaxkit.operators.FNO`, ``rngs`` instead of ``key`` (same init)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        modes: int | Sequence[int],
        width: int = 32,
        n_layers: int = 4,
        *,
        rngs: nnx.Rngs,
        **kwargs: Any,
    ):
        eqx_model = FNO(in_channels, out_channels, modes, width, n_layers, key=rngs.params(), **kwargs)
        super().__init__(eqx_model.config, _init_params(eqx_model))


class FlaxRNO(FlaxNeuralOperator):
    """NNX RNO; same arguments as :class:`~jaxkit.operators.RNO`, ``rngs`` instead of ``key`` (same init)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        modes: int | Sequence[int],
        width: int = 32,
        n_layers: int = 4,
        *,
        rngs: nnx.Rngs,
        **kwargs: Any,
    ):
        eqx_model = RNO(in_channels, out_channels, modes, width, n_layers, key=rngs.params(), **kwargs)
        super().__init__(eqx_model.config, _init_params(eqx_model))


def to_flax(model: NeuralOperator) -> FlaxNeuralOperator:
    """Equinox FNO/RNO → NNX module with copies of the same weights."""
    if not isinstance(model, NeuralOperator):
        raise TypeError(
            f"model: expected an FNO or RNO (jaxkit.operators.NeuralOperator), received {type(model)}"
        )
    return FlaxNeuralOperator(model.config, _init_params(model))


def from_flax(module: FlaxNeuralOperator) -> NeuralOperator:
    """NNX FNO/RNO → Equinox model with copies of the same weights."""
    if not isinstance(module, FlaxNeuralOperator):
        raise TypeError(f"module: expected a FlaxNeuralOperator, received {type(module)}")
    params = module.params()
    model = build_operator(module.config, key=jax.random.key(0))

    def put(layer: Any, values: dict | None) -> Any:
        for name, value in (values or {}).items():
            old = getattr(layer, name)
            if old.shape != value.shape:
                raise ValueError(
                    f"from_flax: parameter {name} has shape {value.shape}, the model expects {old.shape}"
                )
            layer = eqx.tree_at(lambda m, n=name: getattr(m, n), layer, jnp.array(value))
        return layer

    model = eqx.tree_at(lambda m: m.lift, model, put(model.lift, params["lift"]))
    model = eqx.tree_at(lambda m: m.proj_hidden, model, put(model.proj_hidden, params["proj_hidden"]))
    model = eqx.tree_at(lambda m: m.proj_out, model, put(model.proj_out, params["proj_out"]))
    blocks = []
    for blk, p in zip(model.blocks, params["blocks"]):
        blk = eqx.tree_at(lambda b: b.spectral, blk, put(blk.spectral, p["spectral"]))
        blk = eqx.tree_at(lambda b: b.skip, blk, put(blk.skip, p["skip"]))
        if blk.norm is not None:
            blk = eqx.tree_at(lambda b: b.norm, blk, put(blk.norm, p["norm"]))
        blocks.append(blk)
    return eqx.tree_at(lambda m: m.blocks, model, tuple(blocks))
