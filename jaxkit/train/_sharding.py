"""Data-parallel placement on a ``jax.sharding`` mesh (single host or multi-host).

Parameters are replicated, batches are split along their leading axis over the mesh axis ``"data"``; ``jax.jit``
then partitions the train step (GSPMD) and inserts the gradient all-reduce. Stacked ensembles may in addition
split their members over a ``"member"`` axis (:func:`ensemble_mesh`).

Multi-process runs use JAX's own multi-controller runtime: every process calls :func:`initialize_distributed`
first (``jax.distributed.initialize``: auto-detected under SLURM, Open MPI and on TPU pods, or given a coordinator
address, the process count and this process's id), then runs the same program. Global batches are assembled from
each process's local part with ``jax.make_array_from_process_local_data``; the rest of the code is unchanged.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec

from jaxkit._typing import ArrayInput, TreeT
from jaxkit._validate import check_int

DATA_AXIS = "data"
MEMBER_AXIS = "member"
_STATE = {"distributed": False}  # set by initialize_distributed: training defaults to all global devices


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


def ensemble_mesh(members: int, data: int | None = None) -> Mesh:
    """A 2-D mesh ``(members, data)`` with axes ``("member", "data")`` over ``members * data`` global devices
    (``data`` default: all devices divided by ``members``). :func:`~jaxkit.train.fit_ensemble` splits the stacked
    members over the first axis (the member count must be divisible by ``members``) and each batch over the
    second."""
    n_all = jax.device_count()
    check_int("members", members, minimum=1)
    if data is None:
        if n_all % members:
            raise ValueError(f"members: expected a divisor of the {n_all} devices, received {members}")
        data = n_all // members
    check_int("data", data, minimum=1)
    if members * data > n_all:
        raise ValueError(
            f"members, data: a {members} x {data} mesh needs {members * data} devices, {n_all} are available"
        )
    devices = np.asarray(jax.devices()[: members * data]).reshape(members, data)
    return Mesh(devices, (MEMBER_AXIS, DATA_AXIS), axis_types=(AxisType.Auto, AxisType.Auto))


def replicate(tree: TreeT, mesh: Mesh) -> TreeT:
    """Place every array leaf of ``tree`` fully replicated on ``mesh``."""
    _check_mesh(mesh)
    sharding = NamedSharding(mesh, PartitionSpec())
    return jax.tree_util.tree_map(lambda x: _put(x, sharding) if _is_array(x) else x, tree)


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
    ``jax.make_array_from_process_local_data`` (:func:`distribute_batch` takes the whole global batch instead).
    Raises ``ValueError`` if a leading size is not divisible by the number of devices on the axis.
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


def _put(x: Any, sharding: NamedSharding) -> jax.Array:
    """``x`` (the whole global array, identical in every process) as a global array with ``sharding``: each
    process hands over only the block its own devices hold (``jax.make_array_from_process_local_data``)."""
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        return x  # already a global array (placed by the caller)
    if jax.process_count() == 1:
        return jax.device_put(x, sharding)
    shape = np.shape(x)
    index = sharding.addressable_devices_indices_map(shape).values()
    block = tuple(
        slice(min(ix[d].indices(n)[0] for ix in index), max(ix[d].indices(n)[1] for ix in index))
        for d, n in enumerate(shape)
    )
    return jax.make_array_from_process_local_data(sharding, np.asarray(x[block]), shape)


def distribute_batch(batch: TreeT, mesh: Mesh, axis: str = DATA_AXIS) -> TreeT:
    """Split every leaf of the global ``batch`` along its leading axis over ``mesh[axis]``.

    Every process passes the same global batch (a deterministic loader serves it); each keeps only the rows of
    its own devices and the global array is assembled from these process-local parts
    (``jax.make_array_from_process_local_data``). Raises ``ValueError`` if a leading size is not divisible by
    the number of devices on the axis.
    """
    _check_mesh(mesh, axis)
    return _Placement(mesh, batch_axes=(axis,)).place_batch(batch)


@dataclass(frozen=True)
class _Placement:
    """Where :func:`~jaxkit.train.fit` puts the training state and each batch.

    ``state_axis``: mesh axis splitting the leading axis of every state leaf (stacked ensemble members), or
    ``None`` (replicated). ``batch_axes[d]``: the mesh axis splitting dimension ``d`` of each batch leaf (``None``:
    not split; scalars are replicated). ``strict=False`` (the default mesh of a distributed run): a dimension not
    divisible by its axis is replicated instead, with a warning."""

    mesh: Mesh
    batch_axes: Sequence[str | None] = (DATA_AXIS,)
    state_axis: str | None = None
    strict: bool = True

    def place_state(self, tree: Any) -> Any:
        def put(x):
            if not _is_array(x):
                return x
            spec = PartitionSpec(self.state_axis) if self.state_axis and np.ndim(x) else PartitionSpec()
            return _put(x, NamedSharding(self.mesh, spec))

        return jax.tree_util.tree_map(put, tree)

    def _spec(self, shape: tuple[int, ...]) -> PartitionSpec:
        axes = []
        for d, name in enumerate(tuple(self.batch_axes)[: len(shape)]):
            if name is None or name not in self.mesh.shape or self.mesh.shape[name] == 1:
                axes.append(None)
                continue
            n = self.mesh.shape[name]
            if shape[d] % n == 0:
                axes.append(name)
            elif self.strict:
                raise ValueError(
                    f"batch: dimension {d} of a batch leaf has size {shape[d]}, which is not divisible by the "
                    f"{n} devices on mesh axis '{name}'; choose a batch size that is a multiple of {n}"
                )
            else:
                warnings.warn(
                    f"batch: size {shape[d]} is not divisible by the {n} devices of the run, so this batch "
                    f"leaf is not split (every device computes it); choose a multiple of {n}",
                    stacklevel=4,
                )
                axes.append(None)
        return PartitionSpec(*axes)

    def place_batch(self, batch: Any) -> Any:
        def put(x):
            if not _is_array(x):
                return x
            return _put(x, NamedSharding(self.mesh, self._spec(np.shape(x))))

        return jax.tree_util.tree_map(put, batch)


def default_mesh() -> Mesh | None:
    """The mesh :func:`~jaxkit.train.fit` and :func:`~jaxkit.train.fit_ensemble` use when given none: all global
    devices (:func:`data_mesh`) after :func:`initialize_distributed` or in any multi-process run, else ``None``
    (one device, no data parallelism)."""
    return data_mesh() if _STATE["distributed"] or jax.process_count() > 1 else None


def _placement(mesh: Any) -> _Placement | None:
    """The placement of a ``mesh`` argument: ``None`` -> the default mesh (lenient), a Mesh -> batches split over
    its ``"data"`` axis, a ready placement -> itself."""
    if isinstance(mesh, _Placement):
        return mesh
    if mesh is None:
        mesh = default_mesh()
        return None if mesh is None else _Placement(mesh, strict=False)
    _check_mesh(mesh)
    axis = DATA_AXIS if DATA_AXIS in mesh.shape else mesh.axis_names[0]
    return _Placement(mesh, batch_axes=(axis,))


def is_primary() -> bool:
    """Whether this is process 0, the one that writes files and prints progress in a multi-process run."""
    return jax.process_index() == 0


def initialize_distributed(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    *,
    cpu_collectives: str | None = "gloo",
    initialization_timeout: int = 300,
) -> None:
    """Start multi-process JAX (one call per process, before any computation); afterwards :func:`fit` and
    :func:`fit_ensemble` split their batches over every device of every process by default.

    Leave the arguments ``None`` to let ``jax.distributed.initialize`` detect the cluster (SLURM, Open MPI, TPU
    pods); otherwise give ``coordinator_address`` (``"host:port"`` of process 0), ``num_processes`` and this
    process's ``process_id``. ``num_processes=1`` starts no coordinator (one process, all of its local devices).
    On CPU, cross-process collectives need an implementation: ``cpu_collectives`` (``"gloo"``) is set first.

    While it waits for the other processes, a line on stderr says so (coordinator, number of processes, timeout).
    If they have not all connected within ``initialization_timeout`` seconds, the process prints an error naming
    the coordinator and the timeout and exits with status 3 (JAX itself would abort it later with a C++ stack
    trace, SIGABRT): a process waiting inside JAX's C++ client cannot be given a Python exception.
    """
    if num_processes is not None:
        check_int("num_processes", num_processes, minimum=1)
    if process_id is not None:
        check_int("process_id", process_id, minimum=0)
        if num_processes is not None and process_id >= num_processes:
            raise ValueError(f"process_id: expected 0..{num_processes - 1}, received {process_id}")
    check_int("initialization_timeout", initialization_timeout, minimum=1)
    if num_processes != 1 and not jax.distributed.is_initialized():
        if cpu_collectives is not None:
            jax.config.update("jax_cpu_collectives_implementation", cpu_collectives)
        who = (
            f"process {process_id} of {num_processes}"
            if process_id is not None and num_processes is not None
            else "this process (cluster auto-detected)"
        )
        where = coordinator_address or "the auto-detected coordinator"
        print(
            f"[jaxkit] {who}: waiting up to {initialization_timeout} s for every process to connect to {where}",
            file=sys.stderr,
            flush=True,
        )

        def give_up() -> None:
            print(
                f"error: distributed start timed out: {who} waited {initialization_timeout} s and not every "
                f"process connected to {where} (is every process started, with the same --coordinator and "
                "--num-processes, and is the port reachable?)",
                file=sys.stderr,
                flush=True,
            )
            os._exit(3)

        watchdog = threading.Timer(initialization_timeout, give_up)
        watchdog.daemon = True
        watchdog.start()
        try:
            jax.distributed.initialize(
                coordinator_address=coordinator_address,
                num_processes=num_processes,
                process_id=process_id,
                initialization_timeout=initialization_timeout + 60,  # the watchdog above speaks first
            )
        finally:
            watchdog.cancel()
    _STATE["distributed"] = True


def barrier(name: str) -> None:
    """Wait until every process reaches the barrier ``name`` (no-op in a single-process run)."""
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)


def to_host(x: ArrayInput) -> np.ndarray:
    """A NumPy copy of ``x``; a global array split over several processes is gathered first."""
    if isinstance(x, jax.Array) and not x.is_fully_addressable and not x.is_fully_replicated:
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(x, tiled=True))
    return np.asarray(x)
