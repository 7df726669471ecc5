"""What a send stores: each template part rendered, then the channel's payload (exactly what
the worker will send)."""

from __future__ import annotations

import json
from email.utils import parseaddr
from typing import Any

from engine.errors import ApiError, FieldErrors
from engine.formats.addresses import suppression_key
from engine.rendering import RenderError, make_tags, render_part
from engine.sending.bodies import html_document
from engine.sending.recipients import resolve
from engine.sending.resolution import N, Resolved, sms_numbers


def _languages(channel: str, content: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """Each part of the channel and the language it is written in, which decides what
    `{{x}}` escapes: a subject and an SMS are plain text, not HTML."""
    if channel == "email":
        return ("subject", "text"), ("body", "html"), ("htmlHead", "html")
    if channel == "sms":
        return (("body", "text"),)
    content_type = _content_type(content)
    if _is_json(content_type):
        return (("body", "json"),)
    plain = content_type.split(";")[0].strip().lower() == "text/plain"
    return (("body", "text" if plain else "html"),)  # html: XML and other markup


def _content_type(content: dict[str, Any]) -> str:
    return content.get("contentType") or "application/json"


def _is_json(content_type: str) -> bool:
    """application/json and every +json type (RFC 6839)."""
    media = content_type.split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def render_parts(resolved: Resolved) -> tuple[dict[str, str | None], list[dict[str, str]]]:
    """Each template part rendered; errors per part (never a truncated part)."""
    version = resolved.version
    content = version.content
    tags = make_tags(resolved.tags)
    out: dict[str, str | None] = {}
    errors: list[dict[str, str]] = []
    for part, language in _languages(resolved.template.channel, content):
        text = content.get(part)
        if text is None:
            out[part] = None
            continue
        try:
            out[part] = render_part(version.compiled, part, text, tags,
                                    cache_key=str(version.id), language=language)
        except RenderError as err:
            out[part] = None
            errors.append({"templatePart": part, "message": str(err)})
    return out, errors


def render_failed(errors: list[dict[str, str]]) -> ApiError:
    failed = FieldErrors()
    for item in errors:
        failed.add(f"template.{item['templatePart']}", f"{N}.rendering_failed", item["message"])
    return ApiError(400, "notifications.validation_failed", "The template failed to render.",
                    errors=failed.errors, error_codes=failed.codes)


def sender(options: dict[str, Any], content: dict[str, Any]) -> tuple[str | None, str | None]:
    """The from address and name. ``emailOptions.fromAddress`` may be ``Name <addr>``: its
    name then stands in for the template's from name, and only the address is the address."""
    given = options.get("fromAddress")
    if given and "<" in given:
        name, address = parseaddr(given)
        return address, name or content.get("fromName")
    return given or content.get("fromAddress"), content.get("fromName")


def email_payload(resolved: Resolved, rendered: dict[str, str | None]) -> dict[str, Any]:
    content = resolved.version.content
    options = resolved.body.get("emailOptions") or {}
    recipients = resolve(resolved.snap.defaults, options)
    html = html_document(rendered.get("body") or "", rendered.get("htmlHead"))
    track_opens = options.get("trackOpens")
    track_clicks = options.get("trackClicks")
    return {
        "channel": "email",
        "emailType": content.get("emailType") or "Transactional",
        "from": dict(zip(("address", "name"), sender(options, content), strict=True)),
        "replyTo": options.get("replyTo"),
        "to": recipients.to, "cc": recipients.cc, "bcc": recipients.bcc,
        "subject": rendered.get("subject") or "",
        "html": html,
        "text": None,  # derived from the HTML by the worker (channels/email.py)
        "headers": dict(options.get("customHeaders") or {}),
        "attachments": [{"name": a["name"], "contentType": a["contentType"],
                         "content": "".join(a["content"].split()), "cid": a.get("cid")}
                        for a in options.get("attachments") or []],
        "trackOpens": bool(content.get("trackOpens") if track_opens is None else track_opens),
        "trackClicks": bool(content.get("trackClicks") if track_clicks is None else track_clicks),
        "priority": options.get("priority"),
        "sensitivity": options.get("sensitivity"),
        "requestReadReceipt": bool(options.get("requestReadReceipt")),
        "requestDeliveryReceipt": bool(options.get("requestDeliveryReceipt")),
        # Read with the worker's claim, to check the suppression list in the same round trip.
        "suppressionKeys": sorted({suppression_key(a) for a in recipients.all()}),
    }


def _webhook_payload(resolved: Resolved, rendered: dict[str, str | None]) -> dict[str, Any]:
    options = resolved.body.get("webhookOptions") or {}
    content_type = _content_type(resolved.version.content)
    body = rendered.get("body") or ""
    if _is_json(content_type):
        try:
            json.loads(body)
        except ValueError:
            raise render_failed([{"templatePart": "body",
                                  "message": "the rendered body is not valid JSON"}]) from None
        except RecursionError:
            raise render_failed([{"templatePart": "body", "message":
                                  "the rendered body nests JSON too deeply"}]) from None
    return {"channel": "webhook", "url": options["urlOverride"], "body": body,
            "contentType": content_type, "headers": dict(options.get("headers") or {})}


def payload(resolved: Resolved, rendered: dict[str, str | None]) -> dict[str, Any]:
    channel = resolved.template.channel
    if channel == "email":
        return email_payload(resolved, rendered)
    if channel == "sms":
        options = resolved.body.get("smsOptions") or {}
        numbers = sms_numbers(resolved)
        return {"channel": "sms",
                "from": options.get("fromNumber") or resolved.version.content.get("fromNumber"),
                "to": numbers, "text": rendered.get("body") or "",
                "suppressionKeys": sorted({suppression_key(n) for n in numbers})}
    return _webhook_payload(resolved, rendered)
