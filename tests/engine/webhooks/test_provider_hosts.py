"""A workspace's own email provider reaches no private address (issue 37, finding 1): the
host is judged where the URL is set (`herald apply`) and at every connection the worker or
a test send makes, pinned to the address judged. A loopback listener records any
connection: a refusal passes only when nothing arrived there."""

from __future__ import annotations

import json
import socket

import pytest

from engine import runtime
from engine.database.models import DeliveryAttempt
from engine.delivery import providers
from engine.delivery.jobs import deliver_notification
from engine.people import mail
from engine.plugins.contracts import DestinationRefused
from engine.provisioning.checking import document_problems
from engine.queue.embedded_redis import free_port
from engine.webhooks.provider_hosts import ProviderEgress, own_provider_problem
from tests import factories
from tests.support.recording_listener import RecordingListener
from tests.support.smtp_server import start_smtp


@pytest.fixture
def listener():
    server = RecordingListener()
    yield server
    server.close()


@pytest.fixture
def strict(settings, dns_server):
    """Private destinations refused (production's rule), DNS from the loopback server."""
    changed = settings.with_changes(webhook_allow_private=False,
                                    dns_nameservers=(("127.0.0.1", dns_server.port),))
    runtime.configure(changed)
    providers.close_all()
    yield changed
    providers.close_all()
    runtime.configure(settings)


def _own(ws, *urls: str) -> None:
    entries = [{"plugin": url.partition("://")[0], "url": url} for url in urls]
    ws.email_provider = json.dumps(entries[0] if len(entries) == 1 else entries)
    ws.save()


def _attempt(ws):
    n = factories.notification(ws, factories.email_payload())
    deliver_notification(str(n.id))
    return DeliveryAttempt.get(DeliveryAttempt.notification == n.id)


def test_the_worker_never_connects_to_a_private_smtp_host(strict, listener):
    ws = factories.workspace()
    _own(ws, f"smtp://127.0.0.1:{listener.port}?tls=none&timeout=5")
    row = _attempt(ws)
    assert row.outcome == "permanent"
    assert "public addresses only" in row.error
    assert listener.connections == []


@pytest.mark.parametrize("host", ["169.254.169.254", "[::1]", "10.0.0.5", "metadata.test",
                                  "internal.test", "mapped.test", "0x7f.1", "localhost"])
def test_private_hosts_are_refused_where_the_url_is_set(strict, host):
    problem = own_provider_problem(f"smtp://{host}:25", "smtp", strict)
    assert problem and "public addresses only" in problem
    doc = {"accounts": [{"id": "a", "name": "A", "workspaces": [{
        "id": "w", "name": "W", "emailProvider": {"plugin": "smtp",
                                                  "url": f"smtp://{host}:25"}}]}]}
    assert any("public addresses only" in p for p in document_problems(doc))


def test_a_public_host_and_a_name_not_resolvable_now_are_saved(strict):
    assert own_provider_problem("smtp://u:p@public.test:587?tls=starttls", "smtp", strict) is None
    # Not resolvable now: judged again at every connection, not refused for ever.
    assert own_provider_problem("smtp://u:p@down.test:587", "smtp", strict) is None


def test_a_vendor_scheme_carries_no_url_and_its_endpoint_obeys_6_1(strict, listener):
    forged = (f"postmark://tok@x.example?scheme=http://127.0.0.1:{listener.port}"
              "/latest/meta-data%23")
    assert "scheme must be https or http" in own_provider_problem(forged, "postmark", strict)
    plain = f"postmark://tok@127.0.0.1:{listener.port}?scheme=http"
    assert "public addresses only" in own_provider_problem(plain, "postmark", strict)
    ws = factories.workspace()
    _own(ws, plain)
    row = _attempt(ws)
    assert row.outcome == "permanent" and "https:// only" in row.error
    with pytest.raises(DestinationRefused):
        mail.send("ops@example.org", "t", "t", entries=[("postmark", plain)],
                  egress=ProviderEgress(False))
    assert listener.connections == []


def test_the_operators_own_setting_stays_trusted(strict, listener):
    controller, smtp = start_smtp(free_port())
    try:
        runtime.configure(strict.with_changes(
            email_provider=f"smtp://127.0.0.1:{controller.port}?tls=none"))
        providers.close_all()
        row = _attempt(factories.workspace())
        assert row.outcome == "delivered"
        assert len(smtp.received) == 1
    finally:
        controller.stop()


def test_with_private_destinations_allowed_loopback_is_reached_pinned(settings, dns_server):
    controller, smtp = start_smtp(free_port())
    try:
        runtime.configure(settings.with_changes(
            dns_nameservers=(("127.0.0.1", dns_server.port),)))
        providers.close_all()
        ws = factories.workspace()
        # hook.test resolves to 127.0.0.1: the connection goes to the address judged.
        _own(ws, f"smtp://hook.test:{controller.port}?tls=none")
        assert _attempt(ws).outcome == "delivered"
        assert len(smtp.received) == 1
        # Still refused with the setting on: addresses other than loopback.
        with pytest.raises(DestinationRefused):
            ProviderEgress(True).connect("169.254.169.254", 80, 1)
    finally:
        controller.stop()
        providers.close_all()
        runtime.configure(settings)


def test_an_ipv6_loopback_listener_gets_no_connection(strict):
    try:
        server = RecordingListener(socket.AF_INET6)
    except OSError:
        pytest.fail("IPv6 loopback is needed for this test")
    try:
        ws = factories.workspace()
        _own(ws, f"smtp://[::1]:{server.port}?tls=none")
        assert _attempt(ws).outcome == "permanent"
        assert server.connections == []
    finally:
        server.close()


def test_a_timeout_above_30_seconds_is_refused_where_it_is_set(strict):
    problem = own_provider_problem("smtp://public.test:587?timeout=60", "smtp", strict)
    assert problem and "at most 30" in problem
