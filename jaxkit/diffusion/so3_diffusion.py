"""Variance-exploding diffusion on SO(3) with IGSO(3) marginals (the rotation factor of ``SE3Diffusion``).

The group itself (exp, log,
Haar sampling) is :mod:`jaxkit.geometry.so3`."""

from ._so3_diffusion import (
    brownian_motion as brownian_motion,
)
from ._so3_diffusion import (
    conditional_score as conditional_score,
)
from ._so3_diffusion import (
    dsm_loss as dsm_loss,
)
from ._so3_diffusion import (
    perturb as perturb,
)
from ._so3_diffusion import (
    probability_flow_sample as probability_flow_sample,
)
from ._so3_diffusion import (
    reverse_sde_sample as reverse_sde_sample,
)

__all__ = [
    "perturb",
    "conditional_score",
    "dsm_loss",
    "brownian_motion",
    "reverse_sde_sample",
    "probability_flow_sample",
]
