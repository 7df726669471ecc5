"""The request path of the API: admission (key, limits), field validation, recipient
resolution, rendering, the notification payload, preview and key validation.

Public surface: `send`, `preview`, `validate_key` (the three API operations).
"""

from engine.sending.pipeline import preview, send, validate_key

__all__ = ["preview", "send", "validate_key"]
