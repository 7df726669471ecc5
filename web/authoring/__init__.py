"""Template authoring (docs/web.md, issue 25): the hierarchy, the editor with autosave and live
preview, versions, test sends. Thin views over engine/authoring/ and engine/catalog/versions.py.
One blueprint; one module per page."""

from __future__ import annotations

from flask import Blueprint

from web.core import errors

blueprint = Blueprint("authoring", __name__, template_folder="templates",
                      url_prefix="/w/<uuid:workspace_id>")
errors.register(blueprint)

# The pages register their routes on the blueprint when imported.
from web.authoring import (  # noqa: E402
    editor,  # noqa: F401
    lists,  # noqa: F401
    manage,  # noqa: F401
    preview,  # noqa: F401
    test_sends,  # noqa: F401
    tree,  # noqa: F401
    versions,  # noqa: F401
)
