"""The workspace's own email provider: stored encrypted, shown back only as its host,
checked as `herald apply` checks it, and tried with one test message."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from flask import flash, g, redirect, render_template, url_for
from flask_login import current_user

from engine import runtime
from engine.people import audit, mail, users
from engine.people.errors import PeopleError
from engine.plugins.contracts import DeliveryError
from engine.plugins.manager import provider_problem, provider_scheme
from web.permissions import workspace_view
from web.settings import blueprint
from web.settings.forms import ProviderForm, ProviderTestForm, mark

MAX_URL = 2000


def shown(url: str | None) -> str | None:
    """What may be shown of a provider URL: its scheme, host and port, never credentials
    or query parameters (where HTTP providers keep their tokens)."""
    if not url:
        return None
    parts = urlsplit(url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}"


def _own() -> dict | None:
    raw = g.workspace.email_provider
    return json.loads(raw) if raw else None


def _page(form: ProviderForm | None = None, test_form: ProviderTestForm | None = None,
          answer: dict | None = None, status: int = 200):
    own = _own()
    test_form = test_form or ProviderTestForm(formdata=None)
    if not test_form.recipient.data:
        test_form.recipient.data = current_user.email
    return render_template(
        "settings/provider.html", page="Email provider", form=form or ProviderForm(formdata=None),
        test_form=test_form, current=shown(own["url"]) if own else None,
        default=shown(runtime.settings().email_provider) or "none configured",
        answer=answer), status


@blueprint.get("/email-provider")
@workspace_view("admin")
def email_provider():
    return _page()


@blueprint.post("/email-provider")
@workspace_view("admin")
def save_provider():
    form = ProviderForm()
    url = (form.provider_url.data or "").strip()
    if not url:
        mark(form.provider_url, "Enter the provider's URL, such as "
                                "smtp://user:password@smtp.example.com:587?tls=starttls.")
    elif len(url) > MAX_URL or any(c in url for c in "\r\n\t "):
        mark(form.provider_url, f"Enter one URL of at most {MAX_URL} characters, without "
                                "spaces or line breaks.")
    elif not urlsplit(url).scheme:
        mark(form.provider_url, "Start the URL with its plugin's scheme, such as smtp://.")
    elif problem := provider_problem(url, None, settings=runtime.settings()):
        mark(form.provider_url, f"This URL cannot send: {problem}.")
    if form.provider_url.errors:
        return _page(form, status=400)
    g.workspace.email_provider = json.dumps({"plugin": provider_scheme(url), "url": url})
    g.workspace.save()
    audit.record(g.workspace, current_user.user, "email_provider.changed", shown(url) or "")
    flash(f"Saved: this workspace's email goes through {shown(url)} (within 5 seconds).",
          "info")
    return redirect(url_for("settings.email_provider", workspace_id=g.workspace.id))


@blueprint.post("/email-provider/remove")
@workspace_view("admin")
def remove_provider():
    if g.workspace.email_provider:
        g.workspace.email_provider = None
        g.workspace.save()
        audit.record(g.workspace, current_user.user, "email_provider.removed")
    flash("This workspace's email goes through the service's default provider.", "info")
    return redirect(url_for("settings.email_provider", workspace_id=g.workspace.id))


@blueprint.post("/email-provider/test")
@workspace_view("admin")
def test_provider():
    test_form = ProviderTestForm()
    try:
        to = users.normalize_email(test_form.recipient.data or "", "recipient")
    except PeopleError as err:
        mark(test_form.recipient, err.message)
        return _page(test_form=test_form, status=400)
    own = _own() or {}
    text = (f"This is a test message from the Herald workspace “{g.workspace.name}”, sent by "
            f"{current_user.email} to check its email provider.\n")
    try:
        result = mail.send(to, "Herald test message", text, url=own.get("url"),
                           plugin=own.get("plugin"), workspace_id=str(g.workspace.id))
    except (DeliveryError, LookupError, ValueError) as err:
        answer = {"ok": False, "text": str(err) or type(err).__name__,
                  "status": getattr(err, "status_code", None)}
    else:
        refused = "; ".join(f"{a}: {why}" for a, why in result.rejected.items())
        answer = {"ok": not refused, "text": refused or "accepted",
                  "id": result.provider_message_id}
    audit.record(g.workspace, current_user.user, "email_provider.tested", to,
                 {"ok": answer["ok"]})
    return _page(test_form=test_form, answer=answer)
