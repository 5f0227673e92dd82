"""Every exported callable of every ``jaxkit`` subpackage, read at run time from the ``__all__`` of its
``__init__`` (a re-exported public submodule such as ``geometry.so3`` is followed the same way), so a name added
to an ``__init__`` next month is fuzzed without a new test. ``tests/test_architecture.py`` lists the same API from
the source with ``ast``; this module lists the objects themselves.
"""

from __future__ import annotations

import importlib
import inspect
import types
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUBPACKAGES = sorted(
    p.name for p in (ROOT / "jaxkit").iterdir() if p.is_dir() and (p / "__init__.py").exists()
)


@dataclass(frozen=True)
class Export:
    name: str  # jaxkit.<sub>[.<module>].<name>
    obj: object
    kind: str  # "function" | "class" | "exception" | "constant"

    @property
    def subpackage(self) -> str:
        return self.name.split(".")[1]


def _kind(obj: object) -> str:
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    return "function" if callable(obj) else "constant"


def exports() -> list[Export]:
    out: dict[str, Export] = {}

    def visit(modname: str) -> None:
        mod = importlib.import_module(modname)
        for n in mod.__all__:
            obj = getattr(mod, n)
            if isinstance(obj, types.ModuleType):
                visit(f"{modname}.{n}")
            else:
                out.setdefault(f"{modname}.{n}", Export(f"{modname}.{n}", obj, _kind(obj)))

    for sub in SUBPACKAGES:
        visit(f"jaxkit.{sub}")
    return list(out.values())


def callables() -> list[Export]:
    """The exports a user calls: functions and classes (exception types are raised, not called, and constants are
    data; both are listed by :func:`exports`)."""
    return [e for e in exports() if e.kind in ("function", "class")]
