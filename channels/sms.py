"""The SMS channel: the rendered text to each E.164 number."""

from __future__ import annotations

from typing import Any

from engine.plugin_api import OutboundSms, hookimpl


class SmsChannel:
    name = "sms"
    needs_provider = True

    def build(self, payload: dict[str, Any]) -> OutboundSms:
        return OutboundSms(sender=payload.get("from"), to=list(payload.get("to") or []),
                           text=payload.get("text") or "")


@hookimpl
def register_channels(register) -> None:
    register("sms", SmsChannel())
