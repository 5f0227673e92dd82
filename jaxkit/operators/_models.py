"""FNO (Li et al., ICLR 2021) and RNO (Riesz neural operator, ICLR 2026) for 1-D, 2-D and 3-D (2-D + time) grids.

Both share one architecture and differ only in the spectral layer:

    v₀ = P [x ; grid coordinates]                 lifting (pointwise), optional zero padding of the domain
    v_{l+1} = σ( N( K_l v_l + W_l v_l ) )          L blocks: spectral layer K_l + 1×1 residual W_l, norm N, GELU σ
                                                   (no activation after the last block, as in the FNO paper)
    u = Q₂ σ(Q₁ v_L)                              projection (pointwise MLP), after cropping the padding

``K_l`` is :class:`~jaxkit.operators.SpectralConv` (FNO) or
:class:`~jaxkit.operators.RieszSpectralConv` (RNO). A model acts on one sample ``(c_in, *grid)``; batch with
``jax.vmap``. Nothing depends on the grid size, so the same weights evaluate at any resolution ``>= 2·modes``
(zero-shot super-resolution). Grid coordinates are ``j/n`` (periodic grids, ``endpoint=False``) or
``linspace(0, 1, n)`` (node grids with boundary, ``endpoint=True``). ``padding`` is a *fraction* of each axis
(e.g. 0.1 for non-periodic problems), so the padded physical domain is the same at every resolution.

The forward pass is the pure function :func:`operator_apply` on a nested dict of arrays; the Equinox models here and
the Flax NNX models (:class:`jaxkit.operators.FlaxFNO`, ...) both call it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._typing import Array, ArrayLike, Float, PRNGKey
from .._validate import check_choice, check_finite, check_int, check_key, check_range, check_size, is_tracer
from ._layers import (
    InstanceNorm,
    Pointwise,
    RieszSpectralConv,
    SpectralConv,
    _as_modes,
    _check_input,
    _instance_norm,
    _spectral_conv,
    finite_input,
    gelu,
    pointwise,
    riesz_spectral_conv,
)

__all__ = [
    "FNO",
    "RNO",
    "NeuralOperator",
    "OperatorConfig",
    "build_operator",
    "count_params",
    "operator_apply",
]


@dataclass(frozen=True)
class OperatorConfig:
    """Static description of an FNO/RNO (hashable; enough to rebuild the model)."""

    kind: str  # "fno" | "rno"
    in_channels: int
    out_channels: int
    modes: tuple[int, ...]
    width: int = 32
    n_layers: int = 4
    proj_hidden: int = 128
    padding: float = 0.0
    norm: str | None = None  # None | "instance"
    grid_features: bool = True
    endpoint: bool = False
    # RNO only
    order: int = 1
    per_mode: bool = False
    branch: str = "mix"
    lengths: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        # the scalar fields, refused where the config is made (modes, sizes and lengths: build_operator)
        _check_scalar_fields(self)

    @property
    def n_dims(self) -> int:
        return len(self.modes)

    @property
    def lift_in(self) -> int:
        return self.in_channels + (self.n_dims if self.grid_features else 0)

    def to_dict(self) -> dict[str, Any]:  # Any: JSON values of the fields (numbers, strings, lists)
        return asdict(self)


def _check_scalar_fields(cfg: OperatorConfig) -> None:
    """The configuration's scalar fields: checked when an :class:`OperatorConfig` is made and again where a model
    is built from one (one set of checks for both)."""
    check_choice("kind", cfg.kind, ("fno", "rno"))
    for name in ("in_channels", "out_channels", "width", "n_layers", "proj_hidden"):
        check_int(name, getattr(cfg, name), minimum=1)
    check_range("padding", cfg.padding, 0.0, 1.0)
    check_choice("norm", cfg.norm, (None, "instance"))
    check_choice("order", cfg.order, (1, 2))
    check_choice("branch", cfg.branch, ("mix", "global", "local"))


def _validate_config(cfg: OperatorConfig) -> OperatorConfig:
    _check_scalar_fields(cfg)
    modes = _as_modes(cfg.modes)
    # parameter memory, refused up front (float32; each Fourier layer holds width x width complex weights per
    # kept mode): checked size by size so the message names the one that is too large
    n_modes = int(np.prod([2 * m for m in modes], dtype=np.float64))
    w, layers = cfg.width, cfg.n_layers
    check_size("modes", 8.0 * n_modes, hint=f"{n_modes} kept Fourier modes")
    check_size("width", 8.0 * w * w * n_modes, hint=f"a {w} x {w} complex weight per kept mode")
    check_size("n_layers", 8.0 * layers * w * w * n_modes, hint=f"{layers} Fourier layers")
    check_size("proj_hidden", 4.0 * cfg.proj_hidden * max(w, cfg.out_channels), hint="the projection")
    lengths = cfg.lengths
    if lengths is not None:
        lengths = tuple(float(v) for v in lengths)
        if len(lengths) != len(modes):
            raise ValueError(
                f"lengths: expected {len(modes)} entries (one per spatial axis), received {lengths}"
            )
    return replace(cfg, modes=modes, lengths=lengths)


# ----------------------------------------------------------------------------------------------------------------
# the functional forward pass
# ----------------------------------------------------------------------------------------------------------------
def grid_coordinates(grid: Sequence[int], endpoint: bool = False, dtype: Any = jnp.float32) -> Array:
    """Coordinate channels ``(d, *grid)`` on the unit box: ``j/n`` (periodic) or ``linspace(0, 1, n)``."""
    axes = [(np.linspace(0.0, 1.0, n) if endpoint else np.arange(n) / n).astype(np.float64) for n in grid]
    mesh = np.meshgrid(*axes, indexing="ij")
    return jnp.asarray(np.stack(mesh), dtype=dtype)


def _pad_amounts(grid: Sequence[int], padding: float) -> tuple[int, ...]:
    return tuple(int(round(padding * n)) for n in grid)


def _spectral_apply(p: dict, v: Array, cfg: OperatorConfig) -> Array:
    if cfg.kind == "fno":
        return _spectral_conv(v, p["weight_re"], p["weight_im"])
    return riesz_spectral_conv(
        v,
        p.get("weight_re"),
        p.get("weight_im"),
        p.get("alpha"),
        p.get("w_dir"),
        p.get("local_weight"),
        modes=cfg.modes,
        order=cfg.order,
        lengths=cfg.lengths,
    )


def operator_apply(
    params: dict[str, object], x: Float[Array, "cin *grid"], cfg: OperatorConfig
) -> Float[Array, "cout *grid"]:
    """The FNO/RNO forward pass on one sample, as a pure function of a nested parameter dict.

    ``params = {"lift": {"weight", "bias"}, "blocks": [{"spectral": {...}, "skip": {...}, "norm": {...}|None}],
    "proj_hidden": {...}, "proj_out": {...}}``. ``x`` (shape, finite values) is validated on eager calls only;
    under ``jit`` nothing is checked here (see the models' ``__call__``).
    """
    if not is_tracer(x):  # eager calls only: under jit (training steps) nothing is added
        x = _check_input("x", x, cfg.in_channels, cfg.n_dims, cfg.modes)
        check_finite("x", x)
    grid = x.shape[1:]
    feats = x
    if cfg.grid_features:
        feats = jnp.concatenate([x, grid_coordinates(grid, cfg.endpoint, x.dtype)], axis=0)
    v = pointwise(feats, params["lift"]["weight"], params["lift"]["bias"])
    pads = _pad_amounts(grid, cfg.padding)
    if any(pads):
        v = jnp.pad(v, [(0, 0)] + [(0, p) for p in pads])
    n_blocks = len(params["blocks"])
    for i, blk in enumerate(params["blocks"]):
        y = _spectral_apply(blk["spectral"], v, cfg) + pointwise(
            v, blk["skip"]["weight"], blk["skip"]["bias"]
        )
        if blk.get("norm") is not None:
            y = _instance_norm(y, blk["norm"]["scale"], blk["norm"]["shift"])
        v = gelu(y) if i < n_blocks - 1 else y
    if any(pads):
        v = v[(slice(None),) + tuple(slice(0, n) for n in grid)]
    h = gelu(pointwise(v, params["proj_hidden"]["weight"], params["proj_hidden"]["bias"]))
    return pointwise(h, params["proj_out"]["weight"], params["proj_out"]["bias"])


# ----------------------------------------------------------------------------------------------------------------
# Equinox models
# ----------------------------------------------------------------------------------------------------------------
class OperatorBlock(eqx.Module):
    """One spectral block: ``σ(N(K v + W v))``."""

    spectral: SpectralConv | RieszSpectralConv
    skip: Pointwise
    norm: InstanceNorm | None


def _layer_params(m: Any) -> dict | None:
    if m is None:
        return None
    names = ("weight_re", "weight_im", "alpha", "w_dir", "local_weight", "weight", "bias", "scale", "shift")
    return {n: getattr(m, n) for n in names if hasattr(m, n) and getattr(m, n) is not None}


class NeuralOperator(eqx.Module):
    """Common container of :class:`FNO` and :class:`RNO` (build them through those classes)."""

    lift: Pointwise
    blocks: tuple[OperatorBlock, ...]
    proj_hidden: Pointwise
    proj_out: Pointwise
    config: OperatorConfig = eqx.field(static=True)

    def _build(self, cfg: OperatorConfig, key: PRNGKey) -> None:
        check_key("key", key)
        cfg = _validate_config(cfg)
        self.config = cfg
        keys = jax.random.split(key, 3 + 2 * cfg.n_layers)
        self.lift = Pointwise(cfg.lift_in, cfg.width, key=keys[0])
        blocks = []
        for i in range(cfg.n_layers):
            ks, kw = keys[3 + 2 * i], keys[4 + 2 * i]
            if cfg.kind == "fno":
                spec: Any = SpectralConv(cfg.width, cfg.width, cfg.modes, key=ks)
            else:
                spec = RieszSpectralConv(
                    cfg.width,
                    cfg.width,
                    cfg.modes,
                    order=cfg.order,
                    per_mode=cfg.per_mode,
                    branch=cfg.branch,
                    lengths=cfg.lengths,
                    key=ks,
                )
            norm = InstanceNorm(cfg.width) if cfg.norm == "instance" else None
            blocks.append(OperatorBlock(spec, Pointwise(cfg.width, cfg.width, key=kw), norm))
        self.blocks = tuple(blocks)
        self.proj_hidden = Pointwise(cfg.width, cfg.proj_hidden, key=keys[1])
        self.proj_out = Pointwise(cfg.proj_hidden, cfg.out_channels, key=keys[2])

    def params(self) -> dict:
        """The nested parameter dict consumed by :func:`operator_apply` (references, no copies)."""
        return {
            "lift": _layer_params(self.lift),
            "blocks": [
                {
                    "spectral": _layer_params(b.spectral),
                    "skip": _layer_params(b.skip),
                    "norm": _layer_params(b.norm),
                }
                for b in self.blocks
            ],
            "proj_hidden": _layer_params(self.proj_hidden),
            "proj_out": _layer_params(self.proj_out),
        }

    def __call__(self, x: ArrayLike | list, *, check_finite: bool = True) -> Float[Array, "cout *grid"]:
        """Evaluate on one sample ``x`` of shape ``(in_channels, *grid)`` at any resolution ``>= 2·modes``.

        NaN/inf in ``x`` raise (``ValueError`` eagerly; under ``jax.jit``/``vmap`` an ``equinox`` runtime error
        when the call runs) instead of flowing into the output; ``check_finite=False`` skips the check.
        """
        cfg = self.config
        x = np.asarray(x, np.float32) if isinstance(x, list | tuple) else x
        x = _check_input("x", x, cfg.in_channels, cfg.n_dims, cfg.modes)
        if check_finite:
            x = finite_input("x", x)
        return operator_apply(self.params(), x, cfg)


class FNO(NeuralOperator):
    """Fourier neural operator (Li et al., ICLR 2021). ``modes`` per spatial axis fixes the dimension (1–3)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        modes: int | Sequence[int],
        width: int = 32,
        n_layers: int = 4,
        *,
        proj_hidden: int = 128,
        padding: float = 0.0,
        norm: str | None = None,
        grid_features: bool = True,
        endpoint: bool = False,
        key: PRNGKey,
    ):
        cfg = OperatorConfig(
            "fno",
            in_channels,
            out_channels,
            _as_modes(modes),
            width,
            n_layers,
            proj_hidden,
            float(padding),
            norm,
            bool(grid_features),
            bool(endpoint),
        )
        self._build(cfg, key)


