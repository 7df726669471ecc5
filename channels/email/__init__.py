"""The email channel: one OutboundEmail (structured fields and the MIME) per message."""

from __future__ import annotations

import re
from collections.abc import Mapping
from email.utils import make_msgid
from typing import Any

from email_validator import EmailNotValidError, validate_email

from channels.email import planning, sending
from channels.email.attachment_parts import PARTS_KEY, AttachmentParts, decoded
from channels.email.mime import ascii_domain, build_mime, one_line
from channels.email.options import validate_email_options
from engine.plugin_api import (
    BaseChannel,
    DkimKey,
    EditorField,
    FieldErrors,
    OutboundEmail,
    Plan,
    PlannedDelivery,
    SendRequest,
    hookimpl,
    html_to_text,
    valid_email,
)


def _domain(address: str) -> str:
    return address.rpartition("@")[2] or "localhost"


EMAIL_TYPES = ("Transactional", "Marketing")
# A topic's name, as a workspace's topics are named (docs/delivery.md, "Topics").
_TOPIC = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,59}")


def _address_problem(value: Any) -> str | None:
    if not isinstance(value, str) or "\r" in value or "\n" in value:
        return "must be a string without line breaks"
    try:
        validate_email(value, check_deliverability=False)
    except EmailNotValidError as err:
        return f"not a valid address: {err}"
    return None


class EmailChannel(BaseChannel):
    """Builds one OutboundEmail (structured fields and the MIME) per message to send."""

    name = "email"
    options_field = "emailOptions"
    content_fields = ("subject", "body", "htmlHead", "fromAddress", "fromName", "emailType",
                      "trackOpens", "trackClicks", "topic")
    content_defaults = {"emailType": "Transactional", "trackOpens": False,
                        "trackClicks": False, "htmlHead": None, "fromName": None, "topic": None}
    provider_setting = "HERALD_EMAIL_PROVIDER"
    own_provider = True
    previewable = True
    label = "Email"
    menu_position = 10
    recipient_kind = "email"
    recipient_hint = "an email address"
    recipient_example = "you@example.com"
    default_recipient_lists = (("to", "To"), ("cc", "Cc"), ("bcc", "Bcc"))
    test_header = "X-SVC-Test"  # reserved: no request can set it
    inlines_css = True
    bulk_when = ("emailType", "Marketing")
    list_column = "email address"
    sender_field = "fromAddress"
    editor_fields = (
        EditorField("subject", "Subject", translated=True),
        EditorField("body", "Body", "code", "HTML with Handlebars tags such as {{name}}; a "
                    "tag is escaped for HTML, {{{name}}} is not.", "html", 18, translated=True),
        EditorField("htmlHead", "HTML head", "code",
                    "Goes inside <head>: a <title>, <style>, meta tags.", "html", 3,
                    translated=True),
        EditorField("inlineCss", "Inline CSS", "checkbox",
                    "Copies the rules of a <style> block into each element's style attribute "
                    "when the mail is sent, since Gmail and Outlook drop <style>; media queries "
                    "stay in the head."),
        EditorField("fromAddress", "From address", "sender"),
        EditorField("fromName", "From name"),
        EditorField("emailType", "Email type", "select", choices=EMAIL_TYPES),
        EditorField("topic", "Topic", "topic", "Marketing email only: the topic its "
                    "recipients can leave on their preferences page (Settings, Topics)."),
        EditorField("trackOpens", "Open tracking", "checkbox", group="Tracking"),
        EditorField("trackClicks", "Click tracking", "checkbox", group="Tracking"),
    )

    def valid_recipient(self, recipient: str) -> bool:
        return valid_email(recipient)

    def example_options(self, has_default_recipients: bool) -> dict[str, Any]:
        return {} if has_default_recipients else {"to": ["recipient@example.com"]}

    def test_options(self, recipient: str) -> dict[str, Any]:
        return {"overrideRecipients": [recipient], "trackOpens": False, "trackClicks": False}

    def mark_test(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "headers": {**payload.get("headers", {}), self.test_header: "true"}}

    def template_parts(self, content: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
        # The subject is plain text (a header), the body and head HTML.
        return ("subject", "text"), ("body", "html"), ("htmlHead", "html")

    def check_content(self, content: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems = super().check_content(content)
        if not isinstance(content.get("subject"), str):
            problems.append(("subject", "is required"))
        if content.get("fromAddress") is not None and (
                problem := _address_problem(content["fromAddress"])):
            problems.append(("fromAddress", problem))
        if content.get("emailType", "Transactional") not in EMAIL_TYPES:
            problems.append(("emailType", "must be Transactional or Marketing"))
        topic = content.get("topic")
        if topic is not None and not (isinstance(topic, str) and _TOPIC.fullmatch(topic)):
            problems.append(("topic", "must be a topic's name"))
        for flag in ("trackOpens", "trackClicks", "inlineCss"):
            if not isinstance(content.get(flag, False), bool):
                problems.append((flag, "must be true or false"))
        return problems

    def validate_options(self, options: object, errors: FieldErrors) -> None:
        validate_email_options(errors, options)

    def admit(self, request: SendRequest) -> None:
        sending.admit(request)

    def payload(self, request: SendRequest,
                rendered: Mapping[str, str | None]) -> dict[str, Any]:
        return sending.payload(request, rendered)

    def plan(self, delivery: PlannedDelivery) -> Plan:
        return planning.plan(delivery)

    def build(self, payload: dict[str, Any]) -> OutboundEmail:
        sender = ascii_domain(payload["from"]["address"])
        parts = payload.get(PARTS_KEY)
        if not isinstance(parts, AttachmentParts):
            parts = None
        email = OutboundEmail(
            sender=sender,
            sender_name=one_line(payload["from"].get("name") or "") or None,
            to=[ascii_domain(a) for a in payload.get("to") or []],
            cc=[ascii_domain(a) for a in payload.get("cc") or []],
            bcc=[ascii_domain(a) for a in payload.get("bcc") or []],
            subject=one_line(payload.get("subject") or ""),  # every provider sends one line
            html=payload.get("html"),
            # The API leaves the text to the worker: the conversion is off the request path.
            text=payload.get("text") if payload.get("text") is not None or payload.get(
                "html") is None else html_to_text(payload["html"]),
            reply_to=ascii_domain(payload["replyTo"]) if payload.get("replyTo") else None,
            headers=dict(payload.get("headers") or {}),
            attachments=parts.attachments if parts is not None else decoded(payload),
            request_delivery_receipt=bool(payload.get("requestDeliveryReceipt")),
            message_id=payload.get("messageId") or make_msgid(domain=_domain(sender)),
            envelope_sender=payload.get("envelopeSender"),  # set by the worker, never stored
            dkim=payload["dkim"] if isinstance(payload.get("dkim"), DkimKey) else None,
        )
        sender_for = payload.get("envelopeSenderFor")  # the worker's: one per recipient
        if callable(sender_for):
            senders = {address: sender_for(address) for address in email.recipients}
            if len(senders) == 1:
                email.envelope_sender = next(iter(senders.values()))
            elif senders:
                email.envelope_senders = senders
        email.mime = build_mime(email, payload, parts)
        return email


@hookimpl
def register_channels(register) -> None:
    register("email", EmailChannel())
