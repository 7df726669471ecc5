"""The preview's answer written by sections is the text json.dumps gives its dict."""

from __future__ import annotations

import json

import pytest

from api.previews import preview_json, preview_text
from engine.plugins.channel_contract import Recipients
from engine.sending.preview import EmailPreview, FinalBodies, PreviewAttachment, PreviewSender

BODY = "<h1>Hello Ada</h1>" + "<p>Thanks for your order A-1001.</p>" * 40


def _preview(rendered: dict, final: FinalBodies | None, **fields) -> EmailPreview:
    return EmailPreview(**{
        "success": final is not None, "template_id": "0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f",
        "version_number": 3, "email_type": "Marketing",
        "sender": PreviewSender("shop@example.com", "Shöp \"Ltd\"", {"address": "r@x.org"}),
        "recipients": Recipients(["a@example.com"], ["b@example.com"], [], True),
        "rendered": rendered, "final": final,
        "variables": {"providedVariables": ["name"], "missingVariables": ["city"],
                      "unusedVariables": []},
        "message_count": 2, "batching_strategy": "one-message-per-recipient",
        "attachments": [PreviewAttachment("a.pdf", "application/pdf", 10, None)],
        "track_opens": True, "track_clicks": False, "custom_headers": {"X-A": "1"},
        "rendering_errors": [] if final else [{"templatePart": "body", "message": "bad"}],
        "warnings": [{"field": "recipients", "message": "x@y.z is suppressed"}],
        "variant": "fr", **fields})


@pytest.mark.parametrize("preview", [
    _preview({"subject": "Order A-1001", "body": BODY, "htmlHead": None},
             FinalBodies('<html><body class="x">' + BODY + "</body></html>",
                         "Hello Ada\n\nThanks")),
    _preview({"subject": "Ordre « A »", "body": BODY + "é\u2028", "htmlHead": "<style></style>"},
             FinalBodies(BODY + "\\", "")),
    _preview({"subject": None, "body": None, "htmlHead": None}, None, variant=None),
    _preview({"body": BODY, "subject": "s", "htmlHead": None}, None),  # another key order
])
def test_preview_text_is_json_dumps_of_the_preview_json(preview: EmailPreview) -> None:
    assert preview_text(preview) == json.dumps(preview_json(preview))
