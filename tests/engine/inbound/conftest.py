from __future__ import annotations

import pytest

from cli.app import create_app
from engine import runtime
from engine.delivery.providers import close_all
from tests.support.app_server import serving
from tests.support.vendor_server import VendorServer

SID, TOKEN = "AC" + "0" * 32, "twilio-auth-token"


@pytest.fixture
def twilio_api():
    """A local stand-in for Twilio's Messages API: answers each message with a new SID."""
    sent: list[str] = []

    def check(path, headers, body):
        sid = f"SM{len(sent):032d}"
        sent.append(sid)
        return 201, {}, {"sid": sid, "status": "queued"}

    server = VendorServer(check)
    server.sids = sent
    yield server
    server.close()


@pytest.fixture
def postmark_api():
    """A local stand-in for Postmark's /email: answers with a new MessageID."""
    ids: list[str] = []

    def check(path, headers, body):
        ids.append(f"0a1b2c3d-0000-4000-8000-{len(ids):012d}")
        return 200, {}, {"ErrorCode": 0, "MessageID": ids[-1]}

    server = VendorServer(check)
    server.ids = ids
    yield server
    server.close()


@pytest.fixture
def with_providers(settings, twilio_api, postmark_api):
    """Settings whose SMS provider is the Twilio stand-in and email Postmark's, served over
    real HTTP at their public URL."""
    configured = settings.with_changes(
        sms_provider=f"twilio://{SID}:{TOKEN}@127.0.0.1:{twilio_api.port}?scheme=http",
        email_provider=f"postmark://pm-token@127.0.0.1:{postmark_api.port}?scheme=http")
    app = create_app(configured)
    with serving(app) as base:
        runtime.configure(configured.with_changes(public_url=base))
        close_all()
        yield base
    close_all()
    runtime.configure(settings)
