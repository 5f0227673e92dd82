"""The published pages agree with their metrics: every headline number a run's ``summary.md`` states is the value
in its ``metrics.json`` at the stated rounding, and every time it states is one of the run's recorded times.

A page declares its headline in a comment block of its ``summary.md`` (invisible once rendered), one
``metrics.json`` path and Python format per line; a path is relative to the record's ``metrics`` unless it starts
with ``/`` (then relative to the record, e.g. ``/wall_time_s``), and a number in a path indexes a list (``rows/11/crps``); the format ``min`` means seconds shown as
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
REQUIRED = {
    "grokking",
    "sparse_parity",
    "next_token",
    "stability_sweep",
    "stability_ablation",
    "lno_suite",
    "pde_datasets",
    "saddle_to_saddle",
    "sigmadock",
    "docking_real",
    "ssm_expressivity",
    "stable_ablation",
    "stable",
    "rno_benchmarks",
}


def _pages() -> list[Path]:
    return sorted(p.parent for p in PUBLISHED.glob("*/*/summary.md") if (p.parent / "metrics.json").exists())


def _resolve(record: dict, path: str):
    node = record if path.startswith("/") else record["metrics"]
    for part in path.strip("/").split("/"):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]  # a list item by its index, e.g. rows/11/crps
            continue
        if not isinstance(node, dict) or part not in node:
            raise KeyError(f"{path!r}: no entry {part!r}")
        node = node[part]
    return node


def _render(value, spec: str) -> str:
    if spec == "min":
        return f"{value / 60:.1f} min"
    return format(value, spec)


def _times(node, key: str = "", timed: bool = False) -> list[float]:
    """Every recorded time: numbers under a key naming a time (``*_s``, ``*time*``), also nested below it
    (``cpu_s: {probes: 491.3, ...}``)."""
    timed = timed or key.endswith("_s") or "time" in key
    if isinstance(node, dict):
        return [t for k, v in node.items() for t in _times(v, k, timed)]
    if isinstance(node, list):
        return [t for v in node for t in _times(v, key, timed)]
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
    listed = {"metrics": {"rows": [{"crps": 0.81}, {"crps": 0.79}], "cpu_s": {"probes": 120.0}}}
    assert _resolve(listed, "rows/1/crps") == 0.79 and _times(listed) == [120.0]
    with pytest.raises(KeyError):
        _resolve(listed, "rows/2/crps")


PNG = b"\x89PNG\r\n\x1a\n"
FIGURE = re.compile(r"!\[[^\]]*\]\((figures/[^)\s]+\.png)\)")


def test_every_reproduction_page_shows_its_headline_figures():
    """Each Reproductions page shows at least one headline figure (ours vs published), every figure it references
    is a non-empty PNG beside the pages with a caption line after it, and no figure there is unreferenced."""
    from experiments import _report

    referenced = set()
    for system in _report.SYSTEMS:
        page = (_report.PAGES / f"{system.slug}.md").read_text()
        found = FIGURE.findall(page)
        assert found, f"docs/reproductions/{system.slug}.md shows no headline figure"
        for rel in found:
            png = _report.PAGES / rel
            assert png.is_file(), f"{system.slug}.md references {rel}, which does not exist"
            head = png.read_bytes()[:24]
            assert head.startswith(PNG), f"{rel} is not a PNG"
            width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
            assert width > 100 and height > 100, f"{rel} is {width}x{height} pixels"
            caption = page.split(f"]({rel})", 1)[1].lstrip("\n").split("\n", 1)[0]
            assert caption.startswith("_") and len(caption) > 40, f"{rel} has no caption line below it"
        referenced |= {Path(r).name for r in found}
    on_disk = {p.name for p in (_report.PAGES / "figures").glob("*.png")}
    assert on_disk == referenced, f"figures no page shows: {sorted(on_disk - referenced)}"


def test_no_internal_talk_in_the_docs():
    """The site speaks to a reader of the papers: no tracker issue numbers or internal goals."""
    internal = re.compile(r"\bissue\s*#?\d+|goals? \(issue|\bacceptance\b|\bthe lead\b", re.I)
    hits = [
        f"{p.relative_to(ROOT)}: {m.group(0)!r}"
        for p in sorted((ROOT / "docs").rglob("*.md"))
        for m in internal.finditer(p.read_text())
    ]
    assert not hits, hits
