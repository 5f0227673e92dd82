"""Shared training core: jit-compiled optax fit loop, atomic checkpoints, deterministic loaders, data parallelism."""

from ._checkpoint import (
    CheckpointError,
    CheckpointManager,
    atomic_write_bytes,
    load_checkpoint,
    read_metadata,
    save_checkpoint,
)
from ._data import ArrayLoader, full_batch
from ._ema import EmaState, ema_params, params_ema
from ._ensemble import ensemble_member, ensemble_optimizer, ensemble_size, fit_ensemble, init_ensemble
from ._loop import FitResult, fit, global_norm, make_train_step
from ._sharding import DATA_AXIS, data_mesh, initialize_distributed, replicate, shard_batch

__all__ = [
    "DATA_AXIS",
    "ArrayLoader",
    "CheckpointError",
    "CheckpointManager",
    "EmaState",
    "FitResult",
    "atomic_write_bytes",
    "data_mesh",
    "ema_params",
    "ensemble_member",
    "ensemble_optimizer",
    "ensemble_size",
    "fit",
    "fit_ensemble",
    "full_batch",
    "global_norm",
    "init_ensemble",
    "initialize_distributed",
    "load_checkpoint",
    "make_train_step",
    "params_ema",
    "read_metadata",
    "replicate",
    "save_checkpoint",
    "shard_batch",
]
