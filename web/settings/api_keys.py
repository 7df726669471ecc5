"""API keys: create (the value shown once), list with status, revoke after confirmation.

Through engine/catalog/keys.py, as `herald keys create|revoke`: a key made here works on the API at
once, and a revocation reaches every API process within the key cache's 5 seconds.
"""

from __future__ import annotations

import datetime as dt

from flask import abort, flash, g, redirect, render_template, url_for
from flask_login import current_user

from engine.catalog.keys import KeyLifecycleError, create_key, key_in, keys_of, revoke_key
from engine.database.models import ApiKey, utcnow
from engine.people import audit
from web.permissions import workspace_view
from web.settings.blueprint import blueprint
from web.settings.forms import ApiKeyForm, mark
from web.settings.pages import settings_page


def _page(form: ApiKeyForm, new_key: str | None = None, status: int = 200):
    keys = keys_of(g.workspace)
    return render_template("settings/api_keys.html", page="API keys", form=form, keys=keys,
                           new_key=new_key, now=utcnow()), status


@blueprint.get("/api-keys")
@settings_page("api_keys")
def api_keys():
    return _page(ApiKeyForm())


def _expiry(form: ApiKeyForm) -> dt.datetime | None:
    """A key expiring "after" a day works through that day (UTC) and stops at midnight."""
    if form.expires_on.data is None:
        return None
    expires = dt.datetime.combine(form.expires_on.data + dt.timedelta(days=1), dt.time())
    if expires <= utcnow():
        mark(form.expires_on, "Choose today or a later day.")
    return expires


@blueprint.post("/api-keys")
@workspace_view("admin")
def create_api_key():
    # `herald keys create` and `apply` share this rule (imported here: apply is heavy to load).
    from engine.provisioning import valid_name

    form = ApiKeyForm()
    form.validate()
    name = (form.name.data or "").strip()
    if not valid_name(name):
        mark(form.name, "Enter a name of at most 200 characters." if name else
             "Enter a name for the key.")
    expires = _expiry(form) if not form.expires_on.errors else None
    if form.name.errors or form.expires_on.errors:
        return _page(form, status=400)
    try:
        key, value = create_key(g.workspace, name, expires)
    except KeyLifecycleError:
        mark(form.name, f"A key named “{name}” already exists: choose another name.")
        return _page(form, status=400)
    audit.record(g.workspace, current_user.user, "api_key.created", name,
                 {"keyId": str(key.id), "expiresAt": expires.isoformat() if expires else None})
    return _page(ApiKeyForm(formdata=None), new_key=value)


def _key(key_id: str) -> ApiKey:
    """A key of this workspace; another workspace's key is as absent as an unknown one."""
    key = key_in(g.workspace, key_id)
    if key is None:
        abort(404)
    return key


@blueprint.get("/api-keys/<uuid:key_id>/revoke")
@workspace_view("admin")
def confirm_revoke(key_id):
    return render_template("settings/api_key_revoke.html", page="API keys", key=_key(key_id))


@blueprint.post("/api-keys/<uuid:key_id>/revoke")
@workspace_view("admin")
def revoke_api_key(key_id):
    key = _key(key_id)
    if key.revoked_at is None:
        revoke_key(key)
        audit.record(g.workspace, current_user.user, "api_key.revoked", key.name,
                     {"keyId": str(key.id)})
    flash(f"The key “{key.name}” is revoked. The API refuses it from now on.", "info")
    return redirect(url_for("settings.api_keys", workspace_id=g.workspace.id))
