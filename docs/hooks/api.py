"""API pages list the PUBLIC names (what each subpackage's ``__init__`` re-exports), grouped by topic.

In ``docs/api/<pkg>.md`` a topic section is written as an mkdocstrings directive with one extra option::

    ## Gaussian random fields

    ::: jaxkit.pde
        options:
          members_from: _grf

Before mkdocstrings renders the page, this hook replaces it with the docstring of the private module
``jaxkit.pde._grf`` (which carries the section's maths; no heading, no private path shown) followed by one
``::: jaxkit.pde.<name>`` per public name that ``jaxkit.pde`` re-exports from ``_grf``, in source order. So the
page shows ``jaxkit.pde.grf_periodic`` (how a user imports it), new public names appear by themselves, and a
public name that no section covers is reported as a build warning (``mkdocs build --strict`` fails), naming
the page and the module to add. Names are read statically with griffe, as mkdocstrings reads them.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DIRECTIVE = re.compile(r"^::: *(?P<ident>[\w.]+)[ \t]*\n(?P<body>(?:(?:[ \t]+[^\n]*)?\n)*?)(?=\S|\Z)", re.M)

log = logging.getLogger("mkdocs.hooks.api")
_package_cache: dict[str, object] = {}


def _load(package: str):
    import griffe

    top = package.split(".")[0]
    if top not in _package_cache:
        _package_cache[top] = griffe.load(
            top, search_paths=[str(ROOT)], resolve_aliases=True, resolve_external=False
        )
    return _package_cache[top] if package == top else _package_cache[top][package[len(top) + 1 :]]


def public_members(package: str) -> list[tuple[str, str, int, str]]:
    """``(name, defining module, line, target path)`` for every name in ``package.__all__``.

    A public submodule (``jaxkit.pde.burgers``) is its own defining module and target (line 0).
    """
    pkg = _load(package)
    out = []
    for export in pkg.exports or []:
        name = str(export)
        member = pkg.members[name]
        if member.is_module and not member.is_alias:
            out.append((name, member.path, 0, member.path))
            continue
        target = member.final_target if member.is_alias else member
        where = target.parent.path if target.parent is not None else pkg.path
        out.append((name, where, target.lineno or 0, target.path))
    return out


def public_names(package: str) -> dict[str, list[str]]:
    """``{defining module relative to package (e.g. "_grf", "burgers"): [public names, in source order]}``."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for name, where, line, _ in public_members(package):
        rel = where[len(package) + 1 :] if where.startswith(package + ".") else where
        groups.setdefault(rel, []).append((line, name))
    return {k: [n for _, n in sorted(v)] for k, v in groups.items()}


def _directive(ident: str, options: dict) -> str:
    if not options:
        return f"::: {ident}\n"
    body = yaml.safe_dump({"options": options}, sort_keys=False, default_flow_style=False)
    return f"::: {ident}\n" + "".join(f"    {line}\n" for line in body.splitlines())


_DOCSTRING_ONLY = {"members": False, "show_root_heading": False, "show_root_toc_entry": False}


def expand(markdown: str, page_package: str | None = None) -> tuple[str, list[str]]:
    """Expand ``members_from`` directives; return the new markdown and the public names left undocumented.

    A public name counts as documented when the object it names is rendered on the page under any public path
    (``jaxkit.pde.grf_periodic`` is covered by ``jaxkit.pde.grf.grf_periodic``), or by a plain directive.
    """
    rendered: set[str] = set()  # target paths rendered on the page
    plain: set[str] = set()  # identifiers of plain ``::: x`` directives

    def sub(m: re.Match) -> str:
        ident, body = m["ident"], m["body"]
        config = yaml.safe_load(body) if body.strip() else None
        options = dict((config or {}).get("options") or {})
        source = options.pop("members_from", None)
        if source is None:
            plain.add(ident)
            return m.group(0)
        members = {name: (where, line, target) for name, where, line, target in public_members(ident)}
        names = public_names(ident).get(source, [])
        if not names:
            log.warning(f"api: `{ident}` re-exports nothing from `{source}` (members_from: {source})")
        if names == [source] and not source.startswith("_"):
            # a public namespace module (jaxkit.pde.burgers): the docstring of the private module that implements
            # it, then its members under their public paths (jaxkit.pde.burgers.solve)
            rendered.add(members[source][2])
            inner = sorted(public_members(f"{ident}.{source}"), key=lambda m: (m[1], m[2]))
            impl = dict.fromkeys(
                where for _, where, _, _ in inner if where.rsplit(".", 1)[-1].startswith("_")
            )
            out = [_directive(where, _DOCSTRING_ONLY) for where in impl]
            out += [_directive(f"{ident}.{source}.{name}", options) for name, _, _, _ in inner]
            rendered.update(target for _, _, _, target in inner)
        else:
            out = [_directive(f"{ident}.{source}", _DOCSTRING_ONLY)] if source.startswith("_") else []
            out += [_directive(f"{ident}.{name}", options) for name in names]
            rendered.update(members[name][2] for name in names)
        return "\n".join(out) + "\n"

    new = DIRECTIVE.sub(sub, markdown)
    missing: list[str] = []
    if page_package:
        for name, where, _, target in public_members(page_package):
            if target not in rendered and f"{page_package}.{name}" not in plain:
                missing.append(f"{name} (from {where})")
    return new, missing


def on_page_markdown(markdown, page, config, files):
    uri = page.file.src_uri
    if not uri.startswith("api/") or "::: " not in markdown:
        return markdown
    stem = Path(uri).stem
    package = f"jaxkit.{stem}" if (ROOT / "jaxkit" / stem / "__init__.py").is_file() else None
    new, missing = expand(markdown, package)
    if missing:
        log.warning(
            f"api: docs/{uri} does not document these public names of {package}: {', '.join(missing)}; "
            f"add a section `::: {package}` with `members_from: <module>`"
        )
    return new
