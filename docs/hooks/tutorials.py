"""Execute the tutorials (and the API pages' examples) at build time; show what they print and the figures
they save.

Every ```` ```python ```` block of a tutorial page (``docs/tutorials/*.md`` except ``index.md``) runs, top to
bottom, in ONE fresh Python interpreter per page, in an empty working directory; a tutorial that raises, draws
no figure, or saves a figure that is not captured fails the build. ``tests/docs/test_tutorials.py`` runs the same
function (:func:`run_tutorial`) with the same checks under the ``tutorials`` marker, which the default test run
leaves to the docs build (``pytest -m tutorials`` runs them without building the site). The short examples of the API pages (``docs/api/*.md``) run the same way, here only (the test
suite checks the API pages' structure, not their examples, to stay within its time budget). Under each block
the page then shows

- what the block printed (``stdout``), in a fenced block titled "output";
- every image file (``.png``, ``.svg``, ``.jpg``, ``.gif``) the block wrote or rewrote in the working directory,
  e.g. ``fig.savefig("rno_burgers.png")``; the files are added to the site under ``tutorials/figures/<page>/``
  (``api/figures/<page>/`` for API pages).

A tutorial that raises fails the build with its traceback (file and line numbers point into the ``.md`` page).
Pages run concurrently, ``JAXKIT_DOCS_JOBS`` at a time (default: 2, or the CPU count if smaller).
``JAXKIT_DOCS_EXECUTE=0`` skips execution (for a quick ``mkdocs serve`` preview); the pages then say so.

Used as an mkdocs hook (``hooks:`` in ``mkdocs.yml``) and as a module (``run_tutorial``); standalone:
``python docs/hooks/tutorials.py docs/tutorials/rno.md`` prints each block's output and figures.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
IMAGE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg", ".gif")
FIGURE_DIR = "figures"  # tutorials/figures/<page>/<file> in the site
MAX_OUTPUT_LINES = 200
TIMEOUT_S = 1200

log = logging.getLogger("mkdocs.hooks.tutorials")

# Runs in the fresh interpreter. argv: spec.json results.json. The blocks run in a real ``__main__`` module (as
# ``python script.py`` would), compiled with the page's path and line numbers so tracebacks point into the page.
_DRIVER = r"""
import contextlib, io, json, os, sys, traceback, types
spec_path, out_path = sys.argv[1], sys.argv[2]
with open(spec_path) as fh:
    spec = json.load(fh)
suffixes = tuple(spec["image_suffixes"])

def images():
    return {e.name: (e.stat().st_mtime_ns, e.stat().st_size) for e in os.scandir(".")
            if e.is_file() and e.name.lower().endswith(suffixes)}

class Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams
    def write(self, s):
        for st in self.streams:
            st.write(s)
        return len(s)
    def flush(self):
        for st in self.streams:
            st.flush()

main = types.ModuleType("__main__")
main.__file__ = spec["path"]
sys.modules["__main__"] = main
sys.argv = [spec["path"]]
results, seen = [], images()
for block in spec["blocks"]:
    buf = io.StringIO()
    code = compile("\n" * (block["line"] - 1) + block["code"], block.get("path") or spec["path"], "exec")
    failed = None
    with contextlib.redirect_stdout(Tee(buf, sys.__stdout__)):
        try:
            exec(code, main.__dict__)
        except BaseException:
            failed = traceback.format_exc()
    if failed:
        sys.stderr.write(failed)
    now = images()
    new = sorted((k for k in now if seen.get(k) != now[k]), key=lambda k: (now[k][0], k))
    seen = now
    results.append({"stdout": buf.getvalue(), "images": new, "error": bool(failed)})
    with open(out_path, "w") as fh:
        json.dump(results, fh)
    if failed:
        sys.exit(1)
