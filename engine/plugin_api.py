"""The plugin API: everything of Herald's that a channel or provider plugin imports.

Channels and providers, the built-in ones included, import this module and nothing else of
Herald's (the import contract in setup.cfg enforces it, docs/plugins.md documents it).
Names here are kept stable; what is not here is the engine's to change.
"""

from __future__ import annotations

from engine.formats.addresses import ascii_form, dedupe, suppression_key, valid_e164, valid_email
from engine.formats.header_text import CONTROL, CONTROLS, MEDIA_TYPE
from engine.formats.message_bytes import PLAIN_ADDRESS, message_bytes
from engine.formats.plaintext import html_to_text
from engine.plugins.contracts import (
    Attachment,
    DeliveryError,
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
from engine.plugins.hookspecs import hookimpl
from engine.plugins.http_vendor import HttpVendorProvider, raise_for_status

__all__ = [  # noqa: RUF022 -- grouped as docs/plugins.md lists them
    # hooks
    "hookimpl",
    # messages and outcomes
    "Attachment", "DeliveryError", "OutboundEmail", "OutboundSms", "PermanentError",
    "Provider", "ProviderContext", "ProviderFactory", "SendResult", "SuppressedError",
    "TransientError", "parse_retry_after",
    # HTTP providers
    "HttpVendorProvider", "raise_for_status",
    # text and addresses
    "CONTROL", "CONTROLS", "MEDIA_TYPE", "PLAIN_ADDRESS", "ascii_form", "dedupe",
    "html_to_text", "message_bytes", "suppression_key", "valid_e164", "valid_email",
]
