from __future__ import annotations

import pytest

from cli.app import create_app
from engine.catalog import keycache
from tests import factories


@pytest.fixture
def app(settings):
    keycache.clear()
    return create_app(settings)


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
