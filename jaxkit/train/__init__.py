"""Shared training core: jit-compiled optax fit loop, verified atomic checkpoints (orbax-checkpoint + SHA-256 over
every byte), deterministic loaders, data parallelism."""

from ._checkpoint import (
    CheckpointError,
    CheckpointManager,
    CheckpointWarning,
    atomic_write_bytes,
    load_checkpoint,
    read_checked_bytes,
    read_metadata,
    save_checkpoint,
    save_model_checkpoint,
    write_checked_bytes,
)
from ._data import ArrayLoader, full_batch
from ._ema import EmaState, read_ema, track_ema
from ._ensemble import ensemble_member, ensemble_optimizer, ensemble_size, fit_ensemble, init_ensemble
from ._loop import FitResult, fit, global_norm, make_train_step
from ._sharding import (
    DATA_AXIS,
    MEMBER_AXIS,
    barrier,
    data_mesh,
    default_mesh,
    distribute_batch,
    ensemble_mesh,
    initialize_distributed,
    is_primary,
    replicate,
    shard_batch,
    to_host,
)

__all__ = [
    "DATA_AXIS",
    "MEMBER_AXIS",
    "ArrayLoader",
    "CheckpointError",
    "CheckpointManager",
    "CheckpointWarning",
    "EmaState",
    "FitResult",
    "atomic_write_bytes",
    "barrier",
    "data_mesh",
    "default_mesh",
    "distribute_batch",
    "ensemble_member",
    "ensemble_mesh",
    "ensemble_optimizer",
    "ensemble_size",
    "fit",
    "fit_ensemble",
    "full_batch",
    "global_norm",
    "init_ensemble",
    "initialize_distributed",
    "is_primary",
    "load_checkpoint",
    "make_train_step",
    "read_checked_bytes",
    "read_ema",
    "read_metadata",
    "replicate",
    "save_checkpoint",
    "save_model_checkpoint",
    "shard_batch",
    "to_host",
    "track_ema",
    "write_checked_bytes",
]
