"""Shared jaxtyping aliases. Import from here so shape names stay consistent across the package."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias, TypeVar

import jax
import numpy as np
import numpy.typing as npt
from jax.typing import DTypeLike
from jaxtyping import Array, ArrayLike, Bool, Complex, Float, Int, PRNGKeyArray, PyTree

PRNGKey: TypeAlias = PRNGKeyArray
Params: TypeAlias = PyTree[Any]
Batch: TypeAlias = PyTree[Any]
Scalar: TypeAlias = Float[Array, ""]
RealArray: TypeAlias = Float[Array, "..."]
Field1D: TypeAlias = Float[Array, "channels x"]
Field2D: TypeAlias = Float[Array, "channels x y"]
BatchedField: TypeAlias = Float[Array, "batch channels *grid"]
Rotation: TypeAlias = Float[Array, "*batch 3 3"]
Vector3: TypeAlias = Float[Array, "*batch 3"]
ArrayOrNumpy: TypeAlias = jax.Array | np.ndarray
TreeT = TypeVar("TreeT")
"""A pytree handed back with the structure (and leaf types) it came in with: ``replicate(tree: TreeT) -> TreeT``."""
ArrayInput: TypeAlias = ArrayLike | npt.ArrayLike | Sequence[Any]
"""What array arguments of public entry points accept: JAX/NumPy arrays, scalars, (nested) lists or tuples and
objects with ``__array__`` such as pandas Series/DataFrames/DatetimeIndexes (converted with
``jaxkit._validate.as_float_array``, which rejects strings, ragged lists and complex values)."""

__all__ = [
    "Array",
    "ArrayLike",
    "ArrayInput",
    "ArrayOrNumpy",
    "Batch",
    "BatchedField",
    "Bool",
    "Complex",
    "DTypeLike",
    "Field1D",
    "Field2D",
    "Float",
    "Int",
    "PRNGKey",
    "Params",
    "PyTree",
    "RealArray",
    "Rotation",
    "Scalar",
    "TreeT",
    "Vector3",
]
