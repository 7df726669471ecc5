"""The worker's and the API's hot statements as prepared statements on PostgreSQL, sent as text
elsewhere or when the database URL says prepare=false."""

from __future__ import annotations

import logging
import uuid

from engine.database import notification_store, prepared
from engine.database.db import database, make_database
from engine.database.models import Notification, Suppression
from tests import factories

# A claim's stale-after seconds and the maximum attempts of webhooks and of other channels.
LIMITS = (60, 8, 8)


def _held_by_server() -> set[str]:
    rows = database.execute_sql("SELECT name FROM pg_prepared_statements").fetchall()
    return {row[0] for row in rows}


def _attempt(n: Notification) -> dict:
    return {"notification": n.id, "number": n.attempts, "recipient": None,
            "started_at": n.updated_at, "duration_ms": 1, "outcome": "delivered",
            "status_code": None, "provider_message_id": "m-1", "response_excerpt": None,
            "error": None}


def _statements_sent(caplog) -> list[str]:
    return [r.msg[0] for r in caplog.records if r.name == "peewee" and isinstance(r.msg, tuple)]


def _inserted(ws) -> Notification:
    """A row written as the API writes it."""
    nid = uuid.uuid4()
    notification_store.insert(id=nid, account=ws.account_id, workspace=ws.id, template=None,
                              version_number=1, channel="email", correlation_id="c",
                              delivery_id=str(uuid.uuid4()), payload=factories.email_payload())
    return Notification.get_by_id(nid)


def test_insert_claim_and_outcome_are_prepared_once_per_connection(db, caplog):
    ws = factories.workspace()
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        first, second = _inserted(ws), _inserted(ws)
        for n in (first, second):
            claimed = notification_store.claim(str(n.id), *LIMITS, webhook_channel="webhook")
            assert claimed is not None and claimed.status == "sending"
            notification_store.record_outcome(claimed, [_attempt(claimed)], "delivered", None,
                                              None)
    assert {Notification.get_by_id(n.id).status for n in (first, second)} == {"delivered"}
    sent = _statements_sent(caplog)
    if prepared.enabled(database.obj):
        assert {"herald_insert", "herald_claim", "herald_outcome_1"} <= _held_by_server()
        for name in ("herald_insert", "herald_claim", "herald_outcome_1"):
            assert sum(s.startswith(f"PREPARE {name} AS") for s in sent) == 1
        claims = [s for s in sent if "EXECUTE herald_claim" in s]
        assert len(claims) == 2 and all(s.startswith("SET LOCAL synchronous_commit") for s in
                                        claims)
        assert not any(s.startswith(("UPDATE", "INSERT", "WITH")) for s in sent)
    else:  # SQLite: the statements themselves
        assert not any("PREPARE" in s or "EXECUTE" in s for s in sent)
        assert sum(s.startswith('UPDATE "notification"') for s in sent) >= 2


def test_a_connection_that_lost_its_statements_prepares_them_again(db):
    ws = factories.workspace()
    first, second = (factories.notification(ws, factories.email_payload()) for _ in range(2))
    assert notification_store.claim(str(first.id), *LIMITS, webhook_channel="webhook") is not None
    if prepared.enabled(database.obj):
        database.execute_sql("DEALLOCATE ALL")  # what a pooler's DISCARD ALL does to them
        assert "herald_claim" not in _held_by_server()
    claimed = notification_store.claim(str(second.id), *LIMITS, webhook_channel="webhook")
    assert claimed is not None and claimed.id == second.id and claimed.attempts == 1
    if prepared.enabled(database.obj):
        assert "herald_claim" in _held_by_server()
        # Only the statement that was lost is prepared again: the others are still held.
        notification_store.record_outcome(claimed, [_attempt(claimed)], "delivered", None, None)
        database.execute_sql("DEALLOCATE herald_claim")
        third = notification_store.claim(
            str(factories.notification(ws, factories.email_payload()).id), *LIMITS,
            webhook_channel="webhook")
        assert third is not None
        notification_store.record_outcome(third, [_attempt(third)], "delivered", None, None)
        assert Notification.get_by_id(third.id).status == "delivered"
        assert {"herald_claim", "herald_outcome_1"} <= _held_by_server()


def test_prepare_false_in_the_url_sends_statements_as_text():
    assert prepared.enabled(make_database("postgresql://u@127.0.0.1:5432/herald"))
    plain = make_database("postgresql://u@127.0.0.1:5432/herald?prepare=false&sslmode=disable")
    assert not prepared.enabled(plain)
    assert plain.connect_params == {"user": "u", "password": None, "host": "127.0.0.1",
                                    "port": 5432, "sslmode": "disable"}
    assert not prepared.enabled(make_database("sqlite:///:memory:"))


def test_placeholders_are_numbered_in_order():
    assert prepared.numbered("UPDATE t SET a = %s WHERE b = %s AND c < %s") == (
        "UPDATE t SET a = $1 WHERE b = $2 AND c < $3")


def test_the_suppression_lookup_answers_for_any_number_of_addresses_in_one_statement(db, caplog):
    ws, other = factories.workspace(), factories.workspace()
    for address in ("a@x.example", "c@x.example"):
        Suppression.create(workspace=ws.id, address=address, reason="bounce")
    Suppression.create(workspace=other.id, address="b@x.example", reason="bounce")
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        assert notification_store.suppressed(ws.id, ["A@x.example"]) == {"a@x.example"}
        assert notification_store.suppressed(ws.id, ["b@x.example", "a@x.example",
                                                     "c@X.example"]) == {"a@x.example",
                                                                         "c@x.example"}
        assert notification_store.suppressed(other.id, ["a@x.example", "b@x.example"]) == {
            "b@x.example"}
        assert notification_store.suppressed(ws.id, []) == set()
    if prepared.enabled(database.obj):
        sent = _statements_sent(caplog)
        assert sum(s.startswith("PREPARE herald_suppressed AS") for s in sent) == 1
        assert sum("EXECUTE herald_suppressed" in s for s in sent) == 3