"""


@dataclasses.dataclass
class Block:
    line: int  # 1-based line of the first code line in the page
    code: str
    path: str = ""  # the page (when several pages run in one interpreter)


@dataclasses.dataclass
class BlockOutput:
    stdout: str
    images: dict[str, bytes]  # file name -> content, in the order written


@dataclasses.dataclass
class TutorialRun:
    path: Path
    blocks: list[BlockOutput]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def failure(self, tail: int = 6000) -> str:
        return (
            f"{self.path.name} failed (exit {self.returncode}) after {len(self.blocks)} block(s):\n"
            f"{self.stdout[-3000:]}\n{self.stderr[-tail:]}"
        )


SAVEFIG = re.compile(r"savefig\(\s*[\"']([^\"']+)[\"']")


def figure_problems(path: Path, run: TutorialRun) -> list[str]:
    """What is wrong with a tutorial's figures: every tutorial draws at least one, and every file its code
    passes to ``savefig("...")`` is captured for the page."""
    saved = set(SAVEFIG.findall(path.read_text()))
    captured = [name for b in run.blocks for name in b.images]
    problems = []
    if not captured:
        problems.append(f"{path.name} draws no figure (every tutorial shows its system's key figure)")
    if not saved <= set(captured):
        problems.append(f"{path.name}: saved {sorted(saved)}, captured for the page {captured}")
    return problems


def extract_blocks(markdown: str) -> list[Block]:
    """The page's ```python blocks, in order, with the line where each one's code starts."""
    return [Block(markdown.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in BLOCK.finditer(markdown)]


def run_tutorial(
    path: Path | list[Path],
    workdir: Path,
    *,
    env: dict | None = None,
    python: str | None = None,
    timeout: float = TIMEOUT_S,
) -> TutorialRun:
    """Run all python blocks of ``path`` in one fresh interpreter with ``workdir`` as working directory.

    ``path`` may be a list of pages: their blocks then run one after the other in the same interpreter (how the
    tests check the short examples of the API pages in one process).
    """
    paths = [Path(p).resolve() for p in (path if isinstance(path, list | tuple) else [path])]
    path = paths[0]
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    blocks = [dataclasses.replace(b, path=str(p)) for p in paths for b in extract_blocks(p.read_text())]
    with tempfile.TemporaryDirectory(prefix="jaxkit-tutorial-") as tmp:
        spec, out = Path(tmp) / "spec.json", Path(tmp) / "results.json"
        spec.write_text(
            json.dumps(
                {
                    "path": str(path),
                    "image_suffixes": IMAGE_SUFFIXES,
                    "blocks": [dataclasses.asdict(b) for b in blocks],
                }
            )
        )
        if env is None:
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
            env.setdefault("MPLBACKEND", "Agg")
        env = {**env, "PYTHONUNBUFFERED": "1"}
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(
                [python or sys.executable, "-c", _DRIVER, str(spec), str(out)],
                cwd=workdir,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as e:
            rc, stdout, stderr = -9, str(e.stdout or ""), f"timed out after {timeout} s\n{e.stderr or ''}"
        seconds = time.perf_counter() - t0
        raw = json.loads(out.read_text()) if out.exists() else []
    outputs = [
        BlockOutput(r["stdout"], {name: (workdir / name).read_bytes() for name in r["images"]}) for r in raw
    ]
    if rc == 0 and len(outputs) != len(blocks):
        rc, stderr = 1, stderr + f"\nexpected outputs of {len(blocks)} blocks, got {len(outputs)}"
    return TutorialRun(path, outputs, rc, stdout, stderr, seconds)


def render_output(out: BlockOutput, figure_prefix: str) -> str:
    """Markdown shown under a block: its output (fenced, titled) and its figures."""
    parts = []
    text = out.stdout.rstrip()
    if text:
        lines = text.splitlines()
        if len(lines) > MAX_OUTPUT_LINES:
            cut = len(lines) - MAX_OUTPUT_LINES
            lines = lines[:MAX_OUTPUT_LINES] + [f"... ({cut} more lines)"]
        text = "\n".join(lines)
        fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", text)), default=0))
        parts.append(f'{fence}text title="output"\n{text}\n{fence}')
    for name in out.images:
        parts.append(f"![{name}]({figure_prefix}/{name})")
    return "\n\n".join(parts)


def annotate(markdown: str, run: TutorialRun, figure_prefix: str) -> str:
    """Insert each block's output after the block's closing fence."""
    matches = list(BLOCK.finditer(markdown))
    if len(matches) != len(run.blocks):
        raise ValueError(
            f"{run.path.name}: {len(matches)} python blocks on the page, {len(run.blocks)} executed"
        )
    pieces, last = [], 0
    for m, out in zip(matches, run.blocks):
        pieces.append(markdown[last : m.end()])
        rendered = render_output(out, figure_prefix)
        if rendered:
            pieces.append("\n\n" + rendered + "\n")
        last = m.end()
    pieces.append(markdown[last:])
    return "".join(pieces)


# ---------------------------------------------------------------------------------------------- mkdocs hook
_runs: dict[str, TutorialRun] = {}
_execute = True


EXECUTED = ("tutorials", "api")  # docs/<folder>/*.md pages whose python blocks run at build time


def _is_executed(src_uri: str) -> bool:
    parts = src_uri.split("/")
    return len(parts) == 2 and parts[0] in EXECUTED and parts[1].endswith(".md") and parts[1] != "index.md"


def _figure_prefix(src_uri: str) -> str:
    """Where a page's figures go, relative to the page's folder."""
    return f"{FIGURE_DIR}/{Path(src_uri).stem}"


def on_config(config):
    global _execute
    _execute = os.environ.get("JAXKIT_DOCS_EXECUTE", "1").strip().lower() not in ("0", "false", "no", "off")
    return config


def on_files(files, config):
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File

    _runs.clear()
    pages = [f for f in files if _is_executed(f.src_uri) and BLOCK.search(Path(f.abs_src_path).read_text())]
    if not _execute or not pages:
        if pages:
            log.info("tutorials: not executed (JAXKIT_DOCS_EXECUTE=0)")
        return files
    jobs = max(1, int(os.environ.get("JAXKIT_DOCS_JOBS", min(2, os.cpu_count() or 1))))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jaxkit-tutorials-") as tmp:
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            futures = {
                f.src_uri: pool.submit(
                    run_tutorial, Path(f.abs_src_path), Path(tmp) / f.src_uri.replace("/", "_")
                )
                for f in sorted(pages, key=lambda f: not f.src_uri.startswith("tutorials/"))
            }
            runs = {uri: fut.result() for uri, fut in futures.items()}
    failed = [r for r in runs.values() if not r.ok]
    if failed:
        raise PluginError("tutorial execution failed:\n" + "\n".join(r.failure() for r in failed))
    figures = [
        p for uri, r in runs.items() if uri.startswith("tutorials/") for p in figure_problems(r.path, r)
    ]
    if figures:
        raise PluginError("tutorial figures:\n" + "\n".join(figures))
    for uri, run in runs.items():
        folder = uri.split("/")[0]
        log.info(
            f"tutorials: {uri} executed in {run.seconds:.1f} s "
            f"({sum(len(b.images) for b in run.blocks)} figure(s))"
        )
        for out in run.blocks:
            for name, content in out.images.items():
                files.append(
                    File.generated(config, f"{folder}/{_figure_prefix(uri)}/{name}", content=content)
                )
        _runs[uri] = run
    log.info(f"tutorials: {len(runs)} pages executed in {time.perf_counter() - t0:.1f} s with {jobs} job(s)")
    return files


def on_page_markdown(markdown, page, config, files):
    uri = page.file.src_uri
    if not _is_executed(uri):
        return markdown
    if uri not in _runs:
        if not uri.startswith("tutorials/"):
            return markdown
        return (
            '!!! note "Outputs not shown"\n    This build did not execute the tutorials '
            "(`JAXKIT_DOCS_EXECUTE=0`); a normal `mkdocs build` shows every output and figure.\n\n" + markdown
        )
    return annotate(markdown, _runs[uri], _figure_prefix(uri))


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            result = run_tutorial(Path(arg), Path(tmp))
            for i, b in enumerate(result.blocks, 1):
                print(f"--- block {i}: {len(b.stdout.splitlines())} lines, figures {list(b.images)}")
                print(b.stdout, end="")
            print(f"=== {arg}: exit {result.returncode} in {result.seconds:.1f} s")
            if not result.ok:
                print(result.stderr[-6000:], file=sys.stderr)
