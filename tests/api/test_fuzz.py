"""Mutation fuzzing of a valid request: whatever a caller sends, never a 5xx (D2).

schemathesis generates from the document, so most of its requests stop at tenant_mismatch;
this run starts from a body that reaches rendering and breaks one or a few members at a
time, so the deeper stages (template, recipients, headers, attachments, render) see junk.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random

from cli.app import create_app
from tests import factories

SEND = "/api/v1/notifications/send"
PREVIEW = "/api/v1/notifications/preview"
JUNK: list[object] = [
    None, True, False, 0, -1, 2**31, 2**63, 1.5, float("1e308"), "", " ", "\r\n", "\x00",
    "a" * 300, "x@", "Ada <ada@example.com>", "ada@example.com\r\nBcc: x@example.com",
    "+14155550100", "https://127.0.0.1/hook", "http://[::1]:8443/x", "{{#each}}", "{{name",
    "é" * 10,
    [], [None], [""], ["ada@example.com"] * 3, [1, 2], {}, {"key": 1}, {"a": "b"},
    {"X-Thing": "v"}, {"X-SVC-A": "v"}, {"": ""}, [{"key": "k", "value": "v"}],
    [{"name": "a.pdf", "content": "aGk=", "contentType": "application/pdf", "cid": 5}],
    [{"name": "a.exe", "content": "!!", "contentType": "text/javascript"}],
    "00000000-0000-0000-0000-000000000000",
]
PATHS = [
    ("tenantId",), ("templateId",), ("tags",), ("tags", 0), ("tags", 0, "key"),
    ("tags", 0, "value"), ("versionNumber",), ("emailOptions",), ("smsOptions",),
    ("webhookOptions",), ("emailOptions", "to"), ("emailOptions", "cc"),
    ("emailOptions", "bcc"), ("emailOptions", "overrideRecipients"),
    ("emailOptions", "fromAddress"), ("emailOptions", "replyTo"),
    ("emailOptions", "attachments"), ("emailOptions", "customHeaders"),
    ("emailOptions", "trackOpens"), ("emailOptions", "priority"),
    ("emailOptions", "sensitivity"), ("emailOptions", "requestReadReceipt"),
    ("smsOptions", "to"), ("smsOptions", "fromNumber"), ("smsOptions", "overrideRecipients"),
    ("webhookOptions", "urlOverride"), ("webhookOptions", "headers"),
]


def _set(body: dict, path: tuple, value: object) -> None:
    node: object = body
    for step in path[:-1]:
        if isinstance(node, dict):
            node = node.setdefault(step, {}) if not isinstance(node.get(step), (dict, list)) \
                else node[step]
        elif isinstance(node, list) and isinstance(step, int) and step < len(node):
            node = node[step]
        else:
            return
    last = path[-1]
    in_list = isinstance(node, list) and isinstance(last, int) and last < len(node)
    if isinstance(node, dict) or in_list:
        node[last] = value  # type: ignore[index]


def test_mutated_requests_never_get_a_server_error(settings):
    # Rate limits out of the way: every request must reach the pipeline.
    unlimited = dataclasses.replace(settings, rate_limit_send_per_key=10**6,
                                    rate_limit_send_per_ip=10**6)
    client = create_app(unlimited).test_client()
    ws = factories.workspace()
    email = factories.template(ws, defaults={"to": ["team@example.com"]})
    sms = factories.template(ws, channel="sms", defaults={"to": ["+14155550100"]})
    # IP-literal destinations only: the destination check must not need DNS.
    webhook = factories.template(ws, channel="webhook")
    key = factories.api_key(ws)
    rng = random.Random(4)
    seen: set[int] = set()
    for _ in range(800):
        template = rng.choice([email, email, sms, webhook])
        body: dict = {"tenantId": str(ws.id), "templateId": str(template.id),
                      "tags": [{"key": "name", "value": "Ada"}]}
        for _ in range(rng.randint(1, 3)):
            _set(body, rng.choice(PATHS), copy.deepcopy(rng.choice(JUNK)))
        path = rng.choice([SEND, PREVIEW])
        response = client.post(path, data=json.dumps(body), content_type="application/json",
                               headers={"X-Api-Key": key})
        seen.add(response.status_code)
        assert response.status_code < 500, (path, body, response.data[:500])
        if response.status_code >= 400 and response.status_code != 413:
            assert response.mimetype == "application/problem+json", (path, body)
            assert response.json["correlationId"] == response.headers["X-Correlation-Id"]
    # The run must have reached acceptance and refusals alike, or it proves little.
    assert {200, 202, 400} <= seen
