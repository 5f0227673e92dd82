"""2-D incompressible Navier–Stokes in vorticity form on the unit torus."""

from ._navier_stokes import (
    fno_forcing as fno_forcing,
)
from ._navier_stokes import (
    kolmogorov_forcing as kolmogorov_forcing,
)
from ._navier_stokes import (
    solve as solve,
)
from ._navier_stokes import (
    taylor_green as taylor_green,
)
from ._navier_stokes import (
    velocity as velocity,
)

__all__ = [
    "fno_forcing",
    "velocity",
    "solve",
    "kolmogorov_forcing",
    "taylor_green",
]
