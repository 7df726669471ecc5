"""Examples for the OpenAPI document: one per documented status."""

from __future__ import annotations

SEND_REQUEST = {
    "tenantId": "2b1c6a8e-4d0f-4c53-9d7e-2f5b0c8a9e11",
    "templateId": "7d3e1f20-1c2b-4a5d-8e9f-0a1b2c3d4e5f",
    "tags": [{"key": "name", "value": "Ada"}],
    "emailOptions": {"cc": ["ops@example.com"], "priority": "High"},
}
SEND_RESPONSE = {"accepted": True, "correlationId": "5f0c2d1e9b8a4c7d8e6f5a4b3c2d1e0f",
                 "message": "Notification accepted and queued for delivery."}
PREVIEW_RESPONSE = {
    "email": {
        "success": True,
        "templateMetadata": {"templateId": "7d3e1f20-1c2b-4a5d-8e9f-0a1b2c3d4e5f",
                             "versionNumber": 1, "emailType": "Transactional",
                             "notificationType": "email", "variant": None},
        "sender": {"fromAddress": "hello@example.com", "fromName": "Example", "replyTo": None},
        "recipients": {"to": ["team@example.com"], "cc": [], "bcc": [], "wasOverridden": False},
        "renderedContent": {"subject": "Welcome, Ada!", "body": "<p>Hi Ada</p>",
                            "htmlHead": None},
        "finalBodies": {"htmlBody": "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                                    "</head><body><p>Hi Ada</p></body></html>",
                        "textBody": "Hi Ada\n"},
        "variableMetadata": {"providedVariables": ["name"], "missingVariables": [],
                             "unusedVariables": []},
        "batchingInfo": {"emailType": "Transactional", "messageCount": 1,
                         "batchingStrategy": "single-message"},
        "attachments": [],
        "trackingSettings": {"trackOpens": False, "trackClicks": False},
        "customHeaders": {},
        "renderingErrors": [],
        "errorMessage": None,
    },
    "validationErrors": [],
}
VALIDATE_RESPONSE = {
    "isValid": True, "tenantId": "2b1c6a8e-4d0f-4c53-9d7e-2f5b0c8a9e11",
    "apiKeyId": "0d9f8e7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c", "name": "backend", "status": "active",
    "createdAt": "2026-01-05T10:00:00Z", "lastUsedAt": "2026-03-05T14:07:09Z",
    "expiresAt": None, "revokedAt": None,
}
ERROR_DESCRIPTIONS = {
    400: "Request invalid (request_missing, validation_failed with errorCodes, no_live_version, "
         "template version and webhook destination errors, unsupported_notification_type, "
         "idempotency_key_invalid)",
    401: "api_keys.missing or api_keys.invalid",
    403: "api_keys.tenant_mismatch, webhook_delivery_not_available, "
         "monthly_limit_not_configured, channel_not_available (the channel's provider is "
         "not configured on this service)",
    404: "notifications.template_not_found",
    409: "notifications.idempotency_key_in_use: a request with this Idempotency-Key is still "
         "being processed (Retry-After)",
    413: "Request body over 10 MB (bare response, no errorCode)",
    422: "sender.not_verified, or notifications.idempotency_key_reused (the key was used with "
         "another body in the last 24 hours)",
    429: "Rate limited (no errorCode, Retry-After) or notifications.monthly_limit_exceeded",
    500: "Unexpected error (no errorCode)",
    503: "service.unavailable: the database or Redis does not answer just now; nothing was "
         "done, retry after Retry-After",
}
# Preview and validate have fewer causes per status than send: (description, errorCode).
_RATE_LIMITED = ("Rate limited (no errorCode, Retry-After)", None)
OVERRIDES: dict[str, dict[int, tuple[str, str | None]]] = {
    "preview": {403: ("api_keys.tenant_mismatch", "api_keys.tenant_mismatch"),
                429: _RATE_LIMITED},
    "validate": {401: ("api_keys.missing (a bad key is 200 with isValid false)",
                       "api_keys.missing"), 429: _RATE_LIMITED},
}
_CODES = {400: "notifications.validation_failed", 401: "api_keys.invalid",
          403: "api_keys.tenant_mismatch", 404: "notifications.template_not_found",
          409: "notifications.idempotency_key_in_use", 413: None, 422: "sender.not_verified",
          429: "notifications.monthly_limit_exceeded", 500: None, 503: "service.unavailable"}


def describe(status: int, operation: str) -> tuple[str, str | None]:
    """The documented description and example errorCode of a status for one operation."""
    return OVERRIDES.get(operation, {}).get(status, (ERROR_DESCRIPTIONS[status], _CODES[status]))


def problem(status: int, operation: str = "send", instance: str = "") -> dict:
    """An example body as api/problems.py would build it for this status."""
    from http import HTTPStatus

    description, code = describe(status, operation)
    example = {"type": f"urn:herald:error:{code}" if code else "about:blank",
               "title": HTTPStatus(status).phrase, "status": status, "detail": description,
               "instance": instance or f"/api/v1/notifications/{operation}", "errorCode": code,
               "correlationId": "5f0c2d1e9b8a4c7d8e6f5a4b3c2d1e0f",
               "traceId": "4bf92f3577b34da6a3ce929d0e0e4736"}
    if status == 400:
        example["errors"] = {"tags[0].key": ["key is required"]}
        example["errorCodes"] = ["notifications.tag_key_required"]
    return example
