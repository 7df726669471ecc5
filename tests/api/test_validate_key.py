from __future__ import annotations

import datetime as dt

from engine.catalog.keys import create_key
from engine.database.models import utcnow
from tests import factories

FIELDS = {"isValid", "tenantId", "apiKeyId", "name", "status", "createdAt", "lastUsedAt",
          "expiresAt", "revokedAt"}


def test_missing_header_is_401_api_keys_missing(client):
    response = client.get("/api/v1/api-keys/validate")
    assert response.status_code == 401
    assert response.json["errorCode"] == "api_keys.missing"
    assert response.headers["Content-Type"] == "application/problem+json"


def test_unknown_key_is_200_with_every_field_null(client):
    response = client.get("/api/v1/api-keys/validate", headers={"X-Api-Key": "hk_nope"})
    assert response.status_code == 200
    assert set(response.json) == FIELDS
    assert response.json["isValid"] is False
    assert all(v is None for k, v in response.json.items() if k != "isValid")


def test_active_key_describes_itself(client, tenant):
    response = client.get("/api/v1/api-keys/validate", headers={"X-Api-Key": tenant["key"]})
    body = response.json
    assert response.status_code == 200 and set(body) == FIELDS
    assert body["isValid"] is True and body["status"] == "active"
    assert body["tenantId"] == str(tenant["ws"].id)
    assert body["createdAt"].endswith("Z")


def test_revoked_and_expired_keys_still_resolve(client, settings):
    ws = factories.workspace()
    _, revoked = create_key(ws, "r", revoked=True)
    _, expired = create_key(ws, "e", expires_at=utcnow() - dt.timedelta(days=1))
    for value, status in ((revoked, "revoked"), (expired, "expired")):
        body = client.get("/api/v1/api-keys/validate", headers={"X-Api-Key": value}).json
        assert body["isValid"] is True and body["status"] == status
