"""The plugin API: everything of Herald's that a channel or provider plugin imports.

Channels and providers, the built-in ones included, import this module and nothing else of
Herald's (the import contract in setup.cfg enforces it, docs/plugins.md documents it).
Names here are kept stable; what is not here is the engine's to change.
"""

from __future__ import annotations

from engine.errors import ApiError, FieldErrors
from engine.formats.addresses import (
    ascii_form,
    bare_address,
    dedupe,
    e164_form,
    suppression_key,
    valid_e164,
    valid_email,
)
from engine.formats.email_body import html_document, inline_css
from engine.formats.field_rules import (
    MAX_RECIPIENTS,
    addresses,
    boolean,
    decoded_size,
    options_object,
)
from engine.formats.header_text import CONTROL, CONTROLS, MEDIA_TYPE
from engine.formats.message_bytes import PLAIN_ADDRESS, SharedPart, message_bytes
from engine.formats.plaintext import html_to_text
from engine.plugins.channel_contract import (
    BaseChannel,
    Channel,
    EditorField,
    Plan,
    Planned,
    PlannedDelivery,
    Recipients,
    SendRequest,
)
from engine.plugins.contracts import (
    Attachment,
    DeliveryError,
    DestinationRefused,
    DestinationUnreachable,
    DkimKey,
    Egress,
    OutboundEmail,
    OutboundSms,
    PermanentError,
    Provider,
    ProviderContext,
    ProviderFactory,
    SendResult,
    SuppressedError,
    TransientError,
    parse_retry_after,
)
from engine.plugins.event_contract import (
    EventWebhook,
    InboundCall,
    InboundMessage,
    InboundRefused,
    ProviderEvent,
    Reported,
)
from engine.plugins.hookspecs import hookimpl
from engine.plugins.http_vendor import HttpVendorProvider, raise_for_status
from engine.webhooks.headers import validate_webhook_headers

__all__ = [  # noqa: RUF022 -- grouped as docs/plugins.md lists them
    # hooks
    "hookimpl",
    # channels
    "BaseChannel", "Channel", "EditorField", "Plan", "Planned", "PlannedDelivery", "Recipients",
    "SendRequest",
    # messages and outcomes
    "Attachment", "DeliveryError", "DestinationRefused", "DestinationUnreachable", "DkimKey",
    "Egress", "OutboundEmail", "OutboundSms", "PermanentError",
    "Provider", "ProviderContext", "ProviderFactory", "SendResult", "SuppressedError",
    "TransientError", "parse_retry_after",
    # HTTP providers
    "HttpVendorProvider", "raise_for_status",
    # provider events
    "EventWebhook", "InboundCall", "InboundMessage", "InboundRefused", "ProviderEvent",
    "Reported",
    # request errors and field rules
    "ApiError", "FieldErrors", "MAX_RECIPIENTS", "addresses", "boolean", "decoded_size",
    "options_object", "validate_webhook_headers",
    # text and addresses
    "CONTROL", "CONTROLS", "MEDIA_TYPE", "PLAIN_ADDRESS", "SharedPart", "ascii_form",
    "bare_address", "dedupe", "e164_form", "html_document", "html_to_text", "inline_css",
    "message_bytes", "suppression_key", "valid_e164", "valid_email",
]
