"""The email channel at send: its rules (recipients, a verified sender) and its payload, the
email exactly as the worker will send it (D4 to D6, docs/api.md)."""

from __future__ import annotations

from collections.abc import Mapping
from email.utils import parseaddr
from typing import Any

from engine.plugin_api import (
    ApiError,
    FieldErrors,
    SendRequest,
    bare_address,
    html_document,
    inline_css,
    suppression_key,
)


def sender(options: Mapping[str, Any], content: Mapping[str, Any]) -> tuple[str | None,
                                                                          str | None]:
    """The from address and name. ``emailOptions.fromAddress`` may be ``Name <addr>``: its
    name then stands in for the template's from name, and only the address is the address."""
    given = options.get("fromAddress")
    if given and "<" in given:
        name, address = parseaddr(given)
        return address, name or content.get("fromName")
    return given or content.get("fromAddress"), content.get("fromName")


def admit(request: SendRequest) -> None:
    """No recipient left after resolution is ``to_empty``; the from address must be verified
    unless the workspace brings its own provider (D9, docs/api.md); a preview warns instead."""
    recipients = request.recipients()
    if not recipients.all():
        # The 1,000 of spec 8.1 (docs/api.md) counts the request's own lists (options.py):
        # the template's defaults, which the caller cannot see, never make a request fail.
        errors = FieldErrors()
        errors.add("emailOptions.to", "notifications.email.to_empty",
                   "no recipient after resolution")
        errors.raise_if_any()
    address = sender(request.options, request.content)[0]
    if request.own_provider or (address and
                                request.sender_verified(bare_address(address).lower())):
        return
    if not request.preview:
        raise ApiError(422, "sender.not_verified",
                       f"{address or 'The from address'} is not a verified sender.")
    request.warn("sender.fromAddress", "not a verified sender: a send would fail")


def _flag(options: Mapping[str, Any], content: Mapping[str, Any], name: str) -> bool:
    """A tracking flag: the request's when it gives one, else the version's."""
    return bool(content.get(name) if options.get(name) is None else options[name])


def _html(rendered: Mapping[str, str | None], content: Mapping[str, Any]) -> str:
    """The whole HTML document; its CSS inlined when the version says so (`inlineCss`)."""
    html = html_document(rendered.get("body") or "", rendered.get("htmlHead"))
    return inline_css(html) if content.get("inlineCss") is True else html


def payload(request: SendRequest, rendered: Mapping[str, str | None]) -> dict[str, Any]:
    content, options = request.content, request.options
    recipients = request.recipients()
    return {
        "emailType": content.get("emailType") or "Transactional",
        "from": dict(zip(("address", "name"), sender(options, content), strict=True)),
        "replyTo": options.get("replyTo"),
        "to": recipients.to, "cc": recipients.cc, "bcc": recipients.bcc,
        "subject": rendered.get("subject") or "",
        "html": _html(rendered, content),
        "text": None,  # derived from the HTML by the worker (channels/email/planning.py)
        "headers": dict(options.get("customHeaders") or {}),
        "attachments": [{"name": a["name"], "contentType": a["contentType"],
                         "content": "".join(a["content"].split()), "cid": a.get("cid")}
                        for a in options.get("attachments") or []],
        "trackOpens": _flag(options, content, "trackOpens"),
        "trackClicks": _flag(options, content, "trackClicks"),
        "priority": options.get("priority"),
        "sensitivity": options.get("sensitivity"),
        "requestReadReceipt": bool(options.get("requestReadReceipt")),
        "requestDeliveryReceipt": bool(options.get("requestDeliveryReceipt")),
        # Read with the worker's claim, to check the suppression list in the same round trip.
        "suppressionKeys": sorted({suppression_key(a) for a in recipients.all()}),
        # A Marketing email's topic: its suppressions, and its unsubscribe link's page.
        **({"topic": content["topic"]} if content.get("emailType") == "Marketing"
           and content.get("topic") else {}),
    }
