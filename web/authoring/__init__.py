"""Template authoring (docs/web.md, issue 25): the hierarchy, the editor with autosave and live
preview, versions, test sends. Thin views over engine/authoring/ and engine/catalog/versions.py.
One blueprint (blueprint.py); one module per page, each registering its routes on it."""

from __future__ import annotations

from web.authoring import (
    draft_sends,
    editor,
    lists,
    manage,
    one_message,
    partials,
    preview,
    tree,
    versions,
)
from web.authoring.blueprint import blueprint

# Imported for their routes.
MODULES = (draft_sends, editor, lists, manage, one_message, partials, preview, tree,
           versions)

__all__ = ["MODULES", "blueprint"]
