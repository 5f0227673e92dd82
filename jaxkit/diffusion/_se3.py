r"""Diffusion on SE(3)^N = (SO(3) x R^3)^N: N rigid bodies with per-body rotation and translation noise.

One convention throughout :mod:`jaxkit.diffusion` (DiffDock, Corso et al. 2023; FrameDiff, Yim et al. 2023;
SigmaDock 2026): the two factors run independently on a shared time $t \in [0, 1]$,

- translations $x \in \mathbb R^{N \times 3}$: any continuous :class:`AbstractSchedule` (default VP, $\beta$ from
  0.1 to 20), $x_t = \alpha(t) x_0 + \sigma(t) z$; coordinates are expected centered and scaled (SigmaDock: pocket
  center, 2.7 Å; see :func:`normalize`);
- rotations $R \in SO(3)^N$: VE on SO(3) (default $\sigma$ from 0.1 to 1.5, geometric), **body frame**:
  $R_t = R_0 \exp(\hat v)$ with $v \sim \mathrm{IGSO}(3)(\sigma(t))$; scores are body-frame 3-vectors $s$ with
  $\nabla_R \log p = R \hat s$, and every update is $R \leftarrow R \exp(\hat u)$.

Model interface: ``model(R, x, t) -> (rot_out (N, 3), trans_out (N, 3))``. With ``parametrization="score"`` the
outputs are the scores $(s_R, s_x)$; with ``"eps"`` they are the normalized rotation score
$s_R / \|s\|_\sigma$ (``igso3.score_norm``, DiffDock's normalization) and the translation noise
$\hat z = -\sigma_x(t) s_x$. Both train on the same normalized DSM loss,
$\mathrm{rot} = |(s_R - s_R^*)/\|s\|_\sigma|^2$, $\mathrm{trans} = |\sigma_x s_x + z|^2$ (means over bodies and
components, optionally masked).

Samplers step both factors on a descending grid ``ts`` (:meth:`SE3Diffusion.sample` with a sampler object):

- :class:`EulerMaruyama`: reverse SDE, Euler–Maruyama / geodesic random walk,
  $R \leftarrow R \exp(g^2 s_R \Delta t + g \sqrt{\Delta t} z)$, $x \leftarrow x + (-f x + g^2 s_x)\Delta t + g\sqrt{\Delta t} z$;
- :class:`ProbabilityFlowODE`: probability-flow ODE, exponential-map / Euler steps with half the drift and no noise;
- :class:`DDIM`: DDIM (Song, Meng, Ermon 2021) for any schedule: $\hat x_0 = (x + \sigma_t^2 s_x)/\alpha_t$,
  $x_s = \alpha_s \hat x_0 + \sqrt{\sigma_s^2 - c^2}\,\hat z + c z$ with
  $c = \eta \sigma_s \sqrt{1 - (\alpha_t\sigma_s / \alpha_s\sigma_t)^2}$; on SO(3) the same step in the tangent
  space, $R \leftarrow R \exp\big((\sigma_t^2 - \sigma_t\sqrt{\sigma_s^2 - c^2})\, s_R + c z\big)$. ``eta = 1`` is the
  ancestral sampler (exact Gaussian transition variance), ``eta = 0`` the deterministic exponential integrator.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float, PRNGKeyArray

from jaxkit._validate import (
    check_broadcast,
    check_choice,
    check_finite,
    check_int,
    check_key,
    check_positive,
    error_if_invalid,
    finite_checked,
    library_errors,
    output_checked,
)
from jaxkit.diffusion import igso3
from jaxkit.diffusion._euclidean import _check_sigma_nonzero, check_time
from jaxkit.diffusion._sampling import check_time_grid
from jaxkit.diffusion._schedules import AbstractSchedule, VESchedule, VPSchedule
from jaxkit.geometry import so3 as g

__all__ = [
    "DDIM",
    "AbstractSE3Sampler",
    "DSMTerms",
    "EulerMaruyama",
    "Parametrization",
    "ProbabilityFlowODE",
    "SE3Diffusion",
    "SE3Marginal",
    "denormalize",
    "normalize",
]

Parametrization = Literal["score", "eps"]
ModelFn = Callable[[Array, Array, Array], tuple[Array, Array]]


def _check_scale(scale: Any) -> None:
    if not isinstance(scale, jax.core.Tracer) and not (np.isfinite(float(scale)) and float(scale) > 0):
        raise ValueError(f"scale: expected a finite length > 0, received {scale!r}")


def _check_center(x: ArrayLike, center: ArrayLike) -> None:
    try:
        np.broadcast_shapes(np.shape(x), np.shape(center))
    except ValueError:
        raise ValueError(
            f"center: expected a shape that broadcasts with x {np.shape(x)} (e.g. (3,)), received "
            f"{np.shape(center)}"
        ) from None


def normalize(x: ArrayLike, center: ArrayLike, scale: float = 2.7) -> Array:
    """``(x - center) / scale`` (SigmaDock: pocket center, 2.7 Angstrom)."""
    _check_scale(scale)
    _check_center(x, center)
    x, center = finite_checked("x", jnp.asarray(x)), finite_checked("center", jnp.asarray(center))
    return (x - center) / scale


def denormalize(x: ArrayLike, center: ArrayLike, scale: float = 2.7) -> Array:
    """Inverse of :func:`normalize`."""
    _check_scale(scale)
    _check_center(x, center)
    x, center = finite_checked("x", jnp.asarray(x)), finite_checked("center", jnp.asarray(center))
    return x * scale + center


def _check_state(R: object, x: object, rname: str = "R", xname: str = "x") -> tuple[Array, Array]:
    R = g.check_rotation(rname, R)
    xs, rs = tuple(jnp.shape(x)), tuple(jnp.shape(R))
    if xs[-1:] != (3,) or xs[:-1] != rs[:-2]:
        raise ValueError(f"{xname}: expected shape {rs[:-2] + (3,)} to match {rname} {rs}, received {xs}")
    return jnp.asarray(R), finite_checked(xname, jnp.asarray(x))


def _finite_fields(fields: dict[str, Any]) -> None:
    """A record's constructor check: every field finite (``ValueError`` naming it). Concrete values only: inside
    ``jit``/``vmap`` the record holds traced values, which the functions that fill it have checked."""
    for name, value in fields.items():
        check_finite(name, value)


class _SE3MarginalFields(NamedTuple):
    R_t: Float[Array, "*n 3 3"]
    x_t: Float[Array, "*n 3"]
    rot_score: Float[Array, "*n 3"]
    trans_score: Float[Array, "*n 3"]
    v: Float[Array, "*n 3"]
    z: Float[Array, "*n 3"]
    sigma_rot: Float[Array, ""]
    sigma_trans: Float[Array, ""]


class SE3Marginal(_SE3MarginalFields):
    """A draw of the forward marginal of :class:`SE3Diffusion` and its exact conditional scores; every field is
    finite (``ValueError`` naming the field otherwise)."""

    __slots__ = ()

    # Any: JAX rebuilds the record from whatever leaves a transformation carries (tracers, ShapeDtypeStructs)
    def __new__(
        cls,
        R_t: Any,
        x_t: Any,
        rot_score: Any,
        trans_score: Any,
        v: Any,
        z: Any,
        sigma_rot: Any,
        sigma_trans: Any,
    ) -> SE3Marginal:
        fields = dict(R_t=R_t, x_t=x_t, rot_score=rot_score, trans_score=trans_score, v=v, z=z)
        _finite_fields(fields | {"sigma_rot": sigma_rot, "sigma_trans": sigma_trans})
        return super().__new__(cls, R_t, x_t, rot_score, trans_score, v, z, sigma_rot, sigma_trans)


class _DSMTermsFields(NamedTuple):
    rot: Float[Array, ""]
    trans: Float[Array, ""]


class DSMTerms(_DSMTermsFields):
    """The two normalized denoising score-matching terms of :meth:`SE3Diffusion.dsm_terms`, both finite
    (``ValueError`` naming the term otherwise: a model whose score is NaN/inf is refused where its loss is read)."""

    __slots__ = ()

    def __new__(cls, rot: Any, trans: Any) -> DSMTerms:
        _finite_fields({"rot": rot, "trans": trans})
        return super().__new__(cls, rot, trans)


# ---- samplers: one reverse step of each factor; the rotation step is shared with jaxkit.diffusion.so3_diffusion ----


class AbstractSE3Sampler(eqx.Module):
    """A reverse-time step rule for :meth:`SE3Diffusion.sample` (and the SO(3) samplers of ``so3_diffusion``).

    ``rot_tangent`` returns the body-frame update ``u`` of ``R <- R exp(hat(u))`` for the VE rotation process;
    ``trans_step`` the next ``x`` for a continuous Euclidean schedule. Both take the score ``s`` at time ``t``, a
    standard normal draw ``z`` and ``noise`` (0 or 1) gating it, and step to ``t_next < t``."""

    @abc.abstractmethod
    def rot_tangent(
        self, s: Array, z: Array, sched: VESchedule, t: Array, t_next: Array, noise: Array
    ) -> Array:
        raise NotImplementedError

    @abc.abstractmethod
    def trans_step(
        self, x: Array, s: Array, z: Array, sched: AbstractSchedule, t: Array, t_next: Array, noise: Array
    ) -> Array:
        raise NotImplementedError


class EulerMaruyama(AbstractSE3Sampler):
    """Reverse SDE: geodesic random walk on SO(3), Euler–Maruyama on R^3 (see the module docstring)."""

    def rot_tangent(self, s, z, sched, t, t_next, noise):
        dt = t - t_next
        gt = sched.diffusion(t)
        return gt**2 * s * dt + noise * gt * jnp.sqrt(dt) * z

    def trans_step(self, x, s, z, sched, t, t_next, noise):
        dt = t - t_next
        gt = sched.diffusion(t)
        return x + (-sched.drift_coef(t) * x + gt**2 * s) * dt + noise * gt * jnp.sqrt(dt) * z


class ProbabilityFlowODE(AbstractSE3Sampler):
    """Probability-flow ODE: exponential-map / Euler steps with half the drift and no noise (``"ode"``)."""

    def rot_tangent(self, s, z, sched, t, t_next, noise):
        return 0.5 * sched.diffusion(t) ** 2 * s * (t - t_next)

    def trans_step(self, x, s, z, sched, t, t_next, noise):
        return x + (-sched.drift_coef(t) * x + 0.5 * sched.diffusion(t) ** 2 * s) * (t - t_next)


class DDIM(AbstractSE3Sampler):
    """DDIM for any schedule (``"ddim"``): ``eta = 1`` ancestral, ``eta = 0`` the deterministic exponential
    integrator; ``x0_clip`` clips each body's $\\hat x_0$ to a ball of that radius (Ho et al. 2020)."""

    eta: float = 1.0
    x0_clip: float | None = None

    def __check_init__(self) -> None:
        check_positive("eta", self.eta, strict=False)
        if self.x0_clip is not None:
            check_positive("x0_clip", self.x0_clip)

    def rot_tangent(self, s, z, sched, t, t_next, noise):
        st, sn = sched.sigma(t), sched.sigma(t_next)
        c = noise * self.eta * sn * jnp.sqrt(jnp.clip(1.0 - (sn / st) ** 2, 0.0))
        return (st**2 - st * jnp.sqrt(jnp.clip(sn**2 - c**2, 0.0))) * s + c * z

    def trans_step(self, x, s, z, sched, t, t_next, noise):
        a, st = sched.alpha(t), sched.sigma(t)
        an, sn = sched.alpha(t_next), sched.sigma(t_next)
        x0 = (x + st**2 * s) / a
        eps = -st * s
        if self.x0_clip is not None:
            r = jnp.linalg.norm(x0, axis=-1, keepdims=True)
            x0 = x0 * jnp.minimum(1.0, self.x0_clip / jnp.maximum(r, 1e-12))
            eps = (x - a * x0) / st
        c = noise * self.eta * sn * jnp.sqrt(jnp.clip(1.0 - (a * sn / (an * st)) ** 2, 0.0))
        return an * x0 + jnp.sqrt(jnp.clip(sn**2 - c**2, 0.0)) * eps + c * z


