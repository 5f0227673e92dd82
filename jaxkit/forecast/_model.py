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

from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Array, Float, PRNGKeyArray

from jaxkit import diffusion as dm
from jaxkit.forecast._denoiser import ConditionalDenoiser
from jaxkit.train import ArrayLoader, ema_params, fit, params_ema

__all__ = ["DiffusionForecaster", "forecaster_loss", "make_forecaster", "sample_paths", "train_forecaster"]


class DiffusionForecaster(eqx.Module):
    """Denoiser + discrete VP schedule + per-asset return scale."""

    denoiser: ConditionalDenoiser
    schedule: dm.DiscreteSchedule
    scale: Float[Array, " N"]
    aux_weight: float = eqx.field(static=True, default=1.0)

    def eps(self, x_t, t, history, macro, signals):
        return self.denoiser(x_t, t, history / self.scale, macro, signals)


def make_forecaster(
    *,
    n_assets: int,
    history: int,
    horizon: int,
    n_macro: int,
    n_signals: int,
    scale: Any,
    channels: int = 32,
    layers: int = 2,
    heads: int = 2,
    guided: bool = True,
    diffusion_steps: int = 50,
    beta_start: float = 1e-4,
    beta_end: float = 0.5,
    schedule: str = "quadratic",
    aux_weight: float = 1.0,
    key: PRNGKeyArray,
) -> DiffusionForecaster:
    """Build a forecaster; the default schedule is CSDI's (quadratic β from 1e-4 to 0.5, 50 steps)."""
    scale = np.asarray(scale, dtype=np.float32)
    if scale.shape != (n_assets,) or not np.all(np.isfinite(scale)) or np.any(scale <= 0):
        raise ValueError(f"scale: expected {n_assets} positive finite values, received shape {scale.shape}")
    if schedule == "cosine":
        sched = dm.discrete_schedule("cosine", diffusion_steps)
    else:
        sched = dm.discrete_schedule(schedule, diffusion_steps, beta_start=beta_start, beta_end=beta_end)
    den = ConditionalDenoiser(
        n_assets=n_assets, history=history, horizon=horizon, n_macro=n_macro, n_signals=n_signals,
        channels=channels, layers=layers, heads=heads, guided=guided, key=key,
    )  # fmt: skip
    return DiffusionForecaster(den, sched, jnp.asarray(scale), aux_weight)


def forecaster_loss(model: DiffusionForecaster, batch: dict, key: PRNGKeyArray) -> tuple[Array, dict]:
    """Mean ε-prediction loss over a batch dict with ``history``, ``target``, ``macro``, ``signals``."""
    return _denoiser_loss(model.denoiser, model.schedule, model.scale, model.aux_weight, batch, key)


