"""A production service without a channel's provider refuses sends for that channel with
403 notifications.channel_not_available, instead of accepting them to fail in the worker."""

from __future__ import annotations

from cli.app import create_app
from engine.catalog import keycache
from engine.database.models import Notification
from tests import factories
from tests.api.test_channels_send import _body, post


def test_a_channel_without_a_provider_is_refused_and_the_others_accepted(settings):
    keycache.clear()
    client = create_app(settings.with_changes(
        env="production", email_provider="smtp://127.0.0.1:2525?tls=none",
        sms_provider="")).test_client()
    ws = factories.workspace()
    key = factories.api_key(ws)
    sms = factories.template(ws, channel="sms", defaults={"to": ["+14155550100"]})
    email = factories.template(ws, defaults={"to": ["team@example.com"]})
    refused = post(client, _body(ws, sms), key)
    assert refused.status_code == 403, refused.json
    assert refused.json["errorCode"] == "notifications.channel_not_available"
    assert "HERALD_SMS_PROVIDER" in refused.json["detail"]
    assert post(client, _body(ws, email), key).status_code == 202
    assert [n.channel for n in Notification.select()] == ["email"]


def test_email_is_on_for_a_workspace_with_its_own_provider(settings):
    keycache.clear()
    client = create_app(settings.with_changes(env="production", email_provider="",
                                              sms_provider="")).test_client()
    own = factories.workspace(email_provider="smtp://mail.example:25")
    other = factories.workspace()
    for ws, status in ((own, 202), (other, 403)):
        tpl = factories.template(ws, defaults={"to": ["team@example.com"]})
        answer = post(client, _body(ws, tpl), factories.api_key(ws))
        assert answer.status_code == status, answer.json
