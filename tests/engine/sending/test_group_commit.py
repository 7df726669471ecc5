"""Group commit (engine/sending/group_commit.py): sends that arrive while a group is being
committed share the next INSERT and enqueue; a refused row fails its own send only."""

from __future__ import annotations

import threading
import uuid

import pytest
from peewee import IntegrityError, OperationalError

from engine import runtime
from engine.database import notification_store
from engine.database.db import database
from engine.database.models import Notification
from engine.delivery.queue import enqueue_notifications
from engine.queue.queueing import QUEUE_NAME, queue
from engine.sending.group_commit import GroupCommit
from tests import factories
from tests.support.processes import wait_for


def _row(ws, nid: uuid.UUID | None = None) -> tuple[uuid.UUID, tuple]:
    nid = nid or uuid.uuid4()
    return nid, notification_store.row(
        id=nid, account=ws.account_id, workspace=ws.id, template=None, version_number=1,
        channel="email", correlation_id="c", delivery_id=str(uuid.uuid4()),
        payload=factories.email_payload())


class _Held:
    """The real insert, the first group of which waits until the test lets it go: the sends
    started meanwhile then wait behind it, as concurrent requests do behind a commit."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.sizes: list[int] = []

    def __call__(self, rows: list[tuple]) -> None:
        self.sizes.append(len(rows))
        if len(self.sizes) == 1:
            assert self.release.wait(30)
        notification_store.insert_rows(rows)


def _submit(group: GroupCommit, nid: uuid.UUID, row: tuple, ws, errors: dict,
            record: tuple[str, str, int] | None = None) -> None:
    database.connect(reuse_if_open=True)  # a request thread's own connection
    try:
        group.submit(row, (str(nid), False, str(ws.id), record))
    except Exception as err:
        errors[nid] = err
    finally:
        database.close()


def _run(group: GroupCommit, held: _Held, ws, rows: list[tuple[uuid.UUID, tuple]],
         records: dict | None = None) -> dict:
    """Submit the first row, then the others while its insert is held; ``records``: the
    record each row's job sets, by row id."""
    errors: dict = {}
    records = records or {}

    def sender(nid: uuid.UUID, row: tuple) -> threading.Thread:
        return threading.Thread(target=_submit, args=(group, nid, row, ws, errors,
                                                      records.get(nid)))

    first = sender(*rows[0])
    first.start()
    wait_for(lambda: held.sizes, 10, "the first group's insert")
    others = [sender(*r) for r in rows[1:]]
    for thread in others:
        thread.start()
    wait_for(lambda: len(group._waiting) == len(others), 10, "the sends behind it to wait")
    held.release.set()
    for thread in (first, *others):
        thread.join(30)
    return errors


def test_sends_arriving_during_a_commit_share_the_next_insert_and_enqueue(settings):
    ws = factories.workspace()
    held = _Held()
    group = GroupCommit(held, enqueue_notifications)
    rows = [_row(ws) for _ in range(5)]
    assert _run(group, held, ws, rows) == {}
    assert held.sizes == [1, 4]  # the four that waited went in one statement
    ids = {str(nid) for nid, _ in rows}
    assert {str(n.id) for n in Notification.select()} == ids
    assert set(queue(QUEUE_NAME).get_job_ids()) == ids  # and their jobs in one round trip


def test_a_row_the_database_refuses_fails_its_own_send_only(settings):
    ws = factories.workspace()
    taken, row = _row(ws)
    notification_store.insert_rows([row])  # its id is taken: inserting it again is refused
    held = _Held()
    group = GroupCommit(held, enqueue_notifications)
    good = [_row(ws) for _ in range(3)]
    rows = [good[0], good[1], _row(ws, taken), good[2]]
    errors = _run(group, held, ws, rows)
    assert list(errors) == [taken] and isinstance(errors[taken], IntegrityError)
    assert held.sizes == [1, 3, 1, 1, 1]  # the group of three, then each of its rows alone
    ids = {str(nid) for nid, _ in good}
    assert {str(n.id) for n in Notification.select()} == ids | {str(taken)}
    assert set(queue(QUEUE_NAME).get_job_ids()) == ids  # the refused send enqueued nothing


def test_a_keyed_send_in_a_group_sets_its_record_with_its_job(settings):
    # An Idempotency-Key's record is marked done in the same enqueue call as its job, for
    # keyed and unkeyed sends sharing one group (engine/sending/idempotency.py).
    ws = factories.workspace()
    held = _Held()
    group = GroupCommit(held, enqueue_notifications)
    rows = [_row(ws) for _ in range(4)]
    records = {rows[1][0]: ("herald:test:record:1", "done-1", 300),
               rows[3][0]: ("herald:test:record:3", "done-3", 600)}
    assert _run(group, held, ws, rows, records) == {}
    assert held.sizes == [1, 3]
    assert set(queue(QUEUE_NAME).get_job_ids()) == {str(nid) for nid, _ in rows}
    redis = runtime.redis()
    for key, value, seconds in records.values():
        assert redis.get(key) == value.encode()
        assert 0 < redis.ttl(key) <= seconds


class _AnswerLost(_Held):
    """The real insert, whose group of several is committed but answered by a lost
    connection (as tests/api/test_lost_commit_answer.py makes PostgreSQL do)."""

    def __call__(self, rows: list[tuple]) -> None:
        super().__call__(rows)
        if len(rows) > 1:
            raise OperationalError("server closed the connection unexpectedly")


def test_a_group_whose_commit_was_not_heard_fails_every_send_in_it(settings):
    ws = factories.workspace()
    held = _AnswerLost()
    group = GroupCommit(held, enqueue_notifications)
    rows = [_row(ws) for _ in range(4)]
    errors = _run(group, held, ws, rows)
    # Not inserted again row by row: that would meet their own committed rows and answer
    # 500; each send is told the database was lost (503), and the reconciler drops them.
    assert held.sizes == [1, 3]
    assert {nid for nid, _ in rows[1:]} == set(errors)
    assert all(isinstance(err, OperationalError) for err in errors.values())
    assert queue(QUEUE_NAME).get_job_ids() == [str(rows[0][0])]


def test_a_send_alone_commits_and_enqueues_as_before(settings):
    ws = factories.workspace()
    group = GroupCommit(notification_store.insert_rows, enqueue_notifications)
    nid, row = _row(ws)
    group.submit(row, (str(nid), False, str(ws.id)))
    assert Notification.get_by_id(nid).status == "queued"
    assert queue(QUEUE_NAME).get_job_ids() == [str(nid)]


@pytest.mark.parametrize("size", [2, 7])
def test_the_insert_of_several_rows_commits_them_together(settings, size):
    ws = factories.workspace()
    rows = [_row(ws) for _ in range(size)]
    notification_store.insert_rows([r for _, r in rows])
    database.close()  # read back on a new connection: committed, not only sent
    database.connect()
    assert Notification.select().count() == size
