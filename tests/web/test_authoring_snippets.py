"""The integrator snippets are code that runs: the Python parses and sends the request
body it shows, the curl command's data is that body, whatever the sample holds."""

from __future__ import annotations

import ast
import json
import shlex

from web.authoring import snippets

TAGS = {"name": "O'Brien \"Ada\"", "note": "line\nbreak $HOME `x` \\ é \u2028"}


def _body(channel: str, has_default_to: bool = False) -> dict:
    class Named:
        def __init__(self, ident: str, **more) -> None:
            self.id = ident
            self.__dict__.update(more)

    return snippets.request_body(Named("ws-1"), Named("tpl-1", channel=channel), TAGS,
                                 has_default_to)


def test_the_python_snippet_sends_the_body_it_shows():
    body = _body("email")
    code = snippets.python("https://herald.example/", body)
    tree = ast.parse(code)
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "post")
    assert ast.literal_eval(call.args[0]) == "https://herald.example/api/v1/notifications/send"
    sent = ast.literal_eval(next(k.value for k in call.keywords if k.arg == "json"))
    assert sent == body and sent["tags"][0] == {"key": "name", "value": TAGS["name"]}


def test_the_curl_snippet_quotes_the_body_for_the_shell():
    body = _body("webhook")
    words = shlex.split(snippets.curl("https://herald.example", body).replace("\\\n", ""))
    assert words[:4] == ["curl", "-sS", "-X", "POST"]
    assert json.loads(words[words.index("-d") + 1]) == body
    assert body["webhookOptions"] == {"urlOverride": "https://example.com/hooks"}
    assert "$HERALD_API_KEY" in words[words.index("-H", 6) + 1]


def test_a_recipient_placeholder_only_where_the_template_has_none():
    assert "emailOptions" not in _body("email", has_default_to=True)
    assert _body("sms")["smsOptions"] == {"to": ["+14155550100"]}
