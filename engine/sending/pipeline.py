"""The send and preview pipeline, in the error precedence of D1.

Everything that needs no Redis is decided first; then one Redis round trip counts the
rate-limit windows and takes the allowance; errors are then raised in D1's order.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from dataclasses import dataclass, field
from email.utils import parseaddr
from typing import Any

from engine import runtime
from engine.catalog import keycache, snapshots
from engine.catalog.keycache import KeyInfo
from engine.errors import ApiError, FieldErrors
from engine.formats.addresses import bare_address, suppression_key
from engine.rendering import RenderError, make_tags, render_part, variable_metadata
from engine.sending import limits
from engine.sending.bodies import html_document, text_from_html
from engine.sending.recipients import Recipients, resolve, suppressed
from engine.sending.validation import validate_request
from engine.store import notification_store
from engine.store.models import Account, Template, TemplateVersion, Workspace
from engine.store.queueing import enqueue_notification

N = "notifications"
MISSING = object()


@dataclass
class Resolved:
    """A request that passed validation, tenancy, template and channel rules."""

    body: dict[str, Any]
    key: KeyInfo
    workspace: Workspace
    account: Account
    template: Template
    version: TemplateVersion
    tags: dict[str, str]
    snap: snapshots.TemplateSnapshot
    warnings: list[dict[str, str]] = field(default_factory=list)


def authenticate(header: str | None) -> KeyInfo:
    if header is None:
        raise ApiError(401, "api_keys.missing", "The X-Api-Key header is missing.")
    key = keycache.lookup(header) if header else None
    if key is None or key.status() != "active":
        raise ApiError(401, "api_keys.invalid", "The API key is unknown, revoked or expired.")
    return key


def _tags(body: dict[str, Any]) -> dict[str, str]:
    return {t["key"]: t["value"] for t in body.get("tags") or []}


def _version(snap: snapshots.TemplateSnapshot, number: int | None) -> TemplateVersion:
    if number is None:
        live = snap.live
        if live is None:
            raise ApiError(400, f"{N}.no_live_version",
                           "The template has no published version.")
        return live
    version = snap.version(number)
    if version is None:
        raise ApiError(400, f"{N}.template_version_not_found",
                       f"The template has no version {number}.")
    if version.status == "draft":
        raise ApiError(400, f"{N}.template_version_is_draft",
                       f"Version {number} is a draft; pin a published version.")
    return version


def _check_webhook_destination(url: str, account: Account) -> None:
    """Spec 6.1 at send; delivery checks again at each attempt (DNS can change)."""
    from engine.webhooks.destinations import DestinationError, check_destination

    try:
        check_destination(url, allow_private=runtime.settings().webhook_allow_private)
    except DestinationError as err:
        raise ApiError(400, f"{N}.webhook_destination_invalid", str(err)) from None


def resolve_request(body: object, key: KeyInfo, *, preview: bool,
                    parse_error: ApiError | None = None) -> Resolved:
    """Validation, tenancy, template, version and channel rules (D1 positions 5 to 10)."""
    if parse_error is not None:
        raise parse_error
    request = validate_request(body)
    if request["tenantId"].lower() != key.workspace_id.lower():
        raise ApiError(403, "api_keys.tenant_mismatch",
                       "The API key belongs to another workspace than tenantId.")
    snap = snapshots.snapshot(key.workspace_id, request["templateId"])
    if snap is None:
        # The same answer for a template of another workspace: nothing leaks across tenants.
        raise ApiError(404, f"{N}.template_not_found", "No such template.")
    template, workspace, account = snap.template, snap.workspace, snap.account
    version = _version(snap, request.get("versionNumber"))
    if preview and template.channel != "email":
        raise ApiError(400, f"{N}.unsupported_notification_type",
                       "Preview renders email templates only.")
    if template.channel == "webhook":
        url = (request.get("webhookOptions") or {}).get("urlOverride")
        if not url:
            raise ApiError(400, f"{N}.webhook_destination_required",
                           "A webhook template needs webhookOptions.urlOverride.")
        if not account.webhook_delivery:
            raise ApiError(403, f"{N}.webhook_delivery_not_available",
                           "The account's plan does not include webhook delivery.")
        _check_webhook_destination(url, account)
    resolved = Resolved(request, key, workspace, account, template, version, _tags(request),
                        snap)
    if template.channel == "email":
        _check_email_recipients(resolved)
        sender = (request.get("emailOptions") or {}).get("fromAddress") or \
            version.content.get("fromAddress")
        if workspace.email_provider is None and not (
                sender and snap.sender_verified(bare_address(sender).lower())):
            if not preview:
                raise ApiError(422, "sender.not_verified",
                               f"{sender or 'The from address'} is not a verified sender.")
            resolved.warnings.append({"field": "sender.fromAddress",
                                      "message": "not a verified sender: a send would fail"})
    elif template.channel == "sms":
        _check_sms_recipients(resolved)
    return resolved


def _check_email_recipients(resolved: Resolved) -> None:
    """No recipient left after resolution is ``to_empty``. The 1,000 of spec 8.1 counts the
    request's own lists (engine/validation.py): the template's defaults, which the caller
    cannot see, come on top and never make a request within the limit fail."""
    recipients = resolve(resolved.snap.defaults, resolved.body.get("emailOptions"))
    if not recipients.to and not recipients.cc and not recipients.bcc:
        errors = FieldErrors()
        errors.add("emailOptions.to", f"{N}.email.to_empty", "no recipient after resolution")
        errors.raise_if_any()


def _sms_numbers(resolved: Resolved) -> list[str]:
    from engine.formats.addresses import dedupe

    options = resolved.body.get("smsOptions") or {}
    override = [n for n in options.get("overrideRecipients") or [] if n.strip()]
    base = override or list(resolved.snap.defaults.get("to") or [])
    return dedupe([*base, *(options.get("to") or [])])


def _check_sms_recipients(resolved: Resolved) -> None:
    if not _sms_numbers(resolved):
        errors = FieldErrors()
        errors.add("smsOptions.to", f"{N}.sms.to_empty", "no recipient after resolution")
        errors.raise_if_any()


# ---------------------------------------------------------------- rendering


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


def _render_failed(errors: list[dict[str, str]]) -> ApiError:
    failed = FieldErrors()
    for item in errors:
        failed.add(f"template.{item['templatePart']}", f"{N}.rendering_failed", item["message"])
    return ApiError(400, "notifications.validation_failed", "The template failed to render.",
                    errors=failed.errors, error_codes=failed.codes)


def _sender(options: dict[str, Any], content: dict[str, Any]) -> tuple[str | None, str | None]:
    """The from address and name. ``emailOptions.fromAddress`` may be ``Name <addr>``: its
    name then stands in for the template's from name, and only the address is the address."""
    given = options.get("fromAddress")
    if given and "<" in given:
        name, address = parseaddr(given)
        return address, name or content.get("fromName")
    return given or content.get("fromAddress"), content.get("fromName")


