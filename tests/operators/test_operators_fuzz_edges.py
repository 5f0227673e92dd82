"""Refusals added for the fuzz suite's ``jaxkit.operators`` edges (tests/fuzz): each names its argument."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.operators import (
    FNO,
    LNO,
    GaussianNormalizer,
    OperatorConfig,
    TrainedOperator,
    laplace_layer,
    lno_apply,
    operator_apply,
    riesz_spectral_conv,
    train_ensemble,
)

KEY = jax.random.key(0)


def _x(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def _bad(x: np.ndarray) -> jax.Array:
    x = x.copy()
    x.flat[1] = np.nan
    return jnp.asarray(x)


def test_operator_apply_and_lno_apply_check_x_eagerly():
    fno = FNO(1, 1, 2, 2, 1, proj_hidden=2, key=KEY)
    with pytest.raises(ValueError, match=r"^x: expected finite values"):
        operator_apply(fno.params(), _bad(_x(1, 8)), fno.config)
    with pytest.raises(ValueError, match=r"^x: expected shape \(channels, \*grid\)"):
        operator_apply(fno.params(), jnp.zeros((0,)), fno.config)
    lno = LNO(1, 1, 2, 2, proj_hidden=2, key=KEY)
    with pytest.raises(ValueError, match=r"^x: expected finite values"):
        lno_apply(lno.params(), _bad(_x(1, 8)), lno.config)
    with pytest.raises(ValueError, match=r"^x: expected shape \(channels, \*grid\)"):
        lno_apply(lno.params(), jnp.zeros((0,)), lno.config)
    # under jit nothing is checked (training steps are unchanged): same numbers as the eager call
    x = jnp.asarray(_x(1, 8))
    eager = operator_apply(fno.params(), x, fno.config)
    jitted = jax.jit(lambda p, v: operator_apply(p, v, fno.config))(fno.params(), x)
    np.testing.assert_allclose(eager, jitted, rtol=1e-5, atol=1e-6)


def test_laplace_layer_refuses_nonfinite_u():
    poles = [jnp.asarray(-1.0 + 0.5j * _x(1, 1, 2))]
    residues = jnp.asarray(_x(1, 1, 2) + 0j)
    with pytest.raises(ValueError, match=r"^u: expected finite values"):
        laplace_layer(jnp.asarray(_bad(_x(1, 8))), poles, residues, spacing=(0.1,))


def _riesz(**over):
    kw = {
        "u": jnp.asarray(_x(2, 8)),
        "weight_re": jnp.asarray(_x(2, 2, 2)),
        "weight_im": jnp.asarray(_x(2, 2, 2)),
        "alpha": jnp.ones((2,)),
        "w_dir": jnp.zeros((1, 2)),
        "local_weight": jnp.asarray(_x(1, 2, 2)),
        "modes": (2,),
    }
    kw.update(over)
    return riesz_spectral_conv(**kw)


@pytest.mark.parametrize("name", ["weight_re", "weight_im", "alpha", "w_dir", "local_weight"])
def test_riesz_spectral_conv_refuses_nonfinite_parameters(name):
    shapes = {
        "weight_re": (2, 2, 2),
        "weight_im": (2, 2, 2),
        "alpha": (2,),
        "w_dir": (1, 2),
        "local_weight": (1, 2, 2),
    }
    with pytest.raises(ValueError, match=rf"^{name}: expected finite values"):
        _riesz(**{name: jnp.asarray(_bad(_x(*shapes[name])))})


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("alpha", (3,)),
        ("w_dir", (2, 2)),
        ("local_weight", (2, 2, 2)),
    ],
)
def test_riesz_spectral_conv_refuses_wrong_shapes(name, shape):
    # (the weights' own shapes are refused first by the runtime type check of their annotations)
    with pytest.raises(ValueError, match=rf"^{name}: expected shape"):
        _riesz(**{name: jnp.ones(shape)})


def test_trained_operator_refuses_impossible_records():
    fno = FNO(1, 1, 2, 2, 1, proj_hidden=2, key=KEY)
    n = GaussianNormalizer(jnp.zeros(()), jnp.ones(()))
    assert np.isnan(TrainedOperator(fno, n, n).epoch_time)  # the default, "not measured"
    with pytest.raises(ValueError, match=r"^epoch_time: expected seconds >= 0"):
        TrainedOperator(fno, n, n, epoch_time=float("inf"))
    with pytest.raises(ValueError, match=r"^epoch_time: expected seconds >= 0"):
        TrainedOperator(fno, n, n, epoch_time=-1.0)
    with pytest.raises(ValueError, match=r"^wall_time: expected a finite value >= 0"):
        TrainedOperator(fno, n, n, wall_time=float("nan"))
    with pytest.raises(ValueError, match=r"^n_steps: expected an integer >= 0"):
        TrainedOperator(fno, n, n, n_steps=-1)


def test_train_ensemble_names_step_epochs():
    x = _x(4, 1, 8)
    make = lambda k: FNO(1, 1, 2, 2, 1, proj_hidden=2, key=k)  # noqa: E731
    with pytest.raises(ValueError, match=r"^step_epochs: expected an integer >= 1"):
        train_ensemble(make, jax.random.split(KEY, 2), x, x, epochs=1, step_epochs=0)


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("width", -1, r"^width: expected an integer >= 1"),
        ("n_layers", -1, r"^n_layers: expected an integer >= 1"),
        ("padding", float("nan"), r"^padding: expected a value in \[0.0, 1.0\]"),
        ("order", -1, r"^order: "),
    ],
)
def test_operator_config_refuses_bad_scalars(field, value, match):
    kw = {"kind": "fno", "in_channels": 1, "out_channels": 1, "modes": (2,), field: value}
    with pytest.raises(ValueError, match=match):
        OperatorConfig(**kw)
