"""Postmark and Twilio against local servers that check requests as the vendors document."""

from __future__ import annotations

import base64
import json
import time
from email import policy as email_policy
from email.utils import formatdate
from urllib.parse import parse_qs

import pytest

from channels.email import EmailChannel
from engine.plugins.contracts import OutboundSms, PermanentError, SuppressedError, TransientError
from plugins.postmark import PostmarkProvider
from plugins.twilio import TwilioProvider
from tests import factories
from tests.support.vendor_server import VendorServer

TOKEN = "server-token-123"
SID, AUTH = "AC0123456789abcdef0123456789abcdef", "auth-token"


def postmark_check(answers):
    def check(path, headers, body):
        # Postmark: POST /email, JSON, X-Postmark-Server-Token, Accept: application/json.
        if path != "/email" or headers.get("X-Postmark-Server-Token") != TOKEN:
            return 401, {}, {"ErrorCode": 10, "Message": "bad token"}
        if headers.get("Content-Type") != "application/json" or \
                headers.get("Accept") != "application/json":
            return 415, {}, {"ErrorCode": 0, "Message": "json only"}
        data = json.loads(body)
        for field in ("From", "To", "Subject"):
            if not data.get(field):
                return 422, {}, {"ErrorCode": 300, "Message": f"{field} missing"}
        return answers.pop(0) if answers else (200, {}, {"ErrorCode": 0, "MessageID": "pm-1"})
    return check


def email(**overrides):
    return EmailChannel().build(factories.email_payload(**overrides))


@pytest.fixture
def postmark():
    answers: list = []
    server = VendorServer(postmark_check(answers))
    provider = PostmarkProvider(f"postmark://{TOKEN}@127.0.0.1:{server.port}?scheme=http")
    yield provider, server, answers
    server.close()


def test_postmark_request_carries_every_field(postmark):
    provider, server, _ = postmark
    pdf = base64.b64encode(b"%PDF").decode()
    result = provider.send(email(
        cc=["c@example.net"], bcc=["b@example.net"], replyTo="r@example.com",
        headers={"X-Campaign": "s"}, priority="High",
        attachments=[{"name": "a.pdf", "contentType": "application/pdf", "content": pdf,
                      "cid": None}]))
    assert result.provider_message_id == "pm-1"
    (_, _, body), = server.requests
    data = json.loads(body)
    assert data["From"] == "Example <hello@example.com>"
    assert (data["To"], data["Cc"], data["Bcc"]) == ("ada@example.net", "c@example.net",
                                                      "b@example.net")
    assert data["ReplyTo"] == "r@example.com" and data["MessageStream"] == "outbound"
    assert data["HtmlBody"].startswith("<!DOCTYPE html>") and data["TextBody"] == "Hello Ada"
    headers = {h["Name"]: h["Value"] for h in data["Headers"]}
    assert headers["X-Campaign"] == "s" and headers["X-Priority"] == "1 (Highest)"
    assert data["Attachments"][0] == {"Name": "a.pdf", "Content": pdf,
                                      "ContentType": "application/pdf"}


def test_postmark_from_is_one_mailbox_whatever_the_name_holds(postmark):
    provider, server, _ = postmark
    name = 'Ops, "Team" <x@evil.example>'
    provider.send(email(**{"from": {"address": "hello@example.com", "name": name}}))
    (_, _, body), = server.requests
    parsed = email_policy.default.header_factory("From", json.loads(body)["From"])
    assert [(a.display_name, a.addr_spec) for a in parsed.addresses] == [
        (name, "hello@example.com")]


@pytest.mark.parametrize(("answer", "error"), [
    ((422, {}, {"ErrorCode": 406, "Message": "inactive recipient"}), SuppressedError),
    ((422, {}, {"ErrorCode": 300, "Message": "invalid email"}), PermanentError),
    ((429, {"Retry-After": "12"}, {"ErrorCode": 0, "Message": "slow down"}), TransientError),
    ((500, {}, {"ErrorCode": 0, "Message": "oops"}), TransientError),
    ((401, {}, {"ErrorCode": 10, "Message": "bad token"}), PermanentError),
])
def test_postmark_errors_map_to_outcomes(postmark, answer, error):
    provider, _, answers = postmark
    answers.append(answer)
    with pytest.raises(error) as raised:
        provider.send(email())
    if answer[0] == 429:
        assert raised.value.retry_after == 12.0


