"""Findings of an attack on a production-like run, request by request (Flask's client, no
browser): each of these failed before its fix (docs/web.md, "Security")."""

from __future__ import annotations

import json

import pytest

from tests import factories
from tests.web.conftest import make_user
from tests.web.test_account_findings import STRANGER, Browser, _member
from web import throttle

SURROGATE_BODY = b'{"subject": "Hi", "body": "<p>\\ud800</p>", "sample": "{}", "editor": "' \
    + b"a" * 16 + b'"}'
SURROGATE_BYTES = b'{"subject": "Hi", "body": "<p>\xed\xa0\x80</p>", "sample": "{}"}'


@pytest.mark.parametrize("body", [SURROGATE_BODY, SURROGATE_BYTES])
def test_a_lone_surrogate_in_an_editor_body_is_a_400_not_a_500(production_app, body):
    ws, template, member = _member(production_app)
    editor = f"/w/{ws.id}/templates/{template.id}"
    for path in ("/draft", "/preview", "/test-sends"):
        answer = member.post_json(editor + path, body, editor)
        assert answer.status_code == 400, (path, answer.status_code)
        assert "surrogate" in answer.text


def test_a_lone_surrogate_in_sample_tags_is_named_not_a_500(production_app):
    ws, template, member = _member(production_app)
    editor = f"/w/{ws.id}/templates/{template.id}"
    body = json.dumps({"subject": "Hi", "body": "<p>{{name}}</p>", "editor": "b" * 16,
                       "sample": '{"name": "\\ud800"}', "recipient": "x@example.com"}).encode()
    preview = member.post_json(editor + "/preview", body, editor)
    assert preview.status_code == 200, preview.status_code
    assert "surrogate" in preview.text
    sent = member.post_json(editor + "/test-sends", body, editor)
    assert sent.status_code < 500 and "surrogate" in sent.text, sent.status_code


# Sign-in and reset limits counted each spelling of an address apart.

# Full-width e, an ideographic full stop, a full-width full stop, a full-width a.
SPELLINGS = ("ada@example.com", "ADA@EXAMPLE.COM", "ada@\uff45xample.com",
             "ada@example\u3002com", "ada@example\uff0ecom", "\uff41da@example.com")


def test_every_spelling_of_an_address_counts_as_one_account(production_app, windows_held):

    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    stranger = Browser(production_app, STRANGER)
    for i in range(throttle.FREE_FAILURES):
        spelling = SPELLINGS[i % len(SPELLINGS)]
        assert stranger.sign_in(spelling, f"guess number {i}").status_code == 400
    # The account's delay now holds every spelling, the right password included.
    for spelling in SPELLINGS:
        assert stranger.sign_in(spelling).status_code == 429, spelling


def test_reset_mail_is_limited_per_address_whatever_its_spelling(production_app, windows_held):

    stranger = Browser(production_app, STRANGER)
    codes = [stranger.post("/reset", {"email": SPELLINGS[i % len(SPELLINGS)]},
                           token_from="/reset").status_code
             for i in range(throttle.RESET_LIMITS["address"] + 1)]
    assert codes[:-1] == [200] * throttle.RESET_LIMITS["address"] and codes[-1] == 429, codes


# A look-alike address (a Cyrillic o, U+043E) could be invited and read as the real one.

def test_an_invitation_to_a_mixed_script_address_says_so(production_app):
    ws = factories.workspace()
    make_user("owner@b.example", ws, "owner", "Owner")
    owner = Browser(production_app)
    owner.sign_in("owner@b.example")
    members = f"/w/{ws.id}/settings/members"
    sent = owner.post(members, {"email": "\u043ewner@b.example", "role": "admin"},
                      token_from=members, follow_redirects=True)
    assert sent.status_code == 200
    assert "mixes Cyrillic and Latin letters" in sent.text
    assert "[U+043E]wner@b.example" in sent.text
    page = owner.get(members).text
    assert page.count("mixes Cyrillic and Latin letters") == 1  # beside the pending one
    plain = owner.post(members, {"email": "ada@b.example", "role": "member"},
                       token_from=members, follow_redirects=True)
    assert plain.text.count("mixes Cyrillic and Latin letters") == 1  # the pending one only


# Hostile previews (a 1 MB body, 8 KB sample values) took 2-8 s each, eight at once.

def test_renders_past_the_process_slots_wait_then_get_a_429(production_app):
    from web.authoring import render_slots

    ws, template, member = _member(production_app)
    editor = f"/w/{ws.id}/templates/{template.id}"
    body = json.dumps({"subject": "Hi", "body": "<p>Hi</p>", "sample": "{}",
                       "editor": "d" * 16, "recipient": "x@example.com"}).encode()
    held = 0
    try:
        while render_slots.slots.acquire(blocking=False):  # as if others were rendering
            held += 1
        assert held == render_slots.RENDERS_AT_ONCE
        for path in ("/preview", "/test-sends"):
            answer = member.post_json(editor + path, body, editor)
            assert answer.status_code == 429, (path, answer.status_code)
            assert "at once" in answer.text
    finally:
        for _ in range(held):
            render_slots.slots.release()
    assert member.post_json(editor + "/preview", body, editor).status_code == 200


# A provider Send test against a relay dripping a byte every few seconds held its thread
# for minutes: each read came inside its timeout.

def test_a_provider_test_ends_at_its_deadline_with_a_dribbling_relay(production_app):
    from tests.plugins.test_smtp_deadline import _Relay
    from web.settings.provider import _tested

    relay = _Relay("dribbling")
    try:
        entries = [("smtp", f"smtp://127.0.0.1:{relay.port}?tls=none&timeout=1")]
        with production_app.app_context():
            answer = _tested("ops@example.org", "a test", entries, "ws-1")
        assert answer["ok"] is False
        assert "timed out" in answer["text"], answer
        assert relay.hung_up.wait(10), "the relay's connection was left open"
    finally:
        relay.close()
