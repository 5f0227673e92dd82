r"""Conditional diffusion forecaster: training with the ε-prediction loss and DDIM / ancestral sampling of ``k``
return paths per date, vmapped over dates (STABLE, ICLR 2026; CSDI, Tashiro et al. 2021).

Targets are future log-return paths (H × N) divided by a per-asset scale (the training-period standard
deviation), the same scale applied to the conditioning history. The loss for one sample with
$t\sim U\{0..T-1\}$, $\varepsilon\sim N(0,I)$, $x_t=\sqrt{\bar\alpha_t}x_0+\sqrt{1-\bar\alpha_t}
\varepsilon$ is $\|\hat\varepsilon - \varepsilon\|^2 + \lambda(\|\hat\varepsilon_{full}-\varepsilon\|^2 +
\|\hat\varepsilon_{macro}-\varepsilon\|^2)$ (the last two terms train each level on its own, so the gate blends two
valid denoisers; with one level only the first term remains). Sampling can use the exponential moving average of
the weights (``train_forecaster(..., ema_decay=...)``), as diffusion models usually do.
Schedules and samplers come from :mod:`jaxkit.diffusion`.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Array, Float, PRNGKeyArray

from jaxkit import diffusion as dm
from jaxkit._typing import ArrayInput
from jaxkit._validate import (
    as_float64_numpy,
    check_finite,
    check_int,
    check_key,
    check_positive,
    check_size,
    is_tracer,
    library_errors,
)
from jaxkit.forecast._denoiser import (
    AttentionNet,
    ConditionalDenoiser,
    MLPDenoiser,
    MLPNet,
    denoiser_from_dict,
)
from jaxkit.train import (
    ArrayLoader,
    fit,
    load_checkpoint,
    read_ema,
    read_metadata,
    save_model_checkpoint,
    track_ema,
)

__all__ = [
    "DiffusionForecaster",
    "calibrate_spread",
    "forecaster_loss",
    "load_forecaster",
    "make_forecaster",
    "recenter_paths",
    "sample_paths",
    "save_forecaster",
    "train_forecaster",
]


class DiffusionForecaster(eqx.Module):
    """Denoiser + discrete VP schedule + per-asset return scale (log returns per period of the data grid).

    ``per_date_scale=True``: targets and history are divided by a scale given with every window (the ``"scale"``
    entry of :func:`forecast_windows`, e.g. an EWMA volatility known at the decision date) instead of the fixed
    training-period ``scale``; sampling then needs that scale too. ``config`` records the arguments of
    :func:`make_forecaster` (JSON-able) so :func:`save_forecaster` / :func:`load_forecaster` can rebuild it."""

    denoiser: ConditionalDenoiser | MLPDenoiser
    schedule: dm.DiscreteSchedule
    scale: Float[Array, " N"]
    aux_weight: float = eqx.field(static=True, default=1.0)
    per_date_scale: bool = eqx.field(static=True, default=False)
    config: tuple = eqx.field(static=True, default=())

    def __check_init__(self):
        if isinstance(self.scale, np.ndarray | jax.Array) and not is_tracer(self.scale):
            sc = np.asarray(self.scale)
            if not (np.all(np.isfinite(sc)) and np.all(sc > 0)):
                raise ValueError(
                    f"scale: expected positive finite per-asset scales, received {sc.tolist()[:5]} (shape {sc.shape})"
                )
        if isinstance(self.aux_weight, int | float | np.number):
            check_positive("aux_weight", self.aux_weight, strict=False)

    def eps(self, x_t, t, history, macro, signals, scale=None):
        s = self.scale if scale is None else scale
        return self.denoiser(x_t, t, history / s, macro, signals)


def make_forecaster(
    *,
    n_assets: int,
    history: int,
    horizon: int,
    n_macro: int,
    n_signals: int,
    scale: ArrayInput,
    denoiser: AttentionNet | MLPNet = AttentionNet(),
    guided: bool = True,
    diffusion_steps: int = 50,
    schedule: Literal["quadratic", "linear", "cosine"] = "quadratic",
    beta_start: float = 1e-4,
    beta_end: float = 0.5,
    aux_weight: float = 1.0,
    per_date_scale: bool = False,
    key: PRNGKeyArray,
) -> DiffusionForecaster:
    """Build a forecaster; the default schedule is CSDI's (quadratic β from 1e-4 to 0.5, 50 steps).

    ``denoiser``: the network, as an object that carries its own settings: :class:`AttentionNet` (CSDI-like
    attention over time and assets) or :class:`MLPNet` (residual MLP). ``guided``: STABLE's two-level guidance
    (full and macro-only condition blended by a learned gate). ``scale``: (N,) per-asset scale of the log returns
    (per period of the data grid, e.g. daily). ``per_date_scale``: see :class:`DiffusionForecaster`."""
    if isinstance(denoiser, str):
        raise TypeError(
            f"denoiser: expected a denoiser object, forecast.AttentionNet(channels=, layers=, heads=) or "
            f"forecast.MLPNet(hidden=, depth=, channels=), received the string {denoiser!r}"
        )
    if not isinstance(denoiser, AttentionNet | MLPNet):
        raise TypeError(
            f"denoiser: expected forecast.AttentionNet(...) or forecast.MLPNet(...), received {type(denoiser).__name__}"
        )
    check_key("key", key)
    if schedule not in ("quadratic", "linear", "cosine"):
        raise ValueError(f"schedule: expected 'quadratic', 'linear' or 'cosine', received {schedule!r}")
    for name, v in (("n_assets", n_assets), ("history", history), ("horizon", horizon)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
            raise ValueError(f"{name}: expected an integer >= 1, received {v!r}")
    for name, v in (("n_macro", n_macro), ("n_signals", n_signals)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0:
            raise ValueError(f"{name}: expected an integer >= 0, received {v!r}")
    check_int("diffusion_steps", diffusion_steps, minimum=1)
    check_positive("aux_weight", aux_weight, strict=False)
    scale = np.asarray(scale, dtype=np.float32)
    if scale.shape != (n_assets,) or not np.all(np.isfinite(scale)) or np.any(scale <= 0):
        raise ValueError(
            f"scale: expected shape (n_assets,) = ({n_assets},) of positive finite values, received shape "
            f"{scale.shape}" + ("" if scale.shape != (n_assets,) else " with non-positive or NaN/inf entries")
        )
    try:
        if schedule == "cosine":
            sched = dm.discrete_schedule("cosine", diffusion_steps)
        else:
            sched = dm.discrete_schedule(schedule, diffusion_steps, beta_start=beta_start, beta_end=beta_end)
    except ValueError as e:  # the schedule names its own argument, n_steps: name the one the user passed
        if str(e).startswith("n_steps:"):
            raise ValueError("diffusion_steps:" + str(e).removeprefix("n_steps:")) from None
        raise
    den = denoiser.build(
        n_assets=int(n_assets), history=int(history), horizon=int(horizon), n_macro=int(n_macro),
        n_signals=int(n_signals), guided=bool(guided), key=key,
    )  # fmt: skip
    config = dict(
        n_assets=int(n_assets), history=int(history), horizon=int(horizon), n_macro=int(n_macro),
        n_signals=int(n_signals), denoiser=denoiser.to_dict(), guided=bool(guided),
        diffusion_steps=int(diffusion_steps), schedule=schedule, beta_start=float(beta_start),
        beta_end=float(beta_end), aux_weight=float(aux_weight), per_date_scale=bool(per_date_scale),
    )  # fmt: skip
    return DiffusionForecaster(
        den, sched, jnp.asarray(scale), float(aux_weight), bool(per_date_scale), _freeze(config)
    )


def _freeze(d: dict) -> tuple:
    """A hashable form of a JSON-like dict (static field of an Equinox module)."""
    return tuple((k, _freeze(v) if isinstance(v, dict) else v) for k, v in d.items())


def _thaw(t: tuple) -> dict:
    return {k: _thaw(v) if isinstance(v, tuple) else v for k, v in t}


FORECASTER_FORMAT = "jaxkit.forecast.DiffusionForecaster/1"


def _forecaster_like(config: dict) -> DiffusionForecaster:
    """The skeleton :func:`load_forecaster` fills: the forecaster that ``config`` (thawed) builds."""
    cfg = dict(config)
    if isinstance(cfg.get("denoiser"), dict):
        cfg["denoiser"] = denoiser_from_dict(cfg["denoiser"])
    return make_forecaster(**cfg, scale=np.ones(cfg["n_assets"], np.float32), key=jax.random.key(0))


def save_forecaster(
    path: str | Path,
    model: DiffusionForecaster,
    metadata: dict[str, object] | None = None,
    *,
    overwrite: bool = False,
) -> Path:
    """Save a forecaster (weights, schedule, scale and its :func:`make_forecaster` config) to the checkpoint
    folder ``path`` in one call (:func:`jaxkit.train.save_checkpoint`: orbax arrays + a checksummed manifest).
    ``metadata``: optional JSON-able extras stored beside it. :func:`load_forecaster` restores it exactly.

    The model's config must describe its arrays (``ValueError`` otherwise: the file would not load back). An
    existing ``path`` is replaced only with ``overwrite=True`` and only if it holds a saved forecaster
    (``FileExistsError`` otherwise); the replacement is atomic (the old one or the new one, never neither)."""
    if not isinstance(model, DiffusionForecaster):
        raise TypeError(f"model: expected a DiffusionForecaster, received {type(model).__name__}")
    if not model.config:
        raise ValueError("model: has no config (build it with make_forecaster to be able to save it)")
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError(f"metadata: expected a JSON-able dict or None, received {type(metadata).__name__}")
    config = _thaw(model.config)
    try:
        like = _forecaster_like(config)
    except (TypeError, ValueError) as e:
        raise ValueError(f"model: its config cannot rebuild a forecaster ({e})") from None
    meta = {"format": FORECASTER_FORMAT, "config": config, "user": dict(metadata or {})}
    return save_model_checkpoint(path, model, meta, overwrite=overwrite, like=like)


def load_forecaster(path: str | Path) -> tuple[DiffusionForecaster, dict[str, object]]:
    """Load a forecaster saved by :func:`save_forecaster`; returns ``(model, metadata)``. Every byte is verified
    (``jaxkit.train.CheckpointError`` on a damaged or foreign checkpoint); predictions are bit-for-bit those of
    the saved model."""
    meta = read_metadata(path)
    if meta.get("format") != FORECASTER_FORMAT:
        raise ValueError(f"path: {path} is not a saved forecaster (format {meta.get('format')!r})")
    model, _ = load_checkpoint(path, _forecaster_like(meta["config"]))
    return model, meta.get("user", {})


def forecaster_loss(
    model: DiffusionForecaster, batch: dict[str, object], key: PRNGKeyArray
) -> tuple[Array, dict[str, Array]]:
    """The training loss over a batch dict with ``history``, ``target``, ``macro``, ``signals``; returns
    ``(loss, terms)``.

    ``loss`` is a sum, not one mean: the ε-prediction MSE of the blended denoiser plus, for a guided model,
    ``aux_weight`` times the MSEs of its full-condition and macro-only branches (the module docstring's formula),
    so a denoiser predicting zero scores ``1 + 2 * aux_weight`` (3 by default), not 1. ``terms`` holds each
    part: ``eps_mse`` (the blended denoiser's ε-error alone, comparable across models), ``eps_mse_full``,
    ``eps_mse_macro`` and the mean ``gate``."""
    return _denoiser_loss(model.denoiser, model.schedule, model.scale, model.aux_weight, batch, key)


def _check_condition(model, history, macro, signals, name):
    """The conditioning arrays match the model's sizes (B dates each)."""
    cfg = _thaw(model.config) if model.config else {}
    d, N = model.denoiser, model.scale.shape[0]
    B = np.shape(history)[0]
    want = {
        "history": (B, d.history, N),
        "macro": (B, cfg["n_macro"]) if cfg else None,
        "signals": (B, N, cfg["n_signals"]) if cfg else None,
    }
    for key, x in (("history", history), ("macro", macro), ("signals", signals)):
        w = want[key]
        if w is not None and tuple(np.shape(x)) != w:
            raise ValueError(
                f"{name}['{key}']: expected shape {w} for this model, received {tuple(np.shape(x))}"
            )
        if not np.all(np.isfinite(np.asarray(x, dtype=np.float64))):
            raise ValueError(f"{name}['{key}']: expected finite conditioning values")


def _denoiser_loss(den, schedule, scale, aux_weight, batch, key):
    B = batch["target"].shape[0]
    keys = jax.random.split(key, B)
    T = schedule.n_steps

    def one(target, hist, macro, sig, sc, k):
        kt, ke = jax.random.split(k)
        t = jax.random.randint(kt, (), 0, T)
        x0 = target / sc
        eps = jax.random.normal(ke, x0.shape, x0.dtype)
        x_t = dm.q_sample(schedule, x0, t, eps)
        e, e_full, e_macro, g = den(x_t, t, hist / sc, macro, sig, return_branches=True)
        return jnp.mean((e - eps) ** 2), jnp.mean((e_full - eps) ** 2), jnp.mean((e_macro - eps) ** 2), g

    sc = batch["scale"] if "scale" in batch else jnp.broadcast_to(scale, (B, scale.shape[0]))
    main, full, macro_only, g = jax.vmap(one)(
        batch["target"], batch["history"], batch["macro"], batch["signals"], sc, keys
    )
    aux = jnp.mean(full) + jnp.mean(macro_only)
    loss = jnp.mean(main) + (aux_weight * aux if den.guided else 0.0)
    return loss, {
        "eps_mse": jnp.mean(main),
        "eps_mse_full": jnp.mean(full),
        "eps_mse_macro": jnp.mean(macro_only),
        "gate": jnp.mean(g),
    }


def train_forecaster(
    model: DiffusionForecaster,
    windows: dict[str, np.ndarray],
    *,
    n_steps: int,
    batch_size: int,
    key: PRNGKeyArray,
    lr: float = 1e-3,
    checkpoint_dir: str | Path | None = None,
    resume: bool = False,
    progress: bool | str = True,
    final_lr_fraction: float = 0.1,
    ema_decay: float | None = None,
    weight_decay: float = 1e-4,
) -> tuple[DiffusionForecaster, list[dict[str, object]]]:
    """AdamW with cosine decay from ``lr`` to ``final_lr_fraction * lr`` through :func:`jaxkit.train.fit`;
    returns ``(model, history)``; each history record's ``loss`` is :func:`forecaster_loss`'s sum (the blended
    ε-error plus the two guidance branches', 3 for a zero predictor) and ``eps_mse`` the blended ε-error alone.
    ``ema_decay``: return the exponential moving average of the weights
    (:func:`jaxkit.train.track_ema`) instead of the last iterate. The windows are trained in float32 (float64
    windows, as :func:`forecast_windows` builds them, are converted); ``batch_size`` above the number of windows is
    lowered to it with a ``UserWarning``. Every entry of ``windows`` holds the same number of windows along axis 0
    (``ValueError`` naming the entry otherwise)."""
    check_key("key", key)
    if not 0.0 <= final_lr_fraction <= 1.0:
        raise ValueError(f"final_lr_fraction: expected a value in [0, 1], received {final_lr_fraction}")
    check_positive("lr", lr)
    if not (np.isfinite(weight_decay) and weight_decay >= 0):
        raise ValueError(f"weight_decay: expected a finite value >= 0, received {weight_decay}")
    names = ("history", "target", "macro", "signals") + (("scale",) if model.per_date_scale else ())
    missing = [k for k in names if k not in windows]
    if missing:
        raise ValueError(f"windows: expected entries {list(names)}, missing {missing}")
    arrays = {k: np.asarray(windows[k], dtype=np.float32) for k in names}
    if arrays["history"].ndim == 0:
        raise ValueError(
            "windows['history']: expected an array with a leading window axis, received a scalar"
        )
    n_windows = arrays["history"].shape[0]
    for k in names[1:]:
        if arrays[k].ndim == 0 or arrays[k].shape[0] != n_windows:
            got = "a scalar" if arrays[k].ndim == 0 else f"{arrays[k].shape[0]} (shape {arrays[k].shape})"
            raise ValueError(
                f"windows['{k}']: expected {n_windows} windows (the leading size of windows['history']), "
                f"received {got}"
            )
    if model.per_date_scale and not (np.all(np.isfinite(arrays["scale"])) and np.all(arrays["scale"] > 0)):
        raise ValueError("windows['scale']: expected positive finite per-date scales")
    if not np.all(np.isfinite(arrays["target"])):
        raise ValueError("windows: training targets contain NaN (a window runs past the data end)")
    _check_condition(model, arrays["history"], arrays["macro"], arrays["signals"], "windows")
    if arrays["target"].shape[1:] != (model.denoiser.horizon, model.scale.shape[0]):
        raise ValueError(
            f"windows['target']: expected shape (B, {model.denoiser.horizon}, {model.scale.shape[0]}), received "
            f"{arrays['target'].shape}"
        )
    check_int("batch_size", batch_size, minimum=1)
    n = arrays["target"].shape[0]
    if batch_size > n:
        warnings.warn(
            f"batch_size: {batch_size} is more than the {n} training windows; every batch holds all {n}",
            UserWarning,
            stacklevel=2,
        )
    k_data, k_fit = jax.random.split(key)
    b = min(batch_size, n)
    with warnings.catch_warnings():  # ArrayLoader's advice names its own drop_last, which this function lacks
        warnings.filterwarnings("ignore", message="ArrayLoader: ", category=UserWarning)
        loader = ArrayLoader(arrays, b, key=k_data)
    if n % b:
        divisors = [d for d in range(b, 0, -1) if n % d == 0][:1] + [
            d for d in range(b + 1, n + 1) if n % d == 0
        ][:1]
        warnings.warn(
            f"batch_size: {n} training windows in batches of {b} leave {n % b} window(s) out of every epoch (a "
            f"different random subset each epoch); pass a batch_size dividing {n} (e.g. "
            f"{' or '.join(str(d) for d in divisors)}) to use them all",
            UserWarning,
            stacklevel=2,
        )
    sched = optax.cosine_decay_schedule(lr, max(n_steps, 1), alpha=final_lr_fraction)
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(sched, weight_decay=weight_decay))
    if ema_decay is not None:
        opt = optax.chain(opt, track_ema(ema_decay))
    schedule, scale, aux_weight = model.schedule, model.scale, model.aux_weight

    def loss_fn(den, batch, k):  # only the denoiser is trained; schedule tables and scale stay fixed
        return _denoiser_loss(den, schedule, scale, aux_weight, batch, k)

    if progress is True:  # the bar's "loss" is forecaster_loss's sum: say what it adds
        progress = (
            f"forecaster (loss = eps-MSE + {aux_weight:g} x two branch eps-MSEs)"
            if model.denoiser.guided
            else "forecaster (loss = eps-MSE)"
        )
    res = fit(
        model.denoiser, opt, loss_fn, loader, n_steps=n_steps, key=k_fit, has_aux=True,
        log_every=max(n_steps // 20, 1), checkpoint_dir=checkpoint_dir,
        checkpoint_every=max(n_steps // 4, 1) if checkpoint_dir else 0, resume=resume, progress=progress,
    )  # fmt: skip
    den = res.model
    if ema_decay is not None:
        _, static = eqx.partition(den, eqx.is_inexact_array)
        den = eqx.combine(read_ema(res.opt_state, ema_decay), static)
    return eqx.tree_at(lambda m: m.denoiser, model, den), res.history


def _ddim_signed(eps_fn, schedule, x_T, key, sign, n_steps, eta, clip):
    r"""DDIM(η) on ``n_steps`` evenly spaced steps with every Gaussian draw (the start $x_T$ included) multiplied by
    ``sign`` (±1): a path and its antithetic twin share all draws up to sign. Uses
    :func:`jaxkit.diffusion.ddim_sample` on the mirrored problem: with $\tilde\varepsilon(y, t) =
    s\,\varepsilon(s y, t)$ and $y = s x$, every DDIM update of $y$ with draws $z$ is $s$ times the update of
    $x$ with draws $s z$ (the update is linear in $(x, \varepsilon, z)$ and the clip is odd)."""
    y0 = dm.ddim_sample(
        lambda y, t: sign * eps_fn(sign * y, t), schedule, x_T, key, n_steps=n_steps, eta=eta, clip_x0=clip
    )
    return sign * y0


@eqx.filter_jit
def _sample(
    model, history, macro, signals, scale, keys, n_steps, sampler, eta, clip, chunk, antithetic=False
):
    """Paths for (B, k) (date, key) pairs: flattened to B*k items and mapped in chunks of ``chunk`` items
    (``jax.lax.map(..., batch_size=chunk)``: vmapped inside a chunk, sequential over chunks), so peak memory is
    bounded by the chunk, not by B*k."""
    H, N = model.denoiser.horizon, model.scale.shape[0]
    B, k = keys.shape[:2]

    def one_path(inp):
        hist, mac, sig, sc, key, sign = inp

        def eps_fn(x, t):
            return model.eps(x, t, hist, mac, sig, sc)

        k0, k1 = jax.random.split(key)
        xT = jax.random.normal(k0, (H, N))
        if antithetic:
            n = model.schedule.n_steps if sampler == "ddpm" else n_steps
            x0 = _ddim_signed(
                eps_fn, model.schedule, xT, k1, sign, n, 1.0 if sampler == "ddpm" else eta, clip
            )
        elif sampler == "ddpm":
            x0 = dm.ddpm_sample(eps_fn, model.schedule, xT, k1, clip_x0=clip)
        else:
            x0 = dm.ddim_sample(eps_fn, model.schedule, xT, k1, n_steps=n_steps, eta=eta, clip_x0=clip)
        return x0 * sc

    rep = lambda a: jnp.repeat(a, k, axis=0)  # noqa: E731  (date b's conditioning for each of its k paths)
    flat = keys.reshape((B * k,) + keys.shape[2:])
    sign = jnp.ones((B * k,), jnp.float32)
    if antithetic:  # path 2i+1 reuses path 2i's key with all draws negated
        flat = jnp.repeat(flat[::2], 2, axis=0)
        sign = jnp.tile(jnp.array([1.0, -1.0], jnp.float32), B * k // 2)
    items = (rep(history), rep(macro), rep(signals), rep(scale), flat, sign)
    if chunk >= B * k:
        out = jax.vmap(one_path)(items)
    else:
        out = jax.lax.map(one_path, items, batch_size=chunk)
    return out.reshape(B, k, H, N)


@library_errors
def sample_paths(
    model: DiffusionForecaster,
    history: ArrayInput,
    macro: ArrayInput,
    signals: ArrayInput,
    key: PRNGKeyArray,
    *,
    n_samples: int = 32,
    n_steps: int = 10,
    sampler: Literal["ddim", "ddpm"] = "ddim",
    eta: float = 1.0,
    clip_x0: float | None = 6.0,
    scale: ArrayInput | None = None,
    chunk_size: int | None = 256,
    antithetic: bool = False,
) -> Float[Array, "B k H N"]:
    """``n_samples`` future return paths for each of ``B`` dates in one jitted call.

    ``history`` (B, L, N) raw log returns, ``macro`` (B, M), ``signals`` (B, N, F); ``scale`` (B, N) the
    per-date return scale (required when the model was built with ``per_date_scale=True``, ignored otherwise).
    ``sampler="ddim"`` uses ``n_steps`` DDIM steps (``eta`` = 1, the default, ancestral on the sub-sequence;
    ``eta`` = 0 deterministic, which over-disperses on a learned ε), ``"ddpm"`` the full ancestral chain. ``clip_x0`` clips the predicted clean sample (in units of
    the scale) at every step (``None``: no clipping). ``chunk_size``: at most this many paths are computed at
    once (memory grows with it; ``None`` = all ``B * n_samples`` at once). Path ``j`` of date ``b`` depends only
    on ``key``, ``b``, ``j`` and date ``b``'s condition, so the result does not depend on ``chunk_size`` (up to
    float rounding). ``antithetic=True`` (even ``n_samples``): paths come in antithetic pairs, the second
    of a pair using the first one's Gaussian draws negated (antithetic variates, Hammersley & Morton 1956). Each
    path keeps the sampler's law; the pair mean has much lower variance when the learned map is nearly odd around
    the conditional mean, so the sample mean (the point forecast) is far less noisy than with independent paths.
    """
    if not isinstance(model, DiffusionForecaster):
        raise TypeError(f"model: expected a DiffusionForecaster, received {type(model).__name__}")
    check_key("key", key)
    if sampler not in ("ddim", "ddpm"):
        raise ValueError(f"sampler: expected 'ddim' or 'ddpm', received {sampler!r}")
    check_int("n_samples", n_samples, minimum=1)
    check_int("n_steps", n_steps, minimum=1)
    if chunk_size is not None:
        check_int("chunk_size", chunk_size, minimum=1)
    check_positive("eta", eta, strict=False)
    if clip_x0 is not None:
        check_positive("clip_x0", clip_x0)
    h = jnp.asarray(history, jnp.float32)
    d, N = model.denoiser, model.scale.shape[0]
    if h.ndim != 3 or h.shape[1:] != (d.history, N):
        raise ValueError(f"history: expected shape (B, {d.history}, {N}), received {h.shape}")
    B = h.shape[0]
    if np.shape(macro)[0] != B or np.shape(signals)[0] != B:
        raise ValueError(
            f"macro, signals: expected {B} dates like history, received {np.shape(macro)} and {np.shape(signals)}"
        )
    if not (np.all(np.isfinite(np.asarray(history))) and np.all(np.isfinite(np.asarray(macro)))):
        raise ValueError("history, macro: expected finite conditioning values")
    _check_condition(model, history, macro, signals, "condition")
    if model.per_date_scale:
        if scale is None:
            raise ValueError(
                "scale: required (B, N) per-date scales, the model was built with per_date_scale=True"
            )
        sc = np.asarray(scale, dtype=np.float32)
        if sc.shape != (B, N) or not np.all(np.isfinite(sc)) or np.any(sc <= 0):
            raise ValueError(f"scale: expected ({B}, {N}) positive finite values, received shape {sc.shape}")
        sc = jnp.asarray(sc)
    else:
        sc = jnp.broadcast_to(model.scale, (B, N))
    if antithetic and n_samples % 2:
        raise ValueError(f"n_samples: expected an even number with antithetic=True, received {n_samples}")
    check_size(
        "n_samples",
        B * n_samples * (model.denoiser.horizon * N * 4 + 16),
        hint=f"{B} dates x {n_samples} paths x {model.denoiser.horizon} steps x {N} assets in float32",
    )
    keys = jax.random.split(key, B * n_samples)
    keys = keys.reshape((B, n_samples) + keys.shape[1:])
    chunk = B * n_samples if chunk_size is None else min(int(chunk_size), B * n_samples)
    return _sample(
        model, h, jnp.asarray(macro, jnp.float32), jnp.asarray(signals, jnp.float32), sc, keys, n_steps, sampler,
        float(eta), None if clip_x0 is None else float(clip_x0), chunk, bool(antithetic),
    )  # fmt: skip


def recenter_paths(paths: ArrayInput, mean: ArrayInput = 0.0) -> np.ndarray:
    r"""Replace the sample mean of each date's paths by ``mean``: $x_{b,j} - \bar x_b + m_b$ for paths
    (B, k, H, N) (``mean`` broadcast against (B, H, N); default 0, a "no mean skill" point forecast).

    For daily returns the learned conditional mean of a diffusion forecaster is mostly estimation noise (the stable
    experiment measured it worse than a zero forecast); recentering keeps the learned spread, correlation and tails
    and drops the mean. Report both, as the experiment does. NaN/inf in ``paths`` or ``mean`` raise ``ValueError``
    (a NaN path would otherwise spread into every path's recentred mean)."""
    x = as_float64_numpy("paths", paths)
    if x.ndim != 4 or x.shape[1] == 0:
        raise ValueError(f"paths: expected shape (B, k, H, N) with k >= 1 paths, received {x.shape}")
    check_finite("paths", x)
    m = as_float64_numpy("mean", mean)
    target = (x.shape[0], x.shape[2], x.shape[3])
    try:
        m = np.broadcast_to(m, target)
    except ValueError:
        raise ValueError(
            f"mean: expected a shape that broadcasts to (B, H, N) = {target}, received {m.shape}"
        ) from None
    check_finite("mean", m)
    return x - x.mean(1, keepdims=True) + m[:, None]


def calibrate_spread(
    paths: ArrayInput,
    truth: ArrayInput,
    positions: ArrayInput,
    *,
    horizon: int,
    window: int = 24,
    min_history: int = 6,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Online (walk-forward) recalibration of each date's predictive spread from past realized errors.

    For date $b$ at grid position $t_b$, with the earlier dates $j$ whose whole target window has been observed
    ($t_j + H \le t_b$; the last ``window`` of them), the spread factor is
    $f_b = \sqrt{\sum_j \|y_j - \bar x_j\|^2 / \sum_j \sum_{h,n} \widehat{\mathrm{Var}}(x_{j,\cdot,h,n})}$ and the
    paths become $\bar x_b + f_b (x_b - \bar x_b)$ (mean kept; $f_b = 1$ until ``min_history`` dates are
    available). Only outcomes known at $t_b$ are used, so the result is still an out-of-sample forecast: a variance
    recalibration in the spirit of conformal / probability-integral-transform recalibration (Kuleshov et al.
    2018, "Accurate uncertainties for deep learning using calibrated regression").

    Args:
        paths: (B, k, H, N) sampled paths for ``B`` dates in increasing time order.
        truth: (B, H, N) realized values (only those of earlier, completed windows are used for date ``b``).
        positions: (B,) increasing grid positions $t_b$.
    Returns:
        ``(calibrated paths, factors (B,))``.
    """
    x = np.asarray(paths, dtype=np.float64)
    y = np.asarray(truth, dtype=np.float64)
    t = np.asarray(positions)
    check_int("horizon", horizon, minimum=1)
    check_int("window", window, minimum=1)
    check_int("min_history", min_history, minimum=1)
    if x.ndim != 4 or y.shape != (x.shape[0],) + x.shape[2:] or t.shape != (x.shape[0],):
        raise ValueError(
            f"paths, truth, positions: expected (B, k, H, N), (B, H, N), (B,), received {x.shape}, {y.shape}, {t.shape}"
        )
    if np.any(np.diff(t) <= 0):
        raise ValueError("positions: expected strictly increasing grid positions")
    check_finite("paths", x)
    mean = x.mean(1)
    err = ((np.where(np.isfinite(y), y, 0.0) - mean) ** 2).sum((1, 2))
    var = x.var(1, ddof=1).sum((1, 2))
    factors = np.ones(x.shape[0])
    for b in range(x.shape[0]):
        done = np.flatnonzero(t[:b] + horizon <= t[b])[-window:]
        if done.size >= min_history:
            if not var[done].sum() > 0:
                raise ValueError(
                    f"paths: expected sampled paths with a spread (k >= 2 distinct paths), received paths with "
                    f"zero variance on the dates {done.tolist()[:5]} that calibrate date {b}"
                )
            factors[b] = np.sqrt(err[done].sum() / var[done].sum())
    return mean[:, None] + factors[:, None, None, None] * (x - mean[:, None]), factors
