"""Fuzz factories for the ``jaxkit.operators`` exports that had no base call from their signature (issue 49): each
returns the keyword arguments of one valid call. Merged into ``_fuzz_factories.FACTORIES`` at its end; helpers of
that module are imported inside the factories (it imports this one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FACTORIES: dict[str, Callable[[], dict[str, Any]]] = {}


def _rno_small() -> Any:
    from _fuzz_factories import KEY

    from jaxkit import operators as op

    return op.build_operator(
        op.OperatorConfig("rno", 1, 1, (2,), width=2, n_layers=1, proj_hidden=2), key=KEY
    )


def _lno_small() -> Any:
    from _fuzz_factories import KEY

    from jaxkit import operators as op

    return op.LNO(1, 1, 2, 2, proj_hidden=2, key=KEY)


def _normalizer() -> Any:
    import jax.numpy as jnp

    from jaxkit import operators as op

    return op.GaussianNormalizer(jnp.zeros(()), jnp.ones(()))


def _flax_fno() -> dict[str, Any]:
    from flax import nnx

    return {
        "in_channels": 1,
        "out_channels": 1,
        "modes": 2,
        "width": 2,
        "n_layers": 1,
        "proj_hidden": 2,
        "rngs": nnx.Rngs(0),
    }


def _flax_neural_operator() -> dict[str, Any]:
    from _fuzz_factories import _fno

    return {"config": _fno().config, "params": _fno().params()}


def _from_flax() -> dict[str, Any]:
    from _fuzz_factories import _fno

    from jaxkit import operators as op

    return {"module": op.to_flax(_fno())}


def _neural_operator() -> dict[str, Any]:
    from _fuzz_factories import _fno

    m = _fno()
    return {
        "lift": m.lift,
        "blocks": m.blocks,
        "proj_hidden": m.proj_hidden,
        "proj_out": m.proj_out,
        "config": m.config,
    }


def _operator_config() -> dict[str, Any]:
    return {
        "kind": "fno",
        "in_channels": 1,
        "out_channels": 1,
        "modes": (2,),
        "width": 2,
        "n_layers": 1,
        "proj_hidden": 2,
    }


def _trained_operator() -> dict[str, Any]:
    from _fuzz_factories import _fno

    return {
        "model": _fno(),
        "x_normalizer": _normalizer(),
        "y_normalizer": _normalizer(),
        "history": [],
        "epoch_time": 0.5,
        "wall_time": 2.0,
        "n_steps": 4,
    }


def _laplace_layer() -> dict[str, Any]:
    import jax.numpy as jnp
    from _fuzz_factories import _normal

    poles = [jnp.asarray(-1.0 - _normal(1, 1, 2, seed=1) ** 2 + 1j * _normal(1, 1, 2, seed=2))]
    residues = jnp.asarray(_normal(1, 1, 2, seed=3) + 1j * _normal(1, 1, 2, seed=4))
    return {"u": jnp.asarray(_normal(1, 8)), "poles": poles, "residues": residues, "spacing": (0.1,)}


def _lno_apply() -> dict[str, Any]:
    import jax.numpy as jnp
    from _fuzz_factories import _normal

    m = _lno_small()
    return {"params": m.params(), "x": jnp.asarray(_normal(1, 8)), "cfg": m.config}


def _operator_apply() -> dict[str, Any]:
    import jax.numpy as jnp
    from _fuzz_factories import _fno, _normal

    m = _fno()
    return {"params": m.params(), "x": jnp.asarray(_normal(1, 8)), "cfg": m.config}


def _member() -> dict[str, Any]:
    import equinox as eqx
    import jax
    from _fuzz_factories import KEY

    from jaxkit import operators as op

    ens = eqx.filter_vmap(lambda k: op.FNO(1, 1, 2, 2, 1, proj_hidden=2, key=k))(jax.random.split(KEY, 2))
    return {"ensemble": ens, "i": 1}


def _riesz_spectral_conv() -> dict[str, Any]:
    import jax.numpy as jnp
    from _fuzz_factories import _normal

    # one spatial axis, 2 kept modes, 2 channels: weights (*kept, I, O), alpha (I,), w_dir (dirs, I),
    # local_weight (dirs, O, I)
    return {
        "u": jnp.asarray(_normal(2, 8)),
        "weight_re": jnp.asarray(_normal(2, 2, 2, seed=1)),
        "weight_im": jnp.asarray(_normal(2, 2, 2, seed=2)),
        "alpha": jnp.ones((2,), jnp.float32),
        "w_dir": jnp.asarray(_normal(1, 2, seed=3)),
        "local_weight": jnp.asarray(_normal(1, 2, 2, seed=4)),
        "modes": (2,),
    }


def _train_ensemble() -> dict[str, Any]:
    import jax
    from _fuzz_factories import KEY, _normal

    from jaxkit import operators as op

    return {
        "make_model": lambda k: op.FNO(1, 1, 2, 2, 1, proj_hidden=2, key=k),
        "keys": jax.random.split(KEY, 2),
        "x_train": _normal(4, 1, 8),
        "y_train": _normal(4, 1, 8, seed=1),
        "epochs": 1,
        "batch_size": 2,
        "progress": False,
    }


FACTORIES.update(
    {
        "jaxkit.operators.FlaxFNO": _flax_fno,
        "jaxkit.operators.FlaxRNO": _flax_fno,
        "jaxkit.operators.FlaxNeuralOperator": _flax_neural_operator,
        "jaxkit.operators.from_flax": _from_flax,
        "jaxkit.operators.NeuralOperator": _neural_operator,
        "jaxkit.operators.OperatorConfig": _operator_config,
        "jaxkit.operators.TrainedOperator": _trained_operator,
        "jaxkit.operators.laplace_layer": _laplace_layer,
        "jaxkit.operators.lno_apply": _lno_apply,
        "jaxkit.operators.operator_apply": _operator_apply,
        "jaxkit.operators.member": _member,
        "jaxkit.operators.riesz_spectral_conv": _riesz_spectral_conv,
        "jaxkit.operators.train_ensemble": _train_ensemble,
    }
)
