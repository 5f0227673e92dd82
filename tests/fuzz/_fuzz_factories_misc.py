"""Fuzz factories for the exports of ``jaxkit.geometry``, ``jaxkit.kernels``, ``jaxkit.dynamics`` and ``jaxkit.pde``
that had no base call from their signature: each returns the keyword arguments of one small valid call. Merged
into ``_fuzz_factories.FACTORIES`` at its end; helpers of that module are imported inside the factories (it imports
this one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FACTORIES: dict[str, Callable[[], dict[str, Any]]] = {}


def _homogeneous() -> dict[str, Any]:
    """Two ``(4, 4)`` homogeneous transforms: rotations with translations, last row ``(0, 0, 0, 1)``."""
    import numpy as np
    from _fuzz_factories import _normal, _rotations

    T = np.zeros((2, 4, 4), np.float32)
    T[:, :3, :3] = _rotations(2)
    T[:, :3, 3] = _normal(2, 3, seed=1)
    T[:, 3, 3] = 1.0
    return {"T": T}


def _axis_angle() -> dict[str, Any]:
    import numpy as np
    from _fuzz_factories import _unit

    return {"axis": _unit(2, 3), "angle_": np.array([0.3, -1.2], np.float32)}


def _mix() -> dict[str, Any]:
    """``x`` ``(B, I, K) = (2, 3, 4)`` and ``w`` ``(I, O, K) = (3, 2, 4)`` (one mode axis)."""
    import jax.numpy as jnp
    from _fuzz_factories import _normal

    return {"x": jnp.asarray(_normal(2, 3, 4)), "w": jnp.asarray(_normal(3, 2, 4, seed=1))}


def _mix_planes() -> dict[str, Any]:
    import jax.numpy as jnp
    from _fuzz_factories import _normal

    return {
        "xr": jnp.asarray(_normal(2, 3, 4)),
        "xi": jnp.asarray(_normal(2, 3, 4, seed=1)),
        "wr": jnp.asarray(_normal(3, 2, 4, seed=2)),
        "wi": jnp.asarray(_normal(3, 2, 4, seed=3)),
    }


def _init_w(key: Any, scale: Any) -> Any:
    import jax

    return {"W": scale * jax.random.normal(key, (2, 2))}


def _flow_batch() -> dict[str, Any]:
    """Two seeds at one scale of the 2 x 2 quadratic flow of ``_fuzz_factories._lin_loss``, 4 save times."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from _fuzz_factories import KEY, _lin_loss

    return {
        "loss_fn": _lin_loss,
        "init_fn": _init_w,
        "keys": jax.random.split(KEY, 2),
        "scales": jnp.array([0.1], jnp.float32),
        "ts": np.linspace(0, 1, 4, dtype=np.float32),
    }


def _flow_result() -> dict[str, Any]:
    """The record of a 3-save flow of one 2 x 2 matrix."""
    import jax.numpy as jnp
    from _fuzz_factories import _normal

    return {
        "ts": jnp.linspace(0.0, 1.0, 3),
        "params": {"W": jnp.asarray(_normal(3, 2, 2))},
        "loss": jnp.asarray([1.0, 0.5, 0.25]),
        "t_stop": jnp.asarray(1.0),
        "converged": jnp.asarray(False),
    }


def _make_dataset() -> dict[str, Any]:
    from jaxkit import pde

    return {
        "name": "burgers",
        "n_train": 1,
        "n_test": 1,
        "resolution": min(pde.allowed_resolutions("burgers")),
        "progress": False,
    }


FACTORIES.update(
    {
        "jaxkit.geometry.se3.from_matrix": _homogeneous,
        "jaxkit.geometry.so3.check_rotation": lambda: {"name": "R", "R": _homogeneous()["T"][:, :3, :3]},
        "jaxkit.geometry.so3.from_axis_angle": _axis_angle,
        "jaxkit.kernels.spectral_mix.spectral_mix": _mix,
        "jaxkit.kernels.spectral_mix.spectral_mix_planes": _mix_planes,
        "jaxkit.kernels.spectral_mix.spectral_mix_reference": _mix,
        "jaxkit.dynamics.FlowResult": _flow_result,
        "jaxkit.dynamics.gradient_flow_batch": _flow_batch,
        "jaxkit.pde.make_dataset": _make_dataset,
        # the registered Burgers spec again: nothing to replace, the registry is left as it was
        "jaxkit.pde.register_dataset": lambda: {
            "spec": __import__("jaxkit.pde", fromlist=["x"]).dataset_spec("burgers")
        },
    }
)
