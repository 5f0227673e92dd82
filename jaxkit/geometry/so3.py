"""The rotation group SO(3): hat/vee, exponential and logarithm, quaternions, Haar sampling, distances."""

from ._so3 import (
    angle as angle,
)
from ._so3 import (
    apply as apply,
)
from ._so3 import (
    check_rotation as check_rotation,
)
from ._so3 import (
    compose as compose,
)
from ._so3 import (
    exp as exp,
)
from ._so3 import (
    from_axis_angle as from_axis_angle,
)
from ._so3 import (
    from_quaternion as from_quaternion,
)
from ._so3 import (
    geodesic_distance as geodesic_distance,
)
from ._so3 import (
    hat as hat,
)
from ._so3 import (
    inverse as inverse,
)
from ._so3 import (
    is_rotation as is_rotation,
)
from ._so3 import (
    log as log,
)
from ._so3 import (
    project as project,
)
from ._so3 import (
    random_uniform as random_uniform,
)
from ._so3 import (
    rotation_from_uniforms as rotation_from_uniforms,
)
from ._so3 import (
    to_quaternion as to_quaternion,
)
from ._so3 import (
    uniform_axis as uniform_axis,
)
from ._so3 import (
    vee as vee,
)

__all__ = [
    "is_rotation",
    "check_rotation",
    "hat",
    "vee",
    "exp",
    "uniform_axis",
    "rotation_from_uniforms",
    "from_axis_angle",
    "angle",
    "log",
    "compose",
    "inverse",
    "apply",
    "geodesic_distance",
    "from_quaternion",
    "to_quaternion",
    "random_uniform",
    "project",
]
