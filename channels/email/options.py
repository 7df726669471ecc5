"""Field rules of ``emailOptions`` (spec 2.5, 7 and 8.1, docs/api.md): recipients, sender,
attachments, custom headers, tracking and receipt flags."""

from __future__ import annotations

import re
from itertools import islice
from typing import Any

from channels.email.attachment_names import (
    executable_name,
    executable_type,
    misleading_name,
    names_in_content_type,
    shown_names,
)
from channels.email.header_names import header_name_refused
from engine.plugin_api import (
    CONTROL,
    MAX_RECIPIENTS,
    MEDIA_TYPE,
    FieldErrors,
    addresses,
    boolean,
    decoded_size,
    options_object,
    valid_email,
)

MAX_EMAIL_HEADERS, MAX_EMAIL_HEADER_BYTES = 10, 4096
MAX_ATTACHMENTS, MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS_TOTAL = 10, 10 * 1024**2, 25 * 1024**2
MAX_NAME, MAX_CONTENT_TYPE = 255, 255
PRIORITIES = ("Normal", "High", "Low")
SENSITIVITIES = ("Normal", "Personal", "Private", "Confidential")
HEADER_NAME = re.compile(r"^[\x21-\x39\x3b-\x7e]{1,76}$")  # RFC 5322 ftext, no colon
CONTENT_ID = re.compile(r"[A-Za-z0-9!#$%&'*+\-./=?^_`{|}~@]{1,200}")
# Each address list of emailOptions: its blank-entry code and its invalid-entry code.
ADDRESS_LISTS = {
    "to": ("notifications.email.to_empty", "notifications.email.to_invalid"),
    "cc": ("notifications.email.cc_empty", "notifications.email.cc_invalid"),
    "bcc": ("notifications.email.bcc_empty", "notifications.email.bcc_invalid"),
    "overrideRecipients": ("notifications.email.override_recipient_empty",
                           "notifications.email.override_recipient_invalid"),
}


def _custom_headers(errors: FieldErrors, headers: object) -> None:
    path = "emailOptions.customHeaders"
    if headers is None:
        return
    if not isinstance(headers, dict):
        errors.add(path, "notifications.email.custom_headers.value_invalid",
                   "must be an object of string values")
        return
    if len(headers) > MAX_EMAIL_HEADERS:
        errors.add(path, "notifications.email.custom_headers.too_many",
                   f"at most {MAX_EMAIL_HEADERS} headers")
    total, seen = 0, set()
    for name, value in islice(headers.items(), MAX_EMAIL_HEADERS):  # past it: too_many
        item = f"{path}.{name}"
        total += len(name.encode()) + len(str(value).encode())
        lowered = name.lower()
        if not HEADER_NAME.fullmatch(name):
            errors.add(item, "notifications.email.custom_headers.name_invalid",
                       "not a valid RFC 5322 header name")
        elif header_name_refused(name):
            errors.add(item, "notifications.email.custom_headers.name_not_permitted",
                       "address, envelope, message, trust and routing headers, and X-SVC- "
                       "headers, are set by Herald or the receiving servers")
        if lowered in seen:
            errors.add(item, "notifications.email.custom_headers.name_duplicated",
                       "duplicate header name")
        seen.add(lowered)
        if not isinstance(value, str) or CONTROL.search(value):
            errors.add(item, "notifications.email.custom_headers.value_invalid",
                       "must be a string without line breaks or control characters")
    if total > MAX_EMAIL_HEADER_BYTES:
        errors.add(path, "notifications.email.custom_headers.too_large",
                   f"at most {MAX_EMAIL_HEADER_BYTES} bytes in all")




def _attachment_name(errors: FieldErrors, name: object, at: str) -> None:
    if not isinstance(name, str) or not name.strip():
        errors.add(f"{at}.name", "notifications.attachment.name_required", "name is required")
    elif len(name) > MAX_NAME:
        errors.add(f"{at}.name", "notifications.attachment.name_too_long",
                   f"at most {MAX_NAME} characters")
    elif CONTROL.search(name) or any(c in name for c in "/\\") or \
            any(map(executable_name, shown_names(name))):
        errors.add(f"{at}.name", "notifications.attachment.name_not_permitted",
                   "executable and script files are refused")
    elif any(map(misleading_name, shown_names(name))):
        errors.add(f"{at}.name", "notifications.attachment.name_not_permitted",
                   "a name Windows reads as another file or a device (a colon, a trailing "
                   "dot or space, CON, NUL, COM1...) is refused")