def rot_step(
    R: Array,
    s: Array,
    z: Array,
    sched: VESchedule,
    t: Array,
    t_next: Array,
    sampler: AbstractSE3Sampler,
    noise: Array,
) -> Array:
    """One reverse step of the VE rotation process, body frame: ``R exp(hat(u))``; ``noise`` gates ``z``."""
    return jnp.matmul(
        R, g.exp(sampler.rot_tangent(s, z, sched, t, t_next, noise))
    )  # R is kept a rotation by the loop: no re-check


class SE3Diffusion(eqx.Module):
    """Product diffusion on N rigid bodies: ``rot`` (VE on SO(3), body frame) x ``trans`` (any continuous schedule).

    ``parametrization`` says what the model returns (``"score"``: scores; ``"eps"``: normalized rotation score and
    translation noise); see the module docstring.
    """

    rot: VESchedule = eqx.field(static=True, default=VESchedule(0.1, 1.5))
    trans: AbstractSchedule = eqx.field(static=True, default=VPSchedule(0.1, 20.0))
    parametrization: Parametrization = eqx.field(static=True, default="score")

    def __check_init__(self) -> None:
        if not isinstance(self.rot, VESchedule):
            raise TypeError(f"rot: expected a VESchedule, received {type(self.rot).__name__}")
        if not isinstance(self.trans, AbstractSchedule):
            raise TypeError(
                f"trans: expected a continuous AbstractSchedule (VPSchedule, VESchedule, ...), received "
                f"{type(self.trans).__name__}"
            )
        if not (igso3.SIGMA_MIN <= self.rot.sigma_min and self.rot.sigma_max <= igso3.SIGMA_MAX):
            raise ValueError(
                f"rot: expected sigma range inside [{igso3.SIGMA_MIN}, {igso3.SIGMA_MAX}], "
                f"received [{self.rot.sigma_min}, {self.rot.sigma_max}]"
            )
        check_choice("parametrization", self.parametrization, ("score", "eps"))

    # ---- forward process ---------------------------------------------------------------------------------
    def forward_marginal(self, key: PRNGKeyArray, R0: ArrayLike, x0: ArrayLike, t: ArrayLike) -> SE3Marginal:
        """Sample ``(R_t, x_t)`` given clean ``(R0 (N,3,3), x0 (N,3))`` with the exact conditional scores."""
        check_key("key", key)
        R0, x0 = _check_state(R0, x0, "R0", "x0")
        t = check_time(self.trans, t)
        k_r, k_x = jax.random.split(key)
        sr = _check_sigma_nonzero(self.rot.sigma(t), t)  # the exact scores divide by sigma_t
        v = igso3.sample_vector(k_r, jnp.broadcast_to(sr, R0.shape[:-2]), R0.shape[:-2], R0.dtype)
        a, st = self.trans.alpha(t), _check_sigma_nonzero(self.trans.sigma(t), t)
        z = jax.random.normal(k_x, x0.shape, x0.dtype)
        return SE3Marginal(
            R_t=jnp.matmul(R0, g.exp(v)),
            x_t=a * x0 + st * z,
            rot_score=igso3.score_vector(v, sr),
            trans_score=-z / st,
            v=v,
            z=z,
            sigma_rot=sr,
            sigma_trans=st,
        )

    def rot_score(self, R_t: ArrayLike, R0: ArrayLike, t: ArrayLike) -> Array:
        """Exact conditional rotation score (body frame) of ``R_t | R0``."""
        return igso3.score(R_t, self.rot.sigma(check_time(self.trans, t)), mean=R0)

    def trans_score(self, x_t: ArrayLike, x0: ArrayLike, t: ArrayLike) -> Array:
        """Exact conditional translation score ``-(x_t - alpha x0)/sigma^2``."""
        check_broadcast(x_t=x_t, x0=x0)
        x_t, x0 = finite_checked("x_t", jnp.asarray(x_t)), finite_checked("x0", jnp.asarray(x0))
        t = check_time(self.trans, t)
        return -(x_t - self.trans.alpha(t) * x0) / self.trans.sigma(t) ** 2

    # ---- parametrization -----------------------------------------------------------------------------------
    def to_scores(self, rot_out: ArrayLike, trans_out: ArrayLike, t: ArrayLike) -> tuple[Array, Array]:
        """Model outputs -> ``(rotation score, translation score)`` under :attr:`parametrization`."""
        rot_out, trans_out = jnp.asarray(rot_out), jnp.asarray(trans_out)
        if self.parametrization == "score":
            return rot_out, trans_out
        return rot_out * igso3.score_norm(self.rot.sigma(t)), -trans_out / self.trans.sigma(t)

    def from_scores(self, rot_score: ArrayLike, trans_score: ArrayLike, t: ArrayLike) -> tuple[Array, Array]:
        """Inverse of :meth:`to_scores` (e.g. to wrap an exact score as an ``"eps"`` model)."""
        rot_score, trans_score = jnp.asarray(rot_score), jnp.asarray(trans_score)
        if self.parametrization == "score":
            return rot_score, trans_score
        return rot_score / igso3.score_norm(self.rot.sigma(t)), -trans_score * self.trans.sigma(t)

    def score_fn(self, model: ModelFn) -> ModelFn:
        """``(R, x, t) -> (rotation score, translation score)`` of a model with this parametrization."""
        return lambda R, x, t: self.to_scores(*model(R, x, t), t)

    # ---- loss ----------------------------------------------------------------------------------------------
    def dsm_terms(
        self,
        model: ModelFn,
        R0: ArrayLike,
        x0: ArrayLike,
        key: PRNGKeyArray,
        *,
        t: ArrayLike | None = None,
        t_min: float = 1e-3,
        mask: ArrayLike | None = None,
    ) -> DSMTerms:
        """The normalized rotation and translation DSM terms for one sample of N bodies.

        ``t ~ U(t_min, 1)`` unless given (a given ``t`` must have ``sigma_t > 0``: the targets divide by it, and
        it is 0 at ``t = 0``); ``mask (N,)`` weights the bodies, each weight >= 0 (padding bodies get 0).
        """
        R0, x0 = jnp.asarray(R0), jnp.asarray(x0)
        k_t, k_n = jax.random.split(key)
        if mask is not None:
            if jnp.shape(mask) != x0.shape[:-1]:
                raise ValueError(
                    f"mask: expected one weight per body, shape {x0.shape[:-1]} (x0 is {x0.shape}), received "
                    f"shape {jnp.shape(mask)}"
                )
            mask = error_if_invalid(
                jnp.asarray(mask, x0.dtype), ~(jnp.asarray(mask) >= 0), "mask: expected finite weights >= 0"
            )
        if t is None:
            t = jax.random.uniform(k_t, (), x0.dtype, minval=t_min, maxval=1.0)
        else:
            t = check_time(self.trans, t)
            t = error_if_invalid(
                t,
                (self.trans.sigma(t) <= 0) | (self.rot.sigma(t) <= 0),
                "t: the DSM targets divide by sigma_t, which is 0 at this t; use t > 0 (e.g. t >= t_min)",
            )
        f = self.forward_marginal(k_n, R0, x0, t)
        s_rot, s_tr = self.to_scores(*model(f.R_t, f.x_t, t), t)
        rot_err = (s_rot - f.rot_score) / igso3.score_norm(f.sigma_rot)
        tr_err = f.sigma_trans * s_tr + f.z
        m = jnp.ones(x0.shape[:-1], x0.dtype) if mask is None else jnp.asarray(mask, x0.dtype)
        n = 3.0 * jnp.maximum(jnp.sum(m), 1.0)
        return DSMTerms(jnp.sum(m[..., None] * rot_err**2) / n, jnp.sum(m[..., None] * tr_err**2) / n)

    def dsm_loss(
        self,
        model: ModelFn,
        R0: ArrayLike,
        x0: ArrayLike,
        key: PRNGKeyArray,
        *,
        t: ArrayLike | None = None,
        t_min: float = 1e-3,
        mask: ArrayLike | None = None,
        rot_weight: float = 1.0,
        trans_weight: float = 1.0,
    ) -> Array:
        """``rot_weight * rot + trans_weight * trans`` of :meth:`dsm_terms` (a scalar, as every ``dsm_loss``)."""
        terms = self.dsm_terms(model, R0, x0, key, t=t, t_min=t_min, mask=mask)
        return rot_weight * terms.rot + trans_weight * terms.trans

    # ---- prior and samplers --------------------------------------------------------------------------------
    def prior_sample(
        self, key: PRNGKeyArray, n_bodies: int, rot_prior: Literal["uniform", "igso3"] = "uniform"
    ) -> tuple[Array, Array]:
        """``R ~ Haar`` (or ``IGSO(3)(sigma_max)`` around I), ``x ~ N(0, sigma(1)^2 I)``."""
        check_choice("rot_prior", rot_prior, ("uniform", "igso3"))
        check_int("n_bodies", n_bodies, minimum=1)
        check_key("key", key)
        k_r, k_x = jax.random.split(key)
        if rot_prior == "uniform":
            R = g.random_uniform(k_r, (n_bodies,))
        else:
            R = igso3.sample(k_r, self.rot.sigma_max, (n_bodies,))
        x = self.trans.sigma(1.0) * jax.random.normal(k_x, (n_bodies, 3), R.dtype)
        return R, x

    @library_errors
    def sample(
        self,
        model: ModelFn,
        R_T: ArrayLike,
        x_T: ArrayLike,
        key: PRNGKeyArray,
        ts: ArrayLike,
        *,
        sampler: AbstractSE3Sampler = EulerMaruyama(),
        noise_final: bool = True,
        denoise_final: bool = False,
        check_output: bool = True,
    ) -> tuple[Array, Array]:
        """Integrate the reverse process from ``ts[0]`` down to ``ts[-1]`` with ``sampler`` (:class:`EulerMaruyama`,
        :class:`ProbabilityFlowODE` or :class:`DDIM`; see the module docstring).

        ``noise_final=False`` drops the noise of the last step (returns the denoised mean);
        ``denoise_final=True`` returns the Tweedie estimate at ``ts[-1]`` instead of the sample there,
        $\\hat x_0 = (x + \\sigma_x^2 s_x)/\\alpha$ and $\\hat R_0 = R \\exp(\\sigma_R^2 s_R)$ (exact for
        Gaussians, first order on SO(3)): the last noise level is removed rather than left in the sample.
        ``check_output`` (default) checks every model output for NaN/inf (a ``ValueError``, or a run-time error
        under ``jax.jit``, naming ``model``); ``False`` skips that check.
        """
        R_T, x_T = _check_state(R_T, x_T, "R_T", "x_T")
        check_key("key", key)

        def call(R: Array, x: Array, t: Array) -> tuple[Array, Array]:
            return output_checked("model", model(R, x, t), check=check_output)

        if not isinstance(sampler, AbstractSE3Sampler):
            raise TypeError(
                f"sampler: expected an AbstractSE3Sampler (EulerMaruyama(), ProbabilityFlowODE(), DDIM(eta=...)), "
                f"received {sampler!r}"[:200]
            )
        ts = check_time_grid(ts)
        n = ts.shape[0] - 1
        gate = jnp.ones(n, ts.dtype) if noise_final else (jnp.arange(n) < n - 1).astype(ts.dtype)

        def step(
            c: tuple[Array, Array], inp: tuple[Array, Array, Array, Array]
        ) -> tuple[tuple[Array, Array], None]:
            R, x = c
            t, t_next, k, noise = inp
            kr, kx = jax.random.split(k)
            s_rot, s_tr = self.to_scores(*call(R, x, t), t)
            zr = jax.random.normal(kr, R.shape[:-1], R.dtype)
            zx = jax.random.normal(kx, x.shape, x.dtype)
            R = rot_step(R, s_rot, zr, self.rot, t, t_next, sampler, noise)
            x = sampler.trans_step(x, s_tr, zx, self.trans, t, t_next, noise)
            return (R, x), None

        keys = jax.random.split(key, n)
        (R, x), _ = jax.lax.scan(step, (jnp.asarray(R_T), jnp.asarray(x_T)), (ts[:-1], ts[1:], keys, gate))
        if denoise_final:
            t = ts[-1]
            s_rot, s_tr = self.to_scores(*call(R, x, t), t)
            R = jnp.matmul(R, g.exp(self.rot.sigma(t) ** 2 * s_rot))
            x = (x + self.trans.sigma(t) ** 2 * s_tr) / self.trans.alpha(t)
        return R, x

    @library_errors
    def reverse_sde_sample(
        self, model: ModelFn, R_T: ArrayLike, x_T: ArrayLike, key: PRNGKeyArray, ts: ArrayLike
    ) -> tuple[Array, Array]:
        """``sample(..., sampler=EulerMaruyama())``: geodesic random walk x Euler–Maruyama."""
        return self.sample(model, R_T, x_T, key, ts, sampler=EulerMaruyama())

    @library_errors
    def probability_flow_sample(
        self, model: ModelFn, R_T: ArrayLike, x_T: ArrayLike, ts: ArrayLike
    ) -> tuple[Array, Array]:
        """``sample(..., sampler=ProbabilityFlowODE())``: probability-flow ODE (exponential-map / Euler steps)."""
        return self.sample(model, R_T, x_T, jax.random.key(0), ts, sampler=ProbabilityFlowODE())
