"""Spectral layers: resolution consistency, float64 gradient checks, vmap, kernel wiring, bad input."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxkit.operators import RieszSpectralConv, SpectralConv, mode_mix
from jaxkit.operators import _layers as layers_mod


def band_limited(seed, channels, shape, kmax):
    """Random real trigonometric polynomial, modes |q_a| <= kmax on the unit periodic box."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.arange(n) / n for n in shape], indexing="ij")
    u = np.zeros((channels, *shape))
    qs = np.stack(np.meshgrid(*[np.arange(-kmax, kmax + 1)] * len(shape), indexing="ij"), -1).reshape(
        -1, len(shape)
    )
    for c in range(channels):
        for q in qs:
            phase = sum(2 * np.pi * qa * xa for qa, xa in zip(q, grids))
            u[c] += rng.normal() / (1 + np.abs(q).sum()) * np.cos(phase + rng.uniform(0, 2 * np.pi))
    return u.astype(np.float32)


def randomize(layer, key, scale=0.5):
    """Give every parameter (incl. α₀ and the directional weights) random nonzero values."""
    params, static = eqx.partition(layer, eqx.is_inexact_array)
    leaves, tree = jax.tree_util.tree_flatten(params)
    rng = np.random.default_rng(
        int(jax.random.key_data(key)[-1])
    )  # NumPy draws: no per-shape XLA compilations
    new = [jnp.asarray(scale * rng.normal(size=x.shape), x.dtype) for x in leaves]
    return eqx.combine(jax.tree_util.tree_unflatten(tree, new), static)


KEY = jax.random.key(0)
LAYERS = {
    "fno": lambda modes: SpectralConv(3, 2, modes, key=KEY),
    "rno-mix": lambda modes: RieszSpectralConv(3, 2, modes, key=KEY),
    "rno-global": lambda modes: RieszSpectralConv(3, 2, modes, branch="global", key=KEY),
    "rno-local": lambda modes: RieszSpectralConv(3, 2, modes, branch="local", key=KEY),
    "rno-order2-permode": lambda modes: RieszSpectralConv(3, 2, modes, order=2, per_mode=True, key=KEY),
}


@pytest.mark.parametrize("shape", [(24,), (12, 10)])
def test_each_layer_is_resolution_consistent(shape):
    """A band-limited input sampled at n and 2n gives the same output on the common points (to 1e-5), for FNO's
    layer and every RNO variant (mix, global-only, local-only, second order with per-mode weights)."""
    modes = (4,) * len(shape)
    layers = tuple(randomize(make(modes), jax.random.key(1)) for make in LAYERS.values())
    u1 = band_limited(0, 3, shape, kmax=3)
    u2 = band_limited(0, 3, tuple(2 * n for n in shape), kmax=3)
    sub = (slice(None),) + (slice(None, None, 2),) * len(shape)
    np.testing.assert_allclose(u2[sub], u1, atol=1e-5)
    call = eqx.filter_jit(lambda ms, x: tuple(m(x) for m in ms))  # one compilation per resolution
    for name, y1, y2 in zip(LAYERS, call(layers, u1), call(layers, u2)):
        y1, y2 = np.asarray(y1), np.asarray(y2)
        assert y1.shape == (2, *shape) and y2.shape == (2, *(2 * n for n in shape)), name
        assert np.abs(y1).max() > 1e-2, name  # a nontrivial output
        np.testing.assert_allclose(y2[sub], y1, atol=1e-5, err_msg=name)


def _f64(tree):
    return jax.tree_util.tree_map(lambda x: x.astype(jnp.float64) if eqx.is_inexact_array(x) else x, tree)


def test_layer_gradients_match_finite_differences_float64():
    """Reverse-mode gradients wrt input and all parameters of FNO's layer and RNO's layer (first order, and second
    order with per-mode directional weights) against central finite differences, in float64."""
    with jax.enable_x64(True):
        names = ("fno", "rno-mix", "rno-order2-permode")
        layers = tuple(_f64(randomize(LAYERS[n]((2, 2)), jax.random.key(2))) for n in names)
        u = jnp.asarray(np.random.default_rng(3).normal(size=(3, 6, 5)))
        probe = jnp.asarray(np.random.default_rng(4).normal(size=(2, 6, 5)))
        params, static = eqx.partition(layers, eqx.is_inexact_array)

        @jax.jit
        def f(p, x):  # check_grads perturbs with NumPy arrays; the layers take jax arrays
            p, x = jax.tree_util.tree_map(jnp.asarray, (p, x))
            return sum(jnp.sum(m(x) * probe * (i + 1)) for i, m in enumerate(eqx.combine(p, static)))

        check_grads(f, (params, u), order=1, modes=["rev"], eps=1e-6, atol=1e-6, rtol=1e-6)
        gp, gu = jax.grad(f, argnums=(0, 1))(params, u)
        assert float(jnp.abs(gu).max()) > 1e-3  # nonzero gradients: the check has teeth
        assert float(jnp.abs(gp[1].w_dir).max()) > 1e-3 and float(jnp.abs(gp[2].local_weight).max()) > 1e-3


