"""The SMS channel: the rendered text to each E.164 number."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from channels.sms import length as sms_length
from engine.plugin_api import (
    MAX_RECIPIENTS,
    BaseChannel,
    EditorField,
    FieldErrors,
    OutboundSms,
    Plan,
    PlannedDelivery,
    SendRequest,
    addresses,
    dedupe,
    e164_form,
    hookimpl,
    options_object,
    suppression_key,
    valid_e164,
)

_PHONE_PUNCTUATION = re.compile(r"[\s().-]")


class SmsChannel(BaseChannel):
    name = "sms"
    options_field = "smsOptions"
    content_fields = ("body", "fromNumber")
    provider_setting = "HERALD_SMS_PROVIDER"
    label = "SMS"
    menu_position = 20
    recipient_kind = "phone"
    recipient_hint = "a phone number in E.164 form (+14155550100)"
    recipient_example = "+14155550100"
    default_recipient_lists = (("to", "To"),)
    list_column = "phone number"
    editor_fields = (
        EditorField("body", "Body", "code",
                    "Plain text; {{name}} is replaced by the tag as it is.", "text", 8,
                    translated=True),
        EditorField("fromNumber", "From number",
                    hint="E.164 (+14155550100); empty: the provider's default."),
    )

    def normalise_recipient(self, value: str) -> str:
        """A number's spaces, dots, hyphens and brackets dropped, as people type them
        (``+1 (415) 555-0100`` is ``+14155550100``); the API's rules then judge it."""
        return _PHONE_PUNCTUATION.sub("", value.strip())

    def preview_note(self, text: str) -> str | None:
        """Its length, encoding and the messages it takes."""
        return sms_length.describe(text)

    def valid_recipient(self, recipient: str) -> bool:
        return valid_e164(recipient)

    def example_options(self, has_default_recipients: bool) -> dict[str, Any]:
        return {} if has_default_recipients else {"to": ["+14155550100"]}

    def template_parts(self, content: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
        return (("body", "text"),)  # an SMS is plain text: nothing is escaped

    def validate_options(self, options: object, errors: FieldErrors) -> None:
        found = options_object(errors, options, "smsOptions")
        if found is None:
            return
        count = addresses(errors, found.get("to"), "smsOptions.to",
                          "notifications.sms.to_empty", "notifications.sms.to_invalid",
                          check=valid_e164)
        count += addresses(errors, found.get("overrideRecipients"),
                           "smsOptions.overrideRecipients",
                           "notifications.sms.override_recipient_empty",
                           "notifications.sms.override_recipient_invalid", check=valid_e164)
        if count > MAX_RECIPIENTS:
            errors.add("smsOptions", "notifications.sms.too_many_recipients",
                       f"at most {MAX_RECIPIENTS} recipients")
        number = found.get("fromNumber")
        if number is not None and not e164_form(number):
            errors.add("smsOptions.fromNumber", "notifications.sms.from_number_invalid",
                       "must be an E.164 number")

    def _numbers(self, request: SendRequest) -> list[str]:
        """The override or the template's numbers, then the request's own: D4's SMS form
        (docs/api.md)."""
        override = [n for n in request.options.get("overrideRecipients") or [] if n.strip()]
        base = override or list(request.defaults.get("to") or [])
        return dedupe([*base, *(request.options.get("to") or [])])

    def admit(self, request: SendRequest) -> None:
        if not self._numbers(request):
            errors = FieldErrors()
            errors.add("smsOptions.to", "notifications.sms.to_empty",
                       "no recipient after resolution")
            errors.raise_if_any()

    def payload(self, request: SendRequest,
                rendered: Mapping[str, str | None]) -> dict[str, Any]:
        numbers = self._numbers(request)
        return {"from": request.options.get("fromNumber") or request.content.get("fromNumber"),
                "to": numbers, "text": rendered.get("body") or "",
                "suppressionKeys": sorted({suppression_key(n) for n in numbers})}

    def plan(self, delivery: PlannedDelivery) -> Plan:
        """Suppressed numbers dropped; one message to the others."""
        numbers = list(delivery.payload.get("to") or [])
        keys = {n: suppression_key(n) for n in numbers}
        blocked = delivery.suppressed(list(keys.values()))
        kept = [n for n in numbers if keys[n] not in blocked]
        plan = Plan(suppressed=[n for n in numbers if keys[n] in blocked])
        if kept:
            plan.messages.append((None, functools.partial(dict, delivery.payload, to=kept)))
        return plan

    def build(self, payload: dict[str, Any]) -> OutboundSms:
        return OutboundSms(sender=payload.get("from"), to=list(payload.get("to") or []),
                           text=payload.get("text") or "")


@hookimpl
def register_channels(register) -> None:
    register("sms", SmsChannel())
