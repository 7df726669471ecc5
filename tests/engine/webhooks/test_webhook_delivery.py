"""One attempt against a real HTTPS receiver (trustme CA), pinned to the checked address."""

from __future__ import annotations

import pytest

from engine.webhooks.delivery import deliver_webhook
from engine.webhooks.signatures import verify_webhook, verify_webhook_v2
from engine.webhooks.transport import ANSWER_BYTES, CONNECT_TIMEOUT, EXCERPT_BYTES
from tests.support.dribbling_receiver import DribblingReceiver
from tests.support.https_receiver import Scripted

SECRET = "whsec_test-secret"
DELIVERY_ID = "5f0c6a52-8a43-4d1e-9a57-3c1b2f6f7d10"


def attempt(receiver, dns_server, ca_file, path="/hook", host="hook.test", **kwargs):
    options = {"content_type": "application/json", "custom_headers": {"X-Team": "core"},
               "secret": SECRET, "delivery_id": DELIVERY_ID, "allow_private": True,
               "resolver": dns_server.resolver(), "ca_bundle": ca_file, "timeout": 2.0}
    options.update(kwargs)
    return deliver_webhook(receiver.url(path, host), b'{"order": "A-1"}', **options)


def test_success_is_signed_over_the_exact_bytes_with_the_spec_headers(receiver, dns_server,
                                                                        ca_file):
    result = attempt(receiver, dns_server, ca_file)
    assert result.outcome == "delivered" and result.status_code == 200
    (request,) = receiver.received
    headers = request.headers
    assert request.body == b'{"order": "A-1"}'
    assert headers["X-Service-Delivery-Id"] == headers["Idempotency-Key"] == DELIVERY_ID
    assert headers["X-Service-Signature"].startswith("v1=")
    assert headers["Host"] == f"hook.test:{receiver.port}"
    assert headers["X-Team"] == "core"
    assert verify_webhook(SECRET, request.body, headers)
    assert not verify_webhook("another-secret", request.body, headers)
    assert not verify_webhook(SECRET, request.body + b" ", headers)
    url = receiver.url("/hook", "hook.test")
    assert headers["X-Herald-Signature"].startswith("v2=")
    assert verify_webhook_v2(SECRET, request.body, headers, url)
    assert not verify_webhook_v2(SECRET, request.body, headers, receiver.url("/other",
                                                                             "hook.test"))


@pytest.mark.parametrize(("status", "outcome"), [
    (204, "delivered"), (301, "permanent"), (302, "permanent"), (400, "permanent"),
    (404, "permanent"), (410, "permanent"), (408, "transient"), (429, "transient"),
    (500, "transient"), (503, "transient"),
])
def test_status_codes_map_to_spec_outcomes(receiver, dns_server, ca_file, status, outcome):
    receiver.script["/s"] = [Scripted(status=status, headers={"Location": "https://hook.test/"})]
    result = attempt(receiver, dns_server, ca_file, path="/s")
    assert (result.status_code, result.outcome) == (status, outcome)
    assert len(receiver.received) == 1, "a redirect must never be followed"


@pytest.mark.parametrize("name", ["Retry-After", "retry-after", "RETRY-AFTER"])
def test_retry_after_is_read_whatever_the_case_of_its_name(receiver, dns_server, ca_file,
                                                           name):
    receiver.script["/r"] = [Scripted(status=429, headers={name: "7"})]
    assert attempt(receiver, dns_server, ca_file, path="/r").retry_after == 7.0


@pytest.mark.parametrize(("status", "outcome"), [(200, "delivered"), (503, "transient")])
def test_a_retry_after_that_is_no_number_is_ignored_not_raised(receiver, dns_server, ca_file,
                                                               status, outcome):
    # "\u00b2" passes str.isdigit() and fails float(): raising here left the row sending,
    # and the reconciler posted a delivered webhook again and again.
    receiver.script["/r"] = [Scripted(status=status, headers={"Retry-After": "\u00b2"})]
    result = attempt(receiver, dns_server, ca_file, path="/r")
    assert (result.outcome, result.status_code, result.retry_after) == (outcome, status, None)


@pytest.mark.parametrize("headers", [{"X-A\n": "v"}, {"X-B": "caf\u00e9 \u2603"}])
def test_a_custom_header_that_cannot_be_sent_fails_for_good_and_posts_nothing(
        receiver, dns_server, ca_file, headers):
    # Refused at send; a row queued before that rule raised at every attempt instead.
    result = attempt(receiver, dns_server, ca_file, custom_headers=headers)
    assert result.outcome == "permanent" and "custom headers cannot be sent" in result.error
    assert receiver.received == []


