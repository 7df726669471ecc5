"""Generations (engine/database/generations.py): bumped only once a change commits, checked by
the admission script before it counts anything, and read by the worker for what it caches."""

from __future__ import annotations

import json

import pytest

from engine import runtime
from engine.catalog import keycache, snapshots
from engine.database import generations
from engine.database.db import database
from engine.database.models import Workspace
from engine.delivery import providers
from engine.errors import ApiError
from engine.sending import admission, limits
from tests import factories


def _value(scope: str) -> str | None:
    raw = runtime.redis().get(scope)
    return raw.decode() if raw is not None else None


def test_a_change_bumps_its_scope_only_once_its_transaction_commits(settings):
    ws = factories.workspace()
    scope = generations.workspace_scope(ws.id)
    before = _value(scope)
    with database.atomic():
        generations.changed_workspace(ws.id)
        assert _value(scope) == before  # a process loading now would read the old rows
    after = _value(scope)
    assert after is not None and after != before


def test_a_rolled_back_change_bumps_nothing(settings):
    ws = factories.workspace()
    scope = generations.workspace_scope(ws.id)
    before = _value(scope)
    with pytest.raises(RuntimeError), database.atomic():
        generations.changed_workspace(ws.id)
        raise RuntimeError("refused")
    assert _value(scope) == before


def test_saving_a_workspace_account_or_sender_row_bumps_its_scope(settings):
    ws = factories.workspace()
    scopes = [generations.workspace_scope(ws.id), generations.account_scope(ws.account_id)]
    before = [_value(s) for s in scopes]
    ws.name = "renamed"
    ws.save()
    account = ws.account
    account.monthly_limit = 5
    account.save()
    assert [_value(s) for s in scopes] != before
    assert all(_value(s) != b for s, b in zip(scopes, before, strict=True))


def _key_served_from_cache() -> tuple[str, dict]:
    """An API key and a preview body, the key's answer now kept in this process's cache."""
    ws = factories.workspace()
    template = factories.template(ws)
    key = factories.api_key(ws)
    body = {"tenantId": str(ws.id), "templateId": str(template.id),
            "tags": [{"key": "name", "value": "Ada"}], "emailOptions": {"to": ["ada@example.net"]}}
    for _ in range(3):  # loaded, then tagged with a generation read, then served from cache
        admission.admit(body, key, "198.51.100.7", None, preview=True)
    return key, body


def test_a_stale_cached_answer_counts_nothing_and_is_decided_again(settings):
    key, body = _key_served_from_cache()
    # Another process revokes the key: its row changes and the keys' generation moves on,
    # while this process still holds the key as active.
    keycache_entry = next(iter(keycache._cache.values()))
    assert keycache_entry[1].info.status() == "active"
    from engine.database.models import ApiKey

    ApiKey.update(revoked_at=ApiKey.created_at).execute()
    generations.bump([generations.KEYS_SCOPE])
    windows, _ = limits.windows("send", "198.51.100.7", keycache_entry[1].info.id, None)
    counted = [int(runtime.redis().get(k) or 0) for k in windows[:2]]
    with pytest.raises(ApiError) as refused:
        admission.admit(body, key, "198.51.100.7", None, preview=True)
    assert refused.value.error_code == "api_keys.invalid"
    # The stale try counted nothing; the decision from the database counted once.
    assert int(runtime.redis().get(windows[0]) or 0) == counted[0] + 1


def test_a_key_revoked_after_the_body_gate_looked_it_up_is_refused(settings):
    """Admission uses the gate's look-up of the same request only under the keys'
    generation its script checks: a key revoked on another process in between is refused."""
    key, body = _key_served_from_cache()
    found = keycache.find(key)
    assert found.info is not None and found.info.status() == "active"
    from engine.database.models import ApiKey

    ApiKey.update(revoked_at=ApiKey.created_at).execute()
    generations.bump([generations.KEYS_SCOPE])
    with pytest.raises(ApiError) as refused:
        admission.admit(body, key, "198.51.100.7", None, preview=True, found=found)
    assert refused.value.error_code == "api_keys.invalid"


def test_a_snapshot_is_dropped_when_its_workspace_generation_moves(settings):
    ws = factories.workspace()
    template = factories.template(ws)
    generations.refresh([generations.workspace_scope(ws.id),
                         generations.account_scope(ws.account_id)])
    first = snapshots.snapshot(str(ws.id), str(template.id))
    assert snapshots.snapshot(str(ws.id), str(template.id)) is first  # kept
    generations.bump([generations.workspace_scope(ws.id)])
    generations.refresh([generations.workspace_scope(ws.id)])
    assert snapshots.snapshot(str(ws.id), str(template.id)) is not first


def test_the_worker_uses_a_workspace_provider_changed_elsewhere_at_once(settings):
    ws = factories.workspace(email_provider=json.dumps({"plugin": "smtp",
                                                        "url": "smtp://one.example:25"}))
    assert "one.example" in providers._own_provider(ws.id)
    assert "one.example" in providers._own_provider(ws.id)  # from this process's cache
    # Another process (the web application) saves a new provider: the row, then the bump.
    Workspace.update(email_provider=json.dumps({"plugin": "smtp",
                                                "url": "smtp://two.example:25"})) \
        .where(Workspace.id == ws.id).execute()
    generations.bump([generations.workspace_scope(ws.id)])
    assert "two.example" in providers._own_provider(ws.id)


def test_a_flushed_redis_never_makes_an_old_entry_current_again(settings):
    ws = factories.workspace()
    scope = generations.workspace_scope(ws.id)
    generations.refresh([scope])
    old = generations.known(scope)
    runtime.redis().flushdb()
    generations.refresh([scope])
    assert generations.known(scope) is not None and generations.known(scope) != old
    generations.bump([scope])
    generations.refresh([scope])
    assert int(generations.known(scope)) > int(old)
