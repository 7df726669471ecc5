from __future__ import annotations

import email.utils
import random
import time

import pytest

from engine.delivery.retry import MAX_WAIT, retry_delay
from engine.plugins.contracts import LONGEST_RETRY_AFTER, parse_retry_after
from engine.webhooks.delivery import classify_status
from engine.webhooks.signatures import sign, verify_webhook


def test_classification():
    assert [classify_status(s) for s in (200, 299, 301, 404, 408, 429, 500, 599, 101)] == [
        "delivered", "delivered", "permanent", "permanent", "transient", "transient",
        "transient", "transient", "permanent"]


def test_retry_after_in_seconds_and_http_date():
    assert parse_retry_after("120") == 120.0
    now = time.time()
    date = email.utils.formatdate(now + 60, usegmt=True)
    assert 58 <= parse_retry_after(date, now=now) <= 61
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_an_http_date_without_a_zone_is_gmt(monkeypatch):
    monkeypatch.setenv("TZ", "EST5")  # a naive datetime's timestamp() reads it as local time
    time.tzset()
    try:
        now = email.utils.parsedate_to_datetime("Tue, 01 Jan 2030 00:00:00 GMT").timestamp()
        for date in ("Tue, 01 Jan 2030 00:01:00 -0000", "Tue Jan  1 00:01:00 2030"):
            assert parse_retry_after(date, now=now) == 60.0
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("value", [
    "\u00b2", "\u0661\u0662", "\uff11\uff12", "Mon, 01 Jan 99999999999 00:00:00 GMT",
    "Tue, 01 Jan 2030 00:00:00 G\u00b2T",
])
def test_anything_but_ascii_seconds_or_an_http_date_is_ignored(value):
    """str.isdigit() takes "\u00b2" and float() refuses it: the attempt must not fail."""
    assert parse_retry_after(value) is None


def test_huge_retry_after_seconds_stay_finite():
    assert parse_retry_after("9" * 400) == LONGEST_RETRY_AFTER  # float() alone gives inf


def test_waits_are_capped_and_jittered():
    rng = random.Random(7)
    assert retry_delay(1, retry_after=10_000, rng=rng) == MAX_WAIT
    assert all(retry_delay(n, rng=rng) <= MAX_WAIT for n in range(1, 30))
    waits = {round(retry_delay(3, rng=rng), 3) for _ in range(20)}
    assert len(waits) > 1, "jitter"
    first = [retry_delay(1, rng=rng) for _ in range(50)]
    assert all(2.5 <= w <= 5 for w in first)
    honoured = retry_delay(1, retry_after=30, rng=rng)
    assert 30 <= honoured <= 33


def test_schedule_from_settings():
    rng = random.Random(1)
    schedule = (1.0, 10.0, 100.0)
    assert 0.9 <= retry_delay(1, backoff=schedule, rng=rng) <= 1.1
    assert 90 <= retry_delay(3, backoff=schedule, rng=rng) <= 110
    assert 90 <= retry_delay(9, backoff=schedule, rng=rng) <= 110


def test_signature_matches_spec_formula():
    import hashlib
    import hmac

    expected = hmac.new(b"s3cret", b"1700000000.d1.{\"a\":1}", hashlib.sha256).hexdigest()
    assert sign("s3cret", 1700000000, "d1", b'{"a":1}') == "v1=" + expected


def test_verification_rejects_old_timestamps():
    uid = "5f0c6a52-8a43-4d1e-9a57-3c1b2f6f7d10"
    headers = {"X-Service-Timestamp": "1000", "X-Service-Delivery-Id": uid,
               "X-Service-Signature": sign("k", 1000, uid, b"x")}
    assert verify_webhook("k", b"x", headers, now=1000 + 300)
    assert not verify_webhook("k", b"x", headers, now=1000 + 301)


def test_email_retries_wait_the_fixed_schedule_unless_a_test_shortens_it(settings):
    from dataclasses import replace

    from engine import runtime
    from engine.delivery.outcomes import Outcomes, TransientError, status_rule
    from tests import factories

    n = factories.notification(factories.workspace(), factories.email_payload())
    n.attempts = 1
    outcomes = Outcomes(n, 1)
    outcomes.transient = TransientError("connection refused")
    assert 27 <= status_rule(n, outcomes, [], False).wait <= 33
    runtime.configure(replace(settings, email_backoff=(1.0, 2.0)))
    assert 0.9 <= status_rule(n, outcomes, [], False).wait <= 1.1
    n.attempts = 5
    assert 1.8 <= status_rule(n, outcomes, [], False).wait <= 2.2
