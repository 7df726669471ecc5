"""Engine parts of the send pipeline on their own: final bodies (D6) and limits (D9, D10)."""

from __future__ import annotations

import datetime as dt
import time

from engine import runtime
from engine.formats.email_body import html_document, text_from_html
from engine.sending import allowance, limits
from tests import factories


def test_a_fragment_becomes_a_whole_document_with_the_head_inside():
    html = html_document("<p>Hi</p>", "<title>T</title>")
    assert html.startswith("<!DOCTYPE html>")
    assert "<head><meta charset=\"utf-8\"><title>T</title></head><body><p>Hi</p></body>" in html


def test_a_whole_document_keeps_its_own_head_and_gets_htmlhead_added():
    doc = "<html><head><style>p{}</style></head><body><p>Hi</p></body></html>"
    assert html_document(doc, "<title>T</title>") == (
        "<html><head><style>p{}</style><title>T</title></head><body><p>Hi</p></body></html>")
    assert html_document(doc, None) == doc
    bare = "<HTML lang=en><body>x</body></HTML>"
    assert html_document(bare, "<title>T</title>") == (
        "<HTML lang=en><head><title>T</title></head><body>x</body></HTML>")


def test_an_html_tag_that_never_closes_is_wrapped_as_a_fragment_not_an_error():
    wrapped = ('<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>T</title></head>'
               "<body>{}</body></html>")
    assert html_document("<p>Hi</p><html x", "<title>T</title>") == wrapped.format(
        "<p>Hi</p><html x")
    assert html_document("<p>Hi</p><html x", None) == "<p>Hi</p><html x"
    # Each "<html" once read on to the end looking for its ">": quadratic, then an assertion.
    flood = "<html " * 200_000
    assert html_document(flood, "<title>T</title>") == wrapped.format(flood)


def test_the_head_goes_after_the_first_html_tag_however_many_follow():
    body = "<HTML lang=en" + " <html" * 200_000 + "><body>x</body></html>"
    assert html_document(body, "<title>T</title>") == body.replace(
        "><body>", "><head><title>T</title></head><body>", 1)


def test_text_is_derived_from_the_html_and_the_head_is_left_out():
    text = text_from_html(html_document('<h1>Hi</h1><p>Go <a href="https://e.test/x">here</a>'
                                        "</p>", "<title>Not in text</title>"))
    assert "Hi" in text and "here" in text and "https://e.test/x" in text
    assert "Not in text" not in text


def _take(account_id: str, limit: int | None, ip: str = "192.0.2.1") -> int:
    return limits.check("send", ip, None, 10**6, 10**6, account_id, limit).code


def test_allowance_is_taken_up_to_the_limit_and_given_back(settings):
    account = str(factories.account().id)
    assert [_take(account, 2) for _ in range(3)] == [
        limits.OK, limits.OK, limits.ALLOWANCE_EXHAUSTED]
    allowance.give_back(account)
    assert _take(account, 2) == limits.OK
    assert _take(account, 2) == limits.ALLOWANCE_EXHAUSTED


def test_a_lost_counter_is_rebuilt_from_accepted_non_test_notifications(settings):
    ws = factories.workspace()
    for _ in range(3):
        factories.notification(ws, factories.email_payload())
    factories.notification(ws, factories.email_payload(), is_test=True)
    account = str(ws.account_id)
    runtime.redis().delete(allowance.key(account))
    assert _take(account, 4) == limits.OK  # 3 counted from the database, this one is the 4th
    assert int(runtime.redis().get(allowance.key(account))) == 4
    assert _take(account, 4) == limits.ALLOWANCE_EXHAUSTED


def test_the_allowance_key_is_per_utc_month():
    march = dt.datetime(2026, 3, 31, 23, 59, tzinfo=dt.UTC)
    april = dt.datetime(2026, 4, 1, 0, 0, tzinfo=dt.UTC)
    assert allowance.key("a", march) != allowance.key("a", april)
    assert allowance.key("a", march).endswith(":2026-03")


def _same_minute(attempt) -> None:
    """Run ``attempt(n)`` until one run starts and ends in the same clock minute."""
    for n in range(3):
        start = int(time.time() // 60)
        result = attempt(n)
        if int(time.time() // 60) == start:
            result()
            return
    raise AssertionError("the minute changed on every attempt")


def test_ip_window_is_checked_before_the_key_window_and_takes_nothing(settings):
    def attempt(n: int):
        account = str(factories.account().id)
        ip, key = f"198.51.100.{n}", f"k{n}"
        first = limits.check("send", ip, key, 1, 5, account, 10)
        second = limits.check("send", ip, key, 1, 5, account, 10)
        used = int(runtime.redis().get(allowance.key(account)))
        other = [limits.check("send", f"203.0.113.{n}{i}", f"q{n}", 5, 1).code for i in (1, 2)]

        def verify() -> None:
            assert first.code == limits.OK
            assert second.code == limits.IP_LIMITED and 1 <= second.retry_after <= 60
            assert used == 1  # the refused request took no allowance unit
            assert other == [limits.OK, limits.KEY_LIMITED]
        return verify

    _same_minute(attempt)
