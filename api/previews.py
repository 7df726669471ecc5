"""The preview's answer (spec 4.2, PreviewResponse): the engine's EmailPreview as JSON."""

from __future__ import annotations

from typing import Any

from engine.sending.preview import EmailPreview


def preview_json(found: EmailPreview) -> dict[str, Any]:
    recipients = found.recipients
    return {"email": {
        "success": found.success,
        "templateMetadata": {"templateId": found.template_id,
                             "versionNumber": found.version_number,
                             "emailType": found.email_type, "notificationType": "email",
                             "variant": found.variant},
        "sender": {"fromAddress": found.sender.address, "fromName": found.sender.name,
                   "replyTo": found.sender.reply_to},
        "recipients": {"to": recipients.to, "cc": recipients.cc, "bcc": recipients.bcc,
                       "wasOverridden": recipients.was_overridden},
        "renderedContent": dict(found.rendered),
        "finalBodies": None if found.final is None else {"htmlBody": found.final.html,
                                                          "textBody": found.final.text},
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
    }, "validationErrors": found.warnings}
