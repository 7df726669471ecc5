"""Secrets and live tokens stay out of what Herald prints: a URL's password in an error,
and tracking or unsubscribe tokens in gunicorn's access log (a real `herald serve`)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time

import pytest

from config.redaction import install_log_masking, mask_secrets
from engine.delivery.tracking import click_url, open_url, unsubscribe_url
from engine.queue.embedded_redis import free_port
from tests.conftest import TEST_SECRET_KEY
from tests.e2e.test_herald_serve import _answer

PASSWORD = "hunter2-Secret"


@pytest.mark.parametrize("text", [
    f"postgresql://herald:{PASSWORD}@db:5432/herald",
    f"redis://:{PASSWORD}@cache:6379/0",
    f"could not connect to rediss://default:{PASSWORD}@cache:6380: refused",
    f"smtp://mx:25?password={PASSWORD}&tls=ssl",
])
def test_a_password_in_any_url_is_masked(text):
    masked = mask_secrets(text)
    assert PASSWORD not in masked and "***" in masked


def test_log_records_and_their_tracebacks_are_masked(caplog):
    install_log_masking()
    log = logging.getLogger("herald.test")
    with caplog.at_level(logging.INFO, logger="herald.test"):
        log.info("connecting to %s", f"redis://:{PASSWORD}@cache:6379")
        try:
            raise ConnectionError(f"postgresql://u:{PASSWORD}@db/x refused")
        except ConnectionError:
            log.exception("lost the database")
    text = "\n".join(logging.Formatter().format(r) for r in caplog.records)
    assert "lost the database" in text and "ConnectionError" in text
    assert PASSWORD not in text


def test_a_configuration_error_does_not_print_the_database_password(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    env["HERALD_DATABASE_URL"] = f"postgresql://herald:{PASSWORD}@db:99999/herald"
    proc = subprocess.run([sys.executable, "-m", "cli", "db", "upgrade"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "HERALD_DATABASE_URL" in proc.stderr, proc.stderr
    assert PASSWORD not in proc.stderr and "herald:***@db" in proc.stderr


@pytest.mark.slow
def test_the_access_log_holds_tracking_paths_without_their_tokens(settings, tmp_path):
    port = free_port()
    log_path = tmp_path / "serve.log"
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
           "HERALD_REDIS_URL": settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
           "HOME": str(tmp_path)}
    tokens = [url.rsplit("/", 1)[1] for url in (
        unsubscribe_url("00000000-0000-0000-0000-000000000001", "ada@example.net"),
        click_url("00000000-0000-0000-0000-000000000001", "ada@example.net", "https://x.test"),
        open_url("00000000-0000-0000-0000-000000000001", "ada@example.net"))]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--host", "127.0.0.1",
                                 "--port", str(port), "--workers", "1"], env=env,
                                stdout=log, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while _answer(port, b"GET /t/o/x HTTP/1.1\r\nHost: x\r\n\r\n") is None:
            assert proc.poll() is None and time.monotonic() < deadline, "serve never answered"
            time.sleep(0.1)
        for kind, token in zip("uco", tokens, strict=True):
            _answer(port, f"GET /t/{kind}/{token} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        deadline = time.monotonic() + 30
        while log_path.read_text().count("/t/o/***") < 2:  # the probe and the last request
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    text = log_path.read_text()
    assert "/t/u/***" in text and "/t/c/***" in text
    assert not any(token in text for token in tokens), text
