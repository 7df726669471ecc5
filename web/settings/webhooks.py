"""Webhooks: the account's entitlement, the signing secret's rotation and, for each provider
that brings events per workspace (as the plugin registry lists them), the rotation of the
workspace's inbound secret for it (Owner or Admin), through the functions `herald secret
rotate` and `herald secret rotate-inbound` call; an old secret stops working at once."""

from __future__ import annotations

from flask import abort, g, render_template
from flask_login import current_user

from engine.catalog.keys import rotate_signing_secret
from engine.inbound import workspace_secrets
from engine.people import audit
from web.permissions import workspace_view
from web.settings.blueprint import blueprint
from web.settings.pages import settings_page


@blueprint.get("/webhooks")
@settings_page("webhooks")
def webhooks():
    return _page()


def _page(**shown: object) -> str:
    providers = [(name, workspace_secrets.label(name)) for name in workspace_secrets.providers()]
    return render_template("settings/webhooks.html", page="Webhooks",
                           account=g.workspace.account, inbound_providers=providers, **shown)


@blueprint.get("/webhooks/rotate")
@workspace_view("admin")
def confirm_rotate():
    return render_template("settings/webhooks_rotate.html", page="Webhooks")


@blueprint.post("/webhooks/rotate")
@workspace_view("admin")
def rotate_secret():
    secret = rotate_signing_secret(g.workspace)
    audit.record(g.workspace, current_user.user, "webhook_secret.rotated")
    return _page(new_secret=secret)


def _provider(provider: str) -> str:
    """The provider's label; 404 for a name no installed plugin brings events under."""
    try:
        return workspace_secrets.label(provider)
    except LookupError:
        abort(404)


@blueprint.get("/webhooks/inbound/<provider>/rotate")
@workspace_view("admin")
def confirm_rotate_inbound(provider: str):
    return render_template("settings/webhooks_rotate_inbound.html", page="Webhooks",
                           provider=provider, label=_provider(provider))


@blueprint.post("/webhooks/inbound/<provider>/rotate")
@workspace_view("admin")
def rotate_inbound_secret(provider: str):
    """The new URL is shown in this response only (it holds the secret); the audit log
    records the rotation, never the value."""
    label = _provider(provider)
    url = workspace_secrets.rotate(g.workspace, provider, current_user.user)
    return _page(new_inbound=(provider, label, url))
