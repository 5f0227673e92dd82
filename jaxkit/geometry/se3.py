"""Rigid motions SE(3) as pairs ``(R, t)``: ``x -> R x + t``."""

from ._se3 import (
    apply as apply,
)
from ._se3 import (
    compose as compose,
)
from ._se3 import (
    exp as exp,
)
from ._se3 import (
    from_matrix as from_matrix,
)
from ._se3 import (
    identity as identity,
)
from ._se3 import (
    inverse as inverse,
)
from ._se3 import (
    log as log,
)
from ._se3 import (
    to_matrix as to_matrix,
)

__all__ = [
    "identity",
    "compose",
    "inverse",
    "apply",
    "exp",
    "log",
    "to_matrix",
    "from_matrix",
]
