"""A new user's first webhook: `herald dev`, then the README's first steps as written, then a
signed webhook in the dev inbox."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine.queue.embedded_redis import free_port
from engine.webhooks.signatures import verify_webhook
from tests.e2e.test_herald_dev import _get, _port_open

README = Path(__file__).resolve().parents[2] / "README.md"


def _first_steps(port: int) -> str:
    """The README's first shell block under "First steps", aimed at ``port``; the line that
    sets KEY is the reader's to fill in, so the test sets KEY itself."""
    text = README.read_text()
    section = text[text.index("## First steps"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    lines = [line for line in block.splitlines() if not line.startswith("KEY=")]
    return "\n".join(lines).replace("127.0.0.1:8000", f"127.0.0.1:{port}")


def _printed(lines: list[str], pattern: str, proc: subprocess.Popen, deadline: float) -> str:
    while time.monotonic() < deadline:
        if match := re.search(pattern, "".join(lines)):
            return match.group(1)
        assert proc.poll() is None, "".join(lines)
        time.sleep(0.1)
    raise AssertionError(f"herald dev never printed {pattern}:\n" + "".join(lines))


@pytest.mark.slow
def test_the_readme_first_steps_bring_a_signed_webhook_to_the_dev_inbox(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    env["HERALD_PORT"] = str(port)
    proc = subprocess.Popen([sys.executable, "-m", "cli", "dev"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")),
                     daemon=True).start()
    try:
        deadline = time.monotonic() + 90
        key = _printed(lines, r"X-Api-Key: (hk_[\w-]+)", proc, deadline)
        secret = _printed(lines, r"Signing secret: (\S+)", proc, deadline)
        while not _port_open(port):
            assert time.monotonic() < deadline, "the API never listened"
            time.sleep(0.1)
        steps = subprocess.run(["bash", "-eu", "-c", _first_steps(port)], capture_output=True,
                               text=True, timeout=60, env={**os.environ, "KEY": key})
        assert steps.returncode == 0, steps.stderr
        assert steps.stdout.count('"accepted": true') == 2, steps.stdout

        caught: list[dict] = []
        while not caught:
            assert time.monotonic() < deadline, "no webhook reached the dev inbox"
            status, body = _get(f"http://127.0.0.1:{port}/dev/inbox/webhooks/demo")
            caught = json.loads(body) if status == 200 else []
            time.sleep(0.2)
        (webhook,) = caught
        assert webhook["signatureVerified"] is True, webhook
        assert webhook["verdict"] == "signature verifies"
        assert json.loads(webhook["body"]) == {"order": "A-1001"}
        # The secret herald dev printed verifies it too, as the user's own receiver would.
        assert verify_webhook(secret, webhook["body"].encode(), webhook["headers"])
        status, page = _get(f"http://127.0.0.1:{port}/dev/inbox")
        assert status == 200
        assert "signature verifies" in page.decode() and "A-1001" in page.decode()
        assert webhook["headers"]["X-Service-Delivery-Id"] in page.decode()
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    assert proc.returncode == 0, "".join(lines)
