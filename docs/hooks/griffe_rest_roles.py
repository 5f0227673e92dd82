"""Griffe extension: reST cross-reference roles in docstrings become links (or code) in the API pages.

Some docstrings still say ``:func:`name```, ``:class:`~jaxkit.x.Y``` or ``:mod:`.noise```, which Markdown would
print literally. Each role becomes ``<autoref identifier="..." optional><code>name</code></autoref>``: a link
where the target is documented on the site (mkdocs-autorefs resolves private paths to the public page that
renders the object), plain code otherwise, never a broken link or a build warning. ``~`` shows the last part of
the path, as in Sphinx. (Maths roles are not handled here: docstrings write maths as ``$...$`` / ``$$...$$``.)
"""

from __future__ import annotations

import html
import re

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|obj|exc|const|type):`(?P<target>[^`]+)`")


def _identifier(obj: griffe.Object, target: str) -> str:
    name = target.lstrip(".")
    try:
        return obj.resolve(name.split(".")[0]) + name[len(name.split(".")[0]) :]
    except Exception:  # griffe raises NameResolutionError (or others on odd names): keep the written path
        return name


def rewrite(text: str, obj: griffe.Object) -> str:
    def sub(m: re.Match) -> str:
        target = m["target"].strip()
        if "<" in target and target.endswith(">"):  # :func:`title <path>`
            title, target = target[:-1].split("<", 1)
            title = title.strip()
        else:
            title = None
        short = target.startswith("~")
        target = target.lstrip("~")
        shown = title or (target.lstrip(".").rsplit(".", 1)[-1] if short else target.lstrip("."))
        ident = _identifier(obj, target)
        return (
            f'<autoref identifier="{html.escape(ident, quote=True)}" optional>'
            f"<code>{html.escape(shown)}</code></autoref>"
        )

    return ROLE.sub(sub, text)


class RestRoles(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.is_alias or obj.docstring is None or ":`" not in obj.docstring.value:
            return
        obj.docstring.value = rewrite(obj.docstring.value, obj)
