"""Test sends from the editor: the text being edited, rendered and delivered by the real
pipeline (the send's renderer and payload builder, the queue, the worker, the provider),
to one recipient, with tracking off.

A test send is a notification flagged ``is_test``: it takes no unit of the monthly
allowance and reports leave it out. The message says it is a test where its channel can
(``mark_test``: a header Herald reserves, ``X-SVC-Test`` on email, ``X-Service-Test`` on a
webhook, which no request can set). What a test asks for and sends with is the channel's
declaration (engine/plugins/channel_contract.py). A workspace may make
TEST_SENDS_PER_MINUTE of them a minute.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from engine.database.models import Notification, Template, Workspace
from engine.database.vocabulary import NotificationStatus
from engine.errors import ApiError
from engine.formats.addresses import suppression_key, typed_phone
from engine.plugins.channel_contract import Channel
from engine.plugins.manager import default_registry
from engine.sending import limits
from engine.sending.accepting import accept
from engine.sending.payload import payload, render_parts
from engine.sending.resolution import Resolved

from .previews import resolved
from .publishing import syntax_problems

TEST_SENDS_PER_MINUTE = 10


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
        return self.status not in (NotificationStatus.QUEUED, NotificationStatus.SENDING)


def _options(channel: Channel, recipient: str) -> dict[str, Any]:
    """The request options of a test, as its channel declares them: the recipient alone,
    tracking off."""
    field = channel.options_field
    return {field: channel.test_options(recipient)} if field else {}


def _check_recipient(channel: Channel, recipient: str) -> None:
    """The recipient's form; everything else (a verified sender, the plan's webhooks, the
    destination's rules) is the channel's to refuse, as at send."""
    if not channel.valid_recipient(recipient):
        raise SendTestRefused(f"Test recipient: enter {channel.recipient_hint}.")


def _refusal(err: ApiError) -> SendTestRefused:
    """The API's refusal in the editor's words: a destination is the test's recipient."""
    details = [f"{path}: {m}" for path, messages in (err.errors or {}).items()
               for m in messages]
    text = "; ".join(details) or err.detail
    if (err.error_code or "").startswith("notifications.webhook_destination"):
        text = f"Test recipient: {text}"
    return SendTestRefused(text)


def _take_a_slot(workspace: Workspace) -> None:
    verdict = limits.check("test-send", f"workspace:{workspace.id}", None,
                           TEST_SENDS_PER_MINUTE, 0)
    if verdict.code == limits.IP_LIMITED:
        raise SendTestRefused(f"At most {TEST_SENDS_PER_MINUTE} test sends a minute: try again "
                            f"in {verdict.retry_after} seconds.")


def _payload(request: Resolved) -> dict[str, Any]:
    rendered, errors = render_parts(request)
    if errors:
        found = syntax_problems(request.template.channel, request.version.content)
        raise SendTestRefused("; ".join(p.message for p in found) or "; ".join(
            f"{e['templatePart']}: {e['message']}" for e in errors))
    try:
        built = payload(request, rendered)  # the send's own builder
    except ApiError as err:
        raise _refusal(err) from None
    return request.channel.mark_test(built)


def send_test(workspace: Workspace, template: Template, content: dict[str, Any],
              tags: dict[str, str], recipient: str, number: int | None = None) -> Notification:
    """Queue one test of ``content``; raises SendTestRefused when it cannot be sent."""
    channel = default_registry().channel(template.channel)
    recipient = (recipient or "").strip()
    if channel.recipient_kind == "phone":  # typed with spaces, as a list's column may be
        recipient = typed_phone(recipient)
    if not recipient:
        raise SendTestRefused(f"Test recipient: enter {channel.recipient_hint}.")
    _check_recipient(channel, recipient)
    try:
        request = resolved(workspace, template, content, tags,
                           _options(channel, recipient), number=number, admit=True)
    except ApiError as err:  # the channel's rules at send (D1): the same words
        raise _refusal(err) from None
    built = _payload(request)
    _take_a_slot(workspace)
    notification_id = uuid.uuid4()
    accept(request, built, f"test-{notification_id.hex}", is_test=True,
           notification_id=notification_id)  # the send's own accept path
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
    if row.status == NotificationStatus.SUPPRESSED and not error:
        error = f"{suppression_key(recipient)} is on the suppression list"
    return Outcome(row.status, error, recipient)
