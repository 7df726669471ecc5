"""A template's default recipients (D4, docs/api.md): the union of its project's, each
container's from the outermost, and its own, per list."""

from __future__ import annotations

from typing import Any

from engine.database.models import Container, Template

LISTS = ("to", "cc", "bcc")


def inherited_defaults(template: Template) -> dict[str, list[str]]:
    """Project, then each container from the outermost, then the template, per list."""
    chain: list[dict[str, Any]] = [template.project.defaults or {}]
    folders: list[Container] = []
    folder = template.container
    while folder is not None:
        folders.append(folder)
        folder = folder.parent
    chain.extend((f.defaults or {}) for f in reversed(folders))
    chain.append(template.defaults or {})
    return {k: [v for d in chain for v in (d.get(k) or [])] for k in LISTS}