class RNO(NeuralOperator):
    """Riesz neural operator (ICLR 2026): FNO's architecture with :class:`RieszSpectralConv` layers.

    ``order`` (1 or 2), ``per_mode`` directional weights, ``branch`` (``"mix"``, ``"global"``, ``"local"``),
    ``lengths`` (periodic domain lengths used in the multipliers; only their ratios matter).
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        modes: int | Sequence[int],
        width: int = 32,
        n_layers: int = 4,
        *,
        proj_hidden: int = 128,
        padding: float = 0.0,
        norm: str | None = None,
        grid_features: bool = True,
        endpoint: bool = False,
        order: int = 1,
        per_mode: bool = False,
        branch: str = "mix",
        lengths: float | Sequence[float] | None = None,
        key: PRNGKey,
    ):
        modes_t = _as_modes(modes)
        if lengths is not None and np.isscalar(lengths):
            lengths = (float(lengths),) * len(modes_t)  # type: ignore[arg-type]
        cfg = OperatorConfig(
            "rno",
            in_channels,
            out_channels,
            modes_t,
            width,
            n_layers,
            proj_hidden,
            float(padding),
            norm,
            bool(grid_features),
            bool(endpoint),
            order,
            bool(per_mode),
            branch,
            None if lengths is None else tuple(float(v) for v in lengths),
        )
        self._build(cfg, key)


def build_operator(config: OperatorConfig | dict[str, object], *, key: PRNGKey) -> NeuralOperator:
    """Build an :class:`FNO` or :class:`RNO` from an :class:`OperatorConfig` (or its ``to_dict()``)."""
    cfg = config if isinstance(config, OperatorConfig) else OperatorConfig(**config)
    common = dict(
        proj_hidden=cfg.proj_hidden,
        padding=cfg.padding,
        norm=cfg.norm,
        grid_features=cfg.grid_features,
        endpoint=cfg.endpoint,
        key=key,
    )
    if cfg.kind == "fno":
        return FNO(cfg.in_channels, cfg.out_channels, cfg.modes, cfg.width, cfg.n_layers, **common)
    if cfg.kind == "rno":
        return RNO(
            cfg.in_channels,
            cfg.out_channels,
            cfg.modes,
            cfg.width,
            cfg.n_layers,
            order=cfg.order,
            per_mode=cfg.per_mode,
            branch=cfg.branch,
            lengths=cfg.lengths,
            **common,
        )
    raise ValueError(f"config.kind: expected 'fno' or 'rno', received {cfg.kind!r}")


def count_params(model: eqx.Module, *, complex_as_one: bool = False) -> int:
    """Number of real trainable parameters (complex weights are stored as two real planes, so count twice).

    ``complex_as_one=True`` counts each complex weight once (PyTorch's ``numel`` on ``cfloat`` tensors, the
    convention of the published parameter counts of FNO, LNO and RNO): planes whose field name ends in ``_im``
    (``weight_im``, ``pole_im``, ``residue_im``) are then left out. Works on ``eqx.filter_eval_shape`` output too
    (no weights materialised).
    """
    leaves = jax.tree_util.tree_flatten_with_path(model)[0]
    total = 0
    for path, x in leaves:
        if not (
            (eqx.is_inexact_array(x) or isinstance(x, jax.ShapeDtypeStruct))
            and jnp.issubdtype(x.dtype, jnp.inexact)
        ):
            continue
        n = int(np.prod(x.shape))
        if jnp.issubdtype(x.dtype, jnp.complexfloating):
            total += n if complex_as_one else 2 * n
            continue
        names = [getattr(k, "name", "") for k in path]
        if complex_as_one and any(isinstance(nm, str) and nm.endswith("_im") for nm in names):
            continue
        total += n
    return total
