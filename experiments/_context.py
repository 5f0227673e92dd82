"""The run context handed to each experiment: config, seed, output folder, progress bars, resumable stages."""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from jaxkit.train import atomic_write_bytes


def to_jsonable(x: Any) -> Any:
    """Convert numpy/jax scalars and arrays (nested in dicts/lists) to JSON-able Python values."""
    import numpy as np

    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [to_jsonable(v) for v in x]
    if isinstance(x, float | int | str | bool) or x is None:
        if isinstance(x, float) and not np.isfinite(x):
            return str(x)
        return x
    if hasattr(x, "shape"):
        arr = np.asarray(x)
        if arr.ndim == 0:
            return to_jsonable(arr.item())
        return to_jsonable(arr.tolist())
    return str(x)


def write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, (json.dumps(to_jsonable(obj), indent=2, sort_keys=False) + "\n").encode())


@dataclass
class RunContext:
    """What an experiment's ``run(ctx)`` receives.

    ``config`` is the preset's dict (a copy); ``out_dir`` is ``results/<name>/<preset>`` (or ``--out``);
    ``stage(key, fn)`` runs ``fn()`` once and stores its (picklable) result under ``out_dir/stages`` so that a
    ``--resume`` run skips completed stages; ``checkpoint_dir(key)`` gives a folder for ``jaxkit.train.fit``
    checkpoints of a stage in progress.
    """

    name: str
    preset: str
    config: dict[str, Any]
    seed: int
    out_dir: Path
    resume: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def stages_dir(self) -> Path:
        return self.out_dir / "stages"

    def checkpoint_dir(self, key: str) -> Path:
        return self.out_dir / "checkpoints" / _safe(key)

    def progress(self, iterable: Iterable, desc: str = "", total: int | None = None) -> Iterable:
        return tqdm(iterable, desc=f"{self.name}:{desc}" if desc else self.name, total=total, leave=False)

    def stage(self, key: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` unless a completed result for ``key`` exists and ``--resume`` was given."""
        path = self.stages_dir / f"{_safe(key)}.pkl"
        if self.resume and path.exists():
            try:
                with open(path, "rb") as f:
                    return pickle.load(f)
            except Exception as e:  # damaged stage file: recompute, say so
                print(f"[{self.name}] stage file {path} is damaged ({e}); recomputing")
        result = fn()
        atomic_write_bytes(path, pickle.dumps(result))
        return result

    def save_figure(self, fig: Any, filename: str) -> Path:
        path = self.out_dir / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp" + path.suffix)
        fig.savefig(tmp, dpi=120, bbox_inches="tight")
        os.replace(tmp, path)
        return path

    def write_summary(self, text: str) -> Path:
        path = self.out_dir / "summary.md"
        atomic_write_bytes(path, text.encode())
        return path


def _safe(key: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in key)
