r"""Gaussian random fields with covariance operator $C = \sigma^2(-\Delta + \tau^2 I)^{-\alpha}$."""

from ._grf import (
    FNO_BURGERS as FNO_BURGERS,
)
from ._grf import (
    FNO_DARCY as FNO_DARCY,
)
from ._grf import (
    FNO_NAVIER_STOKES as FNO_NAVIER_STOKES,
)
from ._grf import (
    grf_neumann as grf_neumann,
)
from ._grf import (
    grf_periodic as grf_periodic,
)
from ._grf import (
    neumann_spectrum as neumann_spectrum,
)
from ._grf import (
    periodic_spectrum as periodic_spectrum,
)

__all__ = [
    "FNO_BURGERS",
    "FNO_DARCY",
    "FNO_NAVIER_STOKES",
    "periodic_spectrum",
    "neumann_spectrum",
    "grf_periodic",
    "grf_neumann",
]
