"""`herald dev` as a new user runs it: one command, a demo key, a send that lands in the inbox."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from engine.queue.embedded_redis import free_port


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _get(url: str, headers: dict | None = None, data: bytes | None = None,
         method: str = "GET") -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


@pytest.mark.slow
def test_herald_dev_serves_sends_to_the_inbox_and_stops_everything(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    env.update({"HERALD_PORT": str(port)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", "dev"], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")),
                              daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 90
        key = None
        while time.monotonic() < deadline and key is None:
            match = re.search(r"X-Api-Key: (hk_[\w-]+)", "".join(lines))
            key = match.group(1) if match else None
            assert proc.poll() is None, "".join(lines)
            time.sleep(0.1)
        assert key, "no demo key printed:\n" + "".join(lines)
        owner = re.search(r"sign in as (owner@example\.com) with the password (\S+)",
                          "".join(lines))
        assert owner, "no way to sign in printed:\n" + "".join(lines)
        assert len(owner.group(2)) >= 10
        base = f"http://127.0.0.1:{port}"
        while time.monotonic() < deadline and not _port_open(port):
            time.sleep(0.1)
        status, body = _get(f"{base}/openapi/v1.json")
        assert status == 200 and json.loads(body)["info"]["version"] == "1.0.0"

        # The curl command it printed, run as printed.
        curl = re.search(r"-d '(\{.*\})'", "".join(lines)).group(1)
        status, body = _get(f"{base}/api/v1/notifications/send", data=curl.encode(),
                            headers={"X-Api-Key": key, "Content-Type": "application/json"},
                            method="POST")
        assert status == 202, body
        messages = []
        while time.monotonic() < deadline and not messages:
            status, body = _get(f"{base}/dev/inbox/messages")
            messages = json.loads(body) if status == 200 else []
            if isinstance(messages, dict):
                messages = messages.get("messages", [])
            time.sleep(0.2)
        assert messages, "the demo email never reached the dev inbox"
        assert messages[0]["subject"] == "Welcome, Ada!"
        redis_ports = [int(p) for p in re.findall(r"redis://127\.0\.0\.1:(\d+)", "".join(lines))]
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole group
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    assert proc.returncode == 0, "".join(lines)
    assert not _port_open(port), "the API still listens after Ctrl-C"
    for redis_port in redis_ports:
        assert not _port_open(redis_port), "the embedded Redis still runs after Ctrl-C"
    # Nothing of the process group is left.
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)


@pytest.mark.slow
def test_herald_dev_fails_when_its_api_server_cannot_start(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.Popen(
            [sys.executable, "-m", "cli", "dev", "--port", str(port)], cwd=tmp_path, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    assert proc.returncode != 0, stderr
    assert f"herald dev: the API server exited (1); stopping everything (exit " \
           f"{proc.returncode})" in stderr, stderr
    redis_ports = [int(p) for p in re.findall(r"redis://127\.0\.0\.1:(\d+)", stdout)]
    assert redis_ports, stdout
    assert not any(_port_open(p) for p in redis_ports), "the embedded Redis was left running"
    with pytest.raises(ProcessLookupError):  # nothing of the process group is left
        os.killpg(proc.pid, 0)
