"""The evaluation protocol's headline statistics: paired per-item comparisons, rates with Wilson intervals, times
to a target with censoring, and verdicts computed from a declared primary endpoint, thin over :mod:`scipy.stats`.

Every reproduction states its headline with these functions (the protocol is on the Reproductions index page):
paired per seed or per item (median paired effect, percentile-bootstrap CI, Wilcoxon and sign tests), every rate
with its Wilson interval, runs that never reach a target treated as censored (fraction reaching it, Kaplan–Meier,
log-rank, restricted-mean speedup), never given the run length as if they had reached it. A page's headline verdict
is :func:`verdict` of the endpoint its preset declared (:class:`Endpoint`, :class:`AgreementEndpoint`,
:class:`ToleranceEndpoint`) and the
run's stored per-item records; every other comparison goes through :func:`secondary` (Holm-corrected); time
series use the circular :func:`block_bootstrap`.
"""

from ._paired import paired_comparison, rate, survival, time_to_event, wilson_interval
from ._verdict import (
    AgreementEndpoint,
    Endpoint,
    ToleranceEndpoint,
    Verdict,
    block_bootstrap,
    cell_status,
    default_block_length,
    endpoint_from_dict,
    holm,
    mcnemar,
    secondary,
    tolerance_status,
    verdict,
)

__all__ = [
    "AgreementEndpoint",
    "Endpoint",
    "ToleranceEndpoint",
    "Verdict",
    "block_bootstrap",
    "cell_status",
    "default_block_length",
    "endpoint_from_dict",
    "holm",
    "mcnemar",
    "paired_comparison",
    "rate",
    "secondary",
    "survival",
    "time_to_event",
    "tolerance_status",
    "verdict",
    "wilson_interval",
]
