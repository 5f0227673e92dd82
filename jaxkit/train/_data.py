"""Deterministic, resumable mini-batch loaders.

A loader is a callable ``batch(step) -> pytree``: the batch served at a global step is a pure function of the
loader's key and the step, so the data-iterator position *is* the step number and a resumed run sees exactly the
batches an uninterrupted one would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from jaxkit._typing import Batch
from jaxkit._validate import check_finite, check_int, check_key


def _numeric_leaves(arrays: Any) -> Any:
    """The data pytree as NumPy arrays: numeric, finite (NaN/inf in training data is reported, naming the leaf)."""
    out = jax.tree_util.tree_map(np.asarray, arrays)
    for path, leaf in jax.tree_util.tree_flatten_with_path(out)[0]:
        name = f"arrays{jax.tree_util.keystr(path)}"
        if leaf.dtype.kind not in "biuf":
            raise TypeError(f"{name}: expected a numeric array, received dtype {leaf.dtype}")
        check_finite(name, leaf)
    return out


class ArrayLoader:
    """Shuffled mini-batches from arrays sharing a leading sample axis.

    Epoch ``e`` uses the permutation ``jax.random.permutation(fold_in(key, e), n)``; ``drop_last`` drops the
    incomplete final batch of each epoch so every batch has the same shape (one compilation).
    """

    def __init__(
        self, arrays: Batch, batch_size: int, *, key: jax.Array, shuffle: bool = True, drop_last: bool = True
    ):
        check_key("key", key)
        arrays = _numeric_leaves(arrays)
        leaves = jax.tree_util.tree_leaves(arrays)
        if not leaves:
            raise ValueError("arrays: expected a pytree with at least one array, received an empty pytree")
        n = int(np.shape(leaves[0])[0])
        for i, leaf in enumerate(leaves):
            if np.ndim(leaf) == 0 or np.shape(leaf)[0] != n:
                raise ValueError(
                    f"arrays: every leaf needs the same leading (sample) size {n}; leaf {i} has shape {np.shape(leaf)}"
                )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size: expected an integer >= 1, received {batch_size!r}")
        if batch_size > n:
            raise ValueError(f"batch_size: expected at most the number of samples {n}, received {batch_size}")
        if n == 0:
            raise ValueError("arrays: expected at least one sample, received leading size 0")
        self.arrays = arrays
        self.n = n
        self.batch_size = batch_size
        self.key = key
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.steps_per_epoch = n // batch_size if drop_last else -(-n // batch_size)
        self._perm_cache: tuple[int, np.ndarray] | None = None

    def _perm(self, epoch: int) -> np.ndarray:
        if not self.shuffle:
            return np.arange(self.n)
        if self._perm_cache is None or self._perm_cache[0] != epoch:
            perm = np.asarray(jax.random.permutation(jax.random.fold_in(self.key, epoch), self.n))
            self._perm_cache = (epoch, perm)
        return self._perm_cache[1]

    def indices(self, step: int) -> np.ndarray:
        check_int("step", step, minimum=0)
        epoch, pos = divmod(int(step), self.steps_per_epoch)
        perm = self._perm(epoch)
        return perm[pos * self.batch_size : (pos + 1) * self.batch_size]

    def __call__(self, step: int) -> Batch:
        idx = self.indices(step)
        return jax.tree_util.tree_map(lambda a: a[idx], self.arrays)


def full_batch(arrays: Batch) -> Callable[[int], Batch]:
    """A loader that serves the whole data set at every step (full-batch gradient descent)."""
    arrays = _numeric_leaves(arrays)
    if not jax.tree_util.tree_leaves(arrays):
        raise ValueError("arrays: expected a pytree with at least one array, received an empty pytree")
    return lambda step: arrays
