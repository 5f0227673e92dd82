"""Covariance propagation and stability intervals for ReLU MLPs and single-layer softmax attention.

Setting (Haris, Zhang & Yoshida, ICLR 2026, arXiv:2602.08287, Sec. "theoretical analysis"): the input is Gaussian,
``x ~ N(0, I)``, and ``y = ρx + sqrt(1-ρ²) z`` is a ``ρ``-correlated copy, so the pair ``(x, y)`` has second
moments ``K = E[x xᵀ] = I`` and ``C = E[x yᵀ] = ρ I``. The noise stability of a network ``f`` is
``Stab_ρ[f] = E⟨f(x), f(y)⟩``. The paper's exact propagation rules could not be retrieved offline; what is
implemented here (and documented as our choice) is:

**ReLU layers — arc-cosine closed form.** For zero-mean jointly Gaussian ``(u, v)`` with variances ``q₁, q₂`` and
covariance ``c = cos θ · sqrt(q₁q₂)`` (Cho & Saul 2009, degree-1 arc-cosine kernel)

$$
\\mathbb{E}[\\mathrm{relu}(u)\\,\\mathrm{relu}(v)] = \\frac{\\sqrt{q_1 q_2}}{2\\pi}\\,(\\sin\\theta + (\\pi-\\theta)\\cos\\theta),
$$

and with non-zero means (biases) the truncated bivariate-normal moments of Rosenbaum (1961)
(:func:`relu_gaussian_moments`). A layer ``h ↦ relu(W h + b)`` maps the pair's mean and second-moment matrices
``(μ, K, C)`` to ``(μ', K', C')``, ``K'_{ij} = E[relu(a_i) relu(a_j)]``, ``C'_{ij} = E[relu(a_i) relu(b_j)]``
for the pre-activations ``a = Wh + b``, ``b = Wh' + b``. This is **exact for the first hidden layer** (Gaussian
input) and a Gaussian-closure (first two moments matched; mean-field / signal-propagation) approximation for
deeper layers, whose pre-activations are only approximately Gaussian. A final linear readout ``A`` gives
``Stab = tr(A C Aᵀ)``.

**Softmax attention — pattern-agnostic interval.** Scores ``⟨W_Qᵀx_t, W_Kᵀx_s⟩`` are even in ``X`` and values
``W_Vᵀx_s`` odd, so the output ``o`` is an odd function and only odd Hermite degrees carry weight:
``Stab_ρ = Σ_{k odd} ρ^k W_k`` with ``W_k ≥ 0``. Hence for ``ρ ≥ 0`` the *normalized* stability lies in
``[0, ρ]`` and ``Stab_ρ ∈ [0, ρ E‖o_t‖²] ⊆ [0, ρM]`` with ``M = E max_s ‖W_Vᵀx_s‖²`` (a convex combination
is no longer than its longest vector), bounded by the Gaussian moment generating function. A second bound:
``⟨o_t(X), o_t(Y)⟩ = a_tᵀ G a'_t`` with ``G_{ss'} = x_sᵀ P y_{s'}``, ``P = W_V W_Vᵀ``, lies in
``[min G, max G]``, and ``E max G ≤ inf_β β⁻¹ log Σ_{ss'} E e^{βG_{ss'}}`` with (eigenvalues ``λ`` of ``P``,
``s² = 1-ρ²``)

$$
\\mathbb{E}e^{\\beta G_{ss}} = \\prod_k (1 - 2\\beta\\rho\\lambda_k - \\beta^2 s^2 \\lambda_k^2)^{-1/2},\\qquad
\\mathbb{E}e^{\\beta G_{ss'}} = \\prod_k (1 - \\beta^2\\lambda_k^2)^{-1/2}\\ (s \\ne s').
$$

Both hold for every attention pattern (softmax of any scores, masked or not), so the interval is rigorous but
wide: it does not model the softmax. Uniform attention (``W_Q = 0`` or ``W_K = 0``) has the exact value
``ρ tr(P) / T``.

**Composition** (:func:`stability_interval`): layers act on an interval ``[c_lo, c_hi]`` of *normalized*
stabilities ``Stab/E‖f‖²``: a first ReLU layer is exact; later ReLU layers use the isotropic zero-mean Gaussian
closure, i.e. the monotone arc-cosine correlation map ``κ(c) = (sqrt(1-c²) + (π - arccos c) c) / π``
(:func:`relu_correlation_map`); an attention layer maps ``c`` to ``[min(0, c), max(0, c)]`` (odd function, above).
Exact (ReLU) or rigorous (attention) for one layer; an approximation for several, as in the paper.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxkit._typing import ArrayInput

from .._validate import (
    as_float64_numpy,
    check_broadcast,
    check_finite,
    check_int,
    check_ndim,
    check_range,
    check_shape,
    error_if_invalid,
    is_tracer,
    range_checked,
)


class _StabilityIntervalFields(NamedTuple):
    lower: float
    upper: float


class StabilityInterval(_StabilityIntervalFields):
    """A predicted interval ``[lower, upper]`` for ``Stab_ρ`` (``lower == upper`` where the value is exact).

    Both ends must be finite numbers (``ValueError`` naming the end otherwise)."""

    __slots__ = ()

    def __new__(cls, lower: float, upper: float) -> StabilityInterval:
        for name, v in (("lower", lower), ("upper", upper)):
            check_finite(name, v)
        return super().__new__(cls, lower, upper)

    def contains(self, value: float, slack: float = 0.0) -> bool:
        return self.lower - slack <= value <= self.upper + slack


# ----------------------------------------------------------------------------------------------- ReLU layers


def _check_moments(q1: Any, q2: Any, c: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(q1, q2, c)`` as arrays after checking variances ``q >= 0`` and covariance ``|c| <= sqrt(q1 q2)`` (a
    covariance matrix), all finite: ``ValueError`` naming the argument on concrete values, an ``equinox.error_if``
    run-time error with the same message when any of them is traced (under ``jax.jit``/``vmap``)."""
    check_broadcast(q1=q1, q2=q2, c=c)
    if not (is_tracer(q1) or is_tracer(q2) or is_tracer(c)):
        a1, a2, ac = (np.asarray(v, dtype=np.float64) for v in (q1, q2, c))
        for name, a in (("q1", a1), ("q2", a2), ("c", ac)):
            if not np.all(np.isfinite(a)):
                raise ValueError(f"{name}: expected finite values")
        for name, a in (("q1", a1), ("q2", a2)):
            if np.any(a < 0):
                raise ValueError(f"{name}: expected variances >= 0, received min {a.min()}")
        if np.any(np.abs(ac) > np.sqrt(a1 * a2) * (1 + 1e-6) + 1e-12):
            raise ValueError(_CAUCHY_SCHWARZ)
        return jnp.asarray(q1), jnp.asarray(q2), jnp.asarray(c)
    q1, q2, c = jnp.asarray(q1), jnp.asarray(q2), jnp.asarray(c)
    q1, q2, c = (
        error_if_invalid(v, ~jnp.isfinite(v), f"{name}: expected finite values, received NaN/inf")
        for name, v in (("q1", q1), ("q2", q2), ("c", c))
    )
    q1, q2 = (
        error_if_invalid(v, v < 0, f"{name}: expected variances >= 0, received a negative value")
        for name, v in (("q1", q1), ("q2", q2))
    )
    c = error_if_invalid(c, jnp.abs(c) > jnp.sqrt(q1 * q2) * (1 + 1e-6) + 1e-12, _CAUCHY_SCHWARZ)
    return q1, q2, c


