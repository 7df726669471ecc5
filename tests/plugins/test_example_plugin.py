"""A third-party provider installed as a package and found through the `herald` entry points."""

from __future__ import annotations

import json

import pytest

from engine.database.models import Notification
from engine.delivery.jobs import deliver_notification
from engine.plugins import manager
from tests import factories


@pytest.fixture
def installed_example(example_package, plugins_from):
    target = example_package("herald-provider-example")
    plugins_from(target)
    return target


def test_installed_package_registers_its_provider_through_entry_points(installed_example):
    registry = manager.build_registry(manager.make_plugin_manager())
    assert "example-log" in registry.providers
    # The built-ins come through the same group.
    assert {"smtp", "inbox", "postmark", "twilio"} <= set(registry.providers)
    assert {"email", "sms", "webhook"} <= set(registry.channels)


def test_a_workspace_delivers_through_the_installed_provider(installed_example, settings,
                                                             tmp_path):
    log = tmp_path / "mail.jsonl"
    own = json.dumps({"plugin": "example-log", "url": f"example-log://{log}"})
    ws = factories.workspace(email_provider=own)
    n = factories.notification(ws, factories.email_payload(subject="Via the plugin"))
    assert deliver_notification(str(n.id)) == "delivered"
    (line,) = [json.loads(x) for x in log.read_text().splitlines()]
    assert line["subject"] == "Via the plugin" and line["to"] == ["ada@example.net"]
    assert Notification.get_by_id(n.id).status == "delivered"


def test_a_scheme_an_installed_plugin_declares_is_a_valid_provider_setting(installed_example,
                                                                           tmp_path):
    from config.settings import ConfigError, load_settings

    url = f"example-log://{tmp_path / 'mail.jsonl'}"
    manager.check_providers(load_settings({"HERALD_EMAIL_PROVIDER": url}))
    # The plugin's own URL check runs at start-up too.
    with pytest.raises(ConfigError, match="HERALD_SMS_PROVIDER: example-log provider: use"):
        manager.check_providers(load_settings({"HERALD_SMS_PROVIDER": "example-log://"}))


def test_the_installed_provider_brings_its_events(installed_example, settings, tmp_path):
    """Its receiver, registered through `register_event_webhooks`, is served by the one
    generic inbound route: authenticated by the workspace's own secret for this provider
    (Herald's, as for a built-in: never Postmark's, never another workspace's), matched by
    message id, recorded."""
    from cli.app import create_app
    from engine.database.models import Suppression
    from engine.database.models.reports import NotificationEvent
    from engine.inbound import workspace_secrets

    log = tmp_path / "mail.jsonl"
    own = json.dumps({"plugin": "example-log", "url": f"example-log://{log}"})
    ws = factories.workspace(email_provider=own)
    n = factories.notification(ws, factories.email_payload(subject="Bounce me"))
    assert deliver_notification(str(n.id)) == "delivered"
    (line,) = [json.loads(x) for x in log.read_text().splitlines()]
    client = create_app(settings).test_client()
    url = f"/api/inbound/example-log/{ws.id}"
    body = {"messageId": line["messageId"], "event": "bounced",
            "recipient": "ada@example.net"}
    other = factories.workspace()
    for forged in ("not-the-secret", workspace_secrets.secret(ws.id, "postmark"),
                   workspace_secrets.secret(other.id, "example-log")):
        refused = client.post(url, json=body, auth=("herald", forged))
        assert refused.status_code == 403 and not NotificationEvent.select().count()
    assert client.post(url, json=body).status_code == 401
    given = workspace_secrets.webhook_url(ws.id, "example-log")
    secret = workspace_secrets.secret(ws.id, "example-log")
    assert given == f"http://herald:{secret}@herald.test{url}"
    answer = client.post(url, json=body, auth=("herald", secret))
    assert answer.status_code == 200 and answer.json == {"recorded": True}
    event = NotificationEvent.get(NotificationEvent.notification == n.id)
    assert (event.kind, event.source, event.recipient) == ("bounced", "example-log",
                                                            "ada@example.net")
    assert Suppression.get(Suppression.workspace == ws.id).address == "ada@example.net"
    unknown = client.post(url, json={**body, "messageId": "<nobody@example>"},
                          auth=("herald", secret))
    assert unknown.status_code == 200 and unknown.json == {"recorded": False}
    assert client.post("/api/inbound/no-such-provider/x", json=body).status_code == 404


def test_the_installed_provider_gets_its_url_and_rotation_from_the_cli(installed_example,
                                                                      settings, tmp_path):
    """`herald inbound url` and `herald secret rotate-inbound` serve the installed provider
    as they serve Postmark: its own secret, its own audit line, Postmark's untouched."""
    import os
    import subprocess
    import sys

    from engine.database.models.people import AuditEvent
    from engine.inbound import workspace_secrets
    from tests.conftest import TEST_SECRET_KEY

    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
           "HERALD_REDIS_URL": settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
           "HERALD_PUBLIC_URL": settings.public_url,
           "PYTHONPATH": os.pathsep.join([str(installed_example),
                                          os.environ.get("PYTHONPATH", "")])}

    def herald(*args: str) -> dict:
        proc = subprocess.run([sys.executable, "-m", "cli", *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    ws = factories.workspace()
    postmark_secret = workspace_secrets.secret(ws.id, "postmark")
    given = herald("inbound", "url", "--workspace", str(ws.id), "--provider", "example-log")
    assert given == {"workspaceId": str(ws.id), "provider": "example-log",
                     "url": workspace_secrets.webhook_url(ws.id, "example-log")}
    rotated = herald("secret", "rotate-inbound", "--workspace", str(ws.id),
                     "--provider", "example-log")
    assert rotated["url"] != given["url"]
    assert rotated["url"] == workspace_secrets.webhook_url(ws.id, "example-log")
    assert workspace_secrets.secret(ws.id, "postmark") == postmark_secret
    (event,) = AuditEvent.select().where(AuditEvent.workspace == ws.id)
    assert (event.action, event.subject, event.details) == (
        "inbound_secret.rotated", "Example log", {"provider": "example-log"})
