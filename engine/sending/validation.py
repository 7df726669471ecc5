"""Field rules of a NotificationRequest (spec 7 and 8.1): every broken rule, reported together."""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from typing import Any

from engine.errors import ApiError, FieldErrors
from engine.formats.addresses import valid_e164, valid_email
from engine.formats.header_text import CONTROL, MEDIA_TYPE
from engine.webhooks.headers import validate_webhook_headers

N = "notifications"
MAX_TAGS, MAX_TAG_KEY, MAX_TAG_VALUE = 100, 256, 8192
MAX_RECIPIENTS = 1000
MAX_EMAIL_HEADERS, MAX_EMAIL_HEADER_BYTES = 10, 4096
MAX_ATTACHMENTS, MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS_TOTAL = 10, 10 * 1024**2, 25 * 1024**2
MAX_NAME, MAX_CONTENT_TYPE = 255, 255
PRIORITIES = ("Normal", "High", "Low")
SENSITIVITIES = ("Normal", "Personal", "Private", "Confidential")
HEADER_NAME = re.compile(r"^[\x21-\x39\x3b-\x7e]{1,76}$")  # RFC 5322 ftext, no colon
# Address, envelope and message headers, and anything Herald sets itself.
REFUSED_HEADERS = {
    "from", "sender", "to", "cc", "bcc", "reply-to", "resent-from", "resent-sender",
    "resent-to", "resent-cc", "resent-bcc", "resent-date", "resent-message-id", "return-path",
    "envelope-to", "delivered-to", "x-original-to", "received", "return-receipt-to",
    "disposition-notification-to", "subject", "date", "message-id", "in-reply-to",
    "references", "mime-version", "content-type", "content-transfer-encoding",
    "content-disposition", "content-id", "dkim-signature", "arc-seal",
    "arc-message-signature", "arc-authentication-results", "authentication-results",
    "list-unsubscribe", "list-unsubscribe-post", "x-priority", "importance", "sensitivity",
    "priority", "bounces-to", "errors-to",
}
RESERVED_PREFIX = "x-svc-"
EXECUTABLE_EXTENSIONS = {
    "exe", "com", "bat", "cmd", "msi", "msp", "scr", "pif", "cpl", "dll", "sys", "vbs", "vbe",
    "js", "jse", "mjs", "ws", "wsf", "wsh", "wsc", "ps1", "ps2", "psm1", "psd1", "sh", "bash",
    "zsh", "csh", "ksh", "py", "pyc", "pyw", "pl", "rb", "php", "jar", "app", "apk", "ipa",
    "deb", "rpm", "dmg", "pkg", "hta", "lnk", "reg", "inf", "scf", "gadget", "msc", "application",
    "appx", "msix", "vb", "vba", "jsp", "asp", "aspx", "cgi", "elf", "run", "bin", "command",
    "iso", "img", "vhd", "vhdx", "chm", "xll", "docm", "xlsm", "pptm", "action", "workflow",
}
EXECUTABLE_TYPES = re.compile(
    r"^application/(x-(ms)?dos(-)?exec(utable)?|x-msdownload|x-msi|x-executable|"
    r"x-sh|x-csh|x-shellscript|x-bat|x-ms-shortcut|x-python(-code)?|x-perl|x-ruby|x-php|"
    r"javascript|x-javascript|ecmascript|java-archive|x-java-archive|vnd\.microsoft\.portable-"
    r"executable|x-elf|x-mach-binary|hta|x-ms-installer|vnd\.android\.package-archive|"
    r"x-apple-diskimage|x-powershell|vbscript|x-vbscript)$|^text/(javascript|ecmascript|"
    r"x-python|x-shellscript|x-sh|vbscript|x-perl|x-php|jscript)$", re.IGNORECASE)


