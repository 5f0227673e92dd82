"""Fuzz factories for the ``jaxkit.operators`` exports that had no base call from their signature (issue 49): each
returns the keyword arguments of one valid call. Merged into ``_fuzz_factories.FACTORIES`` at its end; helpers of
that module are imported inside the factories (it imports this one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FACTORIES: dict[str, Callable[[], dict[str, Any]]] = {}
