"""Serve MathJax from the site itself: no CDN, so the maths renders offline and in a sandboxed browser.

``pymdownx.arithmatex`` (``generic: true``) turns ``$...$`` / ``$$...$$`` (pages and docstrings alike) into
``<span class="arithmatex">\\(...\\)</span>`` / ``\\[...\\]``; ``docs/javascripts/mathjax.js`` configures MathJax 3
to typeset exactly those spans, and this hook adds MathJax's ``es5`` distribution to the site under
``javascripts/mathjax/``. MathJax comes from PyPI: the ``docs`` extra installs ``django-static-mathjax``, a plain
copy of the official MathJax 3.2.2 release files (importable as ``mathjax``; it needs no Django), so
``pip install -e ".[docs]"`` is all a reader needs, with no Node.js and no network at build time.
"""

from __future__ import annotations

import logging
from pathlib import Path

SITE_DIR = "javascripts/mathjax"
ENTRY = "tex-mml-chtml.js"
# The other combined bundles are alternatives to ENTRY (SVG output, full/speech builds, node): not needed.
SKIP = (
    "tex-chtml.js",
    "tex-chtml-full.js",
    "tex-chtml-full-speech.js",
    "tex-mml-svg.js",
    "tex-svg.js",
    "tex-svg-full.js",
    "mml-chtml.js",
    "mml-svg.js",
    "node-main.js",
    "latest.js",
)

log = logging.getLogger("mkdocs.hooks.mathjax")


def mathjax_dir() -> Path:
    """The MathJax ``es5`` folder of the installed ``django-static-mathjax`` package."""
    from mkdocs.exceptions import PluginError

    try:
        import mathjax
    except ImportError as e:
        raise PluginError(
            "MathJax is missing: install the docs extra (pip install -e '.[docs]'), which "
            "brings the MathJax 3 files from PyPI (django-static-mathjax)"
        ) from e
    es5 = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (es5 / ENTRY).is_file():
        raise PluginError(f"MathJax files not found in {es5}: reinstall django-static-mathjax")
    return es5


def on_files(files, config):
    from mkdocs.structure.files import File

    es5 = mathjax_dir()
    n = 0
    for path in sorted(es5.rglob("*")):
        rel = path.relative_to(es5)
        if path.is_file() and not (len(rel.parts) == 1 and rel.name in SKIP):
            files.append(File.generated(config, f"{SITE_DIR}/{rel.as_posix()}", abs_src_path=str(path)))
            n += 1
    log.info(f"mathjax: {n} files from {es5} added to the site under {SITE_DIR}/")
    return files
