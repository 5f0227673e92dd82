"""The isotropic Gaussian on SO(3), IGSO(3)(sigma): density, CDF, sampling and score, for sigma in [1e-3, 5]."""

from ._igso3 import (
    K_IMAGES as K_IMAGES,
)
from ._igso3 import (
    K_IMAGES_CDF as K_IMAGES_CDF,
)
from ._igso3 import (
    L_SERIES as L_SERIES,
)
from ._igso3 import (
    N_OMEGA as N_OMEGA,
)
from ._igso3 import (
    N_QUANTILE as N_QUANTILE,
)
from ._igso3 import (
    N_SIGMA as N_SIGMA,
)
from ._igso3 import (
    OMEGA_SPAN as OMEGA_SPAN,
)
from ._igso3 import (
    SIGMA_MAX as SIGMA_MAX,
)
from ._igso3 import (
    SIGMA_MIN as SIGMA_MIN,
)
from ._igso3 import (
    SIGMA_SWITCH as SIGMA_SWITCH,
)
from ._igso3 import (
    angle_density as angle_density,
)
from ._igso3 import (
    angle_log_density as angle_log_density,
)
from ._igso3 import (
    cdf as cdf,
)
from ._igso3 import (
    cdf_reference as cdf_reference,
)
from ._igso3 import (
    check_sigma as check_sigma,
)
from ._igso3 import (
    dlog_density as dlog_density,
)
from ._igso3 import (
    log_density as log_density,
)
from ._igso3 import (
    sample as sample,
)
from ._igso3 import (
    sample_angle as sample_angle,
)
from ._igso3 import (
    sample_vector as sample_vector,
)
from ._igso3 import (
    score as score,
)
from ._igso3 import (
    score_coef as score_coef,
)
from ._igso3 import (
    score_norm as score_norm,
)
from ._igso3 import (
    score_vector as score_vector,
)
from ._igso3 import (
    tables as tables,
)

__all__ = [
    "SIGMA_MIN",
    "SIGMA_MAX",
    "SIGMA_SWITCH",
    "L_SERIES",
    "K_IMAGES",
    "K_IMAGES_CDF",
    "N_SIGMA",
    "N_OMEGA",
    "OMEGA_SPAN",
    "check_sigma",
    "log_density",
    "angle_log_density",
    "angle_density",
    "dlog_density",
    "score_coef",
    "score_vector",
    "score",
    "cdf_reference",
    "tables",
    "N_QUANTILE",
    "cdf",
    "score_norm",
    "sample_angle",
    "sample_vector",
    "sample",
]
