"""Admission: the API key, the rate limits (D10) and the monthly allowance (D9), decided in
D1's order (docs/api.md) with one Redis round trip per request.

Everything that needs no Redis is decided first, from per-process caches where they hold;
then one script checks that those cached answers are still current (their generations,
engine/database/generations.py), counts the request in its rate-limit windows and takes the
allowance; errors are then raised in D1's order. When a cached answer was out of date the
script changes nothing and the request is decided again from the database.
"""

from __future__ import annotations

from typing import Any

from engine import runtime
from engine.catalog import keycache
from engine.catalog.keycache import KeyInfo
from engine.database import generations
from engine.errors import ApiError
from engine.formats import uuid_text
from engine.sending import idempotency, limits
from engine.sending.idempotency import IdempotencyKey
from engine.sending.resolution import Resolved, resolve_request

# Decisions made before the last one may use the caches; the last reads only the database,
# so a request never loops on a scope that changes under it.
TRIES = 3


def authenticate(header: str | None, found: keycache.Found | None = None) -> KeyInfo:
    """The active key of ``header``; ``found``: its look-up earlier in the request."""
    if header is None:
        raise ApiError(401, "api_keys.missing", "The X-Api-Key header is missing.")
    if not keycache.reuse(found):
        found = keycache.find(header) if header else None
    key = found.info if found else None
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
          correlation_id: str = "", found: keycache.Found | None = None,
          ) -> tuple[Resolved, KeyInfo]:
    """Everything before rendering, in D1's order, with one Redis round trip.

    The checks that need no Redis run first; the script then counts the request in its
    rate-limit windows (and, for a send that passed everything, takes an allowance unit);
    the first failure in D1's order is raised. With an Idempotency-Key the same call reads
    the key's record first (engine/sending/idempotency.py): a replay raises Replayed.
    ``found``: the header's look-up by the body's gate (body_gate.py), used while current.
    """
    for attempt in range(1, TRIES + 1):
        with generations.ledger(fresh=attempt == TRIES) as held:
            try:
                return _admit_once(body, header, ip, parse_error, preview, idem,
                                   correlation_id, held, found)
            except generations.Stale:
                continue
    raise AssertionError("the last try reads no cache, so it cannot be stale")


def _admit_once(body: object, header: str | None, ip: str, parse_error: ApiError | None,
                preview: bool, idem: IdempotencyKey | None, correlation_id: str,
                held: generations.Ledger, found: keycache.Found | None,
                ) -> tuple[Resolved, KeyInfo]:
    settings = runtime.settings()
    key: KeyInfo | None = None
    auth_error: ApiError | None = None
    stage_error: ApiError | None = None
    resolved: Resolved | None = None
    try:
        key = authenticate(header, found)
        if idem is not None and idem.error is not None:
            raise idem.error  # after the key, before the body (docs/api.md, D1)
        resolved = _resolve(body, key, parse_error, preview)
    except ApiError as err:
        if key is None:
            auth_error = err
        else:
            stage_error = err
    if preview and key is not None:
        # The preview's suppression answers are checked against what this script reads.
        held.read(generations.suppressions_scope(key.workspace_id))
    counted = resolved is not None and not preview
    account_id = uuid_text.of(resolved.account.id) if counted else None
    monthly_limit = resolved.account.monthly_limit if counted else None
    if idem is not None and idem.usable and key is not None:
        verdict = idempotency.admit(idem, key.workspace_id, correlation_id, ip, key.id,
                                    account_id, monthly_limit, held)
    else:
        verdict = limits.check(
            "send", ip, key.id if key else None, settings.rate_limit_send_per_ip,
            settings.rate_limit_send_per_key, account_id, monthly_limit, held)
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
    for attempt in range(1, TRIES + 1):
        with generations.ledger(fresh=attempt == TRIES) as held:
            key = keycache.lookup(header) if header else None
            try:
                verdict = limits.check("validate", ip, None,
                                       settings.rate_limit_validate_per_ip, 0, held=held)
            except generations.Stale:
                continue
            break
    if verdict.code == limits.IP_LIMITED:
        raise ApiError(429, None, "Too many requests from this address.",
                       headers={"Retry-After": str(verdict.retry_after)})
    if header is None:
        raise ApiError(401, "api_keys.missing", "The X-Api-Key header is missing.")
    from engine.catalog.keys import iso

    if key is None:
        return {"isValid": False, "tenantId": None, "apiKeyId": None, "name": None,
                "status": None, "createdAt": None, "lastUsedAt": None, "expiresAt": None,
                "revokedAt": None}
    return {"isValid": True, "tenantId": key.workspace_id, "apiKeyId": key.id,
            "name": key.name, "status": key.status(), "createdAt": iso(key.created_at),
            "lastUsedAt": iso(key.last_used_at), "expiresAt": iso(key.expires_at),
            "revokedAt": iso(key.revoked_at)}
