"""Findings of an attack on a production-like run, request by request (Flask's client, no
browser): each of these failed before its fix (docs/web.md, "Security")."""

from __future__ import annotations

import json

import pytest

from tests.web.test_account_findings import _member

SURROGATE_BODY = b'{"subject": "Hi", "body": "<p>\\ud800</p>", "sample": "{}", "editor": "' \
    + b"a" * 16 + b'"}'
SURROGATE_BYTES = b'{"subject": "Hi", "body": "<p>\xed\xa0\x80</p>", "sample": "{}"}'


@pytest.fixture
def app(settings):
    from cli.app import create_app

    return create_app(settings.with_changes(env="production"))


@pytest.mark.parametrize("body", [SURROGATE_BODY, SURROGATE_BYTES])
def test_a_lone_surrogate_in_an_editor_body_is_a_400_not_a_500(app, body):
    ws, template, member = _member(app)
    editor = f"/w/{ws.id}/templates/{template.id}"
    for path in ("/draft", "/preview", "/test-sends"):
        answer = member.post_json(editor + path, body, editor)
        assert answer.status_code == 400, (path, answer.status_code)
        assert "surrogate" in answer.text


def test_a_lone_surrogate_in_sample_tags_is_named_not_a_500(app):
    ws, template, member = _member(app)
    editor = f"/w/{ws.id}/templates/{template.id}"
    body = json.dumps({"subject": "Hi", "body": "<p>{{name}}</p>", "editor": "b" * 16,
                       "sample": '{"name": "\\ud800"}', "recipient": "x@example.com"}).encode()
    preview = member.post_json(editor + "/preview", body, editor)
    assert preview.status_code == 200, preview.status_code
    assert "surrogate" in preview.text
    sent = member.post_json(editor + "/test-sends", body, editor)
    assert sent.status_code < 500 and "surrogate" in sent.text, sent.status_code
