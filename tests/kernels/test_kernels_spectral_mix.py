"""spectral_mix: the Pallas body (interpret mode on CPU) against the XLA einsum reference and a float64 numpy
einsum, forward and VJP, over shapes and blocks that do not divide each other; poisoning; jit/vmap/grad; errors;
dispatch; and that the GPU (Triton) and TPU (Mosaic) paths lower."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.experimental import pallas as pl

import jaxkit.kernels._common as common
import jaxkit.kernels.spectral_mix as sm_mod
from jaxkit.kernels.spectral_mix import spectral_mix, spectral_mix_planes, spectral_mix_reference

RTOL, ATOL = 2e-5, 2e-5


def _rand(rng, shape, cplx, dtype=np.float32):
    """Fresh random inputs from numpy (no JAX compilation for test data)."""
    re = rng.standard_normal(shape).astype(dtype)
    if not cplx:
        return jnp.asarray(re)
    return jnp.asarray(re + 1j * rng.standard_normal(shape).astype(dtype))


@functools.partial(jax.jit, static_argnames=("blocks",))
def _out_and_vjp(x, w, c, blocks):
    mix = functools.partial(
        spectral_mix, interpret=True, block_b=blocks[0], block_o=blocks[1], block_k=blocks[2]
    )
    out, vjp = jax.vjp(mix, x, w)
    return out, *vjp(c)


def _numpy_out_and_vjp(x, w, c):
    """float64 numpy: out = Σ_i x w; JAX's VJP of this linear map is its transpose (no conjugation)."""
    x, w, c = (np.asarray(v, np.complex128).reshape(v.shape[0], v.shape[1], -1) for v in (x, w, c))
    out = np.einsum("bik,iok->bok", x, w)
    dx = np.einsum("bok,iok->bik", c, w)
    dw = np.einsum("bik,bok->iok", x, c)
    return out, dx, dw


# (B, I, O, modes, complex, (block_b, block_o, block_k)); sizes are not multiples of the blocks.
CASES = [
    (3, 5, 7, (19,), True, (2, 4, 8)),
    (2, 3, 4, (3, 5), True, (None, None, None)),  # 2-D mode set, flattened; default blocks
    (
        5,
        2,
        9,
        (7,),
        False,
        (4, 3, 5),
    ),  # real; block sizes that are not powers of two (fine in interpret mode)
]


@pytest.mark.parametrize("bsz,ci,co,modes,cplx,blocks", CASES)
def test_forward_and_vjp_match_reference(bsz, ci, co, modes, cplx, blocks):
    rng = np.random.default_rng(bsz * 1000 + ci * 100 + co)
    kx = kw = kc = rng
    x = _rand(kx, (bsz, ci, *modes), cplx)
    w = _rand(kw, (ci, co, *modes), cplx)
    c = _rand(kc, (bsz, co, *modes), cplx)  # cotangent = gradient of a random linear functional
    got = _out_and_vjp(x, w, c, blocks)
    want = _numpy_out_and_vjp(x, w, c)
    for name, g, r, like in zip(("out", "dx", "dw"), got, want, (c, x, w)):
        assert g.shape == like.shape and g.dtype == like.dtype, name
        assert np.all(np.isfinite(np.asarray(g))), f"{name}: unwritten (NaN-poisoned) elements"
        g = np.asarray(g).reshape(r.shape)
        np.testing.assert_allclose(
            g, r if cplx else r.real, rtol=RTOL, atol=ATOL * max(bsz, co), err_msg=name
        )
    # the XLA reference path agrees as well (it is what CPU callers get)
    np.testing.assert_allclose(
        np.asarray(spectral_mix_reference(x, w)), np.asarray(got[0]), rtol=RTOL, atol=1e-4
    )


