"""The evaluation protocol's headline statistics: paired per-item comparisons, rates with Wilson intervals and
times to a target with censoring, thin over :mod:`scipy.stats`.

Every reproduction states its headline with these functions (the protocol is on the Reproductions index page):
paired per seed or per item (median paired effect, percentile-bootstrap CI, Wilcoxon and sign tests), every rate
with its Wilson interval, runs that never reach a target treated as censored (fraction reaching it, Kaplan–Meier,
log-rank, restricted-mean speedup), never given the run length as if they had reached it.
"""

from ._paired import paired_comparison, rate, survival, time_to_event, wilson_interval

__all__ = ["paired_comparison", "rate", "survival", "time_to_event", "wilson_interval"]
