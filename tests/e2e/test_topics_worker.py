"""Topics through the real parts: sends accepted by the API, delivered by a real
`herald worker --burst` process to a real SMTP server (aiosmtpd); the recipient's link
opened (a GET changes nothing) and their preferences saved without `news`: the next
`news` email is suppressed, a `product` one and a Transactional one arrive."""

from __future__ import annotations

import email
import json
import os
import re
import subprocess
import sys
from email import policy

import pytest

from cli.app import create_app
from engine import runtime
from engine.catalog import topics
from engine.database.models import Notification, Suppression
from engine.delivery import providers
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.conftest import TEST_SECRET_KEY
from tests.support.smtp_server import start_smtp

pytestmark = pytest.mark.slow
SEND = "/api/v1/notifications/send"
ADA = "ada@example.net"


def test_a_saved_preference_holds_for_the_real_worker(settings, tmp_path):
    controller, smtp = start_smtp(free_port())
    provider = f"smtp://127.0.0.1:{controller.port}?tls=none"
    configured = settings.with_changes(email_provider=provider)
    runtime.configure(configured)
    providers.close_all()
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
           "HERALD_REDIS_URL": settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
           "HERALD_PUBLIC_URL": settings.public_url, "HERALD_EMAIL_PROVIDER": provider}
    try:
        ws = factories.workspace()
        topics.add(ws.id, "news")
        topics.add(ws.id, "product")
        key = factories.api_key(ws)
        templates = {
            "news": factories.template(ws, content={"emailType": "Marketing", "topic": "news"}),
            "product": factories.template(ws, content={"emailType": "Marketing",
                                                       "topic": "product"}),
            "reset": factories.template(ws)}
        client = create_app(configured).test_client()

        def send(*kinds: str) -> list[str]:
            ids = []
            for kind in kinds:
                body = {"tenantId": str(ws.id), "templateId": str(templates[kind].id),
                        "tags": [{"key": "name", "value": "Ada"}],
                        "emailOptions": {"to": [ADA]}}
                answer = client.post(SEND, data=json.dumps(body),
                                     content_type="application/json",
                                     headers={"X-Api-Key": key})
                assert answer.status_code == 202, answer.json
                ids.append(Notification.get(
                    Notification.correlation_id == answer.json["correlationId"]).id)
            worker = subprocess.run([sys.executable, "-m", "cli", "worker", "--burst"],
                                    env=env, cwd=tmp_path, capture_output=True, text=True,
                                    timeout=120)
            assert worker.returncode == 0, worker.stderr
            return [Notification.get_by_id(i).status for i in ids]

        assert send("news") == ["delivered"]
        message = email.message_from_bytes(smtp.received[-1].content, policy=policy.default)
        link = re.fullmatch(r"<(\S+)>", str(message["List-Unsubscribe"]).strip()).group(1)
        path = link.removeprefix(settings.public_url)
        assert client.get(path).status_code == 200
        assert Suppression.select().count() == 0
        assert client.post(path + "/preferences",
                           data={"action": "save", "topic": "product"}).status_code == 303
        arrived = len(smtp.received)
        assert send("news", "product", "reset") == ["suppressed", "delivered", "delivered"]
        assert len(smtp.received) == arrived + 2
    finally:
        providers.close_all()
        runtime.configure(settings)
        controller.stop()
