"""The verification examples of docs/webhooks.md accept Herald's signatures and nothing else."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from engine.webhooks.signatures import sign, sign_v2, verify_webhook, verify_webhook_v2

DOCS = Path(__file__).resolve().parents[3] / "docs"
SECRET = "whsec_docs-example"
BODY = '{"order": "A-1", "note": "caf\u00e9"}'.encode()
ID = "5f0c6a52-8a43-4d1e-9a57-3c1b2f6f7d10"
URL = "https://hooks.example.com/herald"


def _python_example():
    source = (DOCS / "webhooks.md").read_text()
    code = re.search(r"```python\n(.*?)```", source, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "webhooks.md", "exec"), namespace)  # the documented example itself
    return namespace["verify_webhook"]


def _python_example_v2():
    source = (DOCS / "webhooks.md").read_text()
    namespace: dict = {}
    exec(compile(re.search(r"```python\n(.*?)```", source, re.S).group(1), "webhooks.md",
                 "exec"), namespace)
    return namespace["verify_webhook_v2"]


def _headers(timestamp: int, body: bytes = BODY, secret: str = SECRET) -> dict:
    return {"X-Service-Timestamp": str(timestamp), "X-Service-Delivery-Id": ID,
            "X-Service-Signature": sign(secret, timestamp, ID, body),
            "X-Herald-Signature": sign_v2(secret, timestamp, ID, URL, body)}


def test_python_example_verifies():
    verify = _python_example()
    now = int(time.time())
    assert verify(SECRET, BODY, _headers(now))
    assert not verify(SECRET, BODY + b" ", _headers(now))
    assert not verify("wrong", BODY, _headers(now))
    assert not verify(SECRET, BODY, _headers(now - 301))


def _node(*args: str) -> str:
    return subprocess.run(["node", str(DOCS / "examples" / "verify_webhook.js"), *args],
                          capture_output=True, text=True, timeout=30, check=True).stdout


def test_node_example_verifies():
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the Node example cannot run here")
    now = int(time.time())
    headers = _headers(now)
    body = base64.b64encode(BODY).decode()
    args = [str(now), ID, headers["X-Service-Signature"]]
    assert _node(SECRET, body, *args) == "true"
    assert _node("wrong", body, *args) == "false"
    tampered = base64.b64encode(BODY + b" ").decode()
    assert _node(SECRET, tampered, *args) == "false"
    old = now - 400
    stale = _headers(old)
    assert _node(SECRET, body, str(old), ID, stale["X-Service-Signature"]) == "false"


def _ambiguous(now: int) -> list[dict]:
    """Headers that verify the spec's v1 string for some body yet are not Herald's: the
    body's prefix moved into the delivery id, and a timestamp with a sign and spaces."""
    body = b'{"a":1}.{"b":2}'
    moved_id, moved_body = f'{ID}.{{"a":1}}', b'{"b":2}'
    assert sign(SECRET, now, moved_id, moved_body) == sign(SECRET, now, ID, body)
    spaced = {"X-Service-Timestamp": f" +{now} ", "X-Service-Delivery-Id": ID,
              "X-Service-Signature": sign(SECRET, now, ID, BODY)}
    return [({"X-Service-Timestamp": str(now), "X-Service-Delivery-Id": moved_id,
              "X-Service-Signature": sign(SECRET, now, ID, body)}, moved_body),
            (spaced, BODY)]


def _verifiers():
    yield "engine", verify_webhook
    yield "docs", _python_example()


@pytest.mark.parametrize("which", ["engine", "docs"])
def test_ambiguous_ids_and_timestamps_are_refused(which):
    verify = dict(_verifiers())[which]
    now = int(time.time())
    assert verify(SECRET, BODY, _headers(now))
    for headers, body in _ambiguous(now):
        assert not verify(SECRET, body, headers), headers


def test_node_example_refuses_ambiguous_ids_and_timestamps():
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the Node example cannot run here")
    now = int(time.time())
    for headers, body in _ambiguous(now):
        args = [headers["X-Service-Timestamp"], headers["X-Service-Delivery-Id"],
                headers["X-Service-Signature"]]
        assert _node(SECRET, base64.b64encode(body).decode(), *args) == "false", headers


@pytest.mark.parametrize("which", ["engine", "docs"])
def test_v2_binds_the_destination_url(which):
    verify = verify_webhook_v2 if which == "engine" else _python_example_v2()
    now = int(time.time())
    headers = _headers(now)
    assert verify(SECRET, BODY, headers, URL)
    assert not verify(SECRET, BODY, headers, "https://other.example.com/herald")
    assert not verify(SECRET, BODY + b" ", headers, URL)
    assert not verify(SECRET, BODY, {**headers, "X-Herald-Signature": ""}, URL)


def test_node_example_verifies_v2():
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the Node example cannot run here")
    now = int(time.time())
    headers = _headers(now)
    args = [SECRET, base64.b64encode(BODY).decode(), str(now), ID,
            headers["X-Service-Signature"], headers["X-Herald-Signature"]]
    assert _node(*args, URL) == "true"
    assert _node(*args, "https://other.example.com/herald") == "false"
