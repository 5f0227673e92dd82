r"""Viscous Burgers equation $u_t + (u^2/2)_x = \nu u_{xx}$ on a periodic interval."""

from ._burgers import (
    cole_hopf_solution as cole_hopf_solution,
)
from ._burgers import (
    default_steps as default_steps,
)
from ._burgers import (
    solve as solve,
)

__all__ = [
    "default_steps",
    "solve",
    "cole_hopf_solution",
]