def _attachment_content(errors: FieldErrors, content: object, at: str) -> int:
    """The decoded size of the attachment's content (0 when it is refused)."""
    if not isinstance(content, str) or not content:
        errors.add(f"{at}.content", "notifications.attachment.content_required",
                   "content is required")
        return 0
    size = decoded_size(content)
    if size is None:
        errors.add(f"{at}.content", "notifications.attachment.content_invalid_base64",
                   "not valid base64")
        return 0
    if size > MAX_ATTACHMENT_BYTES:
        errors.add(f"{at}.content", "notifications.attachment.content_too_large",
                   "at most 10 MB decoded")
    return size


def _attachment_type(errors: FieldErrors, ctype: object, at: str) -> None:
    if not isinstance(ctype, str) or not ctype.strip():
        errors.add(f"{at}.contentType", "notifications.attachment.content_type_required",
                   "contentType is required")
    elif len(ctype) > MAX_CONTENT_TYPE:
        errors.add(f"{at}.contentType", "notifications.attachment.content_type_too_long",
                   f"at most {MAX_CONTENT_TYPE} characters")
    elif not MEDIA_TYPE.fullmatch(ctype):
        errors.add(f"{at}.contentType", "notifications.attachment.content_type_not_permitted",
                   "not a media type (type/subtype, then any ;parameters)")
    elif executable_type(ctype) or any(map(executable_name, names_in_content_type(ctype))):
        errors.add(f"{at}.contentType", "notifications.attachment.content_type_not_permitted",
                   "executable and script types, and executable names, are refused")


def _attachments(errors: FieldErrors, items: object) -> None:
    path = "emailOptions.attachments"
    if items is None:
        return
    if not isinstance(items, list):
        errors.add(path, "notifications.attachment.content_required",
                   "must be an array of attachments")
        return
    if len(items) > MAX_ATTACHMENTS:
        errors.add(path, "notifications.attachment.too_many",
                   f"at most {MAX_ATTACHMENTS} attachments")
    total = 0
    for i, item in enumerate(items[:MAX_ATTACHMENTS]):  # past the limit: too_many
        at = f"{path}[{i}]"
        if not isinstance(item, dict):
            errors.add(at, "notifications.attachment.content_required", "must be an object")
            continue
        _attachment_name(errors, item.get("name"), at)
        total += _attachment_content(errors, item.get("content"), at)
        _attachment_type(errors, item.get("contentType"), at)
        cid = item.get("cid")
        if cid is not None and (not isinstance(cid, str) or not CONTENT_ID.fullmatch(cid)):
            errors.add(f"{at}.cid", "notifications.attachment.cid_invalid",
                       "not a valid content id")
    if total > MAX_ATTACHMENTS_TOTAL:
        errors.add(path, "notifications.attachment.total_content_too_large",
                   "at most 25 MB decoded in all")


def _email_flags(errors: FieldErrors, options: dict[str, Any]) -> None:
    path = "emailOptions"
    for key in ("trackOpens", "trackClicks"):
        boolean(errors, options, key, path)
    for key in ("requestDeliveryReceipt", "requestReadReceipt"):  # absent: false
        boolean(errors, options, key, path, nullable=False)
    if options.get("priority") is not None and options["priority"] not in PRIORITIES:
        errors.add(f"{path}.priority", "notifications.email.priority_invalid",
                   "Normal, High or Low")
    if options.get("sensitivity") is not None and options["sensitivity"] not in SENSITIVITIES:
        errors.add(f"{path}.sensitivity", "notifications.email.sensitivity_invalid",
                   "Normal, Personal, Private or Confidential")


def validate_email_options(errors: FieldErrors, value: object) -> None:
    """Every rule ``emailOptions`` breaks, added to ``errors``."""
    options = options_object(errors, value, "emailOptions")
    if options is None:
        return
    count = 0
    for key, (empty, invalid) in ADDRESS_LISTS.items():
        count += addresses(errors, options.get(key), f"emailOptions.{key}", empty, invalid)
    if count > MAX_RECIPIENTS:
        errors.add("emailOptions", "notifications.email.too_many_recipients",
                   f"at most {MAX_RECIPIENTS} recipients")
    if (value := options.get("fromAddress")) is not None and not valid_email(value):
        errors.add("emailOptions.fromAddress", "notifications.email.from_address_invalid",
                   "is not a valid address")
    if (value := options.get("replyTo")) is not None and not valid_email(value):
        errors.add("emailOptions.replyTo", "notifications.email.reply_to_invalid",
                   "is not a valid address")
    _attachments(errors, options.get("attachments"))
    _custom_headers(errors, options.get("customHeaders"))
    _email_flags(errors, options)