_CAUCHY_SCHWARZ = "c: expected a covariance with |c| <= sqrt(q1 q2) (Cauchy-Schwarz), received a larger one"


def relu_second_moment(q1: ArrayInput, q2: ArrayInput, c: ArrayInput) -> jax.Array:
    """``E[relu(u) relu(v)]`` for zero-mean Gaussian ``(u, v)``, ``Var u = q1``, ``Var v = q2``, ``Cov = c``.

    Degree-1 arc-cosine kernel (Cho & Saul 2009): ``sqrt(q1 q2)/(2π) (sin θ + (π - θ) cos θ)``, ``cos θ = c /
    sqrt(q1 q2)``. Broadcasts elementwise. NaN/inf, a negative variance or ``|c| > sqrt(q1 q2)`` raise
    ``ValueError`` naming the argument, under ``jax.jit``/``vmap`` a run-time error (``equinox.error_if``).
    """
    return _relu_second_moment(*_check_moments(q1, q2, c))


def _relu_second_moment(q1: jax.Array, q2: jax.Array, c: jax.Array) -> jax.Array:
    """:func:`relu_second_moment` without the value checks."""
    norm = jnp.sqrt(q1 * q2)
    safe = jnp.where(norm > 0, norm, 1.0)
    cos = jnp.clip(c / safe, -1.0, 1.0)
    theta = jnp.arccos(cos)
    sin = jnp.sqrt(jnp.maximum(1.0 - cos**2, 0.0))
    return jnp.where(norm > 0, safe / (2 * jnp.pi) * (sin + (jnp.pi - theta) * cos), 0.0)


