"""Experiment and benchmark registries.

An experiment module (any ``experiments/<name>.py`` not starting with ``_``) calls :func:`register` at import
time; :func:`discover` imports every such module. Experiments stay thin: configuration + calls into ``jaxkit``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Anchor:
    """A published number an experiment compares itself to. ``path`` is a '/'-joined key into the metrics."""

    path: str
    value: float
    source: str


@dataclass(frozen=True)
class Experiment:
    """A runnable reproduction.

    Attributes:
        name: registry name (``python -m experiments run NAME``).
        reproduces: the paper figure/table it reproduces.
        presets: preset name -> configuration dict; must contain ``quick`` and ``paper``.
        run: ``run(ctx) -> metrics dict`` (``ctx`` is :class:`experiments._context.RunContext`).
        anchors: published numbers compared in ``report``.
        inputs: ``inputs(config)`` loads (cheaply) every input the experiment reads rather than generates
            (shipped data files, package data sets, the shipped model) and raises if one cannot be found; ``None``
            when it generates all it reads. A test runs it for every preset from a bare copy of the repository.
    """

    name: str
    reproduces: str
    presets: dict[str, dict[str, Any]]
    run: Callable[[Any], dict]
    anchors: tuple[Anchor, ...] = field(default_factory=tuple)
    description: str = ""
    inputs: Callable[[dict[str, Any]], object] | None = None


@dataclass(frozen=True)
class Bench:
    """A side-by-side benchmark: ``run(ctx) -> list of row dicts`` printed as a table with ratios."""

    name: str
    description: str
    run: Callable[[Any], list[dict]]


EXPERIMENTS: dict[str, Experiment] = {}
BENCHES: dict[str, Bench] = {}
_DISCOVERED = False


def register(exp: Experiment) -> Experiment:
    """Add an experiment to the registry (called at import time by experiment modules)."""
    for required in ("quick", "paper"):
        if required not in exp.presets:
            raise ValueError(
                f"experiment {exp.name!r}: presets must include {required!r}, has {sorted(exp.presets)}"
            )
    if exp.name in EXPERIMENTS and EXPERIMENTS[exp.name] is not exp:
        raise ValueError(f"experiment {exp.name!r} is registered twice")
    EXPERIMENTS[exp.name] = exp
    return exp


def register_bench(bench: Bench) -> Bench:
    """Add a benchmark to the registry (``python -m experiments bench NAME``)."""
    if bench.name in BENCHES and BENCHES[bench.name] is not bench:
        raise ValueError(f"bench {bench.name!r} is registered twice")
    BENCHES[bench.name] = bench
    return bench


def discover() -> None:
    """Import every experiment module in this package once."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    import experiments

    for info in pkgutil.iter_modules(experiments.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"experiments.{info.name}")
    _DISCOVERED = True