def test_vmap_matches_a_loop_and_kernel_is_wired():
    layer = randomize(RieszSpectralConv(3, 2, (4, 3), key=KEY), jax.random.key(5))
    xs = jnp.asarray(np.random.default_rng(6).normal(size=(2, 3, 10, 9)), jnp.float32)
    batched = eqx.filter_jit(jax.vmap(layer))(xs)
    looped = eqx.filter_jit(lambda m, xs: jnp.stack([m(x) for x in xs]))(layer, xs)
    np.testing.assert_allclose(np.asarray(batched), np.asarray(looped), atol=1e-5)
    # mode mixing goes through kernels.spectral_mix and equals the einsum definition
    assert layers_mod._kernel_spectral_mix is not None
    rng = np.random.default_rng(7)
    x = jnp.asarray(rng.normal(size=(3, 5, 4)) + 1j * rng.normal(size=(3, 5, 4)), jnp.complex64)
    w = jnp.asarray(rng.normal(size=(3, 2, 5, 4)) + 1j * rng.normal(size=(3, 2, 5, 4)), jnp.complex64)
    ref = np.einsum("ikl,iokl->okl", np.asarray(x, np.complex128), np.asarray(w, np.complex128))
    np.testing.assert_allclose(np.asarray(mode_mix(x, w)), ref, rtol=1e-5, atol=1e-5)


def test_bad_input_raises_clear_errors():
    layer = RieszSpectralConv(3, 2, (4, 4), key=KEY)
    with pytest.raises(ValueError, match="spatial axes"):
        layer(jnp.ones((3, 16)))  # wrong rank
    with pytest.raises(ValueError, match="input channels"):
        layer(jnp.ones((2, 16, 16)))  # channel mismatch
    with pytest.raises(ValueError, match="below twice the number of modes"):
        layer(jnp.ones((3, 16, 6)))  # resolution below the modes
    with pytest.raises(TypeError, match="real"):
        layer(jnp.ones((3, 16, 16), jnp.complex64))
    with pytest.raises(ValueError, match="branch"):
        RieszSpectralConv(3, 2, 4, branch="both", key=KEY)
    with pytest.raises(ValueError, match="order"):
        RieszSpectralConv(3, 2, 4, order=3, key=KEY)
    with pytest.raises(ValueError, match="modes"):
        SpectralConv(3, 2, (4, 4, 4, 4), key=KEY)


def test_cpu_dft_path_equals_fft_kernel_path_float64(monkeypatch):
    """The CPU path (truncated real DFTs as GEMMs, real mode mixing) and the accelerator path (rfftn + the
    spectral_mix kernel's reference) are the same maths: outputs and gradients agree in float64 for FNO's layer
    and RNO's layer (global only, and mixed with the full-band local branch, 2nd order with per-mode weights)."""
    with jax.enable_x64(True):
        names = ("fno", "rno-global", "rno-mix", "rno-order2-permode")
        layers = tuple(_f64(randomize(LAYERS[n]((3, 2)), jax.random.key(8))) for n in names)
        u = jnp.asarray(np.random.default_rng(9).normal(size=(2, 3, 8, 6)))
        probe = jnp.asarray(np.random.default_rng(10).normal(size=(2, 2, 8, 6)))
        params, static = eqx.partition(layers, eqx.is_inexact_array)

        def f(p, x):
            return sum(
                jnp.sum(jax.vmap(m)(x) * probe * (i + 1)) for i, m in enumerate(eqx.combine(p, static))
            )

        def value_and_grads():
            return jax.jit(jax.value_and_grad(f, argnums=(0, 1)))(params, u)

        assert layers_mod._use_dft()  # CPU
        v_dft, g_dft = value_and_grads()
        monkeypatch.setattr(layers_mod, "_use_dft", lambda: False)
        v_fft, g_fft = value_and_grads()
        np.testing.assert_allclose(float(v_dft), float(v_fft), rtol=1e-12)
        for a, b in zip(jax.tree_util.tree_leaves(g_dft), jax.tree_util.tree_leaves(g_fft)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-11)