def relu_correlation_map(c: ArrayInput) -> jax.Array:
    """Normalized arc-cosine map: correlation of ``(relu(u), relu(v))`` second moments, ``E[relu u relu v] /
    E[relu(u)²]`` for unit-variance ``(u, v)`` with correlation ``c``: ``(sqrt(1-c²) + (π - arccos c) c) / π``.
    Monotone increasing on ``[-1, 1]`` with ``κ(1) = 1`` and ``κ(-1) = 0``. A ``c`` outside ``[-1, 1]`` (or
    NaN/inf) raises ``ValueError`` naming ``c``, under ``jax.jit``/``vmap`` a run-time error
    (``equinox.error_if``)."""
    if is_tracer(c):
        c = range_checked("c", c, -1.0, 1.0, what="correlations", rtol=1e-6, interval="[-1, 1]")
    else:
        a = np.asarray(c, dtype=np.float64)
        if not (np.all(np.isfinite(a)) and np.all(np.abs(a) <= 1 + 1e-6)):
            raise ValueError(f"c: expected correlations in [-1, 1], received range [{a.min()}, {a.max()}]")
    return _relu_second_moment(jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(c)) / 0.5


_GL_X, _GL_W = np.polynomial.legendre.leggauss(48)


def _ndtr(x: Any) -> Any:
    from scipy.special import ndtr

    return ndtr(x)


def _npdf(x: Any) -> Any:
    return np.exp(-0.5 * x**2) / np.sqrt(2 * np.pi)


def bivariate_normal_cdf(h: ArrayInput, k: ArrayInput, r: ArrayInput) -> ArrayInput:
    """``Φ₂(h, k; r) = P[U ≤ h, V ≤ k]`` for standard normals with correlation ``r`` (float64, numpy).

    Plackett's identity with ``t = sin φ``: ``Φ(h)Φ(k) + (2π)⁻¹ ∫₀^{arcsin r} exp(-(h² - 2hk sin φ + k²) /
    (2 cos² φ)) dφ``, a smooth integrand, by 48-point Gauss–Legendre quadrature.
    """
    h, k, r = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (h, k, r)))
    r = np.clip(r, -1.0 + 1e-12, 1.0 - 1e-12)
    a = np.arcsin(r)
    phi = 0.5 * a[..., None] * (_GL_X + 1.0)
    s, c2 = np.sin(phi), np.cos(phi) ** 2
    hh, kk = h[..., None], k[..., None]
    integrand = np.exp(-(hh**2 - 2 * hh * kk * s + kk**2) / (2 * c2))
    integral = 0.5 * a * np.sum(_GL_W * integrand, axis=-1)
    return _ndtr(h) * _ndtr(k) + integral / (2 * np.pi)