def test_postmark_retry_after_that_is_no_number_is_ignored(postmark):
    # "\u00b2": str.isdigit() is true and float() raises, which escaped the provider.
    provider, _, answers = postmark
    answers.append((429, {"Retry-After": "\u00b2"}, {"ErrorCode": 0, "Message": "slow down"}))
    with pytest.raises(TransientError) as raised:
        provider.send(email())
    assert raised.value.retry_after is None


def test_postmark_retry_after_as_an_http_date_is_honoured(postmark):
    provider, _, answers = postmark
    date = formatdate(time.time() + 3600, usegmt=True)
    answers.append((503, {"Retry-After": date}, {"ErrorCode": 0, "Message": "down"}))
    with pytest.raises(TransientError) as raised:
        provider.send(email())
    assert 3000 <= raised.value.retry_after <= 3600  # whole seconds, read a moment later


def test_postmark_unreachable_is_transient():
    from engine.queue.embedded_redis import free_port

    provider = PostmarkProvider(f"postmark://{TOKEN}@127.0.0.1:{free_port()}?scheme=http")
    with pytest.raises(TransientError):
        provider.send(email())


def twilio_check(answers):
    def check(path, headers, body):
        # Twilio: POST /2010-04-01/Accounts/{Sid}/Messages.json, form-encoded, basic auth.
        expected = "Basic " + base64.b64encode(f"{SID}:{AUTH}".encode()).decode()
        if headers.get("Authorization") != expected:
            return 401, {}, {"code": 20003, "message": "Authenticate"}
        if path != f"/2010-04-01/Accounts/{SID}/Messages.json":
            return 404, {}, {"code": 20404, "message": "not found"}
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        if not {"To", "From", "Body"} <= set(form):
            return 400, {}, {"code": 21604, "message": "missing parameter"}
        if answers:
            return answers.pop(0)
        return 201, {}, {"sid": f"SM{form['To'][-4:]}", "status": "queued"}
    return check


@pytest.fixture
def twilio():
    answers: list = []
    server = VendorServer(twilio_check(answers))
    provider = TwilioProvider(f"twilio://{SID}:{AUTH}@127.0.0.1:{server.port}?scheme=http")
    yield provider, server, answers
    server.close()


def test_twilio_sends_one_message_per_number(twilio):
    provider, server, _ = twilio
    result = provider.send(OutboundSms("+15005550006", ["+14155550100", "+14155550101"],
                                       "Code 1234"))
    assert result.provider_message_id == "SM0100,SM0101"
    forms = [parse_qs(body.decode()) for _, _, body in server.requests]
    assert [f["To"][0] for f in forms] == ["+14155550100", "+14155550101"]
    assert all(f["Body"] == ["Code 1234"] and f["From"] == ["+15005550006"] for f in forms)


def test_twilio_error_mapping(twilio):
    provider, _, answers = twilio
    answers.append((400, {}, {"code": 21610, "message": "unsubscribed"}))
    with pytest.raises(SuppressedError):
        provider.send(OutboundSms("+15005550006", ["+14155550100"], "x"))
    answers.append((400, {}, {"code": 21211, "message": "invalid To"}))
    with pytest.raises(PermanentError):
        provider.send(OutboundSms("+15005550006", ["+14155550100"], "x"))
    answers.append((503, {}, {"code": 0, "message": "busy"}))
    with pytest.raises(TransientError):
        provider.send(OutboundSms("+15005550006", ["+14155550100"], "x"))
    with pytest.raises(PermanentError, match="fromNumber"):
        provider.send(OutboundSms(None, ["+14155550100"], "x"))


def test_twilio_retry_after_that_is_no_number_is_ignored(twilio):
    provider, _, answers = twilio
    answers.append((503, {"Retry-After": "\u00b2"}, {"code": 0, "message": "busy"}))
    with pytest.raises(TransientError) as raised:
        provider.send(OutboundSms("+15005550006", ["+14155550100"], "x"))
    assert raised.value.retry_after is None


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_vendor_redirect_is_not_followed_and_not_accepted(postmark, status):
    # A redirect to another host and port would carry X-Postmark-Server-Token there, and
    # that server's 200 would read as the vendor's acceptance.
    provider, _, answers = postmark
    elsewhere = VendorServer(lambda path, headers, body: (
        200, {}, {"ErrorCode": 0, "MessageID": "not-postmark"}))
    try:
        answers.append((status, {"Location": f"http://127.0.0.1:{elsewhere.port}/email"}, {}))
        with pytest.raises(PermanentError) as raised:
            provider.send(email())
        assert f"provider answered {status}" in str(raised.value)
        assert elsewhere.requests == []
    finally:
        elsewhere.close()
