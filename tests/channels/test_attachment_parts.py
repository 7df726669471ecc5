"""A fan-out's attachments are decoded and base64-encoded once per notification, not once
per recipient (issue #30, finding 4), and every recipient's message still carries them
exactly as the standard library's generator writes them."""

from __future__ import annotations

import base64
import email.encoders
import io
import os
from email.generator import BytesGenerator

import pytest

from channels.email import EmailChannel
from engine.formats.message_bytes import SharedPart, message_bytes
from engine.plugins.channel_contract import PlannedDelivery
from tests import factories

RECIPIENTS = 20


def _standard(message) -> bytes:
    out = io.BytesIO()
    BytesGenerator(out, mangle_from_=False, policy=message.policy.clone(linesep="\r\n")).flatten(
        message, linesep="\r\n")
    return out.getvalue()


def _fan_out(email_type: str) -> list:
    """The messages the email channel plans and builds for one notification."""
    to = [f"user{i}@example.net" for i in range(RECIPIENTS)]
    content = base64.b64encode(os.urandom(200_000)).decode("ascii")
    payload = factories.email_payload(
        emailType=email_type, to=to,
        html='<p>Hi <img src="cid:logo"></p>',
        attachments=[{"name": "report.pdf", "contentType": "application/pdf",
                      "content": content, "cid": None},
                     {"name": "logo.png", "contentType": "image/png",
                      "content": base64.b64encode(b"\x89PNG" * 100).decode(), "cid": "logo"}])
    channel = EmailChannel()
    plan = channel.plan(PlannedDelivery(
        notification_id="n1", attempt=1, payload=payload, suppressed=lambda keys: set(),
        settled=dict, tracked_html=lambda p, r: f"{p['html']}<i>{r}</i>",
        unsubscribe_url=lambda r: f"https://h.example/u/{r}"))
    return [channel.build(make()) for _, make in plan.messages]


def test_a_fan_out_encodes_each_attachment_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    encode = email.encoders.encode_base64

    def counting(part):  # the real encoder, counted
        calls.append(part.get_content_type())
        return encode(part)

    monkeypatch.setattr(email.encoders, "encode_base64", counting)
    messages = _fan_out("Marketing")
    written = [message_bytes(m.mime) for m in messages]
    assert len(messages) == RECIPIENTS and all(b"report.pdf" in raw for raw in written)
    assert sorted(calls) == ["application/pdf", "image/png"]
    assert all(len(m.attachments) == 2 for m in messages)


def test_every_message_holds_the_same_parts_and_writes_them_like_the_generator() -> None:
    messages = _fan_out("Marketing")
    leaves = [[p for p in m.mime.walk() if isinstance(p, SharedPart)] for m in messages]
    # The text part and the two attachments: one object each, in every message.
    assert all(len(found) == 3 for found in leaves)
    assert leaves[0][0].get_content_type() == "text/plain"
    assert all(all(a is b for a, b in zip(found, leaves[0], strict=True)) for found in leaves)
    for message in messages[:3]:  # written from the shared bytes, as the generator writes
        assert message_bytes(message.mime) == _standard(message.mime)
    first, second = (message_bytes(m.mime) for m in messages[:2])
    assert first != second  # each recipient's own message around the shared parts
    report = base64.encodebytes(messages[0].attachments[0].content).replace(b"\n", b"\r\n")
    assert report in first and report in second


def test_a_transactional_message_carries_the_attachments_too() -> None:
    (message,) = _fan_out("Transactional")
    raw = message_bytes(message.mime)
    assert raw == _standard(message.mime)
    assert b'filename="report.pdf"' in raw and b"Content-ID: <logo>" in raw


@pytest.mark.parametrize("files", [False, True], ids=["text alone", "text and a file"])
def test_a_text_only_fan_out_gives_each_message_its_own_headers(files: bool) -> None:
    # A lone text part is the message itself and takes its headers: shared, the recipients'
    # headers would pile up on one part. Inside a multipart it is shared.
    to = [f"user{i}@example.net" for i in range(3)]
    attachments = [{"name": "a.txt", "contentType": "text/plain", "cid": None,
                    "content": base64.b64encode(b"a").decode()}] if files else []
    payload = factories.email_payload(emailType="Marketing", to=to, html=None, text="Hi",
                                      attachments=attachments)
    channel = EmailChannel()
    plan = channel.plan(PlannedDelivery(
        notification_id="n1", attempt=1, payload=payload, suppressed=lambda keys: set(),
        settled=dict, tracked_html=lambda p, r: None,
        unsubscribe_url=lambda r: f"https://h.example/u/{r}"))
    messages = [channel.build(make()).mime for _, make in plan.messages]
    for address, mime in zip(to, messages, strict=True):
        assert mime.get_all("To") == [address] and len(mime.get_all("Subject")) == 1
        assert message_bytes(mime) == _standard(mime)
    texts = [next(p for p in m.walk() if p.get_content_type() == "text/plain") for m in messages]
    assert (texts[0] is texts[1]) is files
