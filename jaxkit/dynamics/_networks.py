"""Small networks for saddle-to-saddle studies: params pytree (flat dict) + a per-sample ``apply``.

Every network here is a pure function ``apply(params, x)`` acting on ONE sample (batch with ``jax.vmap``) and an
``init_*`` function with an explicit scale and scheme. The loss convention used throughout ``jaxkit.dynamics`` is

    L(θ) = 1/(2P) Σ_p ||y_p − f_θ(x_p)||²,

so that with whitened inputs (Xᵀ X / P = I) a two-layer linear net has L = ½||Σ_yx − W2 W1||_F² + const and the
Saxe et al. (2014) per-mode equation ``τ du/dt = 2u(s − u)`` holds with ``τ = 1/η``.

Init schemes (``scale`` is the size of the *network function*, not of one layer):
``"balanced"``/``"aligned"`` give each of the L layers singular values ``scale**(1/L)`` (so the end-to-end map has
singular values ``scale``; ``aligned`` additionally uses the target's singular vectors, Saxe's decoupled start);
``"orthogonal"`` uses random orthogonal factors with the same singular values; ``"random"`` uses iid Gaussian
entries with standard deviation ``scale**(1/L) / sqrt(fan_in)``.

Every ``apply`` refuses a non-finite input ``x`` (``ValueError`` naming ``x``; under ``jax.jit``/``vmap`` an
``equinox.error_if`` run-time check with the same message).

Hidden units are described by a *unit spec* ``{param_name: (axis, role)}`` with role ``"in"`` (weights into the
unit) or ``"out"`` (weights out of it); :func:`jaxkit.dynamics.embed_unit` uses it to build width-H fixed points
from width-(H−1) ones (Zhang, Saxe & Latham, ICLR 2026; Fukumizu & Amari 2000).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxkit._typing import Array, ArrayInput, Float, PRNGKey
from jaxkit._validate import (
    as_float_array,
    check_choice,
    check_finite,
    check_int,
    check_key,
    check_positive,
    check_size,
    finite_checked,
)

__all__ = [
    "NETWORKS",
    "Network",
    "attention_merged_apply",
    "attention_separate_apply",
    "cnn_apply",
    "deep_linear_apply",
    "diagonal_apply",
    "init_attention_merged",
    "init_attention_separate",
    "init_cnn",
    "init_deep_linear",
    "init_diagonal",
    "init_linear",
    "init_quadratic",
    "init_relu",
    "init_relu_scalar",
    "linear_apply",
    "mse_loss",
    "quadratic_apply",
    "relu_apply",
    "relu_scalar_apply",
]

SCHEMES = ("random", "balanced", "orthogonal", "aligned")
Scale = float | Float[Array, ""]  # a Python number, or a traced scalar under vmap over init scales


class Network(NamedTuple):
    """A network family: per-sample ``apply`` and the hidden-unit spec used by the embedding construction."""

    apply: Callable[..., Array]
    unit_spec: dict[str, tuple[int, str]]


def _need(params: Any, keys: tuple[str, ...], source: str) -> None:
    if not isinstance(params, dict) or any(k not in params for k in keys):
        got = sorted(params) if isinstance(params, dict) else type(params).__name__
        raise ValueError(f"params: expected a dict with keys {list(keys)} (from {source}), received {got}")


def _vector_in(name: str, x: Any, d: int) -> None:
    if jnp.shape(x) != (d,):
        raise ValueError(
            f"{name}: expected one input vector of shape ({d},) (batch with jax.vmap), received shape "
            f"{jnp.shape(x)}"
        )


def _check_scale(scale: Any) -> None:
    if isinstance(scale, jax.core.Tracer):
        return
    check_positive("scale", scale)


def _check_n_params(what: str, n_params: int) -> None:
    """Refuse (before drawing anything) a network whose float32 parameters exceed the size cap."""
    check_size(what, 4 * int(n_params), hint=f"{n_params} parameters")


def _orthonormal(key: PRNGKey, n: int, m: int) -> Array:
    """An ``n x m`` matrix with orthonormal columns (m <= n) or rows (m > n)."""
    big, small = max(n, m), min(n, m)
    q, r = jnp.linalg.qr(jax.random.normal(key, (big, small)))
    q = q * jnp.sign(jnp.diagonal(r))[None, :]
    return q if n >= m else q.T


# ----------------------------------------------------------------------------------------------------------- linear
def init_deep_linear(
    key: PRNGKey,
    dims: tuple[int, ...] | list[int],
    scale: Scale,
    scheme: str = "balanced",
    target: Float[Array, "d_out d_in"] | ArrayInput | None = None,
) -> dict[str, object]:
    """Deep linear net ``f(x) = W_L ⋯ W_1 x`` with ``dims = (d_in, h_1, …, d_out)``; params ``{"layers": [W_1…]}``.

    ``balanced``/``orthogonal``: ``W_l = a O_{l+1} O_lᵀ`` with orthonormal ``O_l`` (shared between neighboring
    layers, so ``W_{l+1}ᵀW_{l+1} = W_l W_lᵀ``) and ``a = scale**(1/L)``. ``aligned`` needs ``target`` (the
    input-output correlation Σ_yx = U S Vᵀ) and starts every mode of Σ_yx at strength ``scale``
    (Saxe et al. 2014). ``random``: iid N(0, a²/fan_in).
    """
    check_key("key", key)
    dims = tuple(int(d) for d in dims)
    if len(dims) < 3:
        raise ValueError(f"dims: expected (d_in, hidden..., d_out) with at least 3 entries, received {dims}")
    for i, d in enumerate(dims):
        check_int(f"dims[{i}]", d, minimum=1)
    check_choice("scheme", scheme, SCHEMES)
    _check_scale(scale)
    _check_n_params("dims", sum(a * b for a, b in zip(dims[:-1], dims[1:])))
    n_layers = len(dims) - 1
    a = scale ** (1.0 / n_layers)
    keys = jax.random.split(key, n_layers + 1)
    if scheme == "random":
        layers = [
            a * jax.random.normal(keys[i], (dims[i + 1], dims[i])) / np.sqrt(dims[i]) for i in range(n_layers)
        ]
        return {"layers": layers}
    widths = dims[1:-1]
    r = min(dims)
    if scheme == "aligned":
        if target is None:
            raise ValueError(
                "target: scheme='aligned' needs the input-output correlation matrix Σ_yx, received None"
            )
        target = as_float_array("target", target)
        if target.shape != (dims[-1], dims[0]):
            raise ValueError(f"target: expected shape ({dims[-1]}, {dims[0]}), received {target.shape}")
        check_finite("target", target)
        u, _, vt = jnp.linalg.svd(target, full_matrices=False)
        r = min(r, u.shape[1])
        frames = [vt[:r].T] + [_orthonormal(keys[i], w, r) for i, w in enumerate(widths)] + [u[:, :r]]
    else:
        frames = [_orthonormal(keys[i], d, r) for i, d in enumerate(dims)]
    layers = [a * frames[i + 1] @ frames[i].T for i in range(n_layers)]
    return {"layers": layers}


def deep_linear_apply(params: Mapping[str, object], x: Float[Array, " d_in"]) -> Float[Array, " d_out"]:
    """``W_L ⋯ W_1 x`` for one sample."""
    _need(params, ("layers",), "init_deep_linear")
    _vector_in("x", x, jnp.shape(params["layers"][0])[-1])
    x = finite_checked("x", x)
    for w in params["layers"]:
        x = w @ x
    return x


def init_linear(
    key: PRNGKey,
    d_in: int,
    hidden: int,
    d_out: int,
    scale: Scale,
    scheme: str = "balanced",
    target: Float[Array, "d_out d_in"] | ArrayInput | None = None,
) -> dict[str, object]:
    """Two-layer linear net ``W2 W1 x``; params ``{"W1": (hidden, d_in), "W2": (d_out, hidden)}``.

    See :func:`init_deep_linear` for the schemes; ``scale`` is the initial strength u0 of every mode.
    """
    sizes = {"d_in": d_in, "hidden": hidden, "d_out": d_out}
    for name, v in sizes.items():
        check_int(name, v, minimum=1)
    _check_n_params(max(sizes, key=lambda n: sizes[n]), hidden * (d_in + d_out))
    layers = init_deep_linear(key, (d_in, hidden, d_out), scale, scheme, target)["layers"]
    return {"W1": layers[0], "W2": layers[1]}


def linear_apply(params: Mapping[str, object], x: Float[Array, " d_in"]) -> Float[Array, " d_out"]:
    """Two-layer linear net ``W2 W1 x``."""
    _need(params, ("W1", "W2"), "init_linear")
    _vector_in("x", x, jnp.shape(params["W1"])[-1])
    return params["W2"] @ (params["W1"] @ finite_checked("x", x))


# ------------------------------------------------------------------------------------------------------------- relu
def init_relu_scalar(key: PRNGKey, hidden: int, scale: Scale, scheme: str = "random") -> dict[str, object]:
    """Scalar-input ReLU net ``f(x) = Σ_h a_h relu(w_h x + b_h) + c``.

    ``random``: w, b, a iid N(0, scale); ``balanced``: |a_h| = ||(w_h, b_h)|| = sqrt(scale) with random signs and
    directions (each unit's two layers balanced). The output bias ``c`` starts at 0.
    """
    check_key("key", key)
    check_int("hidden", hidden, minimum=1)
    check_choice("scheme", scheme, ("random", "balanced"))
    _check_scale(scale)
    _check_n_params("hidden", 3 * hidden)
    k1, k2, k3 = jax.random.split(key, 3)
    if scheme == "random":
        w, b, a = (scale * jax.random.normal(k, (hidden,)) for k in (k1, k2, k3))
    else:
        ang = jax.random.uniform(k1, (hidden,), minval=0.0, maxval=2 * jnp.pi)
        r = jnp.sqrt(scale)
        w, b = r * jnp.cos(ang), r * jnp.sin(ang)
        a = r * jnp.sign(jax.random.normal(k2, (hidden,)))
    return {"w": w, "b": b, "a": a, "c": jnp.zeros(())}


def relu_scalar_apply(params: Mapping[str, object], x: Float[Array, ""]) -> Float[Array, ""]:
    """``Σ_h a_h relu(w_h x + b_h) + c`` for one scalar input."""
    _need(params, ("w", "b", "a", "c"), "init_relu_scalar")
    if jnp.ndim(x) != 0:
        raise ValueError(f"x: expected one scalar input (batch with jax.vmap), received shape {jnp.shape(x)}")
    x = finite_checked("x", x)
    return jnp.dot(params["a"], jax.nn.relu(params["w"] * x + params["b"])) + params["c"]


def init_relu(key: PRNGKey, d_in: int, hidden: int, d_out: int, scale: Scale) -> dict[str, object]:
    """Vector-input ReLU net ``f(x) = A relu(W x + b)``: W (hidden, d_in), b (hidden,), A (d_out, hidden), iid N(0,
    scale²/fan_in)."""
    check_key("key", key)
    for n, v in (("d_in", d_in), ("hidden", hidden), ("d_out", d_out)):
        check_int(n, v, minimum=1)
    _check_scale(scale)
    _check_n_params("hidden", hidden * (d_in + 1 + d_out))
    k1, k2, k3 = jax.random.split(key, 3)
    return {
        "W": scale * jax.random.normal(k1, (hidden, d_in)) / np.sqrt(d_in),
        "b": scale * jax.random.normal(k2, (hidden,)) / np.sqrt(d_in),
        "A": scale * jax.random.normal(k3, (d_out, hidden)) / np.sqrt(hidden),
    }


def relu_apply(params: Mapping[str, object], x: Float[Array, " d_in"]) -> Float[Array, " d_out"]:
    """``A relu(W x + b)``."""
    _need(params, ("W", "b", "A"), "init_relu")
    _vector_in("x", x, jnp.shape(params["W"])[-1])
    return params["A"] @ jax.nn.relu(params["W"] @ finite_checked("x", x) + params["b"])


# -------------------------------------------------------------------------------------------------------------- cnn
def init_cnn(key: PRNGKey, kernels: int, kernel_size: int, channels: int, scale: Scale) -> dict[str, object]:
    """1D CNN with ``kernels`` kernels of length ``kernel_size`` and a 1×1 readout to ``channels`` outputs.

    Params ``{"w": (kernels, kernel_size), "a": (channels, kernels)}``, iid N(0, scale/ fan_in) per layer so the
    end-to-end map is O(scale).
    """
    check_key("key", key)
    for n, v in (("kernels", kernels), ("kernel_size", kernel_size), ("channels", channels)):
        check_int(n, v, minimum=1)
    _check_scale(scale)
    sizes = {"kernels": kernels, "kernel_size": kernel_size, "channels": channels}
    _check_n_params(max(sizes, key=lambda n: sizes[n]), kernels * (kernel_size + channels))
    k1, k2 = jax.random.split(key)
    a = jnp.sqrt(scale)
    return {
        "w": a * jax.random.normal(k1, (kernels, kernel_size)) / np.sqrt(kernel_size),
        "a": a * jax.random.normal(k2, (channels, kernels)) / np.sqrt(kernels),
    }


def _circular_patches(x: Float[Array, " n"], kernel_size: int) -> Float[Array, "n k"]:
    n = x.shape[0]
    idx = (jnp.arange(n)[:, None] + jnp.arange(kernel_size)[None, :]) % n
    return x[idx]


def cnn_apply(
    params: Mapping[str, object], x: Float[Array, " n"], activation: str = "linear"
) -> Float[Array, "c n"]:
    """``f_c(x)_i = Σ_k a_{ck} σ((w_k ⋆ x)_i)`` with circular cross-correlation; σ = identity or ReLU."""
    _need(params, ("w", "a"), "init_cnn")
    if jnp.ndim(x) != 1:
        raise ValueError(
            f"x: expected one 1D signal (n,) (batch with jax.vmap), received shape {jnp.shape(x)}"
        )
    patches = _circular_patches(finite_checked("x", x), params["w"].shape[1])  # (n, k)
    h = patches @ params["w"].T  # (n, K)
    if activation == "relu":
        h = jax.nn.relu(h)
    elif activation != "linear":
        raise ValueError(f"activation: expected 'linear' or 'relu', received {activation!r}")
    return params["a"] @ h.T


# -------------------------------------------------------------------------------------------------------- attention
def init_attention_separate(key: PRNGKey, dim: int, heads: int, scale: Scale) -> dict[str, object]:
    """Linear attention with separate rank-one key and query per head: ``{"v": (H,), "k": (H, D), "q": (H, D)}``.

    Each factor has entries N(0, scale^(2/3)/D) so the head's product ``v q kᵀ`` is O(scale).
    """
    check_key("key", key)
    check_int("dim", dim, minimum=1)
    check_int("heads", heads, minimum=1)
    _check_scale(scale)
    _check_n_params("dim", 3 * heads * dim * dim)
    a = scale ** (1.0 / 3.0)
    k1, k2, k3 = jax.random.split(key, 3)
    return {
        "v": a * jax.random.normal(k1, (heads,)),
        "k": a * jax.random.normal(k2, (heads, dim)) / np.sqrt(dim),
        "q": a * jax.random.normal(k3, (heads, dim)) / np.sqrt(dim),
    }


def init_attention_merged(key: PRNGKey, dim: int, heads: int, scale: Scale) -> dict[str, object]:
    """Linear attention with a merged key-query matrix per head: ``{"v": (H,), "W": (H, D, D)}``, product O(scale)."""
    check_key("key", key)
    check_int("dim", dim, minimum=1)
    check_int("heads", heads, minimum=1)
    _check_scale(scale)
    _check_n_params("dim", 2 * heads * dim * dim)
    a = jnp.sqrt(scale)
    k1, k2 = jax.random.split(key)
    return {
        "v": a * jax.random.normal(k1, (heads,)),
        "W": a * jax.random.normal(k2, (heads, dim, dim)) / dim,
    }


def _context_moment(x: Any) -> tuple[Array, Array]:
    if not isinstance(x, tuple | list) or len(x) != 3:
        raise ValueError(
            "x: expected one in-context sample (xs (N, D), ys (N,), x_query (D,)), received "
            f"{type(x).__name__}"
        )
    xs, ys, xq = (finite_checked("x", jnp.asarray(a)) for a in x)
    if xs.ndim != 2 or ys.ndim != 1 or xq.ndim != 1:
        raise ValueError(
            "x: expected one in-context sample (xs (N, D), ys (N,), x_query (D,)), received shapes "
            f"{xs.shape}, {ys.shape}, {xq.shape}"
        )
    return xs.T @ ys / xs.shape[0], xq


def attention_separate_apply(params: Mapping[str, object], x: ArrayInput) -> Float[Array, ""]:
    """In-context linear regression read-out of multi-head linear attention with separate rank-one K and Q.

    For a prompt ``(x_n, y_n)_{n≤N}`` and query ``x_q``: ``ŷ = Σ_h v_h (k_h · h)(q_h · x_q)``, ``h = 1/N Σ y_n x_n``
    (the value/key/query blocks that act on the label token; Zhang et al. 2025, "Training dynamics of in-context
    learning in linear attention").
    """
    _need(params, ("v", "k", "q"), "init_attention_separate")
    h, xq = _context_moment(x)
    return jnp.sum(params["v"] * (params["k"] @ h) * (params["q"] @ xq))


def attention_merged_apply(params: Mapping[str, object], x: ArrayInput) -> Float[Array, ""]:
    """Same read-out with a merged key-query matrix per head: ``ŷ = Σ_h v_h hᵀ W_h x_q``."""
    _need(params, ("v", "W"), "init_attention_merged")
    h, xq = _context_moment(x)
    return jnp.einsum("h,i,hij,j->", params["v"], h, params["W"], xq)


# ------------------------------------------------------------------------------------------------ quadratic/diagonal
def init_quadratic(key: PRNGKey, d_in: int, hidden: int, scale: Scale) -> dict[str, object]:
    """Quadratic-activation net ``f(x) = Σ_h a_h (w_h · x)²``; entries of W N(0, scale^(2/3)/d_in), a N(0, scale^(2/3))."""
    check_key("key", key)
    check_int("d_in", d_in, minimum=1)
    check_int("hidden", hidden, minimum=1)
    _check_scale(scale)
    _check_n_params("hidden", hidden * (d_in + 1))
    s = scale ** (1.0 / 3.0)
    k1, k2 = jax.random.split(key)
    return {
        "W": s * jax.random.normal(k1, (hidden, d_in)) / np.sqrt(d_in),
        "a": s * jax.random.normal(k2, (hidden,)),
    }


def quadratic_apply(params: Mapping[str, object], x: Float[Array, " d_in"]) -> Float[Array, ""]:
    """``Σ_h a_h (w_h · x)²``."""
    _need(params, ("W", "a"), "init_quadratic")
    _vector_in("x", x, jnp.shape(params["W"])[-1])
    return jnp.dot(params["a"], (params["W"] @ finite_checked("x", x)) ** 2)


def init_diagonal(d: int, scale: Scale) -> dict[str, object]:
    """Diagonal linear net ``β = u ⊙ v`` started at ``u = √2 α 1, v = 0`` (α = ``scale``), as in Pesme &
    Flammarion (2023): then ``β(t) = α² sinh(2 r(t))`` with ``r(t) = −∫₀ᵗ ∇L(β)``."""
    check_int("d", d, minimum=1)
    _check_scale(scale)
    _check_n_params("d", 2 * d)
    return {"u": jnp.full((d,), np.sqrt(2.0) * scale), "v": jnp.zeros((d,))}


def diagonal_apply(params: Mapping[str, object], x: Float[Array, " d"]) -> Float[Array, ""]:
    """``⟨u ⊙ v, x⟩``."""
    _need(params, ("u", "v"), "init_diagonal")
    _vector_in("x", x, jnp.shape(params["u"])[-1])
    return jnp.dot(params["u"] * params["v"], finite_checked("x", x))


# ------------------------------------------------------------------------------------------------------------- loss
def mse_loss(
    apply: Callable[..., Array], params: object, inputs: ArrayInput, targets: ArrayInput
) -> Float[Array, ""]:
    """``1/(2P) Σ_p ||y_p − f(x_p)||²`` (inputs/targets batched along axis 0; inputs may be a pytree)."""
    sizes = {int(np.shape(leaf)[0]) if np.ndim(leaf) else -1 for leaf in jax.tree.leaves(inputs)}
    n_t = int(np.shape(targets)[0]) if np.ndim(targets) else -1
    if len(sizes) != 1 or n_t not in sizes or n_t < 1:
        raise ValueError(
            f"inputs, targets: expected the same number of samples along axis 0, received inputs leading sizes "
            f"{sorted(sizes)} and targets shape {np.shape(targets)}"
        )
    for i, leaf in enumerate(jax.tree.leaves(inputs)):
        check_finite(f"inputs (leaf {i})", leaf)
    check_finite("targets", targets)
    pred = jax.vmap(lambda x: apply(params, x))(inputs)
    if pred.shape != jnp.shape(targets):
        raise ValueError(
            f"targets: expected shape {pred.shape} (the network output), received {jnp.shape(targets)}"
        )
    err = (pred - targets).reshape(pred.shape[0], -1)
    return 0.5 * jnp.mean(jnp.sum(err**2, axis=1))


class NetworkTable(dict):
    """The network families of :mod:`jaxkit.dynamics`: ``{name: Network(apply, unit_spec)}``.

    ``apply(params, x)`` is the per-sample forward pass (batch with ``jax.vmap``) and ``unit_spec`` maps each
    parameter name to ``(axis, role)`` of one hidden unit, as :func:`embed_unit` needs it to build width-H saddles
    from width-(H−1) fixed points. Names: ``linear`` (two-layer linear), ``relu_scalar`` (scalar-input ReLU,
    kinks), ``relu`` (vector-input ReLU), ``cnn_linear`` / ``cnn_relu`` (one-layer CNN, kernels),
    ``attention_separate`` (linear attention with separate key/query per head, heads) and
    ``attention_merged`` (merged key-query matrix), ``quadratic`` (quadratic activations). Parameters come from
    the matching ``init_*`` function. Read it like a dict (``NETWORKS["linear"].apply``).
    """


NetworkTable.__module__ = "jaxkit.dynamics"  # help() names the public package


NETWORKS: NetworkTable = NetworkTable(
    {
        "linear": Network(linear_apply, {"W1": (0, "in"), "W2": (1, "out")}),
        "relu_scalar": Network(relu_scalar_apply, {"w": (0, "in"), "b": (0, "in"), "a": (0, "out")}),
        "relu": Network(relu_apply, {"W": (0, "in"), "b": (0, "in"), "A": (1, "out")}),
        "cnn_linear": Network(cnn_apply, {"w": (0, "in"), "a": (1, "out")}),
        "cnn_relu": Network(lambda p, x: cnn_apply(p, x, "relu"), {"w": (0, "in"), "a": (1, "out")}),
        "attention_separate": Network(
            attention_separate_apply, {"v": (0, "out"), "k": (0, "in"), "q": (0, "in")}
        ),
        "attention_merged": Network(attention_merged_apply, {"v": (0, "out"), "W": (0, "in")}),
        "quadratic": Network(quadratic_apply, {"W": (0, "in"), "a": (0, "out")}),
    }
)
"""The network families, a dict from name to :class:`Network` ``(apply, unit_spec)``: ``linear``,
``relu_scalar``, ``relu``, ``cnn_linear``, ``cnn_relu``, ``attention_separate``, ``attention_merged`` and
``quadratic``. ``apply(params, x)`` is the per-sample forward pass; ``unit_spec`` tells :func:`embed_unit` how to
add one hidden unit; the parameters come from the matching ``init_*`` function."""
