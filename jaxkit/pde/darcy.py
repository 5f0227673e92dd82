r"""Steady Darcy flow $-\nabla\cdot(a\nabla u) = f$ on the unit square, $u = 0$ on the boundary."""

from ._darcy import (
    SolveInfo as SolveInfo,
)
from ._darcy import (
    apply_operator as apply_operator,
)
from ._darcy import (
    assemble as assemble,
)
from ._darcy import (
    coefficient_from_grf as coefficient_from_grf,
)
from ._darcy import (
    reference_solve as reference_solve,
)
from ._darcy import (
    solve as solve,
)

__all__ = [
    "SolveInfo",
    "apply_operator",
    "solve",
    "assemble",
    "reference_solve",
    "coefficient_from_grf",
]
