from __future__ import annotations

import pytest

from engine import runtime
from engine.catalog import keycache
from engine.delivery import providers
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.support.smtp_server import start_smtp


@pytest.fixture
def app(settings, app_for):
    keycache.clear()
    return app_for(settings)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def tenant(settings):
    """A workspace with a live email template and an active key."""
    ws = factories.workspace()
    tpl = factories.template(ws, defaults={"to": ["team@example.com"]})
    key = factories.api_key(ws)
    return {"ws": ws, "template": tpl, "key": key,
            "body": {"tenantId": str(ws.id), "templateId": str(tpl.id),
                     "tags": [{"key": "name", "value": "Ada"}]}}


@pytest.fixture
def smtp(settings):
    """A real SMTP server the service's provider delivers to."""
    controller, handler = start_smtp(free_port())
    runtime.configure(settings.with_changes(
        email_provider=f"smtp://127.0.0.1:{controller.port}?tls=none"))
    providers.close_all()
    yield handler
    providers.close_all()
    runtime.configure(settings)
    controller.stop()
