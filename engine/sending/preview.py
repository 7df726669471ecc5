"""Preview (spec 4.2): the email as it would be sent, with what a send would refuse reported
as warnings; nothing is queued or counted against the allowance."""

from __future__ import annotations

from typing import Any

from engine.catalog import keycache
from engine.errors import ApiError
from engine.formats.addresses import suppression_key
from engine.rendering import variable_metadata
from engine.sending.admission import admit
from engine.sending.bodies import text_from_html
from engine.sending.payload import email_payload, render_parts, sender
from engine.sending.recipients import Recipients, resolve, suppressed
from engine.sending.resolution import Resolved


def preview(body: object, header: str | None, ip: str,
            parse_error: ApiError | None = None) -> dict[str, Any]:
    """200 PreviewResponse: the email as it would be sent; nothing queued or counted."""
    resolved, key = admit(body, header, ip, parse_error, preview=True)
    keycache.touch(key)
    return build_preview(resolved)


def _unsuppressed(resolved: Resolved, warnings: list[dict[str, str]]) -> Recipients:
    """The resolved recipients less the suppressed ones, each of those reported."""
    recipients = resolve(resolved.snap.defaults, resolved.body.get("emailOptions") or {})
    blocked = suppressed(resolved.workspace.id, recipients.all())
    if not blocked:
        return recipients
    keep = {k: [a for a in getattr(recipients, k) if suppression_key(a) not in blocked]
            for k in ("to", "cc", "bcc")}
    for address in sorted(blocked):
        warnings.append({"field": "recipients",
                         "message": f"{address} is suppressed and will not receive it"})
    return Recipients(keep["to"], keep["cc"], keep["bcc"], recipients.was_overridden)


def _final_bodies(resolved: Resolved, rendered: dict[str, str | None]) -> dict[str, str]:
    """The HTML a recipient gets (tracking applied) and the text derived from it (D6)."""
    from engine.delivery.tracking import apply_tracking

    payload = email_payload(resolved, rendered)
    html = apply_tracking(payload["html"], notification_id=None,
                          track_opens=payload["trackOpens"],
                          track_clicks=payload["trackClicks"])
    return {"htmlBody": html, "textBody": text_from_html(payload["html"])}


def _option(options: dict[str, Any], content: dict[str, Any], name: str) -> bool:
    """A tracking flag: the request's when it gives one, else the version's."""
    return bool(content.get(name) if options.get(name) is None else options[name])


def build_preview(resolved: Resolved) -> dict[str, Any]:
    from engine.sending.validation import decoded_size

    content = resolved.version.content
    options = resolved.body.get("emailOptions") or {}
    warnings = list(resolved.warnings)
    recipients = _unsuppressed(resolved, warnings)
    rendered, errors = render_parts(resolved)
    email_type = content.get("emailType") or "Transactional"
    addressed = len(recipients.all())
    single = email_type == "Transactional"
    texts = [content.get(p) for p in ("subject", "body", "htmlHead") if content.get(p)]
    from_address, from_name = sender(options, content)
    return {"email": {
        "success": not errors,
        "templateMetadata": {"templateId": str(resolved.template.id),
                             "versionNumber": resolved.version.number,
                             "emailType": email_type, "notificationType": "email"},
        "sender": {"fromAddress": from_address or "", "fromName": from_name,
                   "replyTo": options.get("replyTo")},
        "recipients": {"to": recipients.to, "cc": recipients.cc, "bcc": recipients.bcc,
                       "wasOverridden": recipients.was_overridden},
        "renderedContent": {part: rendered.get(part)
                            for part in ("subject", "body", "htmlHead")},
        "finalBodies": None if errors else _final_bodies(resolved, rendered),
        "variableMetadata": variable_metadata(texts, resolved.tags),
        "batchingInfo": {"emailType": email_type,
                         "messageCount": min(1, addressed) if single else addressed,
                         "batchingStrategy": "single-message" if single
                         else "one-message-per-recipient"},
        "attachments": [{"name": a["name"], "contentType": a["contentType"],
                         "sizeBytes": decoded_size(a["content"]) or 0,
                         "contentId": a.get("cid")}
                        for a in options.get("attachments") or []],
        "trackingSettings": {name: _option(options, content, name)
                             for name in ("trackOpens", "trackClicks")},
        "customHeaders": dict(options.get("customHeaders") or {}),
        "renderingErrors": errors,
        "errorMessage": "; ".join(f"{e['templatePart']}: {e['message']}" for e in errors)
        or None,
    }, "validationErrors": warnings}