def test_interpret_mode_poisons_unwritten_outputs():
    """The poison the tests rely on: in interpret mode an output element the kernel never writes is NaN."""

    def kernel(x_ref, o_ref):
        @pl.when(pl.program_id(0) == 0)
        def _():
            o_ref[...] = x_ref[...]

    out = pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((4, 8), jnp.float32),
        grid=(2,),
        in_specs=[pl.BlockSpec((2, 8), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((2, 8), lambda i: (i, 0)),
        interpret=True,
    )(jnp.ones((4, 8)))
    out = np.asarray(out)
    assert np.all(out[:2] == 1.0) and np.all(np.isnan(out[2:]))


def test_planes_variant_matches_complex():
    kx = kw = np.random.default_rng(1)
    x = _rand(kx, (2, 3, 6), True)
    w = _rand(kw, (3, 4, 6), True)
    f = jax.jit(lambda *p: spectral_mix_planes(*p, interpret=True, block_b=2, block_o=2, block_k=4))
    outr, outi = f(x.real, x.imag, w.real, w.imag)
    ref = spectral_mix_reference(x, w)
    np.testing.assert_allclose(np.asarray(outr), np.asarray(ref.real), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(np.asarray(outi), np.asarray(ref.imag), rtol=RTOL, atol=ATOL)
    # CPU dispatch of the planes variant (XLA path) agrees too
    outr2, outi2 = spectral_mix_planes(x.real, x.imag, w.real, w.imag)
    np.testing.assert_allclose(np.asarray(outr2), np.asarray(ref.real), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(np.asarray(outi2), np.asarray(ref.imag), rtol=RTOL, atol=ATOL)


def test_float64_in_interpret_mode():
    with jax.enable_x64(True):
        kx = kw = np.random.default_rng(2)
        x = _rand(kx, (2, 3, 5), True, np.float64)
        w = _rand(kw, (3, 2, 5), True, np.float64)
        out = jax.jit(functools.partial(spectral_mix, interpret=True, block_b=1, block_o=2, block_k=2))(x, w)
        assert out.dtype == jnp.complex128
        ref = np.einsum("bik,iok->bok", np.asarray(x), np.asarray(w))
        np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-12, atol=1e-12)


def test_jit_vmap_grad_compose():
    kx = kw = kc = np.random.default_rng(3)
    x = _rand(kx, (3, 2, 3, 5), True)  # extra leading axis to vmap over
    w = _rand(kw, (3, 4, 5), True)
    c = _rand(kc, (3, 2, 4, 5), True)
    mix = functools.partial(spectral_mix, interpret=True, block_b=2, block_o=2, block_k=4)

    def loss(x, w):  # Re Σ c·out, a random real linear functional
        return jnp.real(jnp.sum(c * jax.vmap(mix, in_axes=(0, None))(x, w)))

    gx, gw = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, w)
    # jax.grad of Re Σ c·f(z) for linear f = transpose of f applied to c (JAX's complex convention)
    x64, w64, c64 = (np.asarray(v, np.complex128) for v in (x, w, c))
    np.testing.assert_allclose(np.asarray(gx), np.einsum("nbok,iok->nbik", c64, w64), rtol=RTOL, atol=1e-4)
    np.testing.assert_allclose(np.asarray(gw), np.einsum("nbik,nbok->iok", x64, c64), rtol=RTOL, atol=1e-4)


def test_cpu_dispatch_uses_xla_reference():
    x = jnp.ones((2, 3, 4), jnp.complex64)
    w = jnp.ones((3, 2, 4), jnp.complex64)
    assert "pallas_call" not in str(jax.make_jaxpr(spectral_mix)(x, w))
    assert "pallas_call" in str(jax.make_jaxpr(functools.partial(spectral_mix, interpret=True))(x, w))
    np.testing.assert_array_equal(np.asarray(spectral_mix(x, w)), np.asarray(spectral_mix_reference(x, w)))
    # one sample (I, *modes) -> (O, *modes)
    np.testing.assert_array_equal(
        np.asarray(spectral_mix(x[1], w)), np.asarray(spectral_mix_reference(x, w)[1])
    )
    with pytest.raises(ValueError, match="GPU or TPU"):
        spectral_mix(x, w, interpret=False)


@pytest.mark.parametrize(
    "xs,ws,dtype,err,match",
    [
        ((2, 3), (3, 4), jnp.float32, ValueError, "at least one mode axis"),
        ((2, 3, 5), (4, 4, 5), jnp.float32, ValueError, "must equal"),
        ((2, 3, 5), (3, 4, 6), jnp.float32, ValueError, "mode axes differ"),
        ((2, 3, 5), (3, 4, 5, 1), jnp.float32, ValueError, "same number of mode axes"),
        ((2, 3, 5), (3, 4, 5), jnp.int32, TypeError, "floating or complex"),
    ],
)
def test_bad_inputs_raise_clear_errors(xs, ws, dtype, err, match):
    with pytest.raises(err, match=match):
        spectral_mix(jnp.ones(xs, dtype), jnp.ones(ws, dtype), interpret=True)


def test_bad_block_and_flag_raise():
    x, w = jnp.ones((2, 3, 5)), jnp.ones((3, 4, 5))
    with pytest.raises(ValueError, match="block_k"):
        spectral_mix(x, w, interpret=True, block_k=0)
    with pytest.raises(TypeError, match="interpret"):
        spectral_mix(x, w, interpret="yes")
    with pytest.raises(TypeError, match="array"):
        spectral_mix([[1.0]], w)


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), scale=st.floats(0.1, 10.0))
def test_property_linear_in_x_and_matches_numpy(seed, scale):
    kx1 = kx2 = kw = np.random.default_rng(seed)
    x1, x2 = _rand(kx1, (2, 3, 6), True), _rand(kx2, (2, 3, 6), True)
    w = _rand(kw, (3, 3, 6), True)
    out = _mix3(jnp.stack([x1, x2, scale * x1 + x2]), w)
    np.testing.assert_allclose(
        np.asarray(out[2]), np.asarray(scale * out[0] + out[1]), rtol=1e-4, atol=1e-4 * scale
    )
    ref = np.einsum("bik,iok->bok", np.asarray(x1, np.complex128), np.asarray(w, np.complex128))
    np.testing.assert_allclose(np.asarray(out[0]), ref, rtol=1e-4, atol=1e-4)


