"""Real rows for tests, built through the same engine functions the CLI uses."""

from __future__ import annotations

import uuid
from typing import Any

from engine.catalog.keys import create_key
from engine.catalog.versions import publish
from engine.database import secrets
from engine.database.models import (
    Account,
    Notification,
    Project,
    Sender,
    Template,
    TemplateVersion,
    Workspace,
)
from engine.formats.addresses import suppression_key


def account(name: str | None = None, **fields: Any) -> Account:
    values = {"plan": "business", "monthly_limit": 100000, "webhook_delivery": True, **fields}
    acct = Account.create(name=name or f"acct-{uuid.uuid4().hex[:8]}", **values)
    Sender.create(account=acct, kind="domain", value="example.com")
    return acct


def workspace(acct: Account | None = None, **fields: Any) -> Workspace:
    return Workspace.create(account=acct or account(), name=f"ws-{uuid.uuid4().hex[:8]}",
                            signing_secret=secrets.new_signing_secret(), **fields)


def template(ws: Workspace, channel: str = "email", content: dict | None = None,
             defaults: dict | None = None, publish_it: bool = True) -> Template:
    project = Project.create(workspace=ws, name=f"p-{uuid.uuid4().hex[:8]}")
    tpl = Template.create(workspace=ws, project=project, name="T", channel=channel,
                          defaults=defaults or {})
    base = {
        "email": {"subject": "Hi {{name}}", "body": "<p>Hello {{name}}</p>", "htmlHead": None,
                  "fromAddress": "hello@example.com", "fromName": "Example",
                  "emailType": "Transactional", "trackOpens": False, "trackClicks": False},
        "sms": {"body": "Code {{code}}", "fromNumber": "+15005550006"},
        "webhook": {"body": '{"id": "{{id}}"}', "contentType": "application/json"},
    }[channel]
    version = TemplateVersion.create(template=tpl, number=1, status="draft",
                                     content={**base, **(content or {})})
    if publish_it:
        publish(version)
    return tpl


def api_key(ws: Workspace, name: str = "test", **fields: Any) -> str:
    _, value = create_key(ws, name, **fields)
    return value


def email_payload(**overrides: Any) -> dict[str, Any]:
    payload = {
        "channel": "email", "emailType": "Transactional",
        "from": {"address": "hello@example.com", "name": "Example"}, "replyTo": None,
        "to": ["ada@example.net"], "cc": [], "bcc": [], "subject": "Hello Ada",
        "html": "<!DOCTYPE html><html><head></head><body><p>Hello Ada</p></body></html>",
        "text": "Hello Ada", "headers": {}, "attachments": [], "trackOpens": False,
        "trackClicks": False, "priority": None, "sensitivity": None,
        "requestReadReceipt": False, "requestDeliveryReceipt": False,
    }
    payload.update(overrides)
    if "suppressionKeys" not in overrides:  # as the API writes it (channels/email/sending.py)
        everyone = [*payload["to"], *payload["cc"], *payload["bcc"]]
        payload["suppressionKeys"] = sorted({suppression_key(a) for a in everyone})
    return payload


def notification(ws: Workspace, payload: dict[str, Any], channel: str | None = None,
                 **fields: Any) -> Notification:
    return Notification.create(
        account=ws.account_id, workspace=ws, template=None, version_number=1,
        channel=channel or payload["channel"], correlation_id=uuid.uuid4().hex,
        delivery_id=str(uuid.uuid4()), payload=payload, **fields)
