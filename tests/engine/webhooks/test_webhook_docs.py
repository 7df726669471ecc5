"""The verification examples of docs/webhooks.md accept Herald's signatures and nothing else."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from engine.webhooks.signatures import sign

DOCS = Path(__file__).resolve().parents[3] / "docs"
SECRET = "whsec_docs-example"
BODY = '{"order": "A-1", "note": "caf\u00e9"}'.encode()


def _python_example():
    source = (DOCS / "webhooks.md").read_text()
    code = re.search(r"```python\n(.*?)```", source, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "webhooks.md", "exec"), namespace)  # the documented example itself
    return namespace["verify_webhook"]


def _headers(timestamp: int, body: bytes = BODY, secret: str = SECRET) -> dict:
    return {"X-Service-Timestamp": str(timestamp), "X-Service-Delivery-Id": "d-42",
            "X-Service-Signature": sign(secret, timestamp, "d-42", body)}


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
    args = [str(now), "d-42", headers["X-Service-Signature"]]
    assert _node(SECRET, body, *args) == "true"
    assert _node("wrong", body, *args) == "false"
    tampered = base64.b64encode(BODY + b" ").decode()
    assert _node(SECRET, tampered, *args) == "false"
    old = now - 400
    stale = _headers(old)
    assert _node(SECRET, body, str(old), "d-42", stale["X-Service-Signature"]) == "false"
