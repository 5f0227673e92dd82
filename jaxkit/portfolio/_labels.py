"""pandas in, pandas out: asset labels of Series/DataFrame inputs carried to the outputs."""

from __future__ import annotations

import contextlib
from typing import Any

import jax
import numpy as np
import pandas as pd
from jaxtyping import Array, Float

__all__ = [
    "LabeledMatrix",
    "LabeledVector",
    "check_axis_labels",
    "check_labels",
    "is_default_index",
    "labeled",
    "precision",
]

LabeledVector = Float[Array, " n"] | pd.Series  # an array, or a Series labeled by ticker for pandas inputs
LabeledMatrix = Float[Array, "n n"] | pd.DataFrame  # an array, or a DataFrame labeled by ticker on both axes


def _labels_of(name: str, x: Any) -> list | None:
    if isinstance(x, pd.DataFrame):
        if list(x.index) != list(x.columns) and x.shape[0] == x.shape[1]:
            raise ValueError(f"{name}: expected a covariance DataFrame with the same labels on rows and columns, "
                             f"received rows {list(x.index)[:5]}... and columns {list(x.columns)[:5]}...")  # fmt: skip
        return list(x.columns)
    if isinstance(x, pd.Series):
        return list(x.index)
    return None


def check_labels(**named: Any) -> list | None:
    """The asset labels shared by the pandas inputs among ``named`` (``None`` if none is pandas); a mismatch
    (other tickers or another order) raises ``ValueError`` naming both inputs."""
    found = [(n, lab) for n, x in named.items() if (lab := _labels_of(n, x)) is not None]
    if not found:
        return None
    n0, l0 = found[0]
    for n, lab in found[1:]:
        if lab != l0:
            raise ValueError(f"{n0}, {n}: expected the same asset labels in the same order, received "
                             f"{l0[:5]}... and {lab[:5]}... (align them, e.g. cov.loc[mean.index, mean.index])")  # fmt: skip
    return l0


def is_default_index(index: Any) -> bool:
    """A pandas axis nobody labeled: ``RangeIndex(0, k)``."""
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def check_axis_labels(name: str, axis: Any, expected: Any, what: str, hint: str) -> None:
    """``axis`` (the labels of one axis of the pandas input ``name``) against ``expected`` (labels the other
    inputs carry): both labeled and different (other labels, or another order) raises ``ValueError`` naming
    ``name``, so a labeled input is never used by position against labels that disagree. An unlabeled axis
    (``RangeIndex(0, k)``) on either side is positional."""
    if axis is None or expected is None or is_default_index(axis) or is_default_index(expected):
        return
    got, want = list(axis), list(expected)
    if got != want:
        raise ValueError(
            f"{name}: expected {what} to be {want[:5]}{'...' if len(want) > 5 else ''} in this order, received "
            f"{got[:5]}{'...' if len(got) > 5 else ''} (align it, e.g. {hint})"
        )


def labeled(x: Any, labels: list | None, name: str | None = None) -> Any:
    """``x`` as a pandas Series (1-D) or DataFrame (2-D, labels on both axes) when ``labels`` is given."""
    if labels is None:
        return x
    a = np.asarray(x)
    if a.ndim == 1:
        return pd.Series(a, index=labels, name=name)
    return pd.DataFrame(a, index=labels, columns=labels)


def precision(dtype: Any) -> contextlib.AbstractContextManager:
    """A context that lets a call compute in ``dtype`` (float64 without the global ``jax_enable_x64`` flag)."""
    if dtype is not None and np.dtype(dtype) == np.float64 and not jax.config.jax_enable_x64:
        return jax.enable_x64(True)
    return contextlib.nullcontext()