def relu_gaussian_moments(
    mu1: ArrayInput, mu2: ArrayInput, s1: ArrayInput, s2: ArrayInput, r: ArrayInput
) -> ArrayInput:
    """``E[relu(u) relu(v)]`` for jointly Gaussian ``(u, v)`` with means ``mu``, std ``s`` and correlation ``r``.

    Truncated bivariate-normal moments (Rosenbaum 1961), with ``α = μ₁/σ₁``, ``β = μ₂/σ₂``, ``q = sqrt(1-r²)``:
    ``(μ₁μ₂ + rσ₁σ₂)Φ₂(α,β;r) + μ₁σ₂φ(β)Φ((α-rβ)/q) + μ₂σ₁φ(α)Φ((β-rα)/q) + σ₁σ₂ q/(2π) e^{-(α²-2rαβ+β²)/(2q²)}``.
    Zero means recover :func:`relu_second_moment`. float64 numpy.
    """
    mu1, mu2, s1, s2, r = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (mu1, mu2, s1, s2, r)))
    s1 = np.maximum(s1, 1e-300)
    s2 = np.maximum(s2, 1e-300)
    r = np.clip(r, -1.0 + 1e-12, 1.0 - 1e-12)
    a, b = mu1 / s1, mu2 / s2
    q = np.sqrt(1.0 - r**2)
    t1 = (mu1 * mu2 + r * s1 * s2) * bivariate_normal_cdf(a, b, r)
    t2 = mu1 * s2 * _npdf(b) * _ndtr((a - r * b) / q)
    t3 = mu2 * s1 * _npdf(a) * _ndtr((b - r * a) / q)
    t4 = s1 * s2 * q / (2 * np.pi) * np.exp(-(a**2 - 2 * r * a * b + b**2) / (2 * q**2))
    return t1 + t2 + t3 + t4


