"""Field rules of a NotificationRequest (spec 7 and 8.1, docs/api.md): every broken rule,
reported together.

Each channel checks its own options member (``emailOptions`` in channels/email/options.py).
"""

from __future__ import annotations

from typing import Any

from engine.errors import ApiError, FieldErrors
from engine.formats import uuid_text
from engine.plugins.manager import default_registry

MAX_TAGS, MAX_TAG_KEY, MAX_TAG_VALUE = 100, 256, 8192

def _uuid_text(value: object) -> str | None:
    """``value`` as the canonical text of the UUID it spells; None when it spells none."""
    return uuid_text.canonical(value) if isinstance(value, str) else None


def _tag(errors: FieldErrors, tag: object, path: str) -> None:
    if not isinstance(tag, dict):
        errors.add(path, "notifications.tag_key_required", "must be an object with key and value")
        return
    key, value = tag.get("key"), tag.get("value")
    if not isinstance(key, str) or not key.strip():
        errors.add(f"{path}.key", "notifications.tag_key_required", "key is required")
    elif len(key) > MAX_TAG_KEY:
        errors.add(f"{path}.key", "notifications.tag_key_too_long",
                   f"at most {MAX_TAG_KEY} characters")
    if not isinstance(value, str):
        errors.add(f"{path}.value", "notifications.tag_value_required", "value must be a string")
    elif len(value) > MAX_TAG_VALUE:
        errors.add(f"{path}.value", "notifications.tag_value_too_long",
                   f"at most {MAX_TAG_VALUE} characters")


def _tags(errors: FieldErrors, body: dict[str, Any]) -> None:
    tags = body.get("tags")
    if tags is None:
        errors.add("tags", "notifications.tags_required", "tags is required (it may be empty)")
        return
    if not isinstance(tags, list):
        errors.add("tags", "notifications.tags_required", "must be an array of {key, value}")
        return
    if len(tags) > MAX_TAGS:
        errors.add("tags", "notifications.too_many_tags", f"at most {MAX_TAGS} tags")
    for i, tag in enumerate(tags[:MAX_TAGS]):  # past the limit: too_many_tags says it all
        _tag(errors, tag, f"tags[{i}]")


def _ids(errors: FieldErrors, body: dict[str, Any]) -> None:
    tenant = body.get("tenantId")
    if tenant is None or (isinstance(tenant, str) and not tenant.strip()):
        errors.add("tenantId", "notifications.tenant_id_required", "tenantId is required")
    elif (canonical := _uuid_text(tenant)) is None:
        errors.add("tenantId", "notifications.tenant_id_invalid", "must be a UUID")
    else:  # any spelling uuid.UUID reads (upper case, no hyphens, braces) names one workspace
        body["tenantId"] = canonical
    template = body.get("templateId")
    if template is None or (isinstance(template, str) and not template.strip()):
        errors.add("templateId", "notifications.template_id_required", "templateId is required")
    elif not isinstance(template, str):
        errors.add("templateId", "notifications.template_id_invalid", "must be a UUID string")


def validate_request(body: object) -> dict[str, Any]:
    """The request as a dict, or ApiError: request_missing, or validation_failed with all rules."""
    if body is None:
        raise ApiError(400, "notifications.request_missing", "The request body is missing.")
    errors = FieldErrors()
    if not isinstance(body, dict):
        errors.add("$", "notifications.validation_type", "the body must be a JSON object")
        errors.raise_if_any()
    assert isinstance(body, dict)
    _ids(errors, body)
    _tags(errors, body)
    version = body.get("versionNumber")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)
                                or not 1 <= version <= 2**31 - 1):
        errors.add("versionNumber", "notifications.version_number_invalid",
                   "must be a positive 32-bit integer or null")
    for channel in default_registry().ordered_channels():
        if channel.options_field:  # every channel's, whatever the template's: D1 order
            channel.validate_options(body.get(channel.options_field), errors)
    errors.raise_if_any()
    return body