def _denoiser_loss(den, schedule, scale, aux_weight, batch, key):
    B = batch["target"].shape[0]
    keys = jax.random.split(key, B)
    T = schedule.num_steps

    def one(target, hist, macro, sig, k):
        kt, ke = jax.random.split(k)
        t = jax.random.randint(kt, (), 0, T)
        x0 = target / scale
        eps = jax.random.normal(ke, x0.shape, x0.dtype)
        x_t = dm.q_sample(schedule, x0, t, eps)
        e, e_full, e_macro, g = den(x_t, t, hist / scale, macro, sig, return_branches=True)
        return jnp.mean((e - eps) ** 2), jnp.mean((e_full - eps) ** 2), jnp.mean((e_macro - eps) ** 2), g

    main, full, macro_only, g = jax.vmap(one)(
        batch["target"], batch["history"], batch["macro"], batch["signals"], keys
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
    steps: int,
    batch_size: int,
    key: PRNGKeyArray,
    lr: float = 1e-3,
    checkpoint_dir: str | Path | None = None,
    resume: bool = False,
    progress: bool | str = True,
    final_lr_fraction: float = 0.1,
    ema_decay: float | None = None,
    weight_decay: float = 1e-4,
) -> tuple[DiffusionForecaster, list[dict]]:
    """AdamW with cosine decay from ``lr`` to ``final_lr_fraction * lr`` through :func:`jaxkit.train.fit`;
    returns ``(model, history)``. ``ema_decay``: return the exponential moving average of the weights
    (:func:`jaxkit.train.params_ema`) instead of the last iterate."""
    if not 0.0 <= final_lr_fraction <= 1.0:
        raise ValueError(f"final_lr_fraction: expected a value in [0, 1], received {final_lr_fraction}")
    if weight_decay < 0:
        raise ValueError(f"weight_decay: expected a value >= 0, received {weight_decay}")
    arrays = {k: np.asarray(windows[k], dtype=np.float32) for k in ("history", "target", "macro", "signals")}
    if not np.all(np.isfinite(arrays["target"])):
        raise ValueError("windows: training targets contain NaN (a window runs past the data end)")
    k_data, k_fit = jax.random.split(key)
    loader = ArrayLoader(arrays, min(batch_size, arrays["target"].shape[0]), key=k_data)
    sched = optax.cosine_decay_schedule(lr, max(steps, 1), alpha=final_lr_fraction)
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(sched, weight_decay=weight_decay))
    if ema_decay is not None:
        opt = optax.chain(opt, params_ema(ema_decay))
    schedule, scale, aux_weight = model.schedule, model.scale, model.aux_weight

    def loss_fn(den, batch, k):  # only the denoiser is trained; schedule tables and scale stay fixed
        return _denoiser_loss(den, schedule, scale, aux_weight, batch, k)

    res = fit(
        model.denoiser, opt, loss_fn, loader, n_steps=steps, key=k_fit, has_aux=True,
        log_every=max(steps // 20, 1), checkpoint_dir=checkpoint_dir,
        checkpoint_every=max(steps // 4, 1) if checkpoint_dir else 0, resume=resume, progress=progress,
    )  # fmt: skip
    den = res.model
    if ema_decay is not None:
        _, static = eqx.partition(den, eqx.is_inexact_array)
        den = eqx.combine(ema_params(res.opt_state, ema_decay), static)
    return eqx.tree_at(lambda m: m.denoiser, model, den), res.history


@eqx.filter_jit
def _sample(model, history, macro, signals, keys, num_steps, sampler, eta, clip):
    H, N = model.denoiser.horizon, model.scale.shape[0]

    def one_date(hist, mac, sig, key):
        def eps_fn(x, t):
            return model.eps(x, t, hist, mac, sig)

        def one_path(k):
            k0, k1 = jax.random.split(k)
            xT = jax.random.normal(k0, (H, N))
            if sampler == "ddpm":
                x0 = dm.ddpm_sample(eps_fn, model.schedule, xT, k1, clip_x0=clip)
            else:
                x0 = dm.ddim_sample(
                    eps_fn, model.schedule, xT, k1, num_steps=num_steps, eta=eta, clip_x0=clip
                )
            return x0 * model.scale

        return jax.vmap(one_path)(key)

    return jax.vmap(one_date)(history, macro, signals, keys)


def sample_paths(
    model: DiffusionForecaster,
    history: Any,
    macro: Any,
    signals: Any,
    key: PRNGKeyArray,
    *,
    num_samples: int = 32,
    num_steps: int = 10,
    sampler: str = "ddim",
    eta: float = 0.0,
    clip_x0: float | None = 6.0,
) -> Float[Array, "B k H N"]:
    """``num_samples`` future return paths for each of ``B`` dates in one jitted, vmapped call.

    ``history`` (B, L, N) raw log returns, ``macro`` (B, M), ``signals`` (B, N, F). ``sampler="ddim"`` uses
    ``num_steps`` DDIM steps (``eta`` = 0 deterministic), ``"ddpm"`` the full ancestral chain. ``clip_x0``
    clips the predicted clean sample (in units of the per-asset scale) at every step (``None``: no clipping).
    """
    if sampler not in ("ddim", "ddpm"):
        raise ValueError(f"sampler: expected 'ddim' or 'ddpm', received {sampler!r}")
    h = jnp.asarray(history, jnp.float32)
    d = model.denoiser
    if h.ndim != 3 or h.shape[1:] != (d.history, model.scale.shape[0]):
        raise ValueError(
            f"history: expected shape (B, {d.history}, {model.scale.shape[0]}), received {h.shape}"
        )
    B = h.shape[0]
    if np.shape(macro)[0] != B or np.shape(signals)[0] != B:
        raise ValueError(
            f"macro, signals: expected {B} dates like history, received {np.shape(macro)} and {np.shape(signals)}"
        )
    if not (np.all(np.isfinite(np.asarray(history))) and np.all(np.isfinite(np.asarray(macro)))):
        raise ValueError("history, macro: expected finite conditioning values")
    keys = jax.random.split(key, B * num_samples)
    keys = keys.reshape((B, num_samples) + keys.shape[1:])
    return _sample(
        model, h, jnp.asarray(macro, jnp.float32), jnp.asarray(signals, jnp.float32), keys, num_steps, sampler,
        float(eta), None if clip_x0 is None else float(clip_x0),
    )  # fmt: skip
