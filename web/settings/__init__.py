"""A workspace's settings: API keys, webhooks, suppressions, senders, members, its email
provider and the audit log. One blueprint; one module per page."""

from __future__ import annotations

from flask import Blueprint, render_template

from web.core import errors
from web.permissions import workspace_view

blueprint = Blueprint("settings", __name__, template_folder="templates",
                      url_prefix="/w/<uuid:workspace_id>/settings")
errors.register(blueprint)


@blueprint.get("/")
@workspace_view("member")
def index():
    return render_template("settings/index.html", page="Settings")


# The pages register their routes on the blueprint when imported.
from web.settings import (  # noqa: E402
    api_keys,  # noqa: F401
    audit_log,  # noqa: F401
    callbacks,  # noqa: F401
    members,  # noqa: F401
    provider,  # noqa: F401
    senders,  # noqa: F401
    suppressions,  # noqa: F401
    webhooks,  # noqa: F401
)
