"""The Laplace-neural-operator benchmark problems (Cao, Goswami & Karniadakis 2023, arXiv:2303.10528)."""

from ._lno import (
    beam as beam,
)
from ._lno import (
    beam_exact as beam_exact,
)
from ._lno import (
    brusselator as brusselator,
)
from ._lno import (
    diffusion as diffusion,
)
from ._lno import (
    diffusion_exact as diffusion_exact,
)
from ._lno import (
    duffing as duffing,
)
from ._lno import (
    reaction_diffusion as reaction_diffusion,
)
from ._lno import (
    reaction_diffusion_manufactured as reaction_diffusion_manufactured,
)
from ._lno import (
    reaction_diffusion_published as reaction_diffusion_published,
)

__all__ = [
    "duffing",
    "beam",
    "beam_exact",
    "diffusion",
    "diffusion_exact",
    "reaction_diffusion",
    "reaction_diffusion_manufactured",
    "reaction_diffusion_published",
    "brusselator",
]
