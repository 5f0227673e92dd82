"""Fuzz factories for the ``jaxkit.train`` exports that had no base call from their signature (issue 49): each
returns the keyword arguments of one valid call. Merged into ``_fuzz_factories.FACTORIES`` at its end; helpers of
that module are imported inside the factories (it imports this one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _sq_loss(model: Any, batch: Any, key: Any) -> Any:
    """A smooth loss of one parameter vector: mean squared distance to the batch rows."""
    import jax.numpy as jnp

    return jnp.mean((batch - model) ** 2)


def _member(key: Any) -> Any:
    import jax

    return jax.random.normal(key, (2,))


def _data(rows: int = 4):
    from _fuzz_factories import _normal

    from jaxkit import train

    return train.full_batch(_normal(rows, 2, seed=1))


def _folder(name: str) -> Any:
    """A fresh subfolder of the fuzz run's temporary folder (each factory call gets its own)."""
    import tempfile
    from pathlib import Path

    from _fuzz_factories import _tmp

    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_tmp()))


def _tree() -> dict[str, Any]:
    import jax.numpy as jnp
    from _fuzz_factories import _normal

    return {"w": jnp.asarray(_normal(3, 2)), "b": jnp.zeros((2,))}


def _array_loader() -> dict[str, Any]:
    from _fuzz_factories import KEY, _normal

    return {"arrays": _normal(4, 2), "batch_size": 2, "key": KEY}


def _ema_state() -> dict[str, Any]:
    import jax.numpy as jnp
    from _fuzz_factories import _normal

    return {"count": jnp.ones((), jnp.int32), "average": jnp.asarray(_normal(3))}


def _fit_result() -> dict[str, Any]:
    import jax.numpy as jnp
    from _fuzz_factories import _normal

    return {"model": jnp.asarray(_normal(2)), "opt_state": (), "step": 2}


def _manager() -> dict[str, Any]:
    return {"directory": _folder("manager"), "keep": 2}


def _atomic() -> dict[str, Any]:  # the edge calls reuse the base call's path, which it wrote
    return {"path": _folder("atomic") / "blob.bin", "data": b"jaxkit fuzz", "overwrite": True}


def _write_checked() -> dict[str, Any]:
    return {
        "path": _folder("checked") / "blob.jkx",
        "data": b"jaxkit fuzz",
        "kind": "stage",
        "info": {"n": 1},
        "overwrite": True,  # the edge calls reuse the base call's path, which it wrote
    }


def _read_checked() -> dict[str, Any]:
    from jaxkit import train

    path = _folder("checked") / "blob.jkx"
    train.write_checked_bytes(path, b"jaxkit fuzz", kind="stage", info={"n": 1})
    return {"path": path, "kind": "stage"}


def _saved() -> tuple[Any, dict[str, Any]]:
    from jaxkit import train

    tree = _tree()
    path = train.save_checkpoint(_folder("ckpt") / "ckpt", tree, {"step": 3})
    return path, tree


def _load() -> dict[str, Any]:
    path, tree = _saved()
    return {"path": path, "like": tree}


def _read_metadata() -> dict[str, Any]:
    return {"path": _saved()[0]}


def _save() -> dict[str, Any]:
    """Saved over its own earlier checkpoint (``overwrite=True``), ``like`` of the same structure."""
    tree = _tree()
    return {
        "path": _folder("save") / "ckpt",
        "tree": tree,
        "metadata": {"note": "fuzz"},
        "overwrite": True,
        "like": tree,
    }


def _stacked() -> Any:
    import jax.numpy as jnp
    from _fuzz_factories import _normal

    return jnp.asarray(_normal(3, 2))


def _init_ensemble() -> dict[str, Any]:
    import jax
    from _fuzz_factories import KEY

    return {"make_member": _member, "keys": jax.random.split(KEY, 3)}


def _ensemble_optimizer() -> dict[str, Any]:
    import optax

    return {"optimizer": optax.sgd(0.1), "n_members": 2}


def _make_train_step() -> dict[str, Any]:
    import optax

    return {"loss_fn": _sq_loss, "optimizer": optax.sgd(0.1)}


def _read_ema() -> dict[str, Any]:
    import jax.numpy as jnp
    import optax
    from _fuzz_factories import _normal

    from jaxkit import train

    params = jnp.asarray(_normal(3))
    opt = optax.chain(optax.sgd(0.1), train.track_ema(0.9))
    state = opt.init(params)
    _, state = opt.update(jnp.asarray(_normal(3, seed=1)), state, params)  # count 1: the debiased read-out
    return {"opt_state": state, "decay": 0.9}


def _fit() -> dict[str, Any]:
    import jax.numpy as jnp
    import optax
    from _fuzz_factories import KEY, _normal

    return {
        "model": jnp.asarray(_normal(2)),
        "optimizer": optax.sgd(0.1),
        "loss_fn": _sq_loss,
        "data": _data(),
        "n_steps": 2,
        "key": KEY,
        "progress": False,
    }


def _fit_ensemble() -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    import optax
    from _fuzz_factories import KEY, _normal

    return {
        "models": jnp.asarray(_normal(2, 2)),
        "optimizer": optax.sgd(0.1),
        "loss_fn": _sq_loss,
        "data": _data(),
        "n_steps": 2,
        "keys": jax.random.split(KEY, 2),
        "progress": False,
    }


def _mesh_call(arg: str, rows: int = 4) -> Callable[[], dict[str, Any]]:
    def make() -> dict[str, Any]:
        from _fuzz_factories import _normal

        from jaxkit import train

        return {arg: _normal(rows, 2), "mesh": train.data_mesh()}

    return make


FACTORIES: dict[str, Callable[[], dict[str, Any]]] = {
    "jaxkit.train.ArrayLoader": _array_loader,
    "jaxkit.train.CheckpointManager": _manager,
    "jaxkit.train.EmaState": _ema_state,
    "jaxkit.train.FitResult": _fit_result,
    "jaxkit.train.atomic_write_bytes": _atomic,
    # a single-process run: the barrier is a no-op that returns at once
    "jaxkit.train.barrier": lambda: {"name": "jaxkit-fuzz"},
    "jaxkit.train.distribute_batch": _mesh_call("batch"),
    "jaxkit.train.ensemble_member": lambda: {"stacked": _stacked(), "i": 1},
    "jaxkit.train.ensemble_optimizer": _ensemble_optimizer,
    "jaxkit.train.ensemble_size": lambda: {"stacked": _stacked()},
    "jaxkit.train.fit": _fit,
    "jaxkit.train.fit_ensemble": _fit_ensemble,
    "jaxkit.train.full_batch": lambda: {"arrays": __import__("_fuzz_factories")._normal(4, 2)},
    "jaxkit.train.init_ensemble": _init_ensemble,
    "jaxkit.train.load_checkpoint": _load,
    "jaxkit.train.make_train_step": _make_train_step,
    "jaxkit.train.read_checked_bytes": _read_checked,
    "jaxkit.train.read_ema": _read_ema,
    "jaxkit.train.read_metadata": _read_metadata,
    "jaxkit.train.replicate": _mesh_call("tree"),
    "jaxkit.train.save_checkpoint": _save,
    "jaxkit.train.shard_batch": _mesh_call("batch"),
    "jaxkit.train.write_checked_bytes": _write_checked,
}
