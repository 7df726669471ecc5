"""Test sends from the editor: the text being edited, rendered and delivered by the real
pipeline (the send's renderer and payload builder, the queue, the worker, the provider),
to one recipient, with tracking off.

A test send is a notification flagged ``is_test``: it takes no unit of the monthly
allowance and reports leave it out. The message says it is a test in a header Herald
reserves (``X-SVC-Test`` on email, ``X-Service-Test`` on a webhook), which no request can
set. A workspace may make TEST_SENDS_PER_MINUTE of them a minute.
"""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass
from typing import Any

from engine import limits, notification_store, runtime, sending
from engine.addresses import suppression_key, valid_e164, valid_email
from engine.errors import ApiError
from engine.models import Notification, Template, Workspace
from engine.queueing import enqueue_notification

from .previews import resolved
from .publishing import sender_verified, syntax_problems

TEST_SENDS_PER_MINUTE = 10
EMAIL_FLAG, WEBHOOK_FLAG = "X-SVC-Test", "X-Service-Test"
RECIPIENT_HINTS = {"email": "an email address", "sms": "a phone number in E.164 form "
                   "(+14155550100)", "webhook": "an https:// URL"}


class SendTestRefused(ValueError):
    """A test send refused before anything was queued; says why, for the author."""


@dataclass(frozen=True)
class Outcome:
    """Where a test send is: queued, sending, delivered, failed or suppressed."""

    status: str
    error: str | None
    recipient: str

    @property
    def final(self) -> bool:
        return self.status in ("delivered", "failed", "suppressed")


def _options(channel: str, recipient: str) -> dict[str, Any]:
    """The request options of a test: the recipient alone, tracking off."""
    if channel == "email":
        return {"emailOptions": {"overrideRecipients": [recipient], "trackOpens": False,
                                 "trackClicks": False}}
    if channel == "sms":
        return {"smsOptions": {"overrideRecipients": [recipient]}}
    return {"webhookOptions": {"urlOverride": recipient}}


def _check_recipient(workspace: Workspace, template: Template, recipient: str,
                     content: dict[str, Any]) -> None:
    channel = template.channel
    if channel == "email":
        if not valid_email(recipient):
            raise SendTestRefused(f"Test recipient: enter {RECIPIENT_HINTS['email']}.")
        sender = content.get("fromAddress")
        if not sender or not sender_verified(workspace, template, sender):
            raise SendTestRefused("From address: a test is sent from a verified sender; "
                                f"{sender or 'no address'} is not one (Settings, Senders).")
    elif channel == "sms":
        if not valid_e164(recipient):
            raise SendTestRefused(f"Test recipient: enter {RECIPIENT_HINTS['sms']}.")
    else:
        if not workspace.account.webhook_delivery:
            raise SendTestRefused("The account's plan does not include webhook delivery.")
        from engine.destinations import DestinationError, check_destination

        try:
            check_destination(recipient, allow_private=runtime.settings().webhook_allow_private)
        except DestinationError as err:
            raise SendTestRefused(f"Test recipient: {err}.") from None


def _take_a_slot(workspace: Workspace) -> None:
    verdict = limits.check("test-send", f"workspace:{workspace.id}", None,
                           TEST_SENDS_PER_MINUTE, 0)
    if verdict.code == limits.IP_LIMITED:
        raise SendTestRefused(f"At most {TEST_SENDS_PER_MINUTE} test sends a minute: try again "
                            f"in {verdict.retry_after} seconds.")


def _payload(resolved: sending.Resolved) -> dict[str, Any]:
    rendered, errors = sending.render_parts(resolved)
    if errors:
        found = syntax_problems(resolved.template.channel, resolved.version.content)
        raise SendTestRefused("; ".join(p.message for p in found) or "; ".join(
            f"{e['templatePart']}: {e['message']}" for e in errors))
    try:
        payload = sending._payload(resolved, rendered)  # the send's own builder
    except ApiError as err:
        details = [m for messages in (err.errors or {}).values() for m in messages]
        raise SendTestRefused("; ".join(details) or err.detail) from None
    channel = resolved.template.channel
    if channel == "email":
        payload["headers"] = {**payload["headers"], EMAIL_FLAG: "true"}
    elif channel == "webhook":
        payload["headers"] = {**payload["headers"], WEBHOOK_FLAG: "true"}
    return payload


def send_test(workspace: Workspace, template: Template, content: dict[str, Any],
              tags: dict[str, str], recipient: str, number: int | None = None) -> Notification:
    """Queue one test of ``content``; raises SendTestRefused when it cannot be sent."""
    recipient = (recipient or "").strip()
    if not recipient:
        raise SendTestRefused(f"Test recipient: enter {RECIPIENT_HINTS[template.channel]}.")
    _check_recipient(workspace, template, recipient, content)
    request = resolved(workspace, template, content, tags,
                       _options(template.channel, recipient), number)
    payload = _payload(request)
    _take_a_slot(workspace)
    notification_id = uuid.uuid4()
    notification_store.insert(
        id=notification_id, account=workspace.account_id, workspace=workspace.id,
        template=template.id, version_number=request.version.number,
        channel=template.channel,
        is_test=True, correlation_id=f"test-{notification_id.hex}",
        delivery_id=str(uuid.uuid4()), payload=payload)
    with contextlib.suppress(Exception):  # committed: the reconciler enqueues it otherwise
        enqueue_notification(str(notification_id))
    return Notification.get_by_id(notification_id)


def outcome(workspace: Workspace, template: Template, notification_id: Any) -> Outcome | None:
    """A test send of this template, or None (another workspace's is none)."""
    row = Notification.get_or_none(Notification.id == notification_id,
                                   Notification.workspace == workspace,
                                   Notification.template == template,
                                   Notification.is_test == True)  # noqa: E712
    if row is None:
        return None
    payload = row.payload or {}
    recipient = payload.get("url") or ", ".join(payload.get("to") or [])
    error = row.last_error
    if row.status == "suppressed" and not error:
        error = f"{suppression_key(recipient)} is on the suppression list"
    return Outcome(row.status, error, recipient)
