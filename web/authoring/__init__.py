"""Template authoring (docs/web.md, issue 25): the hierarchy, the editor with autosave and live
preview, versions, test sends. Thin views over engine/authoring/ and engine/catalog/versions.py.
One blueprint (blueprint.py); one module per page, each registering its routes on it."""

from __future__ import annotations

from web.authoring import (
    editor,
    lists,
    manage,
    one_message,
    partials,
    preview,
    test_sends,
    tree,
    versions,
)
from web.authoring.blueprint import blueprint

# Imported for their routes.
MODULES = (editor, lists, manage, one_message, partials, preview, test_sends, tree,
           versions)

__all__ = ["MODULES", "blueprint"]
