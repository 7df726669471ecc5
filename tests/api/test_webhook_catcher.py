"""The dev inbox's webhook catcher: what arrives, listed with its signature checked."""

from __future__ import annotations

import time

from cli.app import create_app
from engine.webhooks.signatures import sign
from tests import factories

BODY = b'{"order": "A-1001"}'


def _signed(secret: str, delivery_id: str, body: bytes = BODY) -> dict[str, str]:
    timestamp = int(time.time())
    return {"Content-Type": "application/json", "X-Service-Delivery-Id": delivery_id,
            "Idempotency-Key": delivery_id, "X-Service-Timestamp": str(timestamp),
            "X-Service-Signature": sign(secret, timestamp, delivery_id, body)}


def _webhook_notification(ws):
    return factories.notification(ws, {"channel": "webhook", "url": "http://127.0.0.1/x",
                                       "body": BODY.decode(), "contentType": "application/json"})


def test_a_signed_webhook_is_kept_and_verifies(client):
    ws = factories.workspace()
    n = _webhook_notification(ws)
    answer = client.post("/dev/inbox/webhooks/orders", data=BODY,
                         headers=_signed(ws.signing_secret, n.delivery_id))
    assert answer.status_code == 200 and answer.json["signatureVerified"] is True
    (caught,) = client.get("/dev/inbox/webhooks/orders").json
    assert caught["body"] == BODY.decode() and caught["verdict"] == "signature verifies"
    assert caught["headers"]["X-Service-Delivery-Id"] == n.delivery_id
    assert (caught["workspaceId"], caught["notificationId"]) == (str(ws.id), str(n.id))
    page = client.get("/dev/inbox").get_data(as_text=True)
    assert "signature verifies" in page and "orders" in page and n.delivery_id in page


def test_what_does_not_verify_says_why(client):
    ws, other = factories.workspace(), factories.workspace()
    n = _webhook_notification(ws)
    cases = {
        "tampered": (b'{"order": "A-9"}', _signed(ws.signing_secret, n.delivery_id)),
        "other-secret": (BODY, _signed(other.signing_secret, n.delivery_id)),
        "unknown": (BODY, _signed(ws.signing_secret, "no-such-delivery")),
        "unsigned": (BODY, {"Content-Type": "application/json"}),
    }
    for name, (body, headers) in cases.items():
        assert client.post(f"/dev/inbox/webhooks/{name}", data=body,
                           headers=headers).json["signatureVerified"] is False
    verdicts = {c["name"]: c["verdict"] for c in client.get("/dev/inbox/webhooks").json}
    assert verdicts["tampered"].startswith("signature does not verify")
    assert verdicts["other-secret"].startswith("signature does not verify")
    assert verdicts["unknown"] == "no notification or callback has this delivery id"
    assert verdicts["unsigned"].startswith("not signed")
    assert "signature verifies" not in client.get("/dev/inbox").get_data(as_text=True)


def test_the_page_shows_a_hostile_body_as_text(client):
    client.post("/dev/inbox/webhooks/x", data=b"<script>alert(1)</script>",
                headers={"X-Evil": "<img src=x onerror=alert(1)>"})
    page = client.get("/dev/inbox").get_data(as_text=True)
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    assert "<img src=x" not in page


def test_names_are_plain_tokens_and_the_list_can_be_emptied(client):
    assert client.post("/dev/inbox/webhooks/a%20b", data=b"{}").status_code == 404
    assert client.post("/dev/inbox/webhooks/" + "n" * 65, data=b"{}").status_code == 404
    client.post("/dev/inbox/webhooks/keep", data=b"{}")
    assert client.delete("/dev/inbox/webhooks").json == {"deleted": 1}
    assert client.get("/dev/inbox/webhooks").json == []


def test_there_is_no_catcher_in_production(settings):
    production = settings.with_changes(env="production", email_provider="smtp://127.0.0.1:25",
                                       sms_provider="", webhook_allow_private=False)
    client = create_app(production).test_client()
    assert client.post("/dev/inbox/webhooks/demo", data=b"{}").status_code == 404
    assert client.get("/dev/inbox/webhooks").status_code == 404


def test_what_was_caught_is_read_only_with_a_loopback_host(client):
    """Issue 37, finding 4: any Host got every tenant's caught webhooks (DNS rebinding)."""
    ws = factories.workspace()
    n = _webhook_notification(ws)
    assert client.post("/dev/inbox/webhooks/orders", data=BODY, headers={
        **_signed(ws.signing_secret, n.delivery_id), "Host": "hook.test"}).status_code == 200
    for host in ("evil.example", "rebind.attacker.test:8000", "127.0.0.1.nip.io"):
        for method, path in (("get", "/dev/inbox/webhooks"), ("get", "/dev/inbox/webhooks/orders"),
                             ("delete", "/dev/inbox/webhooks")):
            answer = getattr(client, method)(path, headers={"Host": host})
            assert answer.status_code == 403, (host, method, path)
    for host in ("localhost", "127.0.0.1:8000", "[::1]:8000"):
        assert len(client.get("/dev/inbox/webhooks", headers={"Host": host}).json) == 1
