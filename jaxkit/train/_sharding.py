"""Data-parallel placement on a ``jax.sharding`` mesh (single host or multi-host).

Parameters are replicated, batches are split along their leading axis over the mesh axis ``"data"``; ``jax.jit``
then partitions the train step (GSPMD) and inserts the gradient all-reduce. Multi-host runs call
:func:`initialize_distributed` first and build global batches from each process's local part with
``jax.make_array_from_process_local_data``; the rest of the code is unchanged.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec

from jaxkit._typing import TreeT
from jaxkit._validate import check_int

DATA_AXIS = "data"


def data_mesh(n_devices: int | None = None, axis: str = DATA_AXIS) -> Mesh:
    """A 1-D mesh over the first ``n_devices`` global devices (default: all of them), with an ``Auto`` axis:
    ``jax.jit`` propagates the batch sharding (GSPMD), so model code needs no sharding annotations. (JAX >= 0.7
    makes ``Explicit`` axes by default, under which an op mixing the sharded batch with an unsharded array, e.g.
    the grid coordinates an FNO concatenates, fails outside a ``jax.sharding.use_mesh`` context.)"""
    n_all = jax.device_count()
    if n_devices is not None:
        check_int("n_devices", n_devices, minimum=1)
    n = n_all if n_devices is None else int(n_devices)
    if not 1 <= n <= n_all:
        raise ValueError(f"n_devices: expected 1..{n_all} (the devices available), received {n_devices}")
    return jax.make_mesh((n,), (axis,), axis_types=(AxisType.Auto,), devices=jax.devices()[:n])


def replicate(tree: TreeT, mesh: Mesh) -> TreeT:
    """Place every array leaf of ``tree`` fully replicated on ``mesh``."""
    _check_mesh(mesh)
    sharding = NamedSharding(mesh, PartitionSpec())
    return jax.tree_util.tree_map(lambda x: jax.device_put(x, sharding) if _is_array(x) else x, tree)


def _check_mesh(mesh: Any, axis: str | None = None) -> None:
    if not isinstance(mesh, Mesh):
        raise TypeError(f"mesh: expected a jax.sharding.Mesh (see data_mesh), received {type(mesh).__name__}")
    if axis is not None and axis not in mesh.shape:
        raise ValueError(f"axis: expected one of the mesh axes {list(mesh.shape)}, received {axis!r}")


def _is_array(x: Any) -> bool:
    return isinstance(x, jax.Array | np.ndarray)


def shard_batch(batch: TreeT, mesh: Mesh, axis: str = DATA_AXIS) -> TreeT:
    """Split every leaf of ``batch`` along its leading axis over ``mesh[axis]``.

    In a multi-process run, ``batch`` is this process's local part and the global array is assembled with
    ``jax.make_array_from_process_local_data``. Raises ``ValueError`` if a leading size is not divisible by the
    number of devices on the axis.
    """
    _check_mesh(mesh, axis)
    n_dev = mesh.shape[axis]
    n_local = n_dev // jax.process_count() if jax.process_count() > 1 else n_dev
    sharding = NamedSharding(mesh, PartitionSpec(axis))

    def put(x):
        if not _is_array(x):
            return x
        if np.ndim(x) == 0:
            raise ValueError("batch: expected arrays with a leading batch axis, received a scalar leaf")
        b = np.shape(x)[0]
        if b % n_local != 0:
            raise ValueError(
                f"batch: leading (batch) size {b} is not divisible by the {n_local} devices on mesh axis "
                f"'{axis}'; choose a batch size that is a multiple of {n_local}"
            )
        if jax.process_count() > 1:
            return jax.make_array_from_process_local_data(sharding, np.asarray(x))
        return jax.device_put(x, sharding)

    return jax.tree_util.tree_map(put, batch)


def initialize_distributed(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    *,
    cpu_collectives: str | None = "gloo",
) -> None:
    """Start multi-process JAX (one call per process, before any computation).

    On CPU, cross-process collectives need an implementation (``gloo``); on GPU/TPU clusters leave the
    arguments ``None`` to let JAX auto-detect the cluster (SLURM, TPU pods, ...).
    """
    if cpu_collectives is not None:
        jax.config.update("jax_cpu_collectives_implementation", cpu_collectives)
    jax.distributed.initialize(
        coordinator_address=coordinator_address, num_processes=num_processes, process_id=process_id
    )