def test_vmapped_fno_training_step_never_copies_the_field():
    """Performance contract of the CPU path: XLA's optimized program for a batched FNO training step (forward and
    backward) holds no copy or transpose of a hidden field ``(batch, width, *grid)`` (the pointwise layers are
    batched GEMMs, the spectral transforms contract the field's trailing axes). The program before these changes
    held 13 such copies. (One remains outside the Fourier layers: the input gradient of the last projection,
    ``(batch, proj_hidden, *grid)``, an outer product that XLA writes transposed.)"""
    import re

    from jaxkit.operators import FNO

    model = FNO(1, 1, (16,), 64, 4, proj_hidden=128, key=KEY)  # the 1-D case of `bench operators`
    x = jnp.zeros((20, 1, 1024))
    params, static = eqx.partition(model, eqx.is_inexact_array)

    def loss(p):
        return jnp.sum(jax.vmap(eqx.combine(p, static))(x) ** 2)

    hlo = jax.jit(jax.grad(loss)).lower(params).compile().as_text()
    field = {
        "20,64,1024",
        "1280,1024",
        "20,65536",
        "20,1024,64",
        "64,20,1024",
        "64,20480",
        "20480,64",
    }  # its views
    big = [
        m.group(0)
        for m in re.finditer(r"= f32\[([\d,]*)\]\{[\d,]*\} (copy|transpose)\(", hlo)
        if m.group(1) in field
    ]
    assert not big, f"copies of field-sized arrays: {big}"


def test_gelu_is_the_exact_gelu():
    """erf-form exact GELU: against x Φ(x) from scipy in float64, and jax.nn.gelu(approximate=False) (values and
    derivatives) in float32."""
    from scipy.special import erf

    from jaxkit.operators._layers import gelu

    x = np.linspace(-9.0, 9.0, 1201)
    with jax.enable_x64(True):
        np.testing.assert_allclose(
            np.asarray(gelu(jnp.asarray(x))), x * (1 + erf(x / np.sqrt(2))) / 2, atol=1e-15
        )
    x32 = jnp.asarray(x, jnp.float32)
    ref = jax.vmap(jax.value_and_grad(lambda v: jax.nn.gelu(v, approximate=False)))(x32)
    got = jax.vmap(jax.value_and_grad(gelu))(x32)
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(ref[0]), atol=2e-6)
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(ref[1]), atol=2e-6)


@pytest.mark.parametrize("order", [1, 2])
def test_local_branch_is_pointwise_mixing_of_numpy_riesz_transforms_float64(order):
    """RNO's local branch ``Σ_j L_j R_j u`` against NumPy in float64: the Riesz transforms by ``numpy.fft`` with the
    multipliers written out here (``-i k_j/|k|``, or ``-k_a k_b/|k|²`` for pairs a <= b), Nyquist planes of odd
    multipliers zeroed, then an einsum over channels."""
    shape, c_in = (8, 6), 3
    with jax.enable_x64(True):
        layer = _f64(
            randomize(
                RieszSpectralConv(c_in, 2, (2, 2), order=order, branch="local", key=KEY), jax.random.key(3)
            )
        )
        u = np.random.default_rng(4).normal(size=(c_in, *shape))
        got = np.asarray(layer(jnp.asarray(u)))
    k = np.meshgrid(np.fft.fftfreq(8, 1 / 8), np.fft.rfftfreq(6, 1 / 6), indexing="ij")
    k = [2 * np.pi * kk for kk in k]
    norm = np.sqrt(k[0] ** 2 + k[1] ** 2)
    norm[0, 0] = 1.0
    nyq = [np.abs(k[0]) == 2 * np.pi * 4, np.abs(k[1]) == 2 * np.pi * 3]
    if order == 1:
        mult = [np.where(nyq[j], 0, -1j * k[j] / norm) for j in range(2)]
    else:
        mult = [
            np.where((nyq[a] | nyq[b]) if a != b else False, 0, -k[a] * k[b] / norm**2)
            for a, b in ((0, 0), (0, 1), (1, 1))
        ]
    uh = np.fft.rfftn(u, axes=(1, 2))
    r = np.stack([np.fft.irfftn(m * uh, s=shape, axes=(1, 2)) for m in mult])  # (J, I, *shape)
    want = np.einsum("joi,ji...->o...", np.asarray(layer.local_weight), r)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
