"""Webhooks: the account's entitlement and the signing secret's rotation (Owner or Admin),
through the function `herald secret rotate` calls; the old secret stops signing at once."""

from __future__ import annotations

from flask import g, render_template
from flask_login import current_user

from engine.catalog.keys import rotate_signing_secret
from engine.people import audit
from web.permissions import workspace_view
from web.settings import blueprint


@blueprint.get("/webhooks")
@workspace_view("member")
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
