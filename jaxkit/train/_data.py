"""Deterministic, resumable mini-batch loaders.

A loader is a callable ``batch(step) -> pytree``: the batch served at a global step is a pure function of the
loader's key and the step, so the data-iterator position *is* the step number and a resumed run sees exactly the
batches an uninterrupted one would.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from jaxkit._typing import Batch
from jaxkit._validate import check_finite, check_int, check_key


def _numeric_leaves(arrays: Any) -> Any:
    """The data pytree as NumPy arrays: numeric, finite (NaN/inf in training data is reported, naming the leaf).

    Float64 leaves are converted to float32 when JAX runs in single precision (``jax_enable_x64`` off, the
    default), with one ``UserWarning`` naming them: JAX would compute them in float32 anyway."""
    out = jax.tree_util.tree_map(np.asarray, arrays)
    x64 = bool(jax.config.read("jax_enable_x64"))
    downcast = []
    for path, leaf in jax.tree_util.tree_flatten_with_path(out)[0]:
        name = f"arrays{jax.tree_util.keystr(path)}"
        if leaf.dtype.kind not in "biuf":
            raise TypeError(f"{name}: expected a numeric array, received dtype {leaf.dtype}")
        check_finite(name, leaf)
        if leaf.dtype == np.float64 and not x64:
            downcast.append(name)
    if downcast:
        warnings.warn(
            f"{', '.join(downcast)}: float64 data is converted to float32 (JAX computes in float32 unless "
            "jax_enable_x64 is on); pass float32 arrays to silence this, or enable x64 for double precision",
            UserWarning,
            stacklevel=3,
        )
        out = jax.tree_util.tree_map(lambda a: a.astype(np.float32) if a.dtype == np.float64 else a, out)
    return out


class ArrayLoader:
    """Shuffled mini-batches from arrays sharing a leading sample axis.

    Epoch ``e`` uses the permutation ``jax.random.permutation(fold_in(key, e), n)`` and covers steps
    ``e * steps_per_epoch`` to ``(e + 1) * steps_per_epoch - 1``. ``drop_last=True`` (default) drops the
    incomplete final batch of each epoch so every batch has the same shape (one compilation): when ``batch_size``
    does not divide ``n``, ``n % batch_size`` samples are skipped each epoch (a different random subset each epoch
    with ``shuffle=True``) and the constructor says so once with a ``UserWarning``. ``drop_last=False`` serves
    them as a smaller final batch (a second compilation). ``batch_size > n`` raises ``ValueError``. Float64 data
    is converted to float32 unless ``jax_enable_x64`` is on (with a ``UserWarning``).
    """

    def __init__(
        self, arrays: Batch, batch_size: int, *, key: jax.Array, shuffle: bool = True, drop_last: bool = True
    ):
        check_key("key", key)
        arrays = _numeric_leaves(arrays)
        leaves = jax.tree_util.tree_leaves(arrays)
        if not leaves:
            raise ValueError("arrays: expected a pytree with at least one array, received an empty pytree")
        if np.ndim(leaves[0]) == 0:
            raise ValueError(
                f"arrays: every leaf needs a leading (sample) axis; leaf 0 is a scalar of shape {np.shape(leaves[0])}"
            )
        n = int(np.shape(leaves[0])[0])
        for i, leaf in enumerate(leaves):
            if np.ndim(leaf) == 0 or np.shape(leaf)[0] != n:
                raise ValueError(
                    f"arrays: every leaf needs the same leading (sample) size {n}; leaf {i} has shape {np.shape(leaf)}"
                )
        if n == 0:
            raise ValueError("arrays: expected at least one sample, received leading size 0")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size: expected an integer >= 1, received {batch_size!r}")
        if batch_size > n:
            raise ValueError(f"batch_size: expected at most the number of samples {n}, received {batch_size}")
        self.arrays = arrays
        self.n = n
        self.batch_size = batch_size
        self.key = key
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.steps_per_epoch = n // batch_size if drop_last else -(-n // batch_size)
        remainder = n % batch_size
        if drop_last and remainder:
            warnings.warn(
                f"ArrayLoader: {n} samples in batches of {batch_size} leave {remainder} sample(s) out of every "
                f"epoch ({self.steps_per_epoch} steps per epoch"
                + (", a different random subset each epoch" if shuffle else ", always the last ones")
                + f"); pass drop_last=False to serve them as a smaller final batch, or a batch_size dividing {n}",
                UserWarning,
                stacklevel=2,
            )
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
        if epoch >= 2**32:  # the epoch is folded into the key as a uint32
            raise ValueError(
                f"step: expected a step within 2**32 epochs ({2**32 * self.steps_per_epoch} steps), received {step}"
            )
        perm = self._perm(epoch)
        return perm[pos * self.batch_size : (pos + 1) * self.batch_size]

    def __call__(self, step: int) -> Batch:
        idx = self.indices(step)
        return jax.tree_util.tree_map(lambda a: a[idx], self.arrays)


def full_batch(arrays: object) -> Callable[[int], object]:
    """A loader that serves the whole data set at every step (full-batch gradient descent). An empty array
    among the leaves is refused (``ValueError``): its mean loss is 0/0, so training on it would stop at a NaN loss
    that blames the learning rate. Leaves with a leading (sample) axis must share its size, as in
    :class:`ArrayLoader` (``ValueError`` naming the leaf); 0-d leaves are served as they are."""
    arrays = _numeric_leaves(arrays)
    leaves = jax.tree_util.tree_leaves(arrays)
    if not leaves:
        raise ValueError("arrays: expected a pytree with at least one array, received an empty pytree")
    for i, leaf in enumerate(leaves):
        if np.size(leaf) == 0:
            raise ValueError(
                f"arrays: expected non-empty arrays (at least one sample); leaf {i} has shape {np.shape(leaf)}"
            )
    first = None
    for path, leaf in jax.tree_util.tree_flatten_with_path(arrays)[0]:
        if np.ndim(leaf) == 0:
            continue
        name = f"arrays{jax.tree_util.keystr(path)}"
        if first is None:
            first = (name, np.shape(leaf)[0])
        elif np.shape(leaf)[0] != first[1]:
            raise ValueError(
                f"{name}: expected the leading (sample) size {first[1]} of {first[0]}, received shape "
                f"{np.shape(leaf)}"
            )
    return lambda step: arrays
