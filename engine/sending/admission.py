"""Admission: the API key, the rate limits (D10) and the monthly allowance (D9), decided in
D1's order (docs/api.md) with one Redis round trip per request.

Everything that needs no Redis is decided first; then one script counts the request in its
rate-limit windows and takes the allowance; errors are then raised in D1's order.
"""

from __future__ import annotations

from typing import Any

from engine import runtime
from engine.catalog import keycache
from engine.catalog.keycache import KeyInfo
from engine.errors import ApiError
from engine.sending import idempotency, limits
from engine.sending.idempotency import IdempotencyKey
from engine.sending.resolution import Resolved, resolve_request


def authenticate(header: str | None) -> KeyInfo:
    if header is None:
        raise ApiError(401, "api_keys.missing", "The X-Api-Key header is missing.")
    key = keycache.lookup(header) if header else None
    if key is None or key.status() != "active":
        raise ApiError(401, "api_keys.invalid", "The API key is unknown, revoked or expired.")
    return key


def _resolve(body: object, key: KeyInfo, parse_error: ApiError | None,
             preview: bool) -> Resolved:
    resolved = resolve_request(body, key, preview=preview, parse_error=parse_error)
    if not preview and resolved.account.monthly_limit is None:
        raise ApiError(403, "notifications.monthly_limit_not_configured",
                       "The account has no monthly allowance configured.")
    return resolved


def admit(body: object, header: str | None, ip: str, parse_error: ApiError | None, *,
          preview: bool, idem: IdempotencyKey | None = None,
          correlation_id: str = "") -> tuple[Resolved, KeyInfo]:
    """Everything before rendering, in D1's order, with one Redis round trip.

    The checks that need no Redis run first; the script then counts the request in its
    rate-limit windows (and, for a send that passed everything, takes an allowance unit);
    the first failure in D1's order is raised. With an Idempotency-Key the same call reads
    the key's record first (engine/sending/idempotency.py): a replay raises Replayed.
    """
    settings = runtime.settings()
    key: KeyInfo | None = None
    auth_error: ApiError | None = None
    stage_error: ApiError | None = None
    resolved: Resolved | None = None
    try:
        key = authenticate(header)
        if idem is not None and idem.error is not None:
            raise idem.error  # after the key, before the body (docs/api.md, D1)
        resolved = _resolve(body, key, parse_error, preview)
    except ApiError as err:
        if key is None:
            auth_error = err
        else:
            stage_error = err
    counted = resolved is not None and not preview
    account_id = str(resolved.account.id) if counted else None
    monthly_limit = resolved.account.monthly_limit if counted else None
    if idem is not None and idem.usable and key is not None:
        verdict = idempotency.admit(idem, key.workspace_id, correlation_id, ip, key.id,
                                    account_id, monthly_limit)
    else:
        verdict = limits.check(
            "send", ip, key.id if key else None, settings.rate_limit_send_per_ip,
            settings.rate_limit_send_per_key, account_id, monthly_limit)
    _raise_in_order(verdict, auth_error, stage_error)
    assert resolved is not None and key is not None
    return resolved, key


def _raise_in_order(verdict: limits.Verdict, auth_error: ApiError | None,
                    stage_error: ApiError | None) -> None:
    """The first failure in D1's order, if any."""
    too_many = {"Retry-After": str(verdict.retry_after)}
    if verdict.code == limits.IP_LIMITED:
        raise ApiError(429, None, "Too many requests from this address.", headers=too_many)
    if auth_error is not None:
        raise auth_error
    if verdict.code == limits.KEY_LIMITED:
        raise ApiError(429, None, "Too many requests for this API key.", headers=too_many)
    if stage_error is not None:
        raise stage_error
    if verdict.code == limits.ALLOWANCE_EXHAUSTED:
        raise ApiError(429, "notifications.monthly_limit_exceeded",
                       "The account's monthly allowance is used up.")


def validate_key(header: str | None, ip: str) -> dict[str, Any]:
    """Spec 4.3: only a missing header is 401; a bad key is 200 with isValid false."""
    settings = runtime.settings()
    verdict = limits.check("validate", ip, None, settings.rate_limit_validate_per_ip, 0)
    if verdict.code == limits.IP_LIMITED:
        raise ApiError(429, None, "Too many requests from this address.",
                       headers={"Retry-After": str(verdict.retry_after)})
    if header is None:
        raise ApiError(401, "api_keys.missing", "The X-Api-Key header is missing.")
    from engine.catalog.keys import iso

    key = keycache.lookup(header) if header else None
    if key is None:
        return {"isValid": False, "tenantId": None, "apiKeyId": None, "name": None,
                "status": None, "createdAt": None, "lastUsedAt": None, "expiresAt": None,
                "revokedAt": None}
    return {"isValid": True, "tenantId": key.workspace_id, "apiKeyId": key.id,
            "name": key.name, "status": key.status(), "createdAt": iso(key.created_at),
            "lastUsedAt": iso(key.last_used_at), "expiresAt": iso(key.expires_at),
            "revokedAt": iso(key.revoked_at)}
