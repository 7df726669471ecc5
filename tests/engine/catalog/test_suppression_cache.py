"""The per-process cache of the suppression answers a preview reports."""

from __future__ import annotations

import pytest

from engine.catalog import suppression_cache, suppressions
from engine.database import notification_store
from engine.database.models import Suppression
from tests import factories


@pytest.fixture
def lookups(monkeypatch, db) -> list[list[str]]:
    """Each database lookup the cache makes (the real one runs)."""
    made: list[list[str]] = []
    real = notification_store.suppression_scopes

    def counted(workspace_id, addresses):
        made.append(list(addresses))
        return real(workspace_id, addresses)

    monkeypatch.setattr(notification_store, "suppression_scopes", counted)
    return made


def test_a_repeated_question_is_answered_without_the_database(lookups):
    ws = factories.workspace()
    Suppression.create(workspace=ws, address="gone@example.com")
    asked = ["Gone@Example.com", "ok@example.com"]
    assert suppression_cache.suppressed(ws.id, asked) == {"gone@example.com"}
    assert suppression_cache.suppressed(ws.id, asked) == {"gone@example.com"}
    assert suppression_cache.suppressed(ws.id, ["ok@example.com"]) == set()
    assert lookups == [["gone@example.com", "ok@example.com"]]
    # One address not asked before: the database answers again, for all of them.
    assert suppression_cache.suppressed(ws.id, ["new@example.com", "gone@example.com"]) == {
        "gone@example.com"}
    assert lookups[1:] == [["gone@example.com", "new@example.com"]]
    assert suppression_cache.suppressed(ws.id, []) == set() and len(lookups) == 2


def test_answers_never_cross_workspaces(lookups):
    first, second = factories.workspace(), factories.workspace()
    Suppression.create(workspace=first, address="gone@example.com")
    assert suppression_cache.suppressed(first.id, ["gone@example.com"]) == {"gone@example.com"}
    assert suppression_cache.suppressed(second.id, ["gone@example.com"]) == set()
    assert suppression_cache.suppressed(first.id, ["gone@example.com"]) == {"gone@example.com"}
    assert len(lookups) == 2


def test_a_change_made_by_this_process_is_seen_at_once(lookups):
    ws = factories.workspace()
    assert suppression_cache.suppressed(ws.id, ["gone@example.com"]) == set()
    Suppression.create(workspace=ws, address="gone@example.com")
    suppression_cache.forget(ws.id)
    assert suppression_cache.suppressed(ws.id, ["gone@example.com"]) == {"gone@example.com"}


def test_an_answer_read_while_the_list_changed_is_not_kept(lookups, monkeypatch):
    ws = factories.workspace()
    real = notification_store.suppression_scopes

    def racing(workspace_id, addresses):
        answer = real(workspace_id, addresses)  # read before the change committed
        Suppression.create(workspace=ws, address="gone@example.com")
        suppression_cache.forget(ws.id)
        return answer

    monkeypatch.setattr(notification_store, "suppression_scopes", racing)
    assert suppression_cache.suppressed(ws.id, ["gone@example.com"]) == set()
    monkeypatch.setattr(notification_store, "suppression_scopes", real)
    assert suppression_cache.suppressed(ws.id, ["gone@example.com"]) == {"gone@example.com"}


def test_a_change_from_another_process_is_seen_once_the_answer_expires(settings, lookups):
    from engine import runtime

    runtime.configure(settings.with_changes(key_cache_seconds=0.0))
    try:
        ws = factories.workspace()
        assert suppression_cache.suppressed(ws.id, ["gone@example.com"]) == set()
        Suppression.create(workspace=ws, address="gone@example.com")  # no forget(): elsewhere
        assert suppression_cache.suppressed(ws.id, ["gone@example.com"]) == {"gone@example.com"}
        assert len(lookups) == 2
    finally:
        runtime.configure(settings)


def test_the_map_is_bounded(lookups, monkeypatch):
    monkeypatch.setattr(suppression_cache, "MAX_ADDRESSES", 3)
    ws = factories.workspace()
    for name in "abcd":
        suppression_cache.suppressed(ws.id, [f"{name}@example.com"])
    assert len(suppression_cache._answers[str(ws.id)]) <= 3
    suppression_cache.suppressed(ws.id, ["a@example.com"])
    assert len(lookups) == 5, "a@ was dropped when the map started over"


def test_one_cached_answer_serves_both_streams_and_a_widening_is_seen_at_once(lookups):
    ws = factories.workspace()
    suppressions.add(ws.id, ["left@example.com"], "unsubscribe")
    asked = ["left@example.com", "ok@example.com"]
    assert suppression_cache.suppressed(ws.id, asked, marketing=True) == {"left@example.com"}
    assert suppression_cache.suppressed(ws.id, asked, marketing=False) == set()
    assert len(lookups) == 1, "the second stream's answer came from the cache"
    suppressions.add(ws.id, ["left@example.com"], "bounce")  # widened to all
    assert suppression_cache.suppressed(ws.id, asked, marketing=False) == {"left@example.com"}
    assert len(lookups) == 2
