"""The published pages agree with their metrics: every headline number a run's ``summary.md`` states is the value
in its ``metrics.json`` at the stated rounding, and every time it states is one of the run's recorded times.

A page declares its headline in a comment block of its ``summary.md`` (invisible once rendered), one
``metrics.json`` path and Python format per line; a path is relative to the record's ``metrics`` unless it starts
with ``/`` (then relative to the record, e.g. ``/wall_time_s``); the format ``min`` means seconds shown as
minutes with one decimal::

    <!-- headline
    steps_to_target/regularizer/speedup_pct | +.1f
    train_time/wall_s | min
    -->

Each declared value, formatted, must appear in the page's text. On a page with a headline block every
``N.N min`` in the text must also be a recorded time (any numeric field whose key names a time: ``*_s``,
``*time*``) in minutes, or half of it (the idle 2-core estimate CPU/2).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "docs" / "results"
BLOCK = re.compile(r"<!--\s*headline\s*\n(?P<body>.*?)-->", re.S)
# experiments whose published pages must declare a headline block; pages of other experiments are checked as
# soon as they declare one (add the experiment here then)
REQUIRED = {"grokking", "sparse_parity", "next_token", "stability_sweep", "stability_ablation"}


def _pages() -> list[Path]:
    return sorted(p.parent for p in PUBLISHED.glob("*/*/summary.md") if (p.parent / "metrics.json").exists())


def _resolve(record: dict, path: str):
    node = record if path.startswith("/") else record["metrics"]
    for part in path.strip("/").split("/"):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(f"{path!r}: no entry {part!r}")
        node = node[part]
    return node


def _render(value, spec: str) -> str:
    if spec == "min":
        return f"{value / 60:.1f} min"
    return format(value, spec)


def _times(node, key: str = "") -> list[float]:
    if isinstance(node, dict):
        return [t for k, v in node.items() for t in _times(v, k)]
    if isinstance(node, list):
        return [t for v in node for t in _times(v, key)]
    timed = key.endswith("_s") or "time" in key
    return [float(node)] if timed and isinstance(node, int | float) and not isinstance(node, bool) else []


def declared(summary: str) -> list[tuple[str, str]]:
    """The ``(path, format)`` lines of a summary's headline block (empty when it has none)."""
    m = BLOCK.search(summary)
    if not m:
        return []
    out = []
    for line in m.group("body").strip().splitlines():
        path, _, spec = line.rpartition("|")
        out.append((path.strip(), spec.strip()))
    return out


@pytest.mark.parametrize("folder", _pages(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_page_states_its_metrics(folder: Path):
    name = f"{folder.parent.name}/{folder.name}"
    summary = (folder / "summary.md").read_text()
    record = json.loads((folder / "metrics.json").read_text())
    keys = declared(summary)
    assert "metrics" in record, f"{name}: metrics.json has no metrics"
    if not keys:
        assert folder.parent.name not in REQUIRED, (
            f"{name}: summary.md declares no headline block (see above)"
        )
        return
    text = BLOCK.sub("", summary)
    for path, spec in keys:
        shown = _render(_resolve(record, path), spec)
        plain = shown.replace("-", "−")
        assert shown in text or plain in text, f"{name}: {path} = {shown} (metrics.json) is not in summary.md"
    times = _times(record)
    allowed = {f"{t / 60:.1f}" for t in times} | {f"{t / 120:.1f}" for t in times}
    for found in re.findall(r"(\d+\.\d) min\b", text):
        assert found in allowed, f"{name}: summary.md states {found} min, which no time in metrics.json gives"


def test_the_check_can_fail(tmp_path):
    record = {"metrics": {"a": {"b": 15.06}, "train_time": {"wall_s": 600.0}}, "wall_time_s": 60.0}
    page = "<!-- headline\na/b | +.1f\n/wall_time_s | min\n-->\nspeedup +15.1%, 1.0 min, 10.0 min; 5.0 min"
    assert declared(page) == [("a/b", "+.1f"), ("/wall_time_s", "min")]
    assert _render(_resolve(record, "a/b"), "+.1f") == "+15.1" and _render(60.0, "min") == "1.0 min"
    allowed = {f"{t / 60:.1f}" for t in _times(record)} | {f"{t / 120:.1f}" for t in _times(record)}
    assert allowed == {"10.0", "5.0", "1.0", "0.5"}
    assert "+15.2" not in page and _render(15.16, "+.1f") == "+15.2"  # a changed number would be caught
    with pytest.raises(KeyError):
        _resolve(record, "a/c")