def relu_layer_moments(
    w: ArrayInput, mean: ArrayInput, k: ArrayInput, c: ArrayInput, bias: ArrayInput | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Propagate ``(μ, K, C)`` of an exchangeable pair ``(h, h')`` through ``h ↦ relu(W h + b)``.

    ``μ = E h``, ``K = E[h hᵀ]``, ``C = E[h h'ᵀ]`` (float64). The pre-activations ``(a, b) = (Wh + b, Wh' + b)``
    have mean ``Wμ + b``, covariance ``W(K - μμᵀ)Wᵀ`` and cross-covariance ``W(C - μμᵀ)Wᵀ``; treating them as
    jointly Gaussian (exact when ``(h, h')`` is Gaussian, i.e. for the first layer) gives ``(μ', K', C')`` in
    closed form (:func:`relu_gaussian_moments`).
    """
    w = as_float64_numpy("w", w, ndim=2, what="a weight matrix (n_out, n_in)")
    n_out, n_in = w.shape
    mean = as_float64_numpy("mean", mean)
    check_shape("mean", mean, (n_in,))
    k, c = as_float64_numpy("k", k), as_float64_numpy("c", c)
    check_shape("k", k, (n_in, n_in))
    check_shape("c", c, (n_in, n_in))
    checked = {"w": w, "mean": mean, "k": k, "c": c}
    if bias is not None:
        checked["bias"] = as_float64_numpy("bias", bias)
        check_shape("bias", checked["bias"], (n_out,))
    for name, v in checked.items():
        check_finite(name, v)
    m = w @ mean + (0.0 if bias is None else checked["bias"])
    cov = w @ (k - np.outer(mean, mean)) @ w.T
    cross = w @ (c - np.outer(mean, mean)) @ w.T
    sd = np.sqrt(np.maximum(np.diag(cov), 1e-300))
    sdd = np.outer(sd, sd)
    alpha = m / sd
    mean_out = m * _ndtr(alpha) + sd * _npdf(alpha)
    k_out = relu_gaussian_moments(m[:, None], m[None, :], sd[:, None], sd[None, :], cov / sdd)
    np.fill_diagonal(k_out, (m**2 + sd**2) * _ndtr(alpha) + m * sd * _npdf(alpha))
    c_out = relu_gaussian_moments(m[:, None], m[None, :], sd[:, None], sd[None, :], cross / sdd)
    return mean_out, k_out, c_out


def _check_weights(weights: Sequence[Any], readout: Any, biases: Any) -> list[Any]:
    if len(weights) == 0:
        raise ValueError(
            "weights: expected at least one hidden-layer weight matrix, received an empty sequence"
        )
    ws = [np.asarray(w, np.float64) for w in weights]
    for i, w in enumerate(ws):
        check_ndim(f"weights[{i}]", w, 2)
        if i > 0 and w.shape[1] != ws[i - 1].shape[0]:
            raise ValueError(
                f"weights[{i}]: expected {ws[i - 1].shape[0]} input columns to match weights[{i - 1}] "
                f"(shape {ws[i - 1].shape}), received shape {w.shape}"
            )
    if biases is not None:
        if len(biases) != len(ws):
            raise ValueError(
                f"biases: expected {len(ws)} bias vectors (one per layer), received {len(biases)}"
            )
        for i, (b, w) in enumerate(zip(biases, ws)):
            if b is not None and np.shape(b) != (w.shape[0],):
                raise ValueError(f"biases[{i}]: expected shape ({w.shape[0]},), received shape {np.shape(b)}")
    if readout is not None:
        check_ndim("readout", readout, 2)
        if np.shape(readout)[1] != ws[-1].shape[0]:
            raise ValueError(
                f"readout: expected {ws[-1].shape[0]} input columns, received shape {np.shape(readout)}"
            )
    return ws


def relu_mlp_stability(
    weights: Sequence[ArrayInput],
    rho: float | int,
    readout: ArrayInput | None = None,
    biases: Sequence[ArrayInput] | None = None,
) -> tuple[float, float]:
    """Predicted ``(Stab_ρ[f], E‖f(x)‖²)`` for ``f(x) = A relu(W_L ⋯ relu(W_1 x + b_1) ⋯ + b_L)``, ``x ~ N(0, I)``.

    ``weights`` are the hidden-layer matrices ``W_l`` (shape ``(n_l, n_{l-1})``), ``biases`` optional vectors,
    ``readout`` the matrix ``A`` (identity if ``None``). Exact for one hidden layer; Gaussian closure (first two
    moments matched) beyond, see :func:`relu_layer_moments`. float64.
    """
    check_range("rho", rho, -1.0, 1.0)
    ws = _check_weights(weights, readout, biases)
    d = ws[0].shape[1]
    mean, k = np.zeros(d), np.eye(d)
    c = rho * k
    for i, w in enumerate(ws):
        mean, k, c = relu_layer_moments(w, mean, k, c, None if biases is None else biases[i])
    if readout is not None:
        a = np.asarray(readout, np.float64)
        k, c = a @ k @ a.T, a @ c @ a.T
    return float(np.trace(c)), float(np.trace(k))


# ------------------------------------------------------------------------------------------- attention layers


def _log_mgf_terms(lam: Any, rho: float, beta: Any, sign: float) -> tuple[Any, Any]:
    """log Σ_{s,s'} E exp(sign·β G_{ss'}) up to the count weights; returns (diag, offdiag) log-MGFs."""
    s2 = 1.0 - rho**2
    b = beta[:, None]
    diag_arg = 1.0 - 2.0 * sign * b * rho * lam[None, :] - (b**2) * s2 * lam[None, :] ** 2
    off_arg = 1.0 - (b**2) * lam[None, :] ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        diag = np.where(np.all(diag_arg > 0, axis=1), -0.5 * np.sum(np.log(np.abs(diag_arg)), axis=1), np.inf)
        off = np.where(np.all(off_arg > 0, axis=1), -0.5 * np.sum(np.log(np.abs(off_arg)), axis=1), np.inf)
    return diag, off


def _expected_max_bound(lam: Any, rho: float, seq_len: int, sign: float) -> float:
    """Upper bound on E max_{s,s'} sign·G_{ss'} via the soft-max (log-sum-exp) inequality, optimized over β."""
    lam_max = float(np.max(np.abs(lam))) if lam.size else 0.0
    if lam_max == 0.0:
        return 0.0
    betas = np.geomspace(1e-4, 1.0, 400) / lam_max
    diag, off = _log_mgf_terms(lam, rho, betas, sign)
    t = seq_len
    terms = [np.log(t) + diag]
    if t > 1:
        terms.append(np.log(t * (t - 1)) + off)
    lse = np.logaddexp.reduce(np.stack(terms), axis=0)
    vals = lse / betas
    return float(np.min(vals[np.isfinite(vals)]))


def _expected_max_quadratic(lam: Any, seq_len: int) -> float:
    """Upper bound on ``E max_s x_sᵀ P x_s`` over ``seq_len`` i.i.d. ``N(0, I)`` tokens (eigenvalues ``lam`` of
    ``P ⪰ 0``): ``inf_β β⁻¹ (log T - ½ Σ_k log(1 - 2βλ_k))``."""
    lam_max = float(np.max(lam)) if lam.size else 0.0
    if lam_max <= 0.0:
        return 0.0
    betas = np.geomspace(1e-4, 0.4999, 400) / lam_max
    log_mgf = -0.5 * np.sum(np.log1p(-2.0 * betas[:, None] * lam[None, :]), axis=1)
    return float(np.min((np.log(seq_len) + log_mgf) / betas))


def attention_stability_interval(
    w_value: ArrayInput,
    rho: float | int,
    seq_len: int,
    w_query: ArrayInput | None = None,
    w_key: ArrayInput | None = None,
) -> StabilityInterval:
    """Interval for ``Stab_ρ`` of single-layer softmax attention, averaged over output positions.

    ``o_t(X) = Σ_s softmax_s(⟨W_Qᵀx_t, W_Kᵀx_s⟩/√d_k) W_Vᵀ x_s`` with ``X`` of ``seq_len`` i.i.d. ``N(0, I_d)``
    tokens and ``Y`` its ``ρ``-correlated copy; ``Stab = (1/T) Σ_t E⟨o_t(X), o_t(Y)⟩``.

    Two rigorous bounds, intersected (both hold for every attention pattern, so the interval is wide):

    * Hermite: scores are even in ``X`` and values odd, so ``o`` is odd and only odd Hermite degrees carry
      weight: ``Stab_ρ = Σ_{k odd} ρ^k W_k`` with ``Σ W_k = E‖o_t‖² ≤ M := E max_s ‖W_Vᵀx_s‖²``, hence
      ``Stab_ρ ∈ [0, ρM]`` for ``ρ ≥ 0`` (and ``[ρM, 0]`` for ``ρ < 0``); ``M`` from the Gaussian MGF bound.
    * Bilinear: ``⟨o_t, o'_t⟩ ∈ [min G, max G]`` with ``G_{ss'} = x_sᵀ P y_{s'}`` (module docstring).

    If ``w_query`` or ``w_key`` is all zeros the attention is uniform and the exact value ``ρ tr(P)/T`` is
    returned as a point interval.
    """
    check_range("rho", rho, -1.0, 1.0)
    _finite_weight("w_value", w_value)
    for name, w in (("w_query", w_query), ("w_key", w_key)):
        if w is not None:
            _finite_weight(name, w)
    if isinstance(seq_len, bool) or not isinstance(seq_len, int | np.integer) or seq_len < 1:
        raise ValueError(f"seq_len: expected an integer >= 1, received {seq_len!r}")
    for name, w in (("w_query", w_query), ("w_key", w_key)):
        if w is not None and np.shape(w)[:1] != np.shape(w_value)[:1]:
            raise ValueError(
                f"{name}: expected {np.shape(w_value)[0]} rows (the token dimension of w_value), "
                f"received shape {np.shape(w)}"
            )
    wv = np.asarray(w_value, np.float64)
    p = wv @ wv.T
    trace_p = float(np.trace(p))
    uniform = any(w is not None and not np.any(np.asarray(w)) for w in (w_query, w_key))
    if uniform or seq_len == 1:
        val = rho * trace_p / seq_len if seq_len > 1 else rho * trace_p
        return StabilityInterval(val, val)
    lam = np.clip(np.linalg.eigvalsh(p), 0.0, None)
    big_m = _expected_max_quadratic(lam, seq_len)
    herm = (0.0, rho * big_m) if rho >= 0 else (rho * big_m, 0.0)
    upper = _expected_max_bound(lam, rho, seq_len, +1.0)
    lower = -_expected_max_bound(lam, rho, seq_len, -1.0)
    return StabilityInterval(max(herm[0], lower), min(herm[1], upper))


# ------------------------------------------------------------------------------------------------ composition


def _finite_weight(name: str, w: Any) -> None:
    """A layer weight: a real 2-D matrix of finite values (``ValueError``/``TypeError`` naming ``name``)."""
    check_ndim(name, w, 2, what="a weight matrix")
    arr = np.asarray(w)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected a real numeric matrix, received dtype {arr.dtype}")
    check_finite(name, arr)


class _ReLULayerFields(NamedTuple):
    weight: ArrayInput


class ReLULayer(_ReLULayerFields):
    """A bias-free ReLU layer ``h ↦ relu(W h)`` for :func:`stability_interval`; ``weight`` a finite 2-D matrix."""

    __slots__ = ()

    def __new__(cls, weight: ArrayInput) -> ReLULayer:
        _finite_weight("weight", weight)
        return super().__new__(cls, weight)


class _AttentionLayerFields(NamedTuple):
    w_query: ArrayInput | None
    w_key: ArrayInput | None
    w_value: ArrayInput
    seq_len: int


class AttentionLayer(_AttentionLayerFields):
    """A single-head softmax attention layer for :func:`stability_interval` (``seq_len >= 1`` tokens); the
    weights are finite 2-D matrices (``w_query``/``w_key`` may be ``None``)."""

    __slots__ = ()

    def __new__(
        cls, w_query: ArrayInput | None, w_key: ArrayInput | None, w_value: ArrayInput, seq_len: int
    ) -> AttentionLayer:
        for name, w in (("w_query", w_query), ("w_key", w_key), ("w_value", w_value)):
            if w is not None or name == "w_value":
                _finite_weight(name, w)
        check_int("seq_len", seq_len, minimum=1)
        return super().__new__(cls, w_query, w_key, w_value, seq_len)


def stability_interval(layers: Sequence[ReLULayer | AttentionLayer], rho: float | int) -> StabilityInterval:
    """Predicted interval for the *normalized* stability ``Stab_ρ[f] / E‖f‖²`` of a stack of layers.

    Layers are :class:`ReLULayer` and :class:`AttentionLayer`. The state is an interval ``[c_lo, c_hi]`` of
    normalized correlations, starting at ``[ρ, ρ]``. A first ReLU layer is exact through its full second-moment
    matrices; afterwards the isotropic Gaussian closure of signal-propagation theory is used: ReLU maps the
    interval through the monotone :func:`relu_correlation_map`; attention maps ``c`` to
    ``[min(0, c), max(0, c)]`` (its output is odd). One layer: exact (ReLU) or rigorous (attention); several: an
    approximation.
    """
    check_range("rho", rho, -1.0, 1.0)
    if len(layers) == 0:
        raise ValueError("layers: expected at least one layer, received an empty sequence")
    lo = hi = float(rho)
    for i, layer in enumerate(layers):
        if isinstance(layer, ReLULayer):
            if i == 0:
                s, m = relu_mlp_stability([layer.weight], lo)
                lo = hi = float(s / m)
            else:
                lo, hi = float(relu_correlation_map(lo)), float(relu_correlation_map(hi))
        elif isinstance(layer, AttentionLayer):
            # odd function of its (Gaussian-closure) input: normalized stability between 0 and c
            lo, hi = min(0.0, lo), max(0.0, hi)
        else:
            raise TypeError(
                f"layers[{i}]: expected ReLULayer or AttentionLayer, received {type(layer).__name__}"
            )
    return StabilityInterval(lo, hi)
