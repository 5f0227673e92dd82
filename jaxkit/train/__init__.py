"""Shared training core: jit-compiled optax fit loop, atomic checkpoints, deterministic loaders, data parallelism."""

from .checkpoint import (
    CheckpointError,
    CheckpointManager,
    atomic_write_bytes,
    load_checkpoint,
    read_metadata,
    save_checkpoint,
)
from .data import ArrayLoader, full_batch
from .loop import FitResult, fit, global_norm, make_train_step
from .sharding import DATA_AXIS, data_mesh, initialize_distributed, replicate, shard_batch

__all__ = [
    "DATA_AXIS",
    "ArrayLoader",
    "CheckpointError",
    "CheckpointManager",
    "FitResult",
    "atomic_write_bytes",
    "data_mesh",
    "fit",
    "full_batch",
    "global_norm",
    "initialize_distributed",
    "load_checkpoint",
    "make_train_step",
    "read_metadata",
    "replicate",
    "save_checkpoint",
    "shard_batch",
]
