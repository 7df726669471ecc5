"""The preview's answer (spec 4.2, PreviewResponse): the engine's EmailPreview as JSON."""

from __future__ import annotations

from typing import Any

from engine.formats.json_text import LastStrings, dumps
from engine.sending.preview import EmailPreview

_PARTS = ("subject", "body", "htmlHead")
# The JSON of the long parts each version (and language variant) rendered last: a preview
# asked again with the same tags answers the same parts, their escape most of the answer's
# work. Each text is compared whole with the one kept.
_LAST = LastStrings()


def preview_json(found: EmailPreview) -> dict[str, Any]:
    return {"email": {
        **_head(found),
        "renderedContent": dict(found.rendered),
        "finalBodies": None if found.final is None else {"htmlBody": found.final.html,
                                                          "textBody": found.final.text},
        **_tail(found),
    }, "validationErrors": found.warnings}


def preview_text(found: EmailPreview) -> str:
    """``json.dumps(preview_json(found))``, the same text; the rendered parts and the final
    bodies, most of its characters, written as strings by engine/formats/json_text.py, those
    its version rendered last kept as that version wrote them."""
    rendered = found.rendered
    if tuple(rendered) != _PARTS:
        return dumps(preview_json(found))
    final = found.final
    subject, body, head, html, text = _LAST.strings(
        (found.template_id, found.version_number, found.variant),
        (rendered["subject"], rendered["body"], rendered["htmlHead"],
         None if final is None else final.html, None if final is None else final.text))
    return "".join((
        '{"email": ', dumps(_head(found))[:-1],
        ', "renderedContent": {"subject": ', subject, ', "body": ', body,
        ', "htmlHead": ', head,
        '}, "finalBodies": ', "null" if final is None else
        '{"htmlBody": ' + html + ', "textBody": ' + text + "}",
        ", ", dumps(_tail(found))[1:],
        ', "validationErrors": ', dumps(found.warnings), "}"))


def _head(found: EmailPreview) -> dict[str, Any]:
    recipients = found.recipients
    return {
        "success": found.success,
        "templateMetadata": {"templateId": found.template_id,
                             "versionNumber": found.version_number,
                             "emailType": found.email_type, "notificationType": "email",
                             "variant": found.variant},
        "sender": {"fromAddress": found.sender.address, "fromName": found.sender.name,
                   "replyTo": found.sender.reply_to},
        "recipients": {"to": recipients.to, "cc": recipients.cc, "bcc": recipients.bcc,
                       "wasOverridden": recipients.was_overridden}}


def _tail(found: EmailPreview) -> dict[str, Any]:
    return {
        "variableMetadata": found.variables,
        "batchingInfo": {"emailType": found.email_type, "messageCount": found.message_count,
                         "batchingStrategy": found.batching_strategy},
        "attachments": [{"name": a.name, "contentType": a.content_type,
                         "sizeBytes": a.size_bytes, "contentId": a.content_id}
                        for a in found.attachments],
        "trackingSettings": {"trackOpens": found.track_opens,
                             "trackClicks": found.track_clicks},
        "customHeaders": found.custom_headers,
        "renderingErrors": found.rendering_errors,
        "errorMessage": found.error_message,
    }
