"""Preview (spec 4.2, docs/api.md): the email as it would be sent, with what a send would
refuse reported as warnings; nothing is queued or counted against the allowance.

The result is email-shaped (spec 4.2): only a channel that declares ``previewable`` (the
email channel) reaches it. It is a dataclass (``EmailPreview``): api/previews.py answers it
as the spec's JSON, the editor (engine/authoring/previews.py) reads it as is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.catalog import keycache
from engine.catalog.variants import LOCALE_TAG, variants
from engine.errors import ApiError
from engine.formats import uuid_text
from engine.formats.addresses import suppression_key
from engine.formats.field_rules import decoded_size
from engine.formats.plaintext import html_to_text
from engine.plugins.channel_contract import Recipients
from engine.rendering import variable_metadata
from engine.sending.admission import admit
from engine.sending.payload import render_parts
from engine.sending.recipients import suppressed
from engine.sending.resolution import Resolved


def preview(body: object, header: str | None, ip: str,
            parse_error: ApiError | None = None,
            found: keycache.Found | None = None) -> EmailPreview:
    """The email as it would be sent (api/ answers it as a 200 PreviewResponse); nothing
    queued or counted. ``found``: the header's look-up earlier in the request."""
    resolved, key = admit(body, header, ip, parse_error, preview=True, found=found)
    keycache.touch(key)
    return build_preview(resolved)


def _unsuppressed(resolved: Resolved, warnings: list[dict[str, str]]) -> Recipients:
    """The resolved recipients less the suppressed ones, each of those reported."""
    recipients = resolved.request.recipients()
    marketing = resolved.version.content.get("emailType") == "Marketing"
    topic = resolved.version.content.get("topic") if marketing else None
    blocked = suppressed(resolved.workspace.id, recipients.all(), marketing=marketing,
                         topic=topic)
    if not blocked:
        return recipients
    keep = {k: [a for a in getattr(recipients, k) if suppression_key(a) not in blocked]
            for k in ("to", "cc", "bcc")}
    for address in sorted(blocked):
        warnings.append({"field": "recipients",
                         "message": f"{address} is suppressed and will not receive it"})
    return Recipients(keep["to"], keep["cc"], keep["bcc"], recipients.was_overridden)


def _final_bodies(payload: dict[str, Any]) -> FinalBodies:
    """The HTML a recipient gets (tracking applied) and the text derived from it (D6 in
    docs/api.md)."""
    from engine.delivery.tracking import apply_tracking

    html = apply_tracking(payload["html"], notification_id=None,
                          track_opens=payload["trackOpens"],
                          track_clicks=payload["trackClicks"])
    return FinalBodies(html, html_to_text(payload["html"]))


@dataclass(frozen=True)
class PreviewSender:
    address: str
    name: str | None
    reply_to: Any


@dataclass(frozen=True)
class PreviewAttachment:
    name: str
    content_type: str
    size_bytes: int
    content_id: str | None


@dataclass(frozen=True)
class FinalBodies:
    html: str          # the HTML a recipient gets (tracking applied)
    text: str          # the plain text derived from it


@dataclass(frozen=True)
class EmailPreview:
    """The email as it would be sent: what api/ answers (spec 4.2) and the editor shows."""

    success: bool
    template_id: str
    version_number: int
    email_type: str
    sender: PreviewSender
    recipients: Recipients              # less the suppressed (each one a warning)
    rendered: dict[str, str | None]     # subject, body, htmlHead as rendered
    final: FinalBodies | None           # None when a part failed to render
    variables: dict[str, list[str]]     # the rendering's variable metadata
    message_count: int
    batching_strategy: str
    attachments: list[PreviewAttachment]
    track_opens: bool
    track_clicks: bool
    custom_headers: dict[str, str]
    rendering_errors: list[dict[str, str]]
    warnings: list[dict[str, str]]      # what a send would refuse: {field, message}
    variant: str | None = None          # the language variant rendered (its tag)

    @property
    def error_message(self) -> str | None:
        return "; ".join(f"{e['templatePart']}: {e['message']}"
                         for e in self.rendering_errors) or None


def _variables(texts: list[str], resolved: Resolved) -> dict[str, list[str]]:
    """The variable metadata; the tag `locale` is used (it picks the language) when the
    version has language variants."""
    found = variable_metadata(texts, resolved.tags)
    if variants(resolved.version.content):
        found["unusedVariables"] = [k for k in found["unusedVariables"]
                                    if k.lower() != LOCALE_TAG]
    return found


def build_preview(resolved: Resolved) -> EmailPreview:
    content = resolved.version.content
    options = resolved.request.options
    warnings = list(resolved.warnings)
    recipients = _unsuppressed(resolved, warnings)
    rendered, errors = render_parts(resolved)
    payload = resolved.channel.payload(resolved.request, rendered)
    email_type = payload["emailType"]
    addressed = len(recipients.all())
    single = email_type == "Transactional"
    texts = [text for p, _ in resolved.channel.template_parts(content)
             if (text := resolved.part_text(p)[1])]
    texts += resolved.partial_set().texts_called(texts)  # a footer's {{city}} is used too
    return EmailPreview(
        success=not errors, template_id=uuid_text.of(resolved.template.id),
        version_number=resolved.version.number, email_type=email_type,
        sender=PreviewSender(payload["from"]["address"] or "", payload["from"]["name"],
                             payload["replyTo"]),
        recipients=recipients,
        rendered={part: rendered.get(part) for part in ("subject", "body", "htmlHead")},
        final=None if errors else _final_bodies(payload),
        variables=_variables(texts, resolved),
        message_count=min(1, addressed) if single else addressed,
        batching_strategy="single-message" if single else "one-message-per-recipient",
        attachments=[PreviewAttachment(a["name"], a["contentType"],
                                       decoded_size(a["content"]) or 0, a.get("cid"))
                     for a in options.get("attachments") or []],
        track_opens=payload["trackOpens"], track_clicks=payload["trackClicks"],
        custom_headers=dict(options.get("customHeaders") or {}),
        rendering_errors=errors, warnings=warnings,
        variant=None if resolved.variant is None else resolved.variant["locale"])
