"""The built site as a reader gets it: maths typeset by MathJax, tutorial figures loaded, tables within the
content column, no reST left.

Which site: with ``JAXKIT_SITE_DIR`` set (``.ci/run`` sets it after ``mkdocs build --strict``), the full built
site; otherwise this module builds a small one once (the portfolio API page, whose docstrings carry the most
maths, the RNO tutorial, executed, with its figures, the docking reproduction page, whose summary has the widest
tables, and the glossary) with the real ``mkdocs.yml`` and hooks. The browser check opens, in headless Chromium
(Debian's ``chromium`` package, driven by Playwright), every page with maths, every tutorial and every reproduction
page: each tutorial shows at least one figure that loaded (``naturalWidth > 0``), each reproduction page its
headline figure, and no table on a tutorial or reproduction page runs past the content column (a wide table
scrolls inside it). Where Chromium is absent the browser check is skipped with a message saying so.
"""

import fcntl
import functools
import http.server
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.site  # deselected by default; .ci/run runs it on the strictly built site

ROOT = Path(__file__).resolve().parents[2]
SITE_ENV = "JAXKIT_SITE_DIR"
MINI_PAGES = (
    "api/portfolio.md",
    "tutorials/rno.md",
    "glossary.md",
    "javascripts/mathjax.js",
    "stylesheets/extra.css",
    "reproductions/se3_docking.md",
    "results/sigmadock/standard/sigmadock.png",
    "results/sigmadock/standard/sigmadock_headline.png",
    "reproductions/figures/sigmadock_standard.png",
)
MATH_PAGE, TUTORIAL_PAGE = "api/portfolio/index.html", "tutorials/rno/index.html"
WIDE_TABLE_PAGE = "reproductions/se3_docking/index.html"  # a ten-column summary table
VIEWPORT = {
    "width": 1280,
    "height": 800,
}  # a laptop screen: both sidebars shown, the narrowest content column
MATHJAX = "javascripts/mathjax/tex-mml-chtml.js"
REST = re.compile(r":math:`|\.\. math::|:(?:func|class|mod|meth|attr|data|obj|exc):`")


