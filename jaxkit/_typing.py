"""Shared jaxtyping aliases. Import from here so shape names stay consistent across the package."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias, TypeVar

import numpy.typing as npt
from jax.typing import DTypeLike
from jaxtyping import Array, ArrayLike, Bool, Complex, Float, Int, PRNGKeyArray, PyTree

PRNGKey: TypeAlias = PRNGKeyArray
Params: TypeAlias = PyTree[Any]
Batch: TypeAlias = PyTree[Any]
Scalar: TypeAlias = Float[Array, ""]
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
    "Batch",
    "Bool",
    "Complex",
    "DTypeLike",
    "Float",
    "Int",
    "PRNGKey",
    "Params",
    "PyTree",
    "Scalar",
    "TreeT",
]
