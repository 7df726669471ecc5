from __future__ import annotations

import pytest

from engine.catalog import keycache
from engine.delivery import providers
from engine.queue.embedded_redis import free_port
from plugins.smtp import SmtpProvider
from tests.support.smtp_server import start_smtp


@pytest.fixture
def smtp():
    controller, handler = start_smtp(free_port())
    handler.port = controller.port
    handler.reads = []
    yield handler
    controller.stop()


@pytest.fixture
def provider(smtp):
    """An SMTP provider pointed at the ``smtp`` server, closed after the test."""
    provider = SmtpProvider(f"smtp://127.0.0.1:{smtp.port}?tls=none&timeout=5")
    yield provider
    provider.close()


@pytest.fixture
def smtp_settings(settings, smtp):
    """The test's settings with the ``smtp`` server as the email provider, configured for
    the engine; the settings and provider connections restored after the test."""
    from engine import runtime

    changed = settings.with_changes(email_provider=f"smtp://127.0.0.1:{smtp.port}?tls=none")
    runtime.configure(changed)
    providers.close_all()
    keycache.clear()
    yield changed
    providers.close_all()
    runtime.configure(settings)
