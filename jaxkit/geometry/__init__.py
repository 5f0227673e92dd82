"""Lie groups for rigid bodies: SO(3) (``so3``), SE(3) (``se3``) and alignment (``align``).

Rotations are ``(..., 3, 3)`` matrices, rotation vectors ``(..., 3)``, quaternions scalar-first ``(w, x, y, z)``;
rigid motions are pairs ``(R, t)``. Submodules are re-exported: ``geometry.so3.exp``, ``geometry.se3.compose``,
``geometry.kabsch``, ``geometry.rmsd``.
"""

from jaxkit.geometry._align import kabsch, kabsch_rmsd, rmsd

from . import se3, so3

__all__ = ["kabsch", "kabsch_rmsd", "rmsd", "se3", "so3"]
