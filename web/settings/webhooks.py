"""Webhooks: the account's entitlement, the signing secret's rotation and the Postmark
webhook secret's (Owner or Admin), through the functions `herald secret rotate` and
`herald secret rotate-postmark` call; an old secret stops working at once."""

from __future__ import annotations

from flask import g, render_template
from flask_login import current_user

from engine.catalog.keys import rotate_signing_secret
from engine.inbound import postmark
from engine.people import audit
from web.permissions import workspace_view
from web.settings.blueprint import blueprint
from web.settings.pages import settings_page


@blueprint.get("/webhooks")
@settings_page("webhooks")
def webhooks():
    return render_template("settings/webhooks.html", page="Webhooks",
                           account=g.workspace.account)


@blueprint.get("/webhooks/rotate")
@workspace_view("admin")
def confirm_rotate():
    return render_template("settings/webhooks_rotate.html", page="Webhooks")


@blueprint.post("/webhooks/rotate")
@workspace_view("admin")
def rotate_secret():
    secret = rotate_signing_secret(g.workspace)
    audit.record(g.workspace, current_user.user, "webhook_secret.rotated")
    return render_template("settings/webhooks.html", page="Webhooks",
                           account=g.workspace.account, new_secret=secret)


@blueprint.get("/webhooks/rotate-postmark")
@workspace_view("admin")
def confirm_rotate_postmark():
    return render_template("settings/webhooks_rotate_postmark.html", page="Webhooks")


@blueprint.post("/webhooks/rotate-postmark")
@workspace_view("admin")
def rotate_postmark_secret():
    """The new URL is shown in this response only (it holds the secret); the audit log
    records the rotation, never the value."""
    url = postmark.rotate(g.workspace, current_user.user)
    return render_template("settings/webhooks.html", page="Webhooks",
                           account=g.workspace.account, new_postmark_url=url)