def _email_payload(resolved: Resolved, rendered: dict[str, str | None]) -> dict[str, Any]:
    content = resolved.version.content
    options = resolved.body.get("emailOptions") or {}
    recipients = resolve(resolved.snap.defaults, options)
    html = html_document(rendered.get("body") or "", rendered.get("htmlHead"))
    track_opens = options.get("trackOpens")
    track_clicks = options.get("trackClicks")
    return {
        "channel": "email",
        "emailType": content.get("emailType") or "Transactional",
        "from": dict(zip(("address", "name"), _sender(options, content), strict=True)),
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


def _payload(resolved: Resolved, rendered: dict[str, str | None]) -> dict[str, Any]:
    channel = resolved.template.channel
    if channel == "email":
        return _email_payload(resolved, rendered)
    if channel == "sms":
        options = resolved.body.get("smsOptions") or {}
        numbers = _sms_numbers(resolved)
        return {"channel": "sms",
                "from": options.get("fromNumber") or resolved.version.content.get("fromNumber"),
                "to": numbers, "text": rendered.get("body") or "",
                "suppressionKeys": sorted({suppression_key(n) for n in numbers})}
    options = resolved.body.get("webhookOptions") or {}
    content_type = _content_type(resolved.version.content)
    body = rendered.get("body") or ""
    if _is_json(content_type):
        try:
            json.loads(body)
        except ValueError:
            raise _render_failed([{"templatePart": "body",
                                   "message": "the rendered body is not valid JSON"}]) from None
        except RecursionError:
            raise _render_failed([{"templatePart": "body", "message":
                                   "the rendered body nests JSON too deeply"}]) from None
    return {"channel": "webhook", "url": options["urlOverride"], "body": body,
            "contentType": content_type, "headers": dict(options.get("headers") or {})}


# ---------------------------------------------------------------- operations


def _admit(body: object, header: str | None, ip: str, parse_error: ApiError | None, *,
           preview: bool) -> tuple[Resolved, KeyInfo, limits.Verdict]:
    """Everything before rendering, in D1's order, with one Redis round trip.

    The checks that need no Redis run first; the script then counts the request in its
    rate-limit windows (and, for a send that passed everything, takes an allowance unit);
    the first failure in D1's order is raised.
    """
    settings = runtime.settings()
    key: KeyInfo | None = None
    auth_error: ApiError | None = None
    stage_error: ApiError | None = None
    resolved: Resolved | None = None
    try:
        key = authenticate(header)
    except ApiError as err:
        auth_error = err
    if key is not None:
        try:
            resolved = resolve_request(body, key, preview=preview, parse_error=parse_error)
            if not preview and resolved.account.monthly_limit is None:
                raise ApiError(403, f"{N}.monthly_limit_not_configured",
                               "The account has no monthly allowance configured.")
        except ApiError as err:
            stage_error, resolved = err, None
    counted = resolved is not None and not preview
    verdict = limits.check(
        "send", ip, key.id if key else None, settings.rate_limit_send_per_ip,
        settings.rate_limit_send_per_key, str(resolved.account.id) if counted else None,
        resolved.account.monthly_limit if counted else None)
    too_many = {"Retry-After": str(verdict.retry_after)}
    if verdict.code == limits.IP_LIMITED:
        raise ApiError(429, None, "Too many requests from this address.", headers=too_many)
    if auth_error is not None:
        raise auth_error
    if verdict.code == limits.KEY_LIMITED:
        raise ApiError(429, None, "Too many requests for this API key.", headers=too_many)
    if stage_error is not None:
        raise stage_error
    assert resolved is not None and key is not None
    if verdict.code == limits.ALLOWANCE_EXHAUSTED:
        raise ApiError(429, f"{N}.monthly_limit_exceeded",
                       "The account's monthly allowance is used up.")
    return resolved, key, verdict


def send(body: object, header: str | None, ip: str, correlation_id: str,
         parse_error: ApiError | None = None) -> dict[str, Any]:
    """202 SendResponse, or ApiError in the precedence of D1."""
    resolved, key, _ = _admit(body, header, ip, parse_error, preview=False)
    account_id = str(resolved.account.id)
    try:
        rendered, errors = render_parts(resolved)
        if errors:
            raise _render_failed(errors)
        payload = _payload(resolved, rendered)
        notification_id = uuid.uuid4()
        notification_store.insert(
            id=notification_id, account=resolved.account.id, workspace=resolved.workspace.id,
            template=resolved.template.id, version_number=resolved.version.number,
            channel=resolved.template.channel, correlation_id=correlation_id,
            delivery_id=str(uuid.uuid4()), payload=payload)
    except BaseException:
        limits.refund(account_id)  # not accepted: give the allowance unit back
        raise
    # Committed: from here the send is accepted; if Redis is down the reconciler enqueues it.
    with contextlib.suppress(Exception):
        enqueue_notification(str(notification_id))
    keycache.touch(key)
    return {"accepted": True, "correlationId": correlation_id,
            "message": "Notification accepted and queued for delivery."}


def preview(body: object, header: str | None, ip: str,
            parse_error: ApiError | None = None) -> dict[str, Any]:
    """200 PreviewResponse: the email as it would be sent; nothing queued or counted."""
    resolved, key, _ = _admit(body, header, ip, parse_error, preview=True)
    keycache.touch(key)
    return build_preview(resolved)


def build_preview(resolved: Resolved) -> dict[str, Any]:
    from engine.delivery.tracking import apply_tracking
    from engine.sending.validation import decoded_size

    content = resolved.version.content
    options = resolved.body.get("emailOptions") or {}
    recipients = resolve(resolved.snap.defaults, options)
    blocked = suppressed(resolved.workspace.id, recipients.all())
    warnings = list(resolved.warnings)
    if blocked:
        keep = {k: [a for a in getattr(recipients, k) if suppression_key(a) not in blocked]
                for k in ("to", "cc", "bcc")}
        for address in sorted(blocked):
            warnings.append({"field": "recipients",
                             "message": f"{address} is suppressed and will not receive it"})
        recipients = Recipients(keep["to"], keep["cc"], keep["bcc"], recipients.was_overridden)
    rendered, errors = render_parts(resolved)
    payload = _email_payload(resolved, rendered) if not errors else None
    if payload is not None:
        payload["text"] = text_from_html(payload["html"])
    email_type = content.get("emailType") or "Transactional"
    addressed = len(recipients.all())
    count = min(1, addressed) if email_type == "Transactional" else addressed
    final = None
    if payload is not None:
        html = apply_tracking(payload["html"], notification_id=None,
                              track_opens=payload["trackOpens"],
                              track_clicks=payload["trackClicks"])
        final = {"htmlBody": html, "textBody": payload["text"]}
    texts = [content.get(p) for p in ("subject", "body", "htmlHead") if content.get(p)]
    from_address, from_name = _sender(options, content)
    return {
        "email": {
            "success": not errors,
            "templateMetadata": {"templateId": str(resolved.template.id),
                                 "versionNumber": resolved.version.number,
                                 "emailType": email_type, "notificationType": "email"},
            "sender": {"fromAddress": from_address or "", "fromName": from_name,
                       "replyTo": options.get("replyTo")},
            "recipients": {"to": recipients.to, "cc": recipients.cc, "bcc": recipients.bcc,
                           "wasOverridden": recipients.was_overridden},
            "renderedContent": {"subject": rendered.get("subject"),
                                "body": rendered.get("body"),
                                "htmlHead": rendered.get("htmlHead")},
            "finalBodies": final,
            "variableMetadata": variable_metadata(texts, resolved.tags),
            "batchingInfo": {"emailType": email_type, "messageCount": count,
                             "batchingStrategy": "single-message" if email_type ==
                             "Transactional" else "one-message-per-recipient"},
            "attachments": [{"name": a["name"], "contentType": a["contentType"],
                             "sizeBytes": decoded_size(a["content"]) or 0,
                             "contentId": a.get("cid")}
                            for a in options.get("attachments") or []],
            "trackingSettings": {
                "trackOpens": bool(content.get("trackOpens") if options.get("trackOpens") is None
                                   else options["trackOpens"]),
                "trackClicks": bool(content.get("trackClicks")
                                    if options.get("trackClicks") is None
                                    else options["trackClicks"])},
            "customHeaders": dict(options.get("customHeaders") or {}),
            "renderingErrors": errors,
            "errorMessage": "; ".join(f"{e['templatePart']}: {e['message']}" for e in errors)
            or None,
        },
        "validationErrors": warnings,
    }


def validate_key(header: str | None, ip: str) -> dict[str, Any]:
    """Spec 4.3: only a missing header is 401; a bad key is 200 with isValid false."""
    settings = runtime.settings()
    verdict = limits.check("validate", ip, None, settings.rate_limit_validate_per_ip, 0)
    if verdict.code == limits.IP_LIMITED:
        raise ApiError(429, None, "Too many requests from this address.",
                       headers={"Retry-After": str(verdict.retry_after)})
    if header is None:
        raise ApiError(401, "api_keys.missing", "The X-Api-Key header is missing.")
    from engine.catalog.keys import iso

    key = keycache.lookup(header) if header else None
    if key is None:
        return {"isValid": False, "tenantId": None, "apiKeyId": None, "name": None,
                "status": None, "createdAt": None, "lastUsedAt": None, "expiresAt": None,
                "revokedAt": None}
    return {"isValid": True, "tenantId": key.workspace_id, "apiKeyId": key.id,
            "name": key.name, "status": key.status(), "createdAt": iso(key.created_at),
            "lastUsedAt": iso(key.last_used_at), "expiresAt": iso(key.expires_at),
            "revokedAt": iso(key.revoked_at)}