def _is_uuid(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _string_list(errors: FieldErrors, value: object, path: str, code: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        errors.add(path, code, "must be an array of strings")
        return []
    return value


def _addresses(errors: FieldErrors, value: object, path: str, empty: str, invalid: str,
               check=valid_email) -> int:
    items = _string_list(errors, value, path, invalid)
    for i, item in enumerate(items):
        if isinstance(item, str) and not item.strip():
            errors.add(f"{path}[{i}]", empty, "must not be blank")
        elif not check(item):
            errors.add(f"{path}[{i}]", invalid, "is not a valid address")
    return len(items)


def _tags(errors: FieldErrors, body: dict[str, Any]) -> None:
    tags = body.get("tags")
    if tags is None:
        errors.add("tags", f"{N}.tags_required", "tags is required (it may be empty)")
        return
    if not isinstance(tags, list):
        errors.add("tags", f"{N}.tags_required", "must be an array of {key, value}")
        return
    if len(tags) > MAX_TAGS:
        errors.add("tags", f"{N}.too_many_tags", f"at most {MAX_TAGS} tags")
    for i, tag in enumerate(tags):
        path = f"tags[{i}]"
        if not isinstance(tag, dict):
            errors.add(path, f"{N}.tag_key_required", "must be an object with key and value")
            continue
        key, value = tag.get("key"), tag.get("value")
        if not isinstance(key, str) or not key.strip():
            errors.add(f"{path}.key", f"{N}.tag_key_required", "key is required")
        elif len(key) > MAX_TAG_KEY:
            errors.add(f"{path}.key", f"{N}.tag_key_too_long", f"at most {MAX_TAG_KEY} characters")
        if not isinstance(value, str):
            errors.add(f"{path}.value", f"{N}.tag_value_required", "value must be a string")
        elif len(value) > MAX_TAG_VALUE:
            errors.add(f"{path}.value", f"{N}.tag_value_too_long",
                       f"at most {MAX_TAG_VALUE} characters")


def _bool(errors: FieldErrors, options: dict[str, Any], key: str, path: str,
          nullable: bool = True) -> None:
    """A boolean option; spec 2.5 types some as "boolean or null", others as "boolean"."""
    value = options.get(key, False)
    if (value is not None or not nullable) and not isinstance(value, bool):
        errors.add(f"{path}.{key}", f"{N}.validation_type",
                   "must be true, false or null" if nullable else "must be true or false")


def _custom_headers(errors: FieldErrors, headers: object) -> None:
    path, code = "emailOptions.customHeaders", f"{N}.email.custom_headers"
    if headers is None:
        return
    if not isinstance(headers, dict):
        errors.add(path, f"{code}.value_invalid", "must be an object of string values")
        return
    if len(headers) > MAX_EMAIL_HEADERS:
        errors.add(path, f"{code}.too_many", f"at most {MAX_EMAIL_HEADERS} headers")
    total, seen = 0, set()
    for name, value in headers.items():
        item = f"{path}.{name}"
        total += len(name.encode()) + len(str(value).encode())
        lowered = name.lower()
        if not HEADER_NAME.fullmatch(name):
            errors.add(item, f"{code}.name_invalid", "not a valid RFC 5322 header name")
        elif lowered in REFUSED_HEADERS or lowered.startswith(RESERVED_PREFIX) or \
                lowered.startswith(("resent-", "content-", "list-")):
            errors.add(item, f"{code}.name_not_permitted",
                       "address, envelope, message and X-SVC- headers are set by Herald")
        if lowered in seen:
            errors.add(item, f"{code}.name_duplicated", "duplicate header name")
        seen.add(lowered)
        if not isinstance(value, str) or CONTROL.search(value):
            errors.add(item, f"{code}.value_invalid",
                       "must be a string without line breaks or control characters")
    if total > MAX_EMAIL_HEADER_BYTES:
        errors.add(path, f"{code}.too_large", f"at most {MAX_EMAIL_HEADER_BYTES} bytes in all")


def decoded_size(content: str) -> int | None:
    """Decoded byte size of strict base64, or None when it is not base64."""
    compact = "".join(content.split())
    try:
        return len(base64.b64decode(compact, validate=True))
    except (binascii.Error, ValueError):
        return None


def _attachments(errors: FieldErrors, items: object) -> None:
    path, code = "emailOptions.attachments", f"{N}.attachment"
    if items is None:
        return
    if not isinstance(items, list):
        errors.add(path, f"{code}.content_required", "must be an array of attachments")
        return
    if len(items) > MAX_ATTACHMENTS:
        errors.add(path, f"{code}.too_many", f"at most {MAX_ATTACHMENTS} attachments")
    total = 0
    for i, item in enumerate(items):
        at = f"{path}[{i}]"
        if not isinstance(item, dict):
            errors.add(at, f"{code}.content_required", "must be an object")
            continue
        name, content, ctype = item.get("name"), item.get("content"), item.get("contentType")
        if not isinstance(name, str) or not name.strip():
            errors.add(f"{at}.name", f"{code}.name_required", "name is required")
        elif len(name) > MAX_NAME:
            errors.add(f"{at}.name", f"{code}.name_too_long", f"at most {MAX_NAME} characters")
        elif CONTROL.search(name) or any(c in name for c in "/\\") or _executable_name(name):
            errors.add(f"{at}.name", f"{code}.name_not_permitted",
                       "executable and script files are refused")
        if not isinstance(content, str) or not content:
            errors.add(f"{at}.content", f"{code}.content_required", "content is required")
        else:
            size = decoded_size(content)
            if size is None:
                errors.add(f"{at}.content", f"{code}.content_invalid_base64", "not valid base64")
            else:
                total += size
                if size > MAX_ATTACHMENT_BYTES:
                    errors.add(f"{at}.content", f"{code}.content_too_large",
                               "at most 10 MB decoded")
        if not isinstance(ctype, str) or not ctype.strip():
            errors.add(f"{at}.contentType", f"{code}.content_type_required",
                       "contentType is required")
        elif len(ctype) > MAX_CONTENT_TYPE:
            errors.add(f"{at}.contentType", f"{code}.content_type_too_long",
                       f"at most {MAX_CONTENT_TYPE} characters")
        elif not MEDIA_TYPE.fullmatch(ctype):
            errors.add(f"{at}.contentType", f"{code}.content_type_not_permitted",
                       "not a media type (type/subtype, then any ;parameters)")
        elif EXECUTABLE_TYPES.fullmatch(ctype.split(";")[0].strip()):
            errors.add(f"{at}.contentType", f"{code}.content_type_not_permitted",
                       "executable and script types are refused")
        cid = item.get("cid")
        if cid is not None and (not isinstance(cid, str) or not re.fullmatch(
                r"[A-Za-z0-9!#$%&'*+\-./=?^_`{|}~@]{1,200}", cid)):
            errors.add(f"{at}.cid", f"{code}.cid_invalid", "not a valid content id")
    if total > MAX_ATTACHMENTS_TOTAL:
        errors.add(path, f"{code}.total_content_too_large", "at most 25 MB decoded in all")


def _executable_name(name: str) -> bool:
    parts = name.lower().strip().rstrip(".").split(".")
    # Any executable extension counts, also a hidden one (invoice.exe.pdf is fine; a.pdf.exe not).
    return len(parts) > 1 and parts[-1].strip() in EXECUTABLE_EXTENSIONS


def _email_options(errors: FieldErrors, options: object) -> None:
    if options is None:
        return
    path, e = "emailOptions", f"{N}.email"
    if not isinstance(options, dict):
        errors.add(path, f"{N}.validation_type", "must be an object or null")
        return
    count = 0
    for key in ("to", "cc", "bcc"):
        count += _addresses(errors, options.get(key), f"{path}.{key}", f"{e}.{key}_empty",
                            f"{e}.{key}_invalid")
    count += _addresses(errors, options.get("overrideRecipients"),
                        f"{path}.overrideRecipients", f"{e}.override_recipient_empty",
                        f"{e}.override_recipient_invalid")
    if count > MAX_RECIPIENTS:
        errors.add(path, f"{e}.too_many_recipients", f"at most {MAX_RECIPIENTS} recipients")
    for key, code in (("fromAddress", "from_address_invalid"), ("replyTo", "reply_to_invalid")):
        value = options.get(key)
        if value is not None and not valid_email(value):
            errors.add(f"{path}.{key}", f"{e}.{code}", "is not a valid address")
    _attachments(errors, options.get("attachments"))
    _custom_headers(errors, options.get("customHeaders"))
    for key in ("trackOpens", "trackClicks"):
        _bool(errors, options, key, path)
    for key in ("requestDeliveryReceipt", "requestReadReceipt"):  # absent: false
        _bool(errors, options, key, path, nullable=False)
    if options.get("priority") is not None and options["priority"] not in PRIORITIES:
        errors.add(f"{path}.priority", f"{e}.priority_invalid", "Normal, High or Low")
    if options.get("sensitivity") is not None and options["sensitivity"] not in SENSITIVITIES:
        errors.add(f"{path}.sensitivity", f"{e}.sensitivity_invalid",
                   "Normal, Personal, Private or Confidential")


def _sms_options(errors: FieldErrors, options: object) -> None:
    if options is None:
        return
    path, s = "smsOptions", f"{N}.sms"
    if not isinstance(options, dict):
        errors.add(path, f"{N}.validation_type", "must be an object or null")
        return
    count = _addresses(errors, options.get("to"), f"{path}.to", f"{s}.to_empty",
                       f"{s}.to_invalid", check=valid_e164)
    count += _addresses(errors, options.get("overrideRecipients"), f"{path}.overrideRecipients",
                        f"{s}.override_recipient_empty", f"{s}.override_recipient_invalid",
                        check=valid_e164)
    if count > MAX_RECIPIENTS:
        errors.add(path, f"{s}.too_many_recipients", f"at most {MAX_RECIPIENTS} recipients")
    number = options.get("fromNumber")
    if number is not None and not valid_e164(number):
        errors.add(f"{path}.fromNumber", f"{s}.from_number_invalid", "must be an E.164 number")


def _webhook_options(errors: FieldErrors, options: object) -> None:
    if options is None:
        return
    if not isinstance(options, dict):
        errors.add("webhookOptions", f"{N}.validation_type", "must be an object or null")
        return
    url = options.get("urlOverride")
    if url is not None and not isinstance(url, str):
        errors.add("webhookOptions.urlOverride", f"{N}.webhook_destination_invalid",
                   "must be a string")
    for path, code, message in validate_webhook_headers(options.get("headers")):
        errors.add(path, code, message)


def validate_request(body: object) -> dict[str, Any]:
    """The request as a dict, or ApiError: request_missing, or validation_failed with all rules."""
    if body is None:
        raise ApiError(400, f"{N}.request_missing", "The request body is missing.")
    errors = FieldErrors()
    if not isinstance(body, dict):
        errors.add("$", f"{N}.validation_type", "the body must be a JSON object")
        errors.raise_if_any()
    assert isinstance(body, dict)
    tenant = body.get("tenantId")
    if tenant is None or (isinstance(tenant, str) and not tenant.strip()):
        errors.add("tenantId", f"{N}.tenant_id_required", "tenantId is required")
    elif not _is_uuid(tenant):
        errors.add("tenantId", f"{N}.tenant_id_invalid", "must be a UUID")
    else:  # any spelling uuid.UUID reads (upper case, no hyphens, braces) names one workspace
        body["tenantId"] = str(uuid.UUID(tenant))
    template = body.get("templateId")
    if template is None or (isinstance(template, str) and not template.strip()):
        errors.add("templateId", f"{N}.template_id_required", "templateId is required")
    elif not isinstance(template, str):
        errors.add("templateId", f"{N}.template_id_invalid", "must be a UUID string")
    _tags(errors, body)
    version = body.get("versionNumber")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)
                                or not 1 <= version <= 2**31 - 1):
        errors.add("versionNumber", f"{N}.version_number_invalid",
                   "must be a positive 32-bit integer or null")
    _email_options(errors, body.get("emailOptions"))
    _sms_options(errors, body.get("smsOptions"))
    _webhook_options(errors, body.get("webhookOptions"))
    errors.raise_if_any()
    return body