def test_slow_receiver_is_a_transient_timeout(receiver, dns_server, ca_file):
    receiver.script["/slow"] = [Scripted(delay=1.5)]
    result = attempt(receiver, dns_server, ca_file, path="/slow", timeout=0.5)
    assert result.outcome == "transient" and "timed out" in result.error


@pytest.mark.parametrize("phase", ["handshake", "headers", "body"])
def test_a_receiver_sending_a_byte_at_a_time_times_out_at_the_attempts_deadline(
        ca, dns_server, ca_file, phase):
    # Each byte comes well inside any per-read timeout; the receiver goes on for 4 s, less
    # than CONNECT_TIMEOUT (which alone used to bound a handshake), so only a deadline
    # over the whole exchange can end a 1 s attempt while the receiver is still sending.
    with DribblingReceiver(ca, phase, limit=CONNECT_TIMEOUT - 1) as receiver:
        result = attempt(receiver, dns_server, ca_file, timeout=1.0)
        assert not receiver.ran_out.is_set(), "the attempt outlived the receiver"
    assert result.outcome == "transient" and result.error == "timed out"
    assert result.status_code is None and result.retry_after is None


@pytest.mark.parametrize(("headers", "outcome"), [(40, "delivered"), (80, "transient")])
def test_answer_headers_are_read_up_to_a_cap(receiver, dns_server, ca_file, headers, outcome):
    padding = {f"X-Pad-{i}": "p" * 1000 for i in range(headers)}  # about 1 KiB each
    receiver.script["/fat"] = [Scripted(headers=padding)]
    result = attempt(receiver, dns_server, ca_file, path="/fat")
    assert result.outcome == outcome
    if outcome == "transient":
        assert result.error == f"answer too large: over {ANSWER_BYTES // 1024} KiB"


def test_response_excerpt_is_capped(receiver, dns_server, ca_file):
    receiver.script["/big"] = [Scripted(body=b"x" * 1_000_000)]
    result = attempt(receiver, dns_server, ca_file, path="/big")
    assert result.outcome == "delivered" and len(result.response_excerpt) == EXCERPT_BYTES


def test_certificate_for_another_name_fails(receiver, dns_server, ca_file):
    # other.test resolves to the receiver, whose certificate does not name it.
    result = attempt(receiver, dns_server, ca_file, host="other.test")
    assert result.outcome == "transient" and "TLS" in result.error
    assert receiver.received == []


def test_unknown_ca_fails(receiver, dns_server):
    result = attempt(receiver, dns_server, None, ca_bundle=None)
    assert result.outcome == "transient" and receiver.received == []


def test_a_destination_that_now_resolves_privately_is_refused_at_attempt(receiver, dns_server,
                                                                          ca_file):
    result = attempt(receiver, dns_server, ca_file, host="internal.test")
    assert result.outcome == "permanent" and "destination refused" in result.error


@pytest.mark.parametrize(("host", "cause"), [("down.test", "NoNameservers"),
                                             ("slow.test", "LifetimeTimeout")])
def test_a_name_that_cannot_be_resolved_now_is_a_network_failure_retried(
        receiver, dns_server, ca_file, host, cause):
    # Spec 6.5: a network failure is retried. A failing or silent DNS server says nothing
    # about the destination; a name that does not exist does (below).
    result = attempt(receiver, dns_server, ca_file, host=host)
    assert (result.outcome, result.error) == (
        "transient", f"network failure: the host could not be resolved ({cause})")
    assert receiver.received == []
    missing = attempt(receiver, dns_server, ca_file, host="nowhere.test")
    assert missing.outcome == "permanent" and "does not resolve" in missing.error


def test_attempts_to_one_destination_share_a_kept_alive_connection(receiver, dns_server,
                                                                   ca_file):
    for _ in range(3):
        assert attempt(receiver, dns_server, ca_file).outcome == "delivered"
    assert len({request.peer for request in receiver.received}) == 1


def test_a_connection_left_with_unread_bytes_is_not_reused(receiver, dns_server, ca_file):
    receiver.script["/big"] = [Scripted(body=b"x" * 1_000_000)]
    assert attempt(receiver, dns_server, ca_file, path="/big").outcome == "delivered"
    result = attempt(receiver, dns_server, ca_file)
    assert result.outcome == "delivered" and result.response_excerpt == "ok"
    first, second = receiver.received
    assert first.peer != second.peer


def test_proxy_settings_in_the_environment_are_ignored(receiver, dns_server, ca_file,
                                                       monkeypatch):
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens: a proxy would fail
    assert attempt(receiver, dns_server, ca_file).outcome == "delivered"
    assert len(receiver.received) == 1
