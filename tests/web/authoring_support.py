"""What the authoring browser tests share: a real worker process, typing into the code
editor as a person does, the `herald` command, polling with a deadline."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from playwright.sync_api import Page

from tests.conftest import TEST_SECRET_KEY


def herald_env(live, **extra: str) -> dict[str, str]:
    return {**os.environ, "HERALD_ENV": "test",
            "HERALD_DATABASE_URL": live.settings.database_url,
            "HERALD_REDIS_URL": live.settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
            "HERALD_PUBLIC_URL": live.url, "HERALD_EMAIL_PROVIDER": "inbox://",
            "HERALD_SMS_PROVIDER": "inbox://",
            # As the live server's settings: the tests' HTTPS receiver listens on loopback.
            "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS": "true", **extra}


def herald(live, *args: str, stdin: str | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-m", "cli", *args], env=herald_env(live),
                          input=stdin, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@contextmanager
def running_worker(live, **extra: str) -> Iterator[subprocess.Popen]:
    """`python -m engine.worker.worker` on the tests' database and Redis, the dev inbox as its
    email and SMS provider: what a deployment runs beside the web application."""
    proc = subprocess.Popen([sys.executable, "-m", "engine.worker.worker"],
                            env=herald_env(live, **extra), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def replace_text(page: Page, name: str, text: str) -> None:
    """Select everything in the field named ``name`` and type ``text`` over it, as a person
    does (in the code editor too: its input carries the field's accessible name)."""
    page.wait_for_load_state()  # the code editor is set up by a deferred script
    box = page.get_by_role("textbox", name=name, exact=True)
    box.focus()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(text)


def click_when_ready(page: Page, button: str) -> None:
    """Click a button whose form htmx sends, once the page's deferred scripts have run."""
    page.wait_for_load_state()
    page.get_by_role("button", name=button).click()


def code_text(page: Page, name: str) -> str:
    """What the field named ``name`` holds (the code editor copies into its textarea)."""
    return page.locator(f"textarea[name={name}]").input_value()