def _mini_config(tmp: Path) -> Path:
    docs = tmp / "docs"
    for rel in MINI_PAGES:
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "docs" / rel, docs / rel)
    (docs / "index.md").write_text("# jaxkit\n")
    cfg = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    cfg.pop("nav", None)
    cfg.update(
        docs_dir=str(docs),
        site_dir=str(tmp / "site"),
        hooks=[str(ROOT / h) for h in cfg["hooks"]],
        # links to pages left out of this small site are not errors here (the full build checks them)
        validation={"links": {"not_found": "info", "anchors": "info", "unrecognized_links": "info"}},
    )
    for plugin in cfg["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            python = plugin["mkdocstrings"]["handlers"]["python"]
            python["paths"] = [str(ROOT)]
            python["options"]["extensions"] = [str(ROOT / e) for e in python["options"]["extensions"]]
    path = tmp / "mkdocs.yml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.fixture(scope="session")
def site(tmp_path_factory, subprocess_env, python) -> Path:
    if os.environ.get(SITE_ENV):
        path = Path(os.environ[SITE_ENV])
        assert (path / "index.html").is_file(), f"{SITE_ENV}={path} holds no built site"
        return path
    # one build per test run, shared by the xdist workers (their base temp dirs share a parent for this run)
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    tmp, log = shared / "jaxkit-docs-site", shared / "jaxkit-docs-site.log"
    with open(shared / "jaxkit-docs-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not log.exists():
            tmp.mkdir(exist_ok=True)
            config = _mini_config(tmp)
            env = {**subprocess_env, "NO_MKDOCS_2_WARNING": "1", "JAXKIT_DOCS_EXECUTE": "1"}
            proc = subprocess.run(
                [python, "-m", "mkdocs", "build", "--strict", "-f", str(config)],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            log.write_text(f"{proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    rc, output = log.read_text().split("\n", 1)
    assert rc == "0", f"mkdocs build of the small site failed:\n{output}"
    return tmp / "site"


def test_no_rest_markup_and_mathjax_served(site):
    pages = sorted(site.rglob("*.html"))
    assert any(p.relative_to(site).as_posix() == MATH_PAGE for p in pages)
    with_maths = 0
    for page in pages:
        html = page.read_text()
        left = REST.findall(html)
        assert not left, f"{page.relative_to(site)}: reST markup left in the page: {sorted(set(left))}"
        if 'class="arithmatex"' in html:
            with_maths += 1
            assert MATHJAX in html and "javascripts/mathjax.js" in html, (
                f"{page}: maths but no MathJax script"
            )
    assert with_maths >= 2, "expected maths on the API page and the glossary"
    assert (site / MATHJAX).stat().st_size > 500_000
    assert any((site / "javascripts/mathjax/output/chtml/fonts/woff-v2").glob("MathJax_Main-Regular.woff"))
    html = (site / MATH_PAGE).read_text()
    assert html.count('class="arithmatex"') >= 10  # the Black–Litterman formulas, inline and display
    text = re.sub(r"<[^>]+>", "", html)
    assert "Float[Array, &#39;n n&#39;]" in text or 'Float[Array, "n n"]' in text, (
        "jaxtyping shapes not shown"
    )


def test_tutorial_page_shows_outputs_and_figure(site):
    html = (site / TUTORIAL_PAGE).read_text()
    assert "rno_burgers.png" in html and (site / "tutorials/figures/rno/rno_burgers.png").is_file()
    assert html.count("output") >= 3  # titled output blocks under the code blocks that print


def _chromium() -> str | None:
    return os.environ.get("JAXKIT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def test_pages_render_in_headless_chromium(site):
    browser_path = _chromium()
    if browser_path is None:
        pytest.skip(
            "chromium not installed: the real-browser check of the docs needs Debian's chromium "
            "(apt-get install -y chromium; .ci/run installs it) or JAXKIT_CHROMIUM=/path/to/chrome"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright not installed: pip install -e '.[docs]'")

    # every page with maths (MathJax typesets all of it, without TeX errors) and every tutorial page with figures
    html = {p.relative_to(site).as_posix(): p.read_text() for p in sorted(site.rglob("*.html"))}
    math_pages = [rel for rel, text in html.items() if 'class="arithmatex"' in text]
    tutorial_pages = [rel for rel in html if re.fullmatch(r"tutorials/[^/]+/index\.html", rel)]
    reader_pages = tutorial_pages + [rel for rel in html if rel.startswith("reproductions/")]
    assert MATH_PAGE in math_pages and TUTORIAL_PAGE in tutorial_pages and WIDE_TABLE_PAGE in reader_pages
    if os.environ.get(SITE_ENV):  # the full site: every tutorial of docs/tutorials is checked
        expected = {f"tutorials/{p.stem}/index.html" for p in (ROOT / "docs/tutorials").glob("*.md")}
        assert expected - {"tutorials/index/index.html"} <= set(tutorial_pages)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=browser_path,
                args=[
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                ],
            )
            page = browser.new_page(viewport=VIEWPORT)
            failed = []
            # the browser's own favicon fetch is canceled (net::ERR_ABORTED) when the next page is opened before
            # it returns: navigation, not a missing file (the theme ships the favicon); anything else fails
            page.on(
                "requestfailed",
                lambda r: (
                    None
                    if (r.url.endswith("/favicon.png") and "ERR_ABORTED" in (r.failure or ""))
                    else failed.append((r.url, r.failure))
                ),
            )
            maths = {}
            for rel in math_pages:
                page.goto(base + rel.removesuffix("index.html"), wait_until="networkidle")
                page.wait_for_function(
                    "window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30_000
                )
                page.evaluate("MathJax.startup.promise")
                maths[rel] = page.evaluate("""[
                    document.querySelectorAll('.arithmatex').length,
                    document.querySelectorAll('.arithmatex mjx-container').length,
                    [...document.querySelectorAll('mjx-merror')].map(e => e.closest('.arithmatex').textContent),
                    [...document.querySelectorAll('.arithmatex')].filter(e => !e.querySelector('mjx-container'))
                        .map(e => e.textContent).slice(0, 3)]""")
            images, tables = {}, {}
            for rel in reader_pages:
                page.goto(base + rel.removesuffix("index.html"), wait_until="networkidle")
                images[rel] = page.evaluate(
                    "[...document.querySelectorAll('article img')]"
                    ".map(i => [i.getAttribute('src'), i.complete, i.naturalWidth])"
                )
                tables[rel] = page.evaluate(TABLES_JS)
            browser.close()
    finally:
        server.shutdown()
    for rel, (spans, typeset, errors, raw) in maths.items():
        assert spans > 0 and typeset >= spans, f"{rel}: {typeset} of {spans} maths spans typeset; raw: {raw}"
        assert not errors, f"{rel}: MathJax reports TeX errors in: {errors[:5]}"
    assert maths[MATH_PAGE][0] >= 10
    for rel, imgs in images.items():
        broken = [src for src, complete, width in imgs if not (complete and width > 0)]
        assert not broken, f"{rel}: images that did not load: {broken}"
    for rel in tutorial_pages:
        if rel != "tutorials/index.html":
            assert any(complete and width > 0 for _, complete, width in images[rel]), (
                f"{rel}: no figure shown"
            )
    for rel in reader_pages:  # every reproduction page shows its headline figure (ours vs published)
        if rel.startswith("reproductions/") and rel != "reproductions/index.html":
            shown = [src for src, complete, width in images[rel] if "figures/" in (src or "") and width > 0]
            assert shown, f"{rel}: no headline figure shown"
    # the check can fail: the docking summary has tables that fill the column (wider ones without the docs' CSS)
    widest = max(t["fill"] for t in tables[WIDE_TABLE_PAGE])
    assert widest > 0.9, (
        f"{WIDE_TABLE_PAGE}: widest table fills {widest:.0%} of the column: nothing wide measured"
    )
    for rel, found in tables.items():
        out = [t for t in found if t["overflow_px"] > 1]
        assert not out, f"{rel}: tables running past the content column: {out[:3]}"
    assert not failed, f"requests that failed: {failed[:5]}"


# For every table of the article: the box a reader sees it in (the table, or the scroll container around it),
# measured against the content column (.md-content, between the sidebars). A table wider than its box must scroll
# (overflow-x auto/scroll); one clipped by a box that does not scroll counts as running past the column.
TABLES_JS = """() => {
    const column = document.querySelector('.md-content').getBoundingClientRect();
    const article = document.querySelector('article');
    return [...article.querySelectorAll('table')].map(table => {
        let el = table, scroller = null;
        while (el && el !== article) {
            const overflow = getComputedStyle(el).overflowX;
            if (overflow === 'auto' || overflow === 'scroll') { scroller = el; break; }
            el = el.parentElement;
        }
        const box = (scroller || table).getBoundingClientRect();
        const wide = table.scrollWidth > table.clientWidth + 1 || (scroller && scroller.scrollWidth > scroller.clientWidth + 1);
        const clipped = !scroller && wide;
        return {
            head: (table.querySelector('tr') || table).textContent.trim().slice(0, 60),
            overflow_px: Math.max(box.right - column.right, column.left - box.left, clipped ? table.scrollWidth - table.clientWidth : 0),
            scrolls: Boolean(scroller && wide),
            fill: Math.max(box.width, table.scrollWidth) / column.width,
        };
    });
}"""
