"""A third-party channel, end to end: examples/herald-chat-channel installed as an operator
installs it, a template of its channel applied with `herald apply`, sent through the API,
and delivered by a real worker process to a local HTTP server; and a listener plugin of the
delivery-outcome hooks, installed the same way, hearing that notification's outcome in the
worker process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.database.models import DeliveryAttempt, Notification
from engine.plugins import manager
from tests.conftest import TEST_SECRET_KEY
from tests.support.vendor_server import VendorServer


@pytest.fixture
def chat_server():
    server = VendorServer(lambda path, headers, body: (200, {"X-Message-Id": "m-1"}, {}))
    yield server
    server.close()


@pytest.fixture
def chat_plugin(example_package, plugins_from) -> Path:
    target = example_package("herald-chat-channel")
    plugins_from(target)
    return target


def _env(settings, plugin: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(plugin), "HERALD_ENV": "test",
            "HERALD_DATABASE_URL": settings.database_url, "HERALD_REDIS_URL": settings.redis_url,
            "HERALD_SECRET_KEY": TEST_SECRET_KEY}


def _apply(settings, plugin: Path, tmp_path: Path, url: str) -> dict:
    document = {"accounts": [{"name": "Chat Co", "plan": "pro", "monthlyLimit": 100,
                              "workspaces": [{"name": "Ops", "apiKeys": [{"name": "bot"}],
                                              "projects": [{"name": "Alerts", "templates": [{
                                                  "name": "Deploys", "channel": "chat",
                                                  "versions": [{"status": "published",
                                                                "body": "Deployed {{service}}",
                                                                "url": url}]}]}]}]}]}
    path = tmp_path / "chat.yaml"
    path.write_text(json.dumps(document))
    proc = subprocess.run([sys.executable, "-m", "cli", "apply", str(path)],
                          env=_env(settings, plugin), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_chat_template_is_applied_sent_and_delivered_by_a_worker(settings, chat_plugin,
                                                                   chat_server, tmp_path):
    from cli.app import create_app
    from engine.database.models import Template

    assert "chat" in manager.default_registry().channels
    applied = _apply(settings, chat_plugin, tmp_path,
                     f"http://127.0.0.1:{chat_server.port}/hooks/ops")
    (key,) = applied["apiKeys"]
    template = Template.get(Template.name == "Deploys")
    assert template.channel == "chat"

    client = create_app(settings).test_client()
    body = {"tenantId": key["workspaceId"], "templateId": str(template.id),
            "tags": [{"key": "service", "value": "api"}],
            "chatOptions": {"username": "deploy-bot"}}
    refused = client.post("/api/v1/notifications/send", headers={"X-Api-Key": key["key"]},
                          json={**body, "chatOptions": {"username": ""}})
    assert refused.status_code == 400
    assert refused.get_json()["errorCodes"] == ["notifications.chat.username_invalid"]
    sent = client.post("/api/v1/notifications/send", headers={"X-Api-Key": key["key"]},
                       json=body)
    assert sent.status_code == 202, sent.get_json()

    worker = subprocess.run([sys.executable, "-m", "engine.worker.worker", "--burst"],
                            env=_env(settings, chat_plugin), capture_output=True, text=True,
                            timeout=120)
    assert worker.returncode == 0, worker.stderr
    deadline = time.monotonic() + 30
    while not chat_server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    ((path, headers, raw),) = chat_server.requests
    assert path == "/hooks/ops" and headers["Content-Type"] == "application/json"
    assert json.loads(raw) == {"text": "Deployed api", "username": "deploy-bot"}
    notification = Notification.get(Notification.template == template.id)
    assert notification.channel == "chat" and notification.status == "delivered"
    (attempt,) = DeliveryAttempt.select().where(DeliveryAttempt.notification == notification)
    assert attempt.outcome == "delivered" and attempt.provider_message_id == "m-1"


LISTENER = '''"""Writes each delivery outcome it hears to OUTCOMES_FILE, a line each."""
import json
import os

from engine.plugin_api import hookimpl


def _write(event, notification, attempt):
    with open(os.environ["OUTCOMES_FILE"], "a") as out:
        out.write(json.dumps({"event": event, "notification": notification,
                              "attempt": attempt}, default=str) + "\\n")


@hookimpl
def notification_delivered(notification, attempt):
    _write("delivered", notification, attempt)


@hookimpl
def notification_failed(notification, attempt):
    _write("failed", notification, attempt)
'''


@pytest.fixture
def outcome_listener(tmp_path_factory) -> Path:
    """A listener plugin of the delivery-outcome hooks, pip-installed into a folder of its
    own as an operator installs one: Herald finds it by its entry point only."""
    source = tmp_path_factory.mktemp("listener-src")
    (source / "herald_outcome_listener.py").write_text(LISTENER)
    (source / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"'
        '\n\n[project]\nname = "herald-outcome-listener"\nversion = "0.1.0"\n\n'
        '[project.entry-points.herald]\noutcome_listener = "herald_outcome_listener"\n\n'
        '[tool.setuptools]\npy-modules = ["herald_outcome_listener"]\n')
    target = tmp_path_factory.mktemp("site-listener")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                           "--target", str(target), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return target


def test_a_listener_plugin_hears_the_chat_notifications_outcome_in_the_worker(
        settings, chat_plugin, outcome_listener, chat_server, tmp_path):
    from cli.app import create_app
    from engine.database.models import Template

    applied = _apply(settings, chat_plugin, tmp_path,
                     f"http://127.0.0.1:{chat_server.port}/hooks/ops")
    (key,) = applied["apiKeys"]
    template = Template.get(Template.name == "Deploys")
    sent = create_app(settings).test_client().post(
        "/api/v1/notifications/send", headers={"X-Api-Key": key["key"]},
        json={"tenantId": key["workspaceId"], "templateId": str(template.id),
              "tags": [{"key": "service", "value": "api"}]})
    assert sent.status_code == 202, sent.get_json()

    outcomes = tmp_path / "outcomes.jsonl"
    env = {**_env(settings, chat_plugin), "OUTCOMES_FILE": str(outcomes),
           "PYTHONPATH": os.pathsep.join([str(chat_plugin), str(outcome_listener)])}
    # A real worker process: the chat channel and the listener are its plugins, found by
    # their entry points; the burst ends once the delivery in its slot has ended, and the
    # hook is called in that slot once the outcome is committed.
    worker = subprocess.run([sys.executable, "-m", "engine.worker.worker", "--burst"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert worker.returncode == 0, worker.stderr
    assert len(chat_server.requests) == 1
    notification = Notification.get(Notification.template == template.id)
    (heard,) = [json.loads(line) for line in outcomes.read_text().splitlines()]
    assert heard["event"] == "delivered"
    assert heard["notification"] == {"id": str(notification.id), "channel": "chat",
                                     "workspaceId": key["workspaceId"], "status": "delivered"}
    assert heard["attempt"]["outcome"] == "delivered"
    assert heard["attempt"]["provider_message_id"] == "m-1"