_mix3 = jax.jit(
    jax.vmap(functools.partial(spectral_mix, interpret=True, block_b=2, block_o=2, block_k=4), (0, None))
)


@pytest.mark.parametrize("platform", ["gpu", "tpu"])
def test_compiled_paths_lower(monkeypatch, platform):
    """Without an accelerator we can still lower the compiled-kernel path for CUDA (Triton) and TPU (Mosaic)."""
    monkeypatch.setattr(common, "backend", lambda: platform)
    monkeypatch.setattr(sm_mod, "backend", lambda: platform)
    x = jax.ShapeDtypeStruct((20, 32, 144), jnp.complex64)  # traced only
    w = jax.ShapeDtypeStruct((32, 32, 144), jnp.complex64)

    def f(x, w):
        # check_finite=False: the finiteness check's run-time error is a host callback, which a CPU-only host
        # cannot lower for another platform
        return jnp.sum(jnp.abs(spectral_mix(x, w, interpret=False, check_finite=False)) ** 2)

    lowered = (
        jax.jit(jax.grad(f, argnums=(0, 1)))
        .trace(x, w)
        .lower(lowering_platforms=("cuda" if platform == "gpu" else "tpu",))
    )
    text = lowered.as_text()
    marker = "triton" if platform == "gpu" else "tpu_custom_call"
    assert text.count(marker) >= 3, f"expected forward + 2 backward kernels in the {platform} lowering"


@pytest.mark.parametrize("platform,pallas", [("cpu", False), ("gpu", False), ("tpu", True)])
def test_default_dispatch_per_backend(monkeypatch, platform, pallas):
    """``interpret=None`` runs Pallas only where it was not measured slower than XLA's einsum (on an H200 it took
    2.7x the einsum's time, docs/benchmarks.md): TPU; CPU and GPU get the einsum. ``linear_scan`` keeps Pallas on GPU."""
    import jaxkit.kernels.linear_scan as ls_mod

    monkeypatch.setattr(common, "backend", lambda: platform)
    assert common.use_pallas(None, "spectral_mix", sm_mod._DEFAULT_BACKENDS) == (pallas, False)
    assert common.use_pallas(None, "linear_scan") == (platform != "cpu", False)
    if platform != "cpu":  # interpret=False forces the compiled kernel wherever one exists
        assert common.use_pallas(False, "spectral_mix", sm_mod._DEFAULT_BACKENDS) == (True, False)
    assert ls_mod.use_pallas is common.use_pallas


def test_non_finite_inputs_are_refused_naming_the_argument():
    """NaN/inf in x or w (or a plane) reached every output mode without a word (the fuzz suite's finding); refused
    eagerly and under jit, naming the argument. check_finite=False skips the check (the operator layers, whose
    inputs are checked at the model's boundary)."""
    rng = np.random.default_rng(0)
    arrays = {
        "x": rng.normal(size=(2, 3, 4)).astype(np.float32),
        "w": rng.normal(size=(3, 2, 4)).astype(np.float32),
    }
    for fn in (spectral_mix, spectral_mix_reference):
        assert np.all(np.isfinite(np.asarray(fn(**{k: jnp.asarray(v) for k, v in arrays.items()}))))
        for arg in arrays:
            bad = {k: jnp.asarray(v) for k, v in arrays.items()}
            bad[arg] = bad[arg].at[0, 1, 2].set(jnp.nan)
            with pytest.raises(ValueError, match=rf"{arg}: expected finite values"):
                fn(**bad)
            with pytest.raises(Exception, match=rf"{arg}: expected finite values"):
                jax.block_until_ready(jax.jit(lambda x, w, fn=fn: fn(x, w))(**bad))
            assert not np.all(np.isfinite(np.asarray(fn(**bad, check_finite=False))))
    planes = {
        "xr": arrays["x"],
        "xi": arrays["x"][::-1],
        "wr": arrays["w"],
        "wi": arrays["w"][:, ::-1],
    }
    for arg in planes:
        bad = {k: jnp.asarray(v) for k, v in planes.items()}
        bad[arg] = bad[arg].at[0, 1, 2].set(jnp.inf)
        with pytest.raises(ValueError, match=rf"{arg}: expected finite values"):
            spectral_mix_planes(**bad)
    with pytest.raises(ValueError, match=r"w: expected shape \(I, O, \*modes\) matching x"):
        spectral_mix_reference(jnp.asarray(arrays["x"]), jnp.zeros((0, 2, 4)))
