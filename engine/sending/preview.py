"""Preview (spec 4.2, docs/api.md): the email as it would be sent, with what a send would
refuse reported as warnings; nothing is queued or counted against the allowance.

The response is email-shaped (spec 4.2): only a channel that declares ``previewable`` (the
email channel) reaches it.
"""

from __future__ import annotations

from typing import Any

from engine.catalog import keycache
from engine.errors import ApiError
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
            parse_error: ApiError | None = None) -> dict[str, Any]:
    """200 PreviewResponse: the email as it would be sent; nothing queued or counted."""
    resolved, key = admit(body, header, ip, parse_error, preview=True)
    keycache.touch(key)
    return build_preview(resolved)


def _unsuppressed(resolved: Resolved, warnings: list[dict[str, str]]) -> Recipients:
    """The resolved recipients less the suppressed ones, each of those reported."""
    recipients = resolved.request.recipients()
    marketing = resolved.version.content.get("emailType") == "Marketing"
    blocked = suppressed(resolved.workspace.id, recipients.all(), marketing=marketing)
    if not blocked:
        return recipients
    keep = {k: [a for a in getattr(recipients, k) if suppression_key(a) not in blocked]
            for k in ("to", "cc", "bcc")}
    for address in sorted(blocked):
        warnings.append({"field": "recipients",
                         "message": f"{address} is suppressed and will not receive it"})
    return Recipients(keep["to"], keep["cc"], keep["bcc"], recipients.was_overridden)


def _final_bodies(payload: dict[str, Any]) -> dict[str, str]:
    """The HTML a recipient gets (tracking applied) and the text derived from it (D6 in
    docs/api.md)."""
    from engine.delivery.tracking import apply_tracking

    html = apply_tracking(payload["html"], notification_id=None,
                          track_opens=payload["trackOpens"],
                          track_clicks=payload["trackClicks"])
    return {"htmlBody": html, "textBody": html_to_text(payload["html"])}


def build_preview(resolved: Resolved) -> dict[str, Any]:
    content = resolved.version.content
    options = resolved.request.options
    warnings = list(resolved.warnings)
    recipients = _unsuppressed(resolved, warnings)
    rendered, errors = render_parts(resolved)
    payload = resolved.channel.payload(resolved.request, rendered)
    email_type = payload["emailType"]
    addressed = len(recipients.all())
    single = email_type == "Transactional"
    texts = [content.get(p) for p, _ in resolved.channel.template_parts(content) if content.get(p)]
    return {"email": {
        "success": not errors,
        "templateMetadata": {"templateId": str(resolved.template.id),
                             "versionNumber": resolved.version.number,
                             "emailType": email_type, "notificationType": "email"},
        "sender": {"fromAddress": payload["from"]["address"] or "",
                   "fromName": payload["from"]["name"], "replyTo": payload["replyTo"]},
        "recipients": {"to": recipients.to, "cc": recipients.cc, "bcc": recipients.bcc,
                       "wasOverridden": recipients.was_overridden},
        "renderedContent": {part: rendered.get(part)
                            for part in ("subject", "body", "htmlHead")},
        "finalBodies": None if errors else _final_bodies(payload),
        "variableMetadata": variable_metadata(texts, resolved.tags),
        "batchingInfo": {"emailType": email_type,
                         "messageCount": min(1, addressed) if single else addressed,
                         "batchingStrategy": "single-message" if single
                         else "one-message-per-recipient"},
        "attachments": [{"name": a["name"], "contentType": a["contentType"],
                         "sizeBytes": decoded_size(a["content"]) or 0,
                         "contentId": a.get("cid")}
                        for a in options.get("attachments") or []],
        "trackingSettings": {"trackOpens": payload["trackOpens"],
                             "trackClicks": payload["trackClicks"]},
        "customHeaders": dict(options.get("customHeaders") or {}),
        "renderingErrors": errors,
        "errorMessage": "; ".join(f"{e['templatePart']}: {e['message']}" for e in errors)
        or None,
    }, "validationErrors": warnings}
