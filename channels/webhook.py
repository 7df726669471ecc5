"""The webhook channel: a template's rendered body POSTed, signed, to the request's URL.

It is delivered as every channel is (plan, send, outcomes); its messages' provider is the
engine's signed POST (``delivery = "webhook"``: destination policy, signing, the pinned
request, retry classes; engine/delivery/webhook_sending.py, engine/webhooks/): the receiver
is the destination, so there is no provider of the operator's to name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from engine.plugin_api import (
    MEDIA_TYPE,
    ApiError,
    BaseChannel,
    EditorField,
    FieldErrors,
    SendRequest,
    hookimpl,
    options_object,
    validate_webhook_headers,
)

DEFAULT_CONTENT_TYPE = "application/json"


def _content_type(content: Mapping[str, Any]) -> str:
    return content.get("contentType") or DEFAULT_CONTENT_TYPE


def _is_json(content_type: str) -> bool:
    """application/json and every +json type (RFC 6839)."""
    media = content_type.split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


class WebhookChannel(BaseChannel):
    name = "webhook"
    options_field = "webhookOptions"
    content_fields = ("body", "contentType")
    content_defaults = {"contentType": DEFAULT_CONTENT_TYPE}
    delivery = "webhook"
    needs_provider = False
    label = "Webhook"
    menu_position = 30
    recipient_kind = "url"
    recipient_hint = "an https:// URL"
    recipient_example = "https://example.com/hooks"
    recipients_note = ("A webhook template has no default recipients: each send names its "
                       "destination (webhookOptions.urlOverride).")
    test_header = "X-Service-Test"  # reserved: no request can set it
    editor_fields = (
        EditorField("body", "Body", "code", "The exact request body; with a JSON content type "
                    "{{name}} is escaped for a JSON string and the result must be valid JSON.",
                    "json", 14, translated=True),
        EditorField("contentType", "Content type",
                    hint="Sent as the Content-Type of every delivery."),
    )

    def example_options(self, has_default_recipients: bool) -> dict[str, Any]:
        return {"urlOverride": "https://example.com/hooks"}  # every send names it

    def preview_options(self) -> dict[str, Any]:
        # The body is checked against a destination, which the editor does not have yet.
        return {"urlOverride": "https://example.com/"}

    def test_options(self, recipient: str) -> dict[str, Any]:
        return {"urlOverride": recipient}

    def mark_test(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "headers": {**payload.get("headers", {}), self.test_header: "true"}}

    def template_parts(self, content: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
        """The body in the language of its content type: a JSON value inside a JSON string
        literal is escaped as JSON, text/plain not at all, any other markup as HTML."""
        content_type = _content_type(content)
        if _is_json(content_type):
            return (("body", "json"),)
        plain = content_type.split(";")[0].strip().lower() == "text/plain"
        return (("body", "text" if plain else "html"),)

    def check_content(self, content: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems = super().check_content(content)
        value = content.get("contentType")
        if value is not None and not (isinstance(value, str) and MEDIA_TYPE.fullmatch(value)):
            # It is sent as the Content-Type header of every delivery.
            problems.append(("contentType", "must be a media type (type/subtype; params)"))
        return problems

    def validate_options(self, options: object, errors: FieldErrors) -> None:
        found = options_object(errors, options, "webhookOptions")
        if found is None:
            return
        url = found.get("urlOverride")
        if url is not None and not isinstance(url, str):
            errors.add("webhookOptions.urlOverride", "notifications.webhook_destination_invalid",
                       "must be a string")
        for path, code, message in validate_webhook_headers(found.get("headers")):
            errors.add(path, code, message)

    def admit(self, request: SendRequest) -> None:
        """D1's webhook rules in order (docs/api.md): a URL, the plan's entitlement, the
        destination."""
        url = request.options.get("urlOverride")
        if not url:
            raise ApiError(400, "notifications.webhook_destination_required",
                           "A webhook template needs webhookOptions.urlOverride.")
        if not request.webhook_delivery:
            raise ApiError(403, "notifications.webhook_delivery_not_available",
                           "The account's plan does not include webhook delivery.")
        request.check_destination(url)

    def payload(self, request: SendRequest,
                rendered: Mapping[str, str | None]) -> dict[str, Any]:
        content_type = _content_type(request.content)
        body = rendered.get("body") or ""
        if _is_json(content_type):
            try:
                json.loads(body)
            except ValueError:
                raise request.rendering_failed(
                    "body", "the rendered body is not valid JSON") from None
            except RecursionError:
                raise request.rendering_failed(
                    "body", "the rendered body nests JSON too deeply") from None
        return {"url": request.options["urlOverride"], "body": body,
                "contentType": content_type,
                "headers": dict(request.options.get("headers") or {})}


@hookimpl
def register_channels(register) -> None:
    register("webhook", WebhookChannel())
